use std::io::Write;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use flate2::{Compression, write::GzEncoder};
use serde_json::{Value, json};

use super::*;
use crate::helm::hooks::{self, HookPhase, RunKind};
use crate::helm::release::{encode_release_payload, release_secret};

fn release(version: i64, status: &str, description: &str) -> Value {
    json!({
        "name": "demo", "namespace": "apps", "version": version,
        "info": {"status": status, "description": description,
                 "first_deployed": "2026-01-01T10:00:00Z", "last_deployed": format!("2026-01-01T1{version}:00:00Z")},
        "chart": {"metadata": {"name": "deckapp", "version": "0.4.2", "appVersion": "1.4.2"}, "values": {"dbPassword": "chart-default-pw"}},
        "config": {"adminPassword": "s3cr3t-hunter2"},
        "manifest": "---\nkind: Deployment\nmetadata:\n  name: demo-web\n",
        "hooks": [
            {"name": "demo-seed", "kind": "Job", "events": ["post-install", "post-upgrade"], "weight": 5, "last_run": {"phase": "Failed"}},
            {"name": "demo-migrate", "kind": "Job", "events": ["pre-install", "pre-upgrade"], "weight": -5, "last_run": {"phase": "Succeeded"}},
            {"name": "demo-smoke", "kind": "Pod", "events": ["test"], "last_run": {"phase": ""}},
        ],
    })
}

fn secret(value: &Value) -> StoredObject {
    let s = release_secret(value, 1_767_261_600);
    labelled(Storage::Secret, &s)
}

fn labelled(storage: Storage, object: &Value) -> StoredObject {
    let labels = object["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    StoredObject {
        storage,
        name: object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        labels: labels
            .into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
            .collect(),
        body: json!({"data": object["data"]}),
    }
}

/// A Secret record whose inner payload (what Helm base64-encodes once) is `payload`.
fn raw_secret(version: i64, status: &str, payload: &[u8]) -> StoredObject {
    StoredObject {
        storage: Storage::Secret,
        name: format!("sh.helm.release.v1.demo.v{version}"),
        labels: [
            ("owner", "helm"),
            ("name", "demo"),
            ("status", status),
            ("version", &version.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        body: json!({"data": {"release": STANDARD.encode(payload)}}),
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_record_decodes_into_a_helm_history_row_without_values() {
    let d = decode(&secret(&release(
        2,
        "failed",
        "Upgrade \"demo\" failed: boom",
    )));
    assert_eq!(d.row.revision, 2);
    assert_eq!(d.row.status, "failed");
    assert_eq!(d.row.chart, "deckapp-0.4.2");
    assert_eq!(d.row.app_version, "1.4.2");
    assert_eq!(d.row.updated, "2026-01-01T12:00:00Z");
    assert_eq!(d.row.description, "Upgrade \"demo\" failed: boom");
    assert_eq!(d.row.object, "sh.helm.release.v1.demo.v2");
    assert_eq!(d.row.written_at, Some(1_767_261_600));
    assert_eq!(d.row.error, None);
    let text = format!("{d:?}");
    assert!(
        !text.contains("s3cr3t-hunter2") && !text.contains("chart-default-pw"),
        "{text}"
    );
}

#[test]
fn chart_columns_say_missing_like_helm() {
    assert_eq!(
        chart_columns(&json!({})),
        ("MISSING".into(), "MISSING".into())
    );
    assert_eq!(
        chart_columns(&json!({"chart": {"metadata": null}})),
        ("MISSING".into(), "MISSING".into())
    );
    assert_eq!(
        chart_columns(&json!({"chart": {"metadata": {"name": "x"}}})),
        ("x-".into(), String::new())
    );
}

#[test]
fn the_configmap_driver_is_read_too() {
    let payload = encode_release_payload(&release(1, "deployed", "Install complete"));
    let object = json!({"metadata": {"name": "sh.helm.release.v1.demo.v1", "labels": {"owner": "helm", "name": "demo", "version": "1", "status": "deployed"}},
                        "data": {"release": payload}});
    let d = decode(&labelled(Storage::ConfigMap, &object));
    assert_eq!(d.row.error, None, "{:?}", d.row);
    assert_eq!(d.row.status, "deployed");
    assert_eq!(d.row.storage, Storage::ConfigMap);
}

#[test]
fn each_malformed_record_is_its_own_error_and_the_others_still_show() {
    let mut huge =
        br#"{"name":"demo","version":5,"info":{"status":"deployed"},"manifest":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 65 * 1024 * 1024));
    huge.extend(br#""}"#);
    let objects = vec![
        secret(&release(1, "superseded", "Install complete")),
        raw_secret(2, "superseded", b"%%% not base64 %%%"),
        raw_secret(3, "superseded", STANDARD.encode(b"\x1f\x8b\x08\x00garbage, not deflate").as_bytes()),
        raw_secret(4, "superseded", STANDARD.encode(gzip(br#"{"name":"demo","version":4,"info":{"sta"#)).as_bytes()),
        raw_secret(5, "superseded", STANDARD.encode(gzip(&huge)).as_bytes()),
        raw_secret(6, "superseded", STANDARD.encode(gzip(br#"{"name":"demo","version":"six"}"#)).as_bytes()),
        raw_secret(7, "deployed", STANDARD.encode(gzip(br#"{"name":"demo","version":7,"future":{"x":1},"info":{"status":"deployed","description":"Upgrade complete","new_field":true}}"#)).as_bytes()),
    ];
    drop(huge);
    let all = decode_all(&objects);
    let rows: Vec<(i64, Option<&str>)> = all
        .iter()
        .map(|d| (d.row.revision, d.row.error.as_deref()))
        .collect();
    assert_eq!(rows.len(), 7);
    assert_eq!(rows[0], (1, None));
    let err = |rev: usize| all[rev - 1].row.error.clone().unwrap_or_default();
    assert!(err(2).contains("not valid base64"), "{}", err(2));
    assert!(err(3).contains("not valid gzip"), "{}", err(3));
    assert!(err(4).contains("not valid release JSON"), "{}", err(4));
    assert!(err(5).contains("refusing to read it"), "{}", err(5));
    assert!(err(6).contains("cannot read release record"), "{}", err(6));
    assert_eq!(all[6].row.error, None, "unknown fields are ignored");
    assert_eq!(all[6].row.description, "Upgrade complete");
    // Unreadable rows keep the label status.
    assert_eq!(all[2].row.status, "superseded");

    assert_eq!(
        choose(&all, None, "demo", "apps")
            .expect("latest reads")
            .row
            .revision,
        7
    );
    assert_eq!(
        choose(&all, Some(1), "demo", "apps")
            .expect("1 reads")
            .row
            .revision,
        1
    );
    let (rev, why) = choose(&all, Some(3), "demo", "apps").expect_err("3 is broken");
    assert_eq!(rev, Some(3));
    assert!(why.starts_with("revision 3 cannot be read (secret sh.helm.release.v1.demo.v3): release record is not valid gzip"), "{why}");
    let (_, why) = choose(&all, Some(9), "demo", "apps").expect_err("no 9");
    assert_eq!(
        why,
        "release demo has no revision 9 (stored: 1, 2, 3, 4, 5, 6, 7)"
    );
    let (rev, why) = choose(&[], None, "demo", "apps").expect_err("nothing");
    assert_eq!(rev, None);
    assert!(why.contains("has no records"), "{why}");
}

#[test]
fn the_newest_broken_record_is_the_default_and_unreadable() {
    let all = decode_all(&[
        secret(&release(1, "deployed", "Install complete")),
        raw_secret(2, "pending-upgrade", b"!!"),
    ]);
    let (rev, _) = choose(&all, None, "demo", "apps").expect_err("latest broken");
    assert_eq!(rev, Some(2));
    // The lock still shows, from the label status.
    let lock = lock_state(
        &all,
        "demo",
        "apps",
        None,
        jiff::Timestamp::from_second(1_767_261_660).unwrap(),
    )
    .expect("locked");
    assert_eq!(lock.revision, 2);
    assert_eq!(lock.command, "helm rollback demo 1 -n apps");
}

#[test]
fn a_readable_record_wins_over_a_broken_duplicate() {
    let good = release(1, "deployed", "Install complete");
    let payload = encode_release_payload(&good);
    let cm = json!({"metadata": {"name": "sh.helm.release.v1.demo.v1", "labels": {"version": "1"}}, "data": {"release": payload}});
    let all = decode_all(&[
        raw_secret(1, "deployed", b"!!"),
        labelled(Storage::ConfigMap, &cm),
    ]);
    assert_eq!(all.len(), 2, "both rows are listed");
    let chosen = choose(&all, None, "demo", "apps").expect("the ConfigMap reads");
    assert_eq!(chosen.row.storage, Storage::ConfigMap);
}

#[test]
fn lock_with_age_and_rollback_command() {
    let all = decode_all(&[
        secret(&release(1, "superseded", "Install complete")),
        secret(&release(2, "deployed", "Upgrade complete")),
        secret(&release(3, "pending-upgrade", "Preparing upgrade")),
    ]);
    // revision 3's last_deployed is 2026-01-01T13:00:00Z.
    let now: jiff::Timestamp = "2026-01-01T13:20:00Z".parse().unwrap();
    let lock = lock_state(&all, "demo", "apps", None, now).expect("locked");
    assert_eq!(lock.revision, 3);
    assert_eq!(lock.status, "pending-upgrade");
    assert_eq!(lock.since.as_deref(), Some("2026-01-01T13:00:00Z"));
    assert_eq!(lock.age_seconds, Some(1200));
    assert_eq!(lock.last_deployed, Some(2));
    assert_eq!(lock.command, "helm rollback demo 2 -n apps");
    assert!(lock_state(&all[..2], "demo", "apps", None, now).is_none());
}

#[test]
fn a_pending_install_lock_names_the_record_to_delete_in_its_own_storage() {
    let payload =
        encode_release_payload(&release(1, "pending-install", "Initial install underway"));
    let cm = json!({"metadata": {"name": "sh.helm.release.v1.demo.v1", "labels": {"version": "1", "createdAt": "1767261600"}}, "data": {"release": payload}});
    let all = decode_all(&[labelled(Storage::ConfigMap, &cm)]);
    let lock =
        lock_state(&all, "demo", "apps", Some("prod"), jiff::Timestamp::now()).expect("locked");
    assert_eq!(lock.last_deployed, None);
    assert_eq!(
        lock.command,
        "kubectl delete configmap sh.helm.release.v1.demo.v1 -n apps --context prod"
    );
    assert!(lock.note.contains("rollback cannot help"), "{}", lock.note);
}

#[test]
fn the_operation_comes_from_the_record_and_the_revisions_before_it() {
    let all = decode_all(&[
        secret(&release(1, "superseded", "Install complete")),
        secret(&release(2, "superseded", "Upgrade complete")),
        secret(&release(3, "deployed", "Rollback to 1")),
    ]);
    let op = |i: usize| operation(all[i].release.as_ref().unwrap(), &all);
    assert_eq!(op(0), Operation::Install);
    assert_eq!(op(1), Operation::Upgrade);
    assert_eq!(op(2), Operation::Rollback);
}

#[test]
fn execution_order_is_pre_then_post_by_weight_then_name() {
    let d = decode(&secret(&release(2, "failed", "x")));
    let hooks = &d.release.as_ref().unwrap().hooks;
    let order: Vec<(String, bool, HookPhase)> = execution_order(hooks, Operation::Upgrade)
        .into_iter()
        .map(|(h, run)| (h.name, run, h.phase))
        .collect();
    assert_eq!(
        order,
        [
            ("demo-migrate".to_string(), true, HookPhase::Succeeded),
            ("demo-seed".to_string(), true, HookPhase::Failed),
            ("demo-smoke".to_string(), false, HookPhase::NeverRan),
        ]
    );
    let rollback = execution_order(hooks, Operation::Rollback);
    assert!(rollback.iter().all(|(_, run)| !run), "no rollback hooks");
    let names: Vec<&str> = rollback.iter().map(|(h, _)| h.name.as_str()).collect();
    assert_eq!(
        names,
        ["demo-seed", "demo-migrate", "demo-smoke"],
        "record order when none runs"
    );
}

#[test]
fn execution_order_agrees_with_the_deploy_steps_judge() {
    let hook = |name: &str, events: &[&str], weight: i64| HookRecord {
        name: name.into(),
        kind: "Job".into(),
        events: events.iter().map(|e| e.to_string()).collect(),
        weight,
        ..HookRecord::default()
    };
    let hooks = [
        hook("zeta", &["pre-upgrade"], 0),
        hook("seed", &["post-install", "post-upgrade"], 5),
        hook("alpha", &["pre-install", "pre-upgrade"], 0),
        hook("smoke", &["test"], -10),
        hook("init", &["post-upgrade"], 0),
        hook("early", &["pre-install", "pre-upgrade"], -1),
        hook("both", &["pre-install", "post-install"], 3),
    ];
    for (op, kind) in [
        (Operation::Install, RunKind::Install),
        (Operation::Upgrade, RunKind::Upgrade),
    ] {
        let ours: Vec<(String, bool)> = execution_order(&hooks, op)
            .into_iter()
            .map(|(h, run)| (h.name, run))
            .collect();
        let judged: Vec<(String, bool)> = hooks::judge(&hooks, kind)
            .into_iter()
            .map(|j| (j.record.name, j.outcome != HookPhase::NotInThisRun))
            .collect();
        assert_eq!(ours, judged, "{op:?}");
    }
}
