//! Job controller tests: success with logs, the backoff limit, refused pod creation, flaky and
//! exit-code jobs.

use super::*;

#[test]
fn job_succeeds_with_logs() {
    let mut h = Harness::new(
        "jobs:\n  - match: \"*-migrate\"\n    after: 1s\n    logs: [\"migrating\", \"done\"]\n",
    );
    h.create(*ids::JOBS, job("demo-migrate", 6));
    let complete = h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "demo-migrate"), "Complete").is_some()
    });
    assert!(complete);
    let j = h.get(*ids::JOBS, "demo-migrate");
    assert_eq!(
        condition(&j, "SuccessCriteriaMet").unwrap()["status"],
        "True"
    );
    assert_eq!(condition(&j, "Complete").unwrap()["status"], "True");
    assert_eq!(
        (n(&j, "/status/succeeded"), n(&j, "/status/active")),
        (1, 0)
    );
    assert!(j["status"]["completionTime"].is_string() && j["status"]["startTime"].is_string());
    let pod = h.list(*ids::PODS, "demo-migrate-").pop().unwrap();
    assert_eq!(pod["status"]["phase"], "Succeeded");
    assert_eq!(pod["metadata"]["labels"]["job-name"], "demo-migrate");
    assert_eq!(
        pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"],
        meta(&j, "uid")
    );
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["reason"],
        "Completed"
    );
    let logs = h
        .sim
        .logs
        .read(NS, meta(&pod, "name"), "app", false)
        .unwrap();
    assert_eq!(
        logs.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
        ["migrating", "done"]
    );
    assert_eq!(h.events("demo-migrate", "Completed").len(), 1);
    assert_eq!(h.events("demo-migrate", "SuccessfulCreate").len(), 1);
}

#[test]
fn job_fails_after_the_backoff_limit() {
    let mut h = Harness::new(
        "jobs:\n  - match: \"*-seed\"\n    outcome: fail\n    exit_code: 2\n    after: 500ms\n    logs: [\"boom\"]\n",
    );
    h.create(*ids::JOBS, job("demo-seed", 2));
    let failed = h.run_until(Duration::from_secs(20), |h| {
        condition(&h.get(*ids::JOBS, "demo-seed"), "Failed").is_some()
    });
    assert!(failed);
    h.run(Duration::from_secs(2));
    let j = h.get(*ids::JOBS, "demo-seed");
    assert_eq!(n(&j, "/status/failed"), 3, "backoffLimit + 1");
    let c = condition(&j, "Failed").unwrap();
    assert_eq!(
        (c["reason"].as_str(), c["message"].as_str()),
        (
            Some("BackoffLimitExceeded"),
            Some("Job has reached the specified backoff limit")
        )
    );
    assert_eq!(condition(&j, "FailureTarget").unwrap()["status"], "True");
    let pods = h.list(*ids::PODS, "demo-seed-");
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        assert_eq!(pod["status"]["phase"], "Failed");
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            2
        );
        let logs = h
            .sim
            .logs
            .read(NS, meta(pod, "name"), "app", false)
            .unwrap();
        assert_eq!(logs[0].1, "boom");
    }
    assert_eq!(h.events("demo-seed", "BackoffLimitExceeded").len(), 1);
}

#[test]
fn a_job_whose_service_account_is_missing_reports_failed_create_until_it_exists() {
    let mut h = Harness::new("jobs:\n  - match: demo-init\n    after: 300ms\n");
    let mut j = job("demo-init", 6);
    j["spec"]["template"]["spec"]["serviceAccountName"] = json!("demo-init");
    h.create(*ids::JOBS, j);
    h.run(Duration::from_secs(3));
    assert!(
        h.list(*ids::PODS, "demo-init-").is_empty(),
        "the pod is refused"
    );
    let refused = h.events("demo-init", "FailedCreate");
    assert_eq!(refused.len(), 1, "one event, counted: {refused:?}");
    assert_eq!(
        refused[0]["message"],
        "Error creating: pods \"demo-init-\" is forbidden: error looking up service account apps/demo-init: serviceaccount \"demo-init\" not found"
    );
    assert_eq!(refused[0]["type"], "Warning");
    assert!(n(&refused[0], "/count") >= 2, "retried: {}", refused[0]);
    let sa = h.sim.store.create(
        *ids::SERVICEACCOUNTS,
        Some(NS),
        json!({"metadata": {"name": "demo-init"}}),
    );
    assert!(sa.is_ok());
    assert!(h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "demo-init"), "Complete").is_some()
    }));
    let pod = h.list(*ids::PODS, "demo-init-").pop().unwrap();
    assert_eq!(pod["spec"]["serviceAccountName"], "demo-init");
}

#[test]
fn flaky_job_fails_first_then_succeeds() {
    let mut h = Harness::new("jobs:\n  - match: flaky\n    fail_first: 1\n    after: 300ms\n");
    h.create(*ids::JOBS, job("flaky", 6));
    assert!(h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "flaky"), "Complete").is_some()
    }));
    let j = h.get(*ids::JOBS, "flaky");
    assert_eq!(
        (n(&j, "/status/failed"), n(&j, "/status/succeeded")),
        (1, 1)
    );
}

#[test]
fn a_shell_exit_command_ends_a_job_pod_with_that_code() {
    let mut h = Harness::new("nodes: 1\n");
    let mut failing = job("demo-init", 1);
    failing["spec"]["template"]["spec"]["containers"][0]["command"] = json!(["sh", "-c", "exit 3"]);
    h.create(*ids::JOBS, failing);
    let mut args_form = job("demo-args", 0);
    let c = &mut args_form["spec"]["template"]["spec"]["containers"][0];
    c["command"] = json!(["/bin/sh"]);
    c["args"] = json!(["-c", "echo migrating; exit 7"]);
    h.create(*ids::JOBS, args_form);
    let mut ok = job("demo-ok", 0);
    ok["spec"]["template"]["spec"]["containers"][0]["command"] = json!(["sh", "-c", "exit 0"]);
    h.create(*ids::JOBS, ok);
    let done = h.run_until(Duration::from_secs(20), |h| {
        ["demo-init", "demo-args", "demo-ok"].iter().all(|j| {
            let j = h.get(*ids::JOBS, j);
            condition(&j, "Failed").is_some() || condition(&j, "Complete").is_some()
        })
    });
    assert!(done);
    let j = h.get(*ids::JOBS, "demo-init");
    assert!(condition(&j, "Failed").is_some(), "{j}");
    assert_eq!(n(&j, "/status/failed"), 2, "backoffLimit + 1");
    for pod in h.list(*ids::PODS, "demo-init-") {
        let t = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(
            (t["exitCode"].as_i64(), t["reason"].as_str()),
            (Some(3), Some("Error"))
        );
    }
    let pod = h.list(*ids::PODS, "demo-args-").pop().unwrap();
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        7
    );
    assert!(condition(&h.get(*ids::JOBS, "demo-ok"), "Complete").is_some());
}

fn on_failure(mut j: Value) -> Value {
    j["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    j
}

#[test]
fn an_on_failure_job_restarts_its_one_pod_until_the_backoff_limit() {
    let mut h = Harness::new(
        "time_scale: 100\njobs:\n  - match: seed\n    outcome: fail\n    exit_code: 2\n    after: 100ms\n    logs: [\"boom\"]\n",
    );
    h.create(*ids::JOBS, on_failure(job("seed", 3)));
    let failed = h.run_until(Duration::from_secs(20), |h| {
        condition(&h.get(*ids::JOBS, "seed"), "Failed").is_some()
    });
    assert!(failed);
    let j = h.get(*ids::JOBS, "seed");
    let c = condition(&j, "Failed").unwrap();
    assert_eq!(c["reason"], "BackoffLimitExceeded");
    assert_eq!(
        n(&j, "/status/failed"),
        1,
        "the one pod, deleted, counts as failed"
    );
    assert_eq!(h.events("seed", "SuccessfulCreate").len(), 1, "one pod");
    assert!(h.list(*ids::PODS, "seed-").is_empty(), "deleted on failure");
}

#[test]
fn an_on_failure_job_that_fails_first_then_succeeds_in_the_same_pod() {
    let mut h = Harness::new(
        "time_scale: 100\njobs:\n  - match: flaky\n    fail_first: 2\n    after: 100ms\n",
    );
    h.create(*ids::JOBS, on_failure(job("flaky", 6)));
    assert!(h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "flaky"), "Complete").is_some()
    }));
    let pods = h.list(*ids::PODS, "flaky-");
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["status"]["phase"], "Succeeded");
    assert_eq!(pods[0]["status"]["containerStatuses"][0]["restartCount"], 2);
    assert_eq!(n(&h.get(*ids::JOBS, "flaky"), "/status/failed"), 0);
}

#[test]
fn active_deadline_fails_the_job_and_deletes_its_pods() {
    let mut h = Harness::new("jobs:\n  - match: slow\n    outcome: hang\n");
    let mut j = job("slow", 6);
    j["spec"]["activeDeadlineSeconds"] = json!(2);
    h.create(*ids::JOBS, j);
    h.run(Duration::from_secs(1));
    assert_eq!(h.list(*ids::PODS, "slow-").len(), 1);
    assert!(condition(&h.get(*ids::JOBS, "slow"), "Failed").is_none());
    assert!(h.run_until(Duration::from_secs(5), |h| {
        condition(&h.get(*ids::JOBS, "slow"), "Failed").is_some()
    }));
    let j = h.get(*ids::JOBS, "slow");
    let c = condition(&j, "Failed").unwrap();
    assert_eq!(
        (c["reason"].as_str(), c["message"].as_str()),
        (
            Some("DeadlineExceeded"),
            Some("Job was active longer than specified deadline")
        )
    );
    assert!(h.list(*ids::PODS, "slow-").is_empty());
    assert_eq!(h.events("slow", "DeadlineExceeded").len(), 1);
}

#[test]
fn a_run_longer_than_ten_minutes_forgets_the_back_off() {
    // Real time: runs of 10 min 1 s. The second exit would wait 10 s in CrashLoopBackOff, but
    // the run before it lasted over 10 min, so the kubelet restarts it at once, as the first.
    let mut h =
        Harness::new("time_scale: 1\njobs:\n  - match: long\n    outcome: fail\n    after: 601s\n");
    h.create(*ids::JOBS, on_failure(job("long", 10)));
    h.run(Duration::from_secs(1204));
    let pod = h.list(*ids::PODS, "long-").pop().unwrap();
    let cs = &pod["status"]["containerStatuses"][0];
    assert!(cs["state"]["running"].is_object(), "{cs}");
    assert_eq!(cs["restartCount"], 2, "{cs}");
}

#[test]
fn a_short_run_waits_out_the_back_off() {
    let mut h =
        Harness::new("time_scale: 1\njobs:\n  - match: short\n    outcome: fail\n    after: 1s\n");
    h.create(*ids::JOBS, on_failure(job("short", 10)));
    h.run(Duration::from_secs(4));
    let pod = h.list(*ids::PODS, "short-").pop().unwrap();
    let cs = &pod["status"]["containerStatuses"][0];
    assert_eq!(cs["state"]["waiting"]["reason"], "CrashLoopBackOff", "{cs}");
    assert_eq!(cs["restartCount"], 1, "{cs}");
    let msg = cs["state"]["waiting"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("back-off 10s restarting failed container=app pod=short-"),
        "{msg}"
    );
}
