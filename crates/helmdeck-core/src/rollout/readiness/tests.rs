use super::*;
use Progress::{Done, Failed, Waiting};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

type Case<'a> = (&'a str, Progress, &'a str, Value);

/// Runs every case and reports all mismatches at once, each with its id.
fn check<K: DeserializeOwned>(name: &str, cases: Vec<Case<'_>>, eval: fn(&K) -> Readiness) {
    let mut wrong = Vec::new();
    for (id, progress, message, mut object) in cases {
        object["metadata"]["name"] = json!(name);
        let typed: K = serde_json::from_value(object).unwrap_or_else(|e| panic!("{id}: {e}"));
        let got = eval(&typed);
        if got.progress != progress || got.message != message {
            wrong.push(format!(
                "{id}: want {progress:?} {message:?}\n{:>4}got  {:?} {:?}",
                "", got.progress, got.message
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

fn rolling(rest: &str) -> String {
    format!("Waiting for deployment \"web\" rollout to finish: {rest}")
}

/// semantics.md §3.1, kubectl column, plus the ordering and default-replica edges.
#[test]
#[rustfmt::skip]
fn deployment_table() {
    let nrs = json!([{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}, {"type": "Available", "status": "True"}]);
    let updating = json!([{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}]);
    let deadline = json!([{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]);
    let spec_wait = "Waiting for deployment spec update to be observed...";
    let ok = "deployment \"web\" successfully rolled out";
    let d2 = rolling("0 out of 1 new replicas have been updated...");
    let d3 = rolling("1 out of 3 new replicas have been updated...");
    let d4 = rolling("1 old replicas are pending termination...");
    let d5 = rolling("2 of 3 updated replicas are available...");
    let d6 = rolling("3 of 4 updated replicas are available...");
    let cases: Vec<Case<'_>> = vec![
        ("D1", Waiting, spec_wait, json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2, "conditions": nrs}})),
        ("D2", Waiting, &d2, json!({"metadata": {"generation": 0}, "spec": {"replicas": 1}, "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 0, "availableReplicas": 1}})),
        ("D3", Waiting, &d3, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3, "conditions": updating}})),
        ("D4", Waiting, &d4, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 4, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "conditions": updating}})),
        ("D5", Waiting, &d5, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2, "conditions": updating}})),
        ("D6", Waiting, &d6, json!({"metadata": {"generation": 1}, "spec": {"replicas": 4}, "status": {"observedGeneration": 1, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 3, "availableReplicas": 3, "conditions": updating}})),
        ("D7", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "conditions": nrs}})),
        ("D8", Failed, "deployment \"web\" exceeded its progress deadline", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 1, "availableReplicas": 1, "conditions": deadline}})),
        ("D9", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"replicas": 1, "progressDeadlineSeconds": 45}, "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1, "conditions": [{"type": "Progressing", "status": "False", "reason": "Some reason"}, {"type": "Available", "status": "True"}]}})),
        ("D10", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"replicas": 1}, "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1, "conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}, {"type": "Available", "status": "False"}]}})),
        ("D11", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"replicas": 1}, "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1, "conditions": [{"type": "Available", "status": "True"}]}})),
        ("D12", Waiting, spec_wait, json!({"metadata": {"generation": 1}, "spec": {}})),
        ("D13", Waiting, &d3, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "paused": true}, "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3}})),
        ("D14", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"replicas": 0}, "status": {"observedGeneration": 1, "replicas": 0, "updatedReplicas": 0, "readyReplicas": 0, "availableReplicas": 0, "conditions": nrs}})),
        // Row 1 before row 2: an unobserved spec hides an old deadline.
        ("D8-unobserved", Waiting, spec_wait, json!({"metadata": {"generation": 2}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "conditions": deadline}})),
        // Row 2 before the counts: a deadline beats "1 out of 3 updated".
        ("D8-counts", Failed, "deployment \"web\" exceeded its progress deadline", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "conditions": deadline}})),
        // kubectl skips row 3 when spec.replicas is unset, so nothing is left to wait for.
        ("R-unset", Done, ok, json!({"metadata": {"generation": 1}, "spec": {}, "status": {"observedGeneration": 1}})),
    ];
    check("web", cases, deployment);
}

fn deployment_of(v: Value) -> Deployment {
    serde_json::from_value(v).expect("fixture is a Deployment")
}

#[test]
fn deployment_counts_default_to_one_desired_replica() {
    let d = deployment_of(json!({"metadata": {"name": "web", "generation": 1}}));
    let want = Counts {
        desired: 1,
        ready: 0,
        updated: 0,
        available: 0,
    };
    assert_eq!(deployment(&d).counts, want);
    let d = deployment_of(json!({
        "metadata": {"name": "web", "generation": 1},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 1,
                   "readyReplicas": 2, "availableReplicas": 2},
    }));
    let want = Counts {
        desired: 3,
        ready: 2,
        updated: 1,
        available: 2,
    };
    assert_eq!(deployment(&d).counts, want);
}

#[test]
fn empty_objects_do_not_panic() {
    assert_eq!(deployment(&Deployment::default()).progress, Done);
    assert_eq!(statefulset(&StatefulSet::default()).progress, Waiting);
    assert_eq!(daemonset(&DaemonSet::default()).progress, Done);
    assert_eq!(
        job(&Job::default()),
        JobProgress::Running {
            active: 0,
            failed: 0
        }
    );
}

/// semantics.md §3.2 kubectl column, except T1 (OnDelete, decisions.md) and T6 (our
/// revision rule for partition 0). R = 3 unless noted.
#[test]
#[rustfmt::skip]
fn statefulset_table() {
    let on_delete = json!({"type": "OnDelete"});
    let ru = json!({"type": "RollingUpdate"});
    let p0 = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}});
    let p2 = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}});
    let p5 = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 5}});
    let spec_wait = "Waiting for statefulset spec update to be observed...";
    let rev_b = "waiting for statefulset rolling update to complete 3 pods at revision b...";
    let cases: Vec<Case<'_>> = vec![
        ("T1", Waiting, "Waiting for 2 pods to be ready... (OnDelete: pods keep their old revision until deleted)", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": on_delete}, "status": {"observedGeneration": 1, "replicas": 0, "readyReplicas": 1, "currentReplicas": 0, "updatedReplicas": 0}})),
        ("T1-ready", Done, "statefulset \"db\": 3 of 3 pods ready (OnDelete: pods keep their old revision until deleted)", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": on_delete}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 0, "currentRevision": "a", "updateRevision": "b"}})),
        ("T1-unobserved", Waiting, "Waiting for statefulset spec update to be observed... (OnDelete: pods keep their old revision until deleted)", json!({"metadata": {"generation": 2}, "spec": {"replicas": 3, "updateStrategy": on_delete}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3}})),
        ("T2", Waiting, spec_wait, json!({"metadata": {"generation": 2}, "spec": {"replicas": 3, "updateStrategy": ru}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 0}})),
        ("T3", Waiting, spec_wait, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p0}})),
        ("T4", Waiting, "Waiting for 1 pods to be ready...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": ru}, "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "updatedReplicas": 0}})),
        ("T5", Waiting, "Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p0}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 2, "updatedReplicas": 1, "currentRevision": "a", "updateRevision": "b"}})),
        ("T6", Waiting, rev_b, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p0}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "a", "updateRevision": "b"}})),
        ("T6-no-partition", Waiting, rev_b, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {}}}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "a", "updateRevision": "b"}})),
        ("T6-caught-up", Done, "partitioned roll out complete: 3 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p0}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "b", "updateRevision": "b"}})),
        ("T7", Waiting, rev_b, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": ru}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "a", "updateRevision": "b"}})),
        ("T8", Done, "statefulset rolling update complete 3 pods at revision b...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": ru}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "b", "updateRevision": "b"}})),
        ("T9", Done, "partitioned roll out complete: 1 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p2}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 2, "updatedReplicas": 1, "currentRevision": "a", "updateRevision": "b"}})),
        ("T10", Waiting, "Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p2}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 0, "currentRevision": "a", "updateRevision": "b"}})),
        ("T11", Done, "partitioned roll out complete: 0 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": p5}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 0}})),
        ("T12", Done, "partitioned roll out complete: 3 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"replicas": 2, "updateStrategy": p0}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "b", "updateRevision": "b"}})),
        ("T13", Waiting, rev_b, json!({"metadata": {"generation": 1}, "spec": {"replicas": 3, "updateStrategy": ru}, "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 1, "updatedReplicas": 3, "currentRevision": "a", "updateRevision": "b"}})),
        // kubectl skips rows 3–4 without spec.replicas; the revision rule still holds.
        ("R-unset", Done, "partitioned roll out complete: 0 new pods have been updated...", json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": p0}, "status": {"observedGeneration": 1, "currentRevision": "b", "updateRevision": "b"}})),
        ("R-unset-revision", Waiting, "waiting for statefulset rolling update to complete 0 pods at revision b...", json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": p0}, "status": {"observedGeneration": 1, "currentRevision": "a", "updateRevision": "b"}})),
    ];
    check("db", cases, statefulset);
}

#[test]
fn statefulset_counts() {
    let s: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db", "generation": 1},
        "spec": {"updateStrategy": {"type": "OnDelete"}},
        "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
                   "updatedReplicas": 0, "availableReplicas": 1},
    }))
    .expect("fixture is a StatefulSet");
    let r = statefulset(&s);
    // Unset spec.replicas is the API default 1, so the OnDelete rule is satisfied.
    assert_eq!(r.progress, Done);
    assert_eq!(
        r.counts,
        Counts {
            desired: 1,
            ready: 1,
            updated: 0,
            available: 1
        }
    );
}

fn ds_rolling(rest: &str) -> String {
    format!("Waiting for daemon set \"agent\" rollout to finish: {rest}")
}

/// semantics.md §3.3 kubectl column, except E1 (OnDelete, decisions.md).
#[test]
#[rustfmt::skip]
fn daemonset_table() {
    let on_delete = json!({"type": "OnDelete"});
    let ru = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}});
    let ru50 = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}});
    let spec_wait = "Waiting for daemon set spec update to be observed...";
    let ok = "daemon set \"agent\" successfully rolled out";
    let e1 = ds_rolling("3 of 4 pods are ready... (OnDelete: pods keep their old revision until deleted)");
    let e5 = ds_rolling("2 out of 4 new pods have been updated...");
    let e6 = ds_rolling("3 of 4 updated pods are available...");
    let e7 = ds_rolling("2 of 4 updated pods are available...");
    let cases: Vec<Case<'_>> = vec![
        // No generation and no status: 0 ≥ 0 observed and 0 of 0 ready, so our rule says done.
        ("E1", Done, "daemon set \"agent\": 0 of 0 pods ready (OnDelete: pods keep their old revision until deleted)", json!({"spec": {"updateStrategy": on_delete}})),
        ("E1-unobserved", Waiting, "Waiting for daemon set spec update to be observed... (OnDelete: pods keep their old revision until deleted)", json!({"metadata": {"generation": 2}, "spec": {"updateStrategy": on_delete}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "numberReady": 4}})),
        ("E1-not-ready", Waiting, &e1, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": on_delete}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 0, "numberAvailable": 3, "numberReady": 3}})),
        ("E1-ready", Done, "daemon set \"agent\": 4 of 4 pods ready (OnDelete: pods keep their old revision until deleted)", json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": on_delete}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 0, "numberAvailable": 4, "numberReady": 4}})),
        ("E2", Waiting, spec_wait, json!({"metadata": {"generation": 2}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 2, "currentNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 2, "numberReady": 2}})),
        ("E3", Waiting, spec_wait, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}})),
        ("E4", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "currentNumberScheduled": 1, "numberReady": 1}})),
        ("E5", Waiting, &e5, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 2, "numberAvailable": 4, "numberReady": 4}})),
        ("E6", Waiting, &e6, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 4, "numberAvailable": 3, "numberReady": 3}})),
        ("E7", Waiting, &e7, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru50}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 4, "numberAvailable": 2, "numberReady": 2}})),
        ("E8", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 4, "numberAvailable": 4, "numberReady": 2}})),
        ("E9", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 3, "updatedNumberScheduled": 4, "numberAvailable": 4, "numberReady": 4}})),
        ("E10", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4, "updatedNumberScheduled": 4, "numberAvailable": 4, "numberReady": 4}})),
        ("E11", Done, ok, json!({"metadata": {"generation": 1}, "spec": {"updateStrategy": ru}, "status": {"observedGeneration": 1, "desiredNumberScheduled": 0, "currentNumberScheduled": 0, "updatedNumberScheduled": 0, "numberAvailable": 0, "numberReady": 0}})),
    ];
    check("agent", cases, daemonset);
}

#[test]
fn daemonset_counts() {
    let d: DaemonSet = serde_json::from_value(json!({
        "metadata": {"name": "agent", "generation": 1},
        "status": {"observedGeneration": 1, "desiredNumberScheduled": 4,
                   "updatedNumberScheduled": 2, "numberAvailable": 3, "numberReady": 1},
    }))
    .expect("fixture is a DaemonSet");
    let want = Counts {
        desired: 4,
        ready: 1,
        updated: 2,
        available: 3,
    };
    assert_eq!(daemonset(&d).counts, want);
}

fn job_of(v: Value) -> Job {
    serde_json::from_value(v).expect("fixture is a Job")
}

#[test]
fn job_complete() {
    let j = job_of(json!({
        "metadata": {"name": "migrate"},
        "status": {"succeeded": 1, "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached"},
        ]},
    }));
    assert_eq!(job(&j), JobProgress::Complete);
}

#[test]
fn job_failed_backoff_limit() {
    let j = job_of(json!({
        "metadata": {"name": "migrate"},
        "spec": {"backoffLimit": 0},
        "status": {"failed": 1, "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded"},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit"},
        ]},
    }));
    let want = JobProgress::Failed {
        reason: "BackoffLimitExceeded".into(),
        message: "Job has reached the specified backoff limit".into(),
    };
    assert_eq!(job(&j), want);
}

#[test]
fn job_running() {
    // A retried pod and a condition that is present but False: still running.
    let j = job_of(json!({
        "metadata": {"name": "migrate"},
        "spec": {"backoffLimit": 6},
        "status": {"active": 1, "failed": 1, "startTime": "2026-12-01T00:00:00Z",
                   "conditions": [{"type": "Failed", "status": "False"}]},
    }));
    assert_eq!(
        job(&j),
        JobProgress::Running {
            active: 1,
            failed: 1
        }
    );
}
