use serde_json::json;

use super::*;
use crate::engine::event::{PodView, WorkloadView};
use crate::helm::hooks::HookPhase;
use crate::helm::status::{HistoryEntry, HookRecord};
use crate::inspect::model::{HookPod, LockState, Operation, RevisionInfo, Storage};

fn row(revision: i64, status: &str, error: Option<&str>) -> HistoryRow {
    let read = error.is_none();
    let when_read = |text: String| if read { text } else { String::new() };
    HistoryRow {
        entry: HistoryEntry {
            revision,
            updated: when_read(format!("2026-01-01T1{revision}:00:00Z")),
            status: status.into(),
            chart: when_read("deckapp-0.4.2".into()),
            app_version: when_read("1.4.2".into()),
            description: when_read("Upgrade complete".into()),
        },
        storage: Storage::Secret,
        object: format!("sh.helm.release.v1.demo.v{revision}"),
        written_at: Some(1),
        error: error.map(String::from),
    }
}

fn sample() -> Inspection {
    let seed = HookRecord {
        name: "demo-seed".into(),
        kind: "Job".into(),
        path: "deckapp/templates/seed-job.yaml".into(),
        events: vec!["post-install".into(), "post-upgrade".into()],
        weight: 5,
        phase: HookPhase::Failed,
        started_at: Some("2026-01-01T12:00:01Z".into()),
        completed_at: None,
        delete_policies: vec!["before-hook-creation".into()],
    };
    let smoke = HookRecord {
        name: "demo-smoke".into(),
        kind: "Pod".into(),
        events: vec!["test".into()],
        ..HookRecord::default()
    };
    let container = ContainerEvidence {
        name: "seed".into(),
        state: "terminated".into(),
        terminated: Some(Termination {
            exit_code: 1,
            reason: Some("Error".into()),
            message: Some("row 17".into()),
            ..Termination::default()
        }),
        log: vec!["loading fixtures".into(), "error: row 17".into()],
        ..ContainerEvidence::default()
    };
    Inspection {
        release: "demo".into(),
        namespace: "apps".into(),
        requested: None,
        revision: Some(2),
        error: None,
        init_job: None,
        history: vec![
            row(1, "deployed", None),
            row(2, "failed", None),
            row(3, "superseded", Some("release record is not valid gzip: x")),
        ],
        lock: Some(LockState {
            revision: 3,
            status: "pending-upgrade".into(),
            since: Some("2026-01-01T13:00:00Z".into()),
            age_seconds: Some(60),
            last_deployed: Some(1),
            command: "helm rollback demo 1 -n apps".into(),
            note: "n".into(),
        }),
        info: Some(RevisionInfo {
            revision: 2,
            status: "failed".into(),
            description: "Upgrade \"demo\" failed".into(),
            chart: "deckapp-0.4.2".into(),
            app_version: "1.4.2".into(),
            first_deployed: None,
            last_deployed: Some("2026-01-01T12:00:00Z".into()),
            operation: Operation::Upgrade,
            storage: Storage::Secret,
            object: "sh.helm.release.v1.demo.v2".into(),
        }),
        hooks: vec![
            InspectedHook {
                record: seed,
                in_this_run: true,
                live: Some(HookEvidence {
                    kind: "Job".into(),
                    name: "demo-seed".into(),
                    found: true,
                    status: Some("Failed: BackoffLimitExceeded".into()),
                    failed: 2,
                    pods: vec![HookPod {
                        name: "demo-seed-a".into(),
                        phase: "Failed".into(),
                        containers: vec![container],
                        ..HookPod::default()
                    }],
                    ..HookEvidence::default()
                }),
            },
            InspectedHook {
                record: smoke,
                in_this_run: false,
                live: None,
            },
        ],
        workloads: vec![WorkloadView {
            kind: "Deployment".into(),
            namespace: "apps".into(),
            name: "demo-api".into(),
            optional: false,
            optional_because: None,
            ready: true,
            failed: false,
            message: "deployment \"demo-api\" successfully rolled out".into(),
            desired: 2,
            ready_replicas: 2,
            updated: 2,
            available: 2,
            generation: 1,
            created: None,
            pod_causes: vec![],
            evidence: vec![],
            notes: vec![],
        }],
        pods: vec![PodView {
            name: "demo-api-1".into(),
            namespace: "apps".into(),
            owner: "Deployment/demo-api".into(),
            phase: "Running".into(),
            ready: true,
            restarts: 0,
            node: Some("node-1".into()),
            current: true,
            causes: vec![],
            containers: vec!["api".into()],
            container_states: Vec::new(),
        }],
        events: vec![],
        manifest: None,
        warnings: vec![],
    }
}

#[test]
fn history_entries_have_helm_historys_fields_first() {
    let doc = document(&sample());
    let entry = &doc["history"][0];
    let helm = json!({"revision": 1, "updated": "2026-01-01T11:00:00Z", "status": "deployed", "chart": "deckapp-0.4.2",
                      "app_version": "1.4.2", "description": "Upgrade complete"});
    for (k, v) in helm.as_object().unwrap() {
        assert_eq!(&entry[k], v, "{k}");
    }
    assert_eq!(entry["storage"], "secret");
    assert_eq!(entry["error"], json!(null));
    assert_eq!(
        doc["history"][2]["error"],
        "release record is not valid gzip: x"
    );
}

#[test]
fn document_shape() {
    let doc = document(&sample());
    assert_eq!(doc["inspect_version"], 1);
    assert_eq!(doc["revision"], 2);
    assert_eq!(doc["readable"], true);
    assert_eq!(doc["lock"]["command"], "helm rollback demo 1 -n apps");
    assert_eq!(doc["info"]["operation"], "upgrade");
    assert_eq!(doc["info"]["storage"], "secret");
    let seed = &doc["hooks"][0];
    assert_eq!(seed["order"], 0);
    assert_eq!(seed["phase"], "Failed");
    assert_eq!(seed["in_this_run"], true);
    let c = &seed["live"]["pods"][0]["containers"][0];
    assert_eq!(c["exit_code"], 1);
    assert_eq!(c["terminated"]["message"], "row 17");
    assert_eq!(c["log"], json!(["loading fixtures", "error: row 17"]));
    assert_eq!(doc["hooks"][1]["phase"], "never ran");
    assert_eq!(doc["hooks"][1]["live"], json!(null));
    let w = &doc["workloads"][0];
    assert_eq!(
        w["replicas"],
        json!({"desired": 2, "ready": 2, "updated": 2, "available": 2})
    );
    assert_eq!(w["namespace"], "apps");
    assert_eq!(w["pods"][0]["name"], "demo-api-1");
    assert_eq!(w["optional"], false);
    assert_eq!(w["optional_because"], json!(null));
    assert!(doc.get("manifest").is_none(), "only with --show-manifest");
}

#[test]
fn an_unreadable_revision_is_not_readable_with_its_error() {
    let mut i = sample();
    i.info = None;
    i.hooks.clear();
    i.revision = Some(3);
    i.error = Some("revision 3 cannot be read".into());
    assert_eq!(i.exit_code(), 1);
    let doc = document(&i);
    assert_eq!(doc["readable"], false);
    assert_eq!(doc["error"], "revision 3 cannot be read");
    assert_eq!(
        doc["history"].as_array().unwrap().len(),
        3,
        "the other revisions still show"
    );
    assert_eq!(sample().exit_code(), 0);
}

#[test]
fn the_manifest_appears_only_when_collected() {
    let mut i = sample();
    i.manifest = Some("kind: Secret\ndata:\n  k: '***'\n".into());
    assert_eq!(
        document(&i)["manifest"],
        "kind: Secret\ndata:\n  k: '***'\n"
    );
}

#[test]
fn the_plain_text_shows_the_same_facts() {
    let text = crate::inspect::text::render(&sample());
    for want in [
        "✗ demo · apps · revision 2 (upgrade) · failed",
        "▸    2",
        "✗ unreadable (label status superseded), secret sh.helm.release.v1.demo.v3: release record is not valid gzip: x",
        "◐ revision 3 is pending-upgrade since 2026-01-01T13:00:00Z (1m0s ago)",
        "fix: helm rollback demo 1 -n apps",
        "demo-seed",
        "✗ Failed",
        "· never ran (not part of an upgrade)",
        "Job: Failed: BackoffLimitExceeded · 0 active, 0 succeeded, 2 failed",
        "container seed: terminated, exit 1 (Error)",
        "termination message: row 17",
        "│ error: row 17",
        "✓ Deployment",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

/// Workloads in two namespaces (`namespaceOverride`): JSON names each one's namespace and
/// lists only that namespace's pods; the text gets a namespace column, one namespace none.
#[test]
fn workloads_in_two_namespaces_are_named_with_theirs() {
    let mut i = sample();
    let mut other = i.workloads[0].clone();
    other.namespace = "monitoring".into();
    i.workloads.push(other);
    let mut pod = i.pods[0].clone();
    pod.namespace = "monitoring".into();
    pod.name = "demo-api-2".into();
    i.pods.push(pod);
    let doc = document(&i);
    let shown: Vec<(&str, Vec<&str>)> = doc["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let pods = w["pods"].as_array().unwrap();
            (
                w["namespace"].as_str().unwrap(),
                pods.iter().map(|p| p["name"].as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("apps", vec!["demo-api-1"]),
            ("monitoring", vec!["demo-api-2"])
        ]
    );
    let text = crate::inspect::text::render(&i);
    assert!(
        text.contains("✓ Deployment   apps        demo-api"),
        "{text}"
    );
    assert!(
        text.contains("✓ Deployment   monitoring  demo-api"),
        "{text}"
    );
    let one = crate::inspect::text::render(&sample());
    assert!(one.contains("✓ Deployment   demo-api"), "{one}");
}

/// Issue 24: at 3,000 replicas READY is `3000/3000` whole, and every row's message starts in
/// the same column as a 2-replica row's.
#[test]
fn the_ready_column_is_as_wide_as_its_widest_count() {
    let mut i = sample();
    let mut big = i.workloads[0].clone();
    big.name = "demo-big".into();
    (big.desired, big.ready_replicas) = (30000, 29999);
    i.workloads.push(big);
    let text = crate::inspect::text::render(&i);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("rolled out")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[1].contains(" 29999/30000  "), "{text}");
    let at: Vec<usize> = rows.iter().map(|r| r.find("deployment").unwrap()).collect();
    assert_eq!(at[0], at[1], "the messages line up:\n{text}");
}
