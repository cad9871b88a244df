use super::*;
use serde_json::json;

/// RFC 3339 needs a four-digit year: 0000-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z.
const MIN_RFC3339_UNIX: i64 = -62_167_219_200;
const MAX_RFC3339_UNIX: i64 = 253_402_300_799;

/// Minimal protobuf encoder, only for building test bodies.
mod enc {
    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
        varint(out, (u64::from(field) << 3) | u64::from(wire));
    }

    pub fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
        tag(out, field, 2);
        varint(out, data.len() as u64);
        out.extend_from_slice(data);
    }

    pub fn string(out: &mut Vec<u8>, field: u32, s: &str) {
        bytes(out, field, s.as_bytes());
    }

    pub fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
        tag(out, field, 0);
        varint(out, v);
    }

    pub fn fixed32(out: &mut Vec<u8>, field: u32, v: u32) {
        tag(out, field, 5);
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
        tag(out, field, 1);
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn map_entry(out: &mut Vec<u8>, field: u32, key: &str, value: &[u8]) {
        let mut entry = Vec::new();
        string(&mut entry, 1, key);
        bytes(&mut entry, 2, value);
        bytes(out, field, &entry);
    }

    pub fn time(out: &mut Vec<u8>, field: u32, seconds: i64, nanos: i32) {
        let mut t = Vec::new();
        uint(&mut t, 1, seconds as u64);
        uint(&mut t, 2, nanos as i64 as u64);
        bytes(out, field, &t);
    }

    /// `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding "", contentType ""}, laid out
    /// the way client-go writes it (empty strings included).
    pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let mut type_meta = Vec::new();
        string(&mut type_meta, 1, api_version);
        string(&mut type_meta, 2, kind);
        let mut unknown = Vec::new();
        bytes(&mut unknown, 1, &type_meta);
        bytes(&mut unknown, 2, raw);
        string(&mut unknown, 3, "");
        string(&mut unknown, 4, "");
        let mut out = b"k8s\0".to_vec();
        out.extend_from_slice(&unknown);
        out
    }

    /// ObjectMeta with every string field written (empty ones too), as gogo-protobuf does.
    pub fn go_style_meta(name: &str, namespace: &str, labels: &[(&str, &str)]) -> Vec<u8> {
        let mut m = Vec::new();
        string(&mut m, 1, name);
        string(&mut m, 2, "");
        string(&mut m, 3, namespace);
        string(&mut m, 4, "");
        string(&mut m, 5, "");
        string(&mut m, 6, "");
        uint(&mut m, 7, 0);
        bytes(&mut m, 8, &[]); // zero creationTimestamp
        for (k, v) in labels {
            map_entry(&mut m, 11, k, v.as_bytes());
        }
        m
    }
}

const RELEASE_PAYLOAD: &str = "H4sIAAAAAAACA6tWykvMTVWyUlBKSc3NV9JRAPOLCxKTwYKJBQXFIMGy1KLizPw8oJAhkJeZl5YPZFYrFZcklpQWQ3QX5ORXpqYo1dYCAJh9ZYNTAAAA";

/// A Secret as Helm's secrets driver sends it, plus fields Helm does not set.
fn helm_secret_body() -> Vec<u8> {
    let mut meta = enc::go_style_meta(
        "sh.helm.release.v1.demo.v1",
        "apps",
        &[
            ("owner", "helm"),
            ("name", "demo"),
            ("status", "deployed"),
            ("version", "1"),
        ],
    );
    enc::map_entry(&mut meta, 12, "note", "héllo".as_bytes());
    enc::map_entry(&mut meta, 11, "createdAt", b"1767261600");
    let mut secret = Vec::new();
    enc::bytes(&mut secret, 1, &meta);
    enc::map_entry(&mut secret, 2, "release", RELEASE_PAYLOAD.as_bytes());
    enc::map_entry(
        &mut secret,
        2,
        "blob",
        &[0x00, 0xff, 0xfe, 0x80, 0x1f, 0x8b],
    );
    enc::string(&mut secret, 3, "helm.sh/release.v1");
    enc::map_entry(&mut secret, 4, "plain", b"text");
    enc::uint(&mut secret, 5, 1);
    enc::envelope("v1", "Secret", &secret)
}

#[test]
fn secret_round_trip_matches_json_client_shape() {
    let got = decode_object(&helm_secret_body()).expect("decodes");
    let want = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "sh.helm.release.v1.demo.v1",
            "namespace": "apps",
            "labels": {"owner": "helm", "name": "demo", "status": "deployed",
                       "version": "1", "createdAt": "1767261600"},
            "annotations": {"note": "héllo"},
        },
        "data": {
            "release": STANDARD.encode(RELEASE_PAYLOAD),
            "blob": STANDARD.encode([0x00, 0xff, 0xfe, 0x80, 0x1f, 0x8b]),
        },
        "type": "helm.sh/release.v1",
        "stringData": {"plain": "text"},
        "immutable": true,
    });
    assert_eq!(got, want);
    // Non-UTF-8 bytes survive exactly.
    let blob = got["data"]["blob"].as_str().expect("string");
    assert_eq!(
        STANDARD.decode(blob).expect("base64"),
        [0x00, 0xff, 0xfe, 0x80, 0x1f, 0x8b]
    );
}

#[test]
fn secret_without_optional_fields_has_only_metadata() {
    let mut secret = Vec::new();
    enc::bytes(&mut secret, 1, &enc::go_style_meta("s", "", &[]));
    enc::string(&mut secret, 3, "");
    let got = decode_object(&enc::envelope("v1", "Secret", &secret)).expect("decodes");
    assert_eq!(
        got,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    );
}

#[test]
fn map_entry_without_value_is_empty() {
    let mut entry = Vec::new();
    enc::string(&mut entry, 1, "empty");
    let mut secret = Vec::new();
    enc::bytes(&mut secret, 2, &entry);
    let got = decode_object(&enc::envelope("v1", "Secret", &secret)).expect("decodes");
    assert_eq!(got["data"], json!({"empty": ""}));
    assert_eq!(got["metadata"], json!({}));
}

#[test]
fn object_meta_full() {
    let mut owner = Vec::new();
    enc::string(&mut owner, 1, "ReplicaSet");
    enc::string(&mut owner, 3, "web-abc");
    enc::string(&mut owner, 4, "uid-1");
    enc::string(&mut owner, 5, "apps/v1");
    enc::uint(&mut owner, 6, 1);
    let mut meta = Vec::new();
    enc::string(&mut meta, 1, "x");
    enc::string(&mut meta, 2, "x-");
    enc::string(&mut meta, 4, "/api/v1/x");
    enc::string(&mut meta, 5, "u-1");
    enc::string(&mut meta, 6, "42");
    enc::uint(&mut meta, 7, 3);
    enc::time(&mut meta, 8, 1_767_261_600, 123_456);
    enc::time(&mut meta, 9, 0, 0);
    enc::uint(&mut meta, 10, (-5i64) as u64);
    enc::bytes(&mut meta, 13, &owner);
    enc::string(&mut meta, 14, "kubernetes.io/a");
    enc::string(&mut meta, 14, "kubernetes.io/b");
    enc::bytes(&mut meta, 17, b"\x0a\x03foo"); // managedFields: skipped
    let mut cm = Vec::new();
    enc::bytes(&mut cm, 1, &meta);
    let got = decode_object(&enc::envelope("v1", "ConfigMap", &cm)).expect("decodes");
    assert_eq!(
        got["metadata"],
        json!({
            "name": "x", "generateName": "x-", "selfLink": "/api/v1/x", "uid": "u-1",
            "resourceVersion": "42", "generation": 3,
            "creationTimestamp": "2026-01-01T10:00:00Z",
            "deletionTimestamp": "1970-01-01T00:00:00Z",
            "deletionGracePeriodSeconds": -5,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-abc", "uid": "uid-1", "controller": true}],
            "finalizers": ["kubernetes.io/a", "kubernetes.io/b"],
        })
    );
}

#[test]
fn repeated_metadata_merges_like_protobuf() {
    let mut first = Vec::new();
    enc::string(&mut first, 1, "old");
    enc::map_entry(&mut first, 11, "a", b"1");
    let mut second = Vec::new();
    enc::string(&mut second, 1, "new");
    enc::map_entry(&mut second, 11, "b", b"2");
    let mut secret = Vec::new();
    enc::bytes(&mut secret, 1, &first);
    enc::bytes(&mut secret, 1, &second);
    let got = decode_object(&enc::envelope("v1", "Secret", &secret)).expect("decodes");
    assert_eq!(
        got["metadata"],
        json!({"name": "new", "labels": {"a": "1", "b": "2"}})
    );
}

#[test]
fn config_map_decodes_data_and_binary_data() {
    let mut cm = Vec::new();
    enc::bytes(
        &mut cm,
        1,
        &enc::go_style_meta("sh.helm.release.v1.demo.v1", "apps", &[("owner", "helm")]),
    );
    enc::map_entry(&mut cm, 2, "release", RELEASE_PAYLOAD.as_bytes());
    enc::map_entry(&mut cm, 3, "bin", &[0xff, 0x00]);
    enc::uint(&mut cm, 4, 0);
    let got = decode_object(&enc::envelope("v1", "ConfigMap", &cm)).expect("decodes");
    assert_eq!(
        got,
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "sh.helm.release.v1.demo.v1", "namespace": "apps",
                         "labels": {"owner": "helm"}},
            "data": {"release": RELEASE_PAYLOAD},
            "binaryData": {"bin": "/wA="},
        })
    );
}

#[test]
fn config_map_rejects_non_utf8_string_data() {
    let mut cm = Vec::new();
    enc::map_entry(&mut cm, 2, "k", &[0xc3, 0x28]);
    let err = decode_object(&enc::envelope("v1", "ConfigMap", &cm)).expect_err("bad UTF-8");
    assert!(err.0.contains("UTF-8"), "{err}");
    assert!(err.0.contains("ConfigMap"), "{err}");
}

#[test]
fn namespace_decodes_spec_and_status() {
    let mut spec = Vec::new();
    enc::string(&mut spec, 1, "kubernetes");
    let mut status = Vec::new();
    enc::string(&mut status, 1, "");
    let mut ns = Vec::new();
    enc::bytes(
        &mut ns,
        1,
        &enc::go_style_meta("apps", "", &[("name", "apps")]),
    );
    enc::bytes(&mut ns, 2, &spec);
    enc::bytes(&mut ns, 3, &status);
    let got = decode_object(&enc::envelope("v1", "Namespace", &ns)).expect("decodes");
    assert_eq!(
        got,
        json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "apps", "labels": {"name": "apps"}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {},
        })
    );
}

#[test]
fn unknown_fields_of_every_wire_type_are_skipped() {
    fn junk(out: &mut Vec<u8>) {
        enc::uint(out, 900, u64::MAX);
        enc::fixed64(out, 901, 0x0102_0304_0506_0708);
        enc::bytes(out, 902, b"\xff\xff\xff not a message");
        enc::fixed32(out, 903, 7);
        enc::uint(out, (1 << 29) - 1, 1);
    }
    let mut entry = Vec::new();
    junk(&mut entry);
    enc::string(&mut entry, 1, "k");
    junk(&mut entry);
    enc::bytes(&mut entry, 2, b"v");
    let mut meta = Vec::new();
    junk(&mut meta);
    enc::string(&mut meta, 1, "n");
    enc::bytes(&mut meta, 11, &entry);
    junk(&mut meta);
    let mut secret = Vec::new();
    junk(&mut secret);
    enc::bytes(&mut secret, 1, &meta);
    enc::bytes(&mut secret, 2, &entry);
    junk(&mut secret);
    let mut type_meta = Vec::new();
    junk(&mut type_meta);
    enc::string(&mut type_meta, 1, "v1");
    enc::string(&mut type_meta, 2, "Secret");
    let mut unknown = Vec::new();
    junk(&mut unknown);
    enc::bytes(&mut unknown, 1, &type_meta);
    enc::bytes(&mut unknown, 2, &secret);
    enc::string(&mut unknown, 4, "application/vnd.kubernetes.protobuf");
    junk(&mut unknown);
    let mut body = b"k8s\0".to_vec();
    body.extend_from_slice(&unknown);
    let got = decode_object(&body).expect("decodes");
    assert_eq!(
        got,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "n", "labels": {"k": "v"}},
               "data": {"k": "dg=="}})
    );
}

fn expect_error(body: &[u8], needle: &str) {
    match decode_object(body) {
        Ok(v) => panic!("expected error containing {needle:?}, got {v}"),
        Err(e) => assert!(
            e.0.contains(needle),
            "error {e:?} should contain {needle:?}"
        ),
    }
}

#[test]
fn envelope_errors_are_clear() {
    expect_error(b"", "magic");
    expect_error(b"k8s", "magic");
    expect_error(b"{\"kind\":\"Secret\"}", "magic");
    expect_error(
        &enc::envelope("v1", "Pod", b""),
        "unsupported protobuf object",
    );
    expect_error(
        &enc::envelope("apps/v1", "Secret", b""),
        "unsupported protobuf object",
    );
    let mut no_raw = b"k8s\0".to_vec();
    let mut tm = Vec::new();
    enc::string(&mut tm, 1, "v1");
    enc::string(&mut tm, 2, "Secret");
    enc::bytes(&mut no_raw, 1, &tm);
    expect_error(&no_raw, "no raw object");
    let mut gz = no_raw.clone();
    enc::bytes(&mut gz, 2, b"");
    enc::string(&mut gz, 3, "gzip");
    expect_error(&gz, "contentEncoding");
}

#[test]
fn wire_errors_are_clear() {
    let secret = |raw: &[u8]| enc::envelope("v1", "Secret", raw);
    expect_error(&secret(&[0x0a]), "truncated varint");
    expect_error(&secret(&[0x0a, 0x80]), "truncated varint");
    expect_error(
        &secret(&[0x0a, 0x05, 0x01]),
        "needs 5 bytes but only 1 remain",
    );
    expect_error(
        &secret(&[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ]),
        "overflows",
    );
    expect_error(
        &secret(&[
            0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ]),
        "needs 18446744073709551615 bytes",
    );
    expect_error(&secret(&[0x0b]), "group");
    expect_error(&secret(&[0x0c]), "group");
    expect_error(&secret(&[0x0e]), "invalid wire type 6");
    expect_error(&secret(&[0x02, 0x00]), "invalid field number 0");
    expect_error(
        &secret(&[0x09, 1, 2, 3]),
        "fixed64 value needs 8 bytes but only 3 remain",
    );
    expect_error(&secret(&[0x0d, 1]), "fixed32 value needs 4 bytes");
    expect_error(
        &secret(&[0x09, 1, 2, 3, 4, 5, 6, 7, 8]),
        "field 1 (metadata): expected length-delimited (wire type 2), got fixed64",
    );
    expect_error(
        &secret(&[0x08, 0x01]),
        "field 1 (metadata): expected length-delimited",
    );
    expect_error(
        &secret(&[0x2a, 0x00]),
        "field 5 (immutable): expected varint",
    );
    let mut meta = Vec::new();
    enc::bytes(&mut meta, 1, &[0xff, 0xfe]);
    let mut raw = Vec::new();
    enc::bytes(&mut raw, 1, &meta);
    expect_error(
        &secret(&raw),
        "Secret: metadata: ObjectMeta: field 1 (name): string is not valid UTF-8",
    );
}

#[test]
fn time_formatting() {
    assert_eq!(format_rfc3339(0).expect("ok"), "1970-01-01T00:00:00Z");
    assert_eq!(
        format_rfc3339(1_767_261_600).expect("ok"),
        "2026-01-01T10:00:00Z"
    );
    assert_eq!(
        format_rfc3339(1_709_208_000).expect("ok"),
        "2024-02-29T12:00:00Z"
    );
    assert_eq!(
        format_rfc3339(951_782_399).expect("ok"),
        "2000-02-28T23:59:59Z"
    );
    assert_eq!(format_rfc3339(-1).expect("ok"), "1969-12-31T23:59:59Z");
    assert_eq!(
        format_rfc3339(MIN_RFC3339_UNIX).expect("ok"),
        "0000-01-01T00:00:00Z"
    );
    assert_eq!(
        format_rfc3339(MAX_RFC3339_UNIX).expect("ok"),
        "9999-12-31T23:59:59Z"
    );
    assert_eq!(
        format_rfc3339(GO_ZERO_TIME_UNIX).expect("ok"),
        "0001-01-01T00:00:00Z"
    );
    assert!(format_rfc3339(MAX_RFC3339_UNIX + 1).is_err());
    assert!(format_rfc3339(i64::MIN).is_err());
    let mut t = Vec::new();
    enc::uint(&mut t, 1, GO_ZERO_TIME_UNIX as u64);
    assert_eq!(decode_time(&t).expect("ok"), None);
    assert_eq!(decode_time(&[]).expect("ok"), None);
    let mut meta = Vec::new();
    enc::time(&mut meta, 8, i64::MAX, 0);
    let mut raw = Vec::new();
    enc::bytes(&mut raw, 1, &meta);
    expect_error(
        &enc::envelope("v1", "Secret", &raw),
        "creationTimestamp: timestamp",
    );
}

/// Decoding must return (Ok or Err) and never panic; report the input if it does.
fn assert_no_panic(body: &[u8]) {
    let result = std::panic::catch_unwind(|| {
        let _ = decode_object(body);
    });
    assert!(result.is_ok(), "decode_object panicked on {}", hex(body));
}

fn all_bodies() -> Vec<Vec<u8>> {
    let mut ns = Vec::new();
    enc::bytes(&mut ns, 1, &enc::go_style_meta("apps", "", &[("a", "b")]));
    enc::bytes(&mut ns, 2, b"\x0a\x01k");
    let mut cm = Vec::new();
    enc::bytes(&mut cm, 1, &enc::go_style_meta("c", "apps", &[]));
    enc::map_entry(&mut cm, 2, "k", b"v");
    enc::map_entry(&mut cm, 3, "b", b"\xff");
    vec![
        helm_secret_body(),
        enc::envelope("v1", "ConfigMap", &cm),
        enc::envelope("v1", "Namespace", &ns),
    ]
}

#[test]
fn every_truncation_is_handled() {
    for body in all_bodies() {
        for len in 0..body.len() {
            assert_no_panic(&body[..len]);
        }
        assert!(decode_object(&body).is_ok());
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let bodies = all_bodies();
    for round in 0..600 {
        let mut body = bodies[round % bodies.len()].clone();
        let edits = 1 + next() % 4;
        for _ in 0..edits {
            // Keep the magic intact most of the time so the deeper parsers get exercised.
            let lo = if next() % 8 == 0 { 0 } else { 4 };
            let span = (body.len() - lo).max(1) as u64;
            let at = (lo + (next() % span) as usize).min(body.len());
            let byte = next() as u8;
            match next() % 4 {
                0 if at < body.len() => body[at] = byte,
                1 if at < body.len() => body[at] ^= 1 << (byte % 8),
                2 => body.insert(at, byte),
                _ if at < body.len() => {
                    body.remove(at);
                }
                _ => body.push(byte),
            }
        }
        assert_no_panic(&body);
    }
}

/// A Deployment as `kubectl create deployment d --image=nginx --replicas=0 --port=80` writes
/// it: Go's every non-pointer field, empty ones included, and a status nobody set.
fn kubectl_deployment_body() -> Vec<u8> {
    let mut port = Vec::new();
    enc::string(&mut port, 1, "");
    enc::uint(&mut port, 2, 0);
    enc::uint(&mut port, 3, 80);
    enc::string(&mut port, 4, "");
    let mut container = Vec::new();
    enc::string(&mut container, 1, "nginx");
    enc::string(&mut container, 2, "nginx");
    enc::bytes(&mut container, 6, &port);
    enc::bytes(&mut container, 8, b""); // resources: {}
    enc::uint(&mut container, 16, 0); // stdin: false
    enc::uint(&mut container, 30, 0); // a field newer than the table, unset
    let mut pod_spec = Vec::new();
    enc::bytes(&mut pod_spec, 2, &container);
    enc::string(&mut pod_spec, 3, "");
    enc::uint(&mut pod_spec, 11, 0);
    let mut template = Vec::new();
    enc::bytes(
        &mut template,
        1,
        &enc::go_style_meta("", "", &[("app", "d")]),
    );
    enc::bytes(&mut template, 2, &pod_spec);
    let mut selector = Vec::new();
    enc::map_entry(&mut selector, 1, "app", b"d");
    let mut spec = Vec::new();
    enc::uint(&mut spec, 1, 0); // replicas: a pointer, so 0 is kept
    enc::bytes(&mut spec, 2, &selector);
    enc::bytes(&mut spec, 3, &template);
    enc::bytes(&mut spec, 4, b""); // strategy: {}
    enc::uint(&mut spec, 5, 0);
    let mut status = Vec::new();
    enc::uint(&mut status, 2, 0);
    let mut deploy = Vec::new();
    enc::bytes(
        &mut deploy,
        1,
        &enc::go_style_meta("d", "", &[("app", "d")]),
    );
    enc::bytes(&mut deploy, 2, &spec);
    enc::bytes(&mut deploy, 3, &status);
    enc::envelope("apps/v1", "Deployment", &deploy)
}

#[test]
fn a_kubectl_created_deployment_decodes_as_its_json_would_read() {
    let got = decode_object(&kubectl_deployment_body()).expect("decodes");
    assert_eq!(
        got,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"app": "d"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}}, "strategy": {},
                "template": {"metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx",
                        "ports": [{"containerPort": 80}], "resources": {}}]}}}})
    );
}

#[test]
fn repeated_messages_are_list_items_and_int_or_string_keeps_its_kind() {
    let rule = |verb: &str, resource: &str| {
        let mut r = Vec::new();
        enc::string(&mut r, 1, verb);
        enc::string(&mut r, 2, "");
        enc::string(&mut r, 3, resource);
        r
    };
    let mut role = Vec::new();
    enc::bytes(&mut role, 1, &enc::go_style_meta("r", "apps", &[]));
    enc::bytes(&mut role, 2, &rule("get", "pods"));
    enc::bytes(&mut role, 2, &rule("list", "secrets"));
    let got = decode_object(&enc::envelope(
        "rbac.authorization.k8s.io/v1",
        "Role",
        &role,
    ))
    .unwrap();
    assert_eq!(
        got["rules"],
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"]}])
    );
    let int_or_string = |ty: u64, int: u64, text: &str| {
        let mut v = Vec::new();
        enc::uint(&mut v, 1, ty);
        enc::uint(&mut v, 2, int);
        enc::string(&mut v, 3, text);
        v
    };
    let mut spec = Vec::new();
    enc::bytes(&mut spec, 1, &int_or_string(1, 0, "50%"));
    enc::bytes(&mut spec, 3, &int_or_string(0, 2, ""));
    let mut pdb = Vec::new();
    enc::bytes(&mut pdb, 1, &enc::go_style_meta("p", "apps", &[]));
    enc::bytes(&mut pdb, 2, &spec);
    let got = decode_object(&enc::envelope("policy/v1", "PodDisruptionBudget", &pdb)).unwrap();
    assert_eq!(
        got["spec"],
        json!({"minAvailable": "50%", "maxUnavailable": 2})
    );
}

#[test]
fn an_ingress_rule_value_is_inline_and_an_unknown_set_field_is_an_error() {
    let mut backend_port = Vec::new();
    enc::uint(&mut backend_port, 2, 8080);
    let mut service = Vec::new();
    enc::string(&mut service, 1, "svc");
    enc::bytes(&mut service, 2, &backend_port);
    let mut backend = Vec::new();
    enc::bytes(&mut backend, 4, &service);
    let mut path = Vec::new();
    enc::string(&mut path, 1, "/");
    enc::bytes(&mut path, 2, &backend);
    enc::string(&mut path, 3, "Prefix");
    let mut http = Vec::new();
    enc::bytes(&mut http, 1, &path);
    let mut rule_value = Vec::new();
    enc::bytes(&mut rule_value, 1, &http);
    let mut rule = Vec::new();
    enc::string(&mut rule, 1, "foo.com");
    enc::bytes(&mut rule, 2, &rule_value);
    let mut spec = Vec::new();
    enc::bytes(&mut spec, 3, &rule);
    let mut ingress = Vec::new();
    enc::bytes(&mut ingress, 1, &enc::go_style_meta("i", "apps", &[]));
    enc::bytes(&mut ingress, 2, &spec);
    let got = decode_object(&enc::envelope("networking.k8s.io/v1", "Ingress", &ingress)).unwrap();
    assert_eq!(
        got["spec"]["rules"],
        json!([{"host": "foo.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "svc", "port": {"number": 8080}}}}]}}])
    );
    let mut sa = Vec::new();
    enc::bytes(&mut sa, 1, &enc::go_style_meta("sa", "apps", &[]));
    enc::string(&mut sa, 9, "something set");
    expect_error(
        &enc::envelope("v1", "ServiceAccount", &sa),
        "field 9 is not one this simulator decodes",
    );
}
