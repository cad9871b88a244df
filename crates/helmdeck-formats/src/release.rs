//! Helm release record codec, in the format of Helm's Secret and ConfigMap storage drivers.
//!
//! Helm stores each revision as `base64(gzip(release JSON))` (std base64, gzip best compression).
//! The Secret driver puts those bytes in `data.release`, so a Secret read as JSON carries the
//! payload base64-encoded a second time; the ConfigMap driver stores the payload string as is.
//! The dashboard needs to read records written by a real Helm, and the simulated API server
//! needs to write records a real Helm accepts, so both directions live here.

use std::io::{Read, Write};

use base64::{Engine as _, engine::general_purpose::STANDARD};
use flate2::{Compression, read::MultiGzDecoder, write::GzEncoder};
use serde_json::{Map, Value, json};

/// Decompressed records larger than this are refused, so a hostile or corrupt record (a "gzip
/// bomb") cannot exhaust memory. Real records are well below it: Kubernetes caps a Secret at 1 MiB.
const MAX_DECOMPRESSED: usize = 64 * 1024 * 1024;

/// Helm checks these three bytes (gzip magic + deflate method) to tell gzip from plain JSON,
/// which very old Helm versions wrote.
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Secret `type` used by Helm's Secret driver.
const SECRET_TYPE: &str = "helm.sh/release.v1";

/// Why a stored release record could not be read.
///
/// Each message is whole on its own (inspect shows it as one line of the history); the gzip
/// variant also keeps the decoder's error as its `source`.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A base64 layer did not decode.
    #[error("release record is not valid base64: {0}")]
    Base64(String),
    /// The gzip stream was corrupt or truncated.
    #[error("release record is not valid gzip: {0}")]
    Gzip(#[source] std::io::Error),
    /// The decoded bytes were not a JSON release object.
    #[error("release record is not valid release JSON: {0}")]
    Json(String),
    /// The storage object lacks the field holding the record (names the field).
    #[error("storage object has no release record: {0} is missing or not a string")]
    Missing(&'static str),
    /// The record decompresses to more than this many bytes.
    #[error("release record decompresses to more than {0} bytes; refusing to read it")]
    TooLarge(usize),
}

/// `base64(gzip(json))` — the string Helm stores as the release bytes (Secret .data.release holds
/// these bytes, so on the wire JSON it is base64 once more; ConfigMap .data.release holds this
/// string directly).
///
/// Uses best compression and a zero gzip mtime like Helm, so the output is deterministic.
pub fn encode_release_payload(release: &Value) -> String {
    let json = release.to_string();
    let mut gz = GzEncoder::new(Vec::with_capacity(json.len() / 4), Compression::best());
    // Writing into a Vec cannot fail, so these results carry no information.
    gz.write_all(json.as_bytes())
        .expect("gzip into a Vec cannot fail");
    let compressed = gz.finish().expect("gzip into a Vec cannot fail");
    STANDARD.encode(compressed)
}

/// Inverse: accepts the inner payload (base64 of gzip, or base64 of plain JSON for old records)
/// and returns the JSON.
///
/// Mirrors Helm's `decodeRelease`: gunzip only when the gzip magic is present, so records from
/// Helm versions that stored plain JSON still read.
pub fn decode_release_payload(payload: &[u8]) -> Result<Value, RecordError> {
    let bytes = decode_base64(payload, "inner payload")?;
    let json = if bytes.len() > GZIP_MAGIC.len() && bytes.starts_with(&GZIP_MAGIC) {
        gunzip_capped(&bytes, MAX_DECOMPRESSED)?
    } else {
        bytes
    };
    parse_release_json(&json)
}

/// From a Secret object as served in JSON (data.release = base64 of the payload): decode twice +
/// gunzip.
pub fn decode_release_secret(secret: &Value) -> Result<Value, RecordError> {
    let outer = release_field(secret)?;
    let payload = decode_base64(outer.as_bytes(), "Secret data.release")?;
    decode_release_payload(&payload)
}

/// From a ConfigMap object (data.release = payload string).
pub fn decode_release_configmap(cm: &Value) -> Result<Value, RecordError> {
    decode_release_payload(release_field(cm)?.as_bytes())
}

/// Build the Secret object Helm 4 would store (name sh.helm.release.v1.NAME.vN, type
/// helm.sh/release.v1, labels owner=helm,name,status,version, createdAt=unix secs) for a release
/// JSON.
///
/// Missing release fields fall back to empty name, version 0 and status `unknown` rather than
/// failing: the simulator builds these from its own records, and a visibly odd Secret is easier
/// to debug than a panic. `metadata.namespace` is set from the release's `namespace` when present
/// (Helm's driver leaves it to the client, but a stored object always has one).
pub fn release_secret(release: &Value, created_at_unix: i64) -> Value {
    let name = release
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let version = release.get("version").and_then(Value::as_i64).unwrap_or(0);
    let status = release
        .pointer("/info/status")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("unknown");
    let mut metadata = Map::new();
    metadata.insert(
        "name".into(),
        json!(format!("sh.helm.release.v1.{name}.v{version}")),
    );
    if let Some(ns) = release
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        metadata.insert("namespace".into(), json!(ns));
    }
    metadata.insert(
        "labels".into(),
        json!({
            "owner": "helm",
            "name": name,
            "status": status,
            "version": version.to_string(),
            "createdAt": created_at_unix.to_string(),
        }),
    );
    let payload = encode_release_payload(release);
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": SECRET_TYPE,
        "metadata": metadata,
        "data": {"release": STANDARD.encode(payload)},
    })
}

/// `data.release` of a Secret or ConfigMap as a string.
fn release_field(object: &Value) -> Result<&str, RecordError> {
    object
        .pointer("/data/release")
        .and_then(Value::as_str)
        .ok_or(RecordError::Missing("data.release"))
}

/// Standard base64, ignoring CR/LF like Go's `StdEncoding.DecodeString` does.
fn decode_base64(input: &[u8], what: &str) -> Result<Vec<u8>, RecordError> {
    let cleaned: Vec<u8> = input
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\r' | b'\n'))
        .collect();
    STANDARD
        .decode(&cleaned)
        .map_err(|e| RecordError::Base64(format!("{what}: {e}")))
}

/// Gunzips `bytes`, refusing output larger than `limit`. Reads all gzip members, like Go's
/// `gzip.Reader`, so trailing garbage after the first member is an error rather than ignored.
fn gunzip_capped(bytes: &[u8], limit: usize) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    MultiGzDecoder::new(bytes)
        .take(cap)
        .read_to_end(&mut out)
        .map_err(RecordError::Gzip)?;
    if out.len() > limit {
        return Err(RecordError::TooLarge(limit));
    }
    Ok(out)
}

/// Parses the release JSON; Helm unmarshals into a struct, so anything but an object is rejected.
fn parse_release_json(bytes: &[u8]) -> Result<Value, RecordError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| RecordError::Json(e.to_string()))?;
    if !value.is_object() {
        return Err(RecordError::Json(format!(
            "expected a JSON object, got {}",
            json_kind(&value)
        )));
    }
    Ok(value)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::GzBuilder;

    /// `base64.b64encode(gzip.compress(json.dumps(rel).encode(), mtime=0))` from CPython 3, for
    /// rel = {'name':'demo','namespace':'apps','version':1,'info':{'status':'deployed'}}.
    const PYTHON_PAYLOAD: &str = "H4sIAAAAAAACA6tWykvMTVWyUlBKSc3NV9JRAPOLCxKTwYKJBQXFIMGy1KLizPw8oJAhkJeZl5YPZFYrFZcklpQWQ3QX5ORXpqYo1dYCAJh9ZYNTAAAA";

    fn demo_release() -> Value {
        json!({
            "name": "demo", "namespace": "apps", "version": 3,
            "info": {"status": "failed", "description": "post-install hook failed",
                     "first_deployed": "2026-01-01T10:00:00Z", "last_deployed": "2026-01-01T10:00:00Z"},
            "chart": {"metadata": {"name": "demo", "version": "0.1.0", "appVersion": "1.0", "apiVersion": "v2"}},
            "manifest": "---\n# Source: demo/templates/cm.yaml\nkind: ConfigMap\n",
            "hooks": [{"name": "demo-post", "kind": "Job", "path": "demo/templates/hook.yaml",
                       "events": ["post-install"],
                       "last_run": {"started_at": "2026-01-01T10:00:01Z",
                                    "completed_at": "2026-01-01T10:00:09Z", "phase": "Failed"}}],
            "apply_method": "ssa",
        })
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), Compression::default());
        gz.write_all(data).expect("write");
        gz.finish().expect("finish")
    }

    #[test]
    fn payload_round_trip() {
        let release = demo_release();
        let payload = encode_release_payload(&release);
        assert!(
            payload.starts_with("H4sI"),
            "gzip magic in base64: {payload}"
        );
        assert_eq!(encode_release_payload(&release), payload, "deterministic");
        assert_eq!(
            decode_release_payload(payload.as_bytes()).expect("decodes"),
            release
        );
    }

    #[test]
    fn release_secret_shape_and_round_trip() {
        let release = demo_release();
        let secret = release_secret(&release, 1_767_261_600);
        assert_eq!(secret["apiVersion"], "v1");
        assert_eq!(secret["kind"], "Secret");
        assert_eq!(secret["type"], "helm.sh/release.v1");
        assert_eq!(
            secret["metadata"],
            json!({
                "name": "sh.helm.release.v1.demo.v3",
                "namespace": "apps",
                "labels": {"owner": "helm", "name": "demo", "status": "failed",
                           "version": "3", "createdAt": "1767261600"},
            })
        );
        // data.release is base64(base64(gzip(json))): its decoding starts with "H4sI".
        let outer = secret["data"]["release"].as_str().expect("string");
        let inner = STANDARD.decode(outer).expect("base64");
        assert!(inner.starts_with(b"H4sI"));
        assert_eq!(decode_release_secret(&secret).expect("decodes"), release);
    }

    #[test]
    fn release_secret_defaults_for_missing_fields() {
        let secret = release_secret(&json!({}), 5);
        assert_eq!(secret["metadata"]["name"], "sh.helm.release.v1..v0");
        assert_eq!(secret["metadata"]["labels"]["status"], "unknown");
        assert!(secret["metadata"].get("namespace").is_none());
    }

    #[test]
    fn decodes_python_style_payload() {
        let want = json!({"name": "demo", "namespace": "apps", "version": 1,
                          "info": {"status": "deployed"}});
        assert_eq!(
            decode_release_payload(PYTHON_PAYLOAD.as_bytes()).expect("decodes"),
            want
        );
        // Same construction with flate2, as the notes' Python encoder does it (with spaces).
        let text = br#"{"name": "demo", "namespace": "apps", "version": 1, "info": {"status": "deployed"}}"#;
        let payload = STANDARD.encode(gzip(text));
        assert_eq!(
            decode_release_payload(payload.as_bytes()).expect("decodes"),
            want
        );
        let secret = json!({"data": {"release": STANDARD.encode(&payload)}});
        assert_eq!(decode_release_secret(&secret).expect("decodes"), want);
        let cm = json!({"data": {"release": payload}});
        assert_eq!(decode_release_configmap(&cm).expect("decodes"), want);
    }

    #[test]
    fn plain_json_fallback_without_gzip_magic() {
        let release = json!({"name": "old", "version": 1, "info": {"status": "superseded"}});
        let payload = STANDARD.encode(release.to_string());
        assert_eq!(
            decode_release_payload(payload.as_bytes()).expect("decodes"),
            release
        );
        let secret = json!({"data": {"release": STANDARD.encode(&payload)}});
        assert_eq!(decode_release_secret(&secret).expect("decodes"), release);
    }

    #[test]
    fn base64_line_breaks_are_ignored() {
        let payload = encode_release_payload(&demo_release());
        let wrapped: String = payload
            .as_bytes()
            .chunks(76)
            .map(|c| format!("{}\r\n", String::from_utf8_lossy(c)))
            .collect();
        assert_eq!(
            decode_release_payload(wrapped.as_bytes()).expect("decodes"),
            demo_release()
        );
    }

    #[test]
    fn bad_base64_is_base64_error() {
        assert!(matches!(
            decode_release_payload(b"not base64!"),
            Err(RecordError::Base64(_))
        ));
        let secret = json!({"data": {"release": "%%%"}});
        assert!(matches!(
            decode_release_secret(&secret),
            Err(RecordError::Base64(_))
        ));
        // Outer layer fine, inner layer broken.
        let secret = json!({"data": {"release": STANDARD.encode("H4sI*")}});
        assert!(matches!(
            decode_release_secret(&secret),
            Err(RecordError::Base64(_))
        ));
    }

    #[test]
    fn bad_gzip_is_gzip_error() {
        let mut bogus = GZIP_MAGIC.to_vec();
        bogus.extend_from_slice(b"\x00\x00\x00\x00\x00\x03garbage that is not deflate");
        let err = decode_release_payload(STANDARD.encode(&bogus).as_bytes()).expect_err("bad gzip");
        assert!(matches!(err, RecordError::Gzip(_)), "{err:?}");
    }

    #[test]
    fn a_gzip_error_keeps_the_decoder_error_as_its_source() {
        let mut bogus = GZIP_MAGIC.to_vec();
        bogus.extend_from_slice(b"\x00\x00\x00\x00\x00\x03garbage that is not deflate");
        let err = decode_release_payload(STANDARD.encode(&bogus).as_bytes()).expect_err("bad gzip");
        let source = std::error::Error::source(&err).expect("the gzip error is kept");
        assert!(
            source.downcast_ref::<std::io::Error>().is_some(),
            "{source:?}"
        );
        assert!(err.to_string().ends_with(&source.to_string()), "{err}");
    }

    #[test]
    fn truncated_gzip_is_gzip_error() {
        let full = gzip(demo_release().to_string().as_bytes());
        for cut in [4, 10, full.len() / 2, full.len() - 8, full.len() - 1] {
            let err = decode_release_payload(STANDARD.encode(&full[..cut]).as_bytes())
                .expect_err("truncated gzip");
            assert!(matches!(err, RecordError::Gzip(_)), "cut {cut}: {err:?}");
        }
    }

    #[test]
    fn trailing_garbage_after_gzip_is_gzip_error() {
        let mut data = gzip(b"{}");
        data.extend_from_slice(b"junk");
        let err = decode_release_payload(STANDARD.encode(&data).as_bytes()).expect_err("junk");
        assert!(matches!(err, RecordError::Gzip(_)), "{err:?}");
    }

    #[test]
    fn non_json_is_json_error() {
        let gz = STANDARD.encode(gzip(b"this is not json"));
        assert!(matches!(
            decode_release_payload(gz.as_bytes()),
            Err(RecordError::Json(_))
        ));
        let plain = STANDARD.encode("{\"name\":");
        assert!(matches!(
            decode_release_payload(plain.as_bytes()),
            Err(RecordError::Json(_))
        ));
        let array = STANDARD.encode("[1,2]");
        let err = decode_release_payload(array.as_bytes()).expect_err("array");
        assert!(
            err.to_string()
                .contains("expected a JSON object, got an array"),
            "{err}"
        );
        assert!(matches!(
            decode_release_payload(b""),
            Err(RecordError::Json(_))
        ));
    }

    #[test]
    fn missing_release_field_is_missing_error() {
        for object in [
            json!({}),
            json!({"data": {}}),
            json!({"data": {"release": 5}}),
            json!(null),
        ] {
            assert!(matches!(
                decode_release_secret(&object),
                Err(RecordError::Missing("data.release"))
            ));
            assert!(matches!(
                decode_release_configmap(&object),
                Err(RecordError::Missing("data.release"))
            ));
        }
    }

    #[test]
    fn gzip_bomb_is_too_large() {
        // The real limit with a small stand-in, so the test stays fast in debug builds.
        let gz = gzip(&[b' '; 4096]);
        assert!(matches!(
            gunzip_capped(&gz, 4095),
            Err(RecordError::TooLarge(4095))
        ));
        assert_eq!(
            gunzip_capped(&gz, 4096).expect("exactly at limit").len(),
            4096
        );
    }

    #[test]
    fn gzip_bomb_over_64_mib_is_too_large() {
        // 64 MiB + 1 of spaces compresses to ~64 KiB; decoding must stop at the cap.
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..64 {
            gz.write_all(&chunk).expect("write");
        }
        gz.write_all(b" ").expect("write");
        let payload = STANDARD.encode(gz.finish().expect("finish"));
        let err = decode_release_payload(payload.as_bytes()).expect_err("bomb");
        assert!(
            matches!(err, RecordError::TooLarge(MAX_DECOMPRESSED)),
            "{err:?}"
        );
        assert!(err.to_string().contains("67108864"), "{err}");
    }

    #[test]
    fn error_messages_are_distinct() {
        let messages = [
            RecordError::Base64("x".into()).to_string(),
            RecordError::Gzip(std::io::Error::other("x")).to_string(),
            RecordError::Json("x".into()).to_string(),
            RecordError::Missing("data.release").to_string(),
            RecordError::TooLarge(1).to_string(),
        ];
        for (i, a) in messages.iter().enumerate() {
            for b in &messages[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert!(messages[3].contains("data.release"));
    }
}
