//! Issue 12's recovery paths against the simulator with the real helm: `--recover-lock`,
//! helmdeck's own `--rollback-on-failure`, and the preflight timeout budget.

use crate::support::Sim;

fn descriptions(sim: &Sim) -> Vec<(i64, String, String)> {
    sim.helm_history()
        .as_array()
        .expect("helm history is a list")
        .iter()
        .map(|r| {
            (
                r["revision"].as_i64().unwrap_or(0),
                r["status"].as_str().unwrap_or("").to_string(),
                r["description"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn recover_lock_rolls_back_an_old_pending_upgrade_then_deploys_to_0() {
    // `locked`: revision 3 pending-upgrade for 20 minutes, revision 2 deployed.
    let sim = Sim::start("locked");
    let run = sim.deploy(&["--timeout", "60s", "--recover-lock"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stdout.contains("helm rollback demo 2 -n apps"),
        "{}",
        run.describe()
    );
    let history = descriptions(&sim);
    assert!(
        history
            .iter()
            .any(|(v, _, d)| *v == 4 && d == "Rollback to 2"),
        "{history:?}"
    );
    let last = history.last().expect("a revision");
    assert_eq!((last.0, last.1.as_str()), (5, "deployed"), "{history:?}");
    assert_eq!(run.report["revisionBefore"], 4, "{}", run.describe());
}

#[test]
fn a_stuck_lock_says_what_its_pending_record_says() {
    // `locked` seeds revision 3's record with helm's own "Preparing upgrade".
    let sim = Sim::start("locked");
    let run = sim.deploy(&["--timeout", "60s", "--events", "-", "--no-record"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let lock = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["event"]["type"] == "lock")
        .unwrap_or_else(|| panic!("no lock event: {}", run.describe()));
    assert_eq!(lock["event"]["revision"], 3, "{lock}");
    assert_eq!(lock["event"]["description"], "Preparing upgrade", "{lock}");
}

#[test]
fn recover_lock_refuses_a_lock_younger_than_lock_min_age() {
    let sim = Sim::start("locked");
    let before = sim.get_json("/_sim/stats");
    let run = sim.deploy(&["--timeout", "60s", "--recover-lock", "--lock-min-age", "1h"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("--recover-lock refused") && run.reason().contains("--force"),
        "{}",
        run.reason()
    );
    let after = sim.get_json("/_sim/stats");
    assert_eq!(before["writes"], after["writes"], "nothing was written");
    assert_eq!(descriptions(&sim).len(), 3);
}

#[test]
fn recover_lock_force_clears_a_lock_younger_than_lock_min_age_and_deploys_to_0() {
    // `locked`'s revision 3 is 20 minutes old: young against 1h, so only --force clears it.
    let sim = Sim::start("locked");
    let run = sim.deploy(&[
        "--timeout",
        "60s",
        "--recover-lock",
        "--force",
        "--lock-min-age",
        "1h",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let history = descriptions(&sim);
    assert!(
        history
            .iter()
            .any(|(v, s, d)| *v == 4 && s == "superseded" && d == "Rollback to 2"),
        "{history:?}"
    );
    let last = history.last().expect("a revision");
    assert_eq!((last.0, last.1.as_str()), (5, "deployed"), "{history:?}");
}

#[test]
fn rollback_on_failure_never_rolls_back_after_a_failed_init_job_exit_3() {
    let sim = Sim::start("init-fails");
    // A deployed revision to go back to, so only the exit-3 rule can keep the rollback off.
    let first = sim.install_demo(&["--timeout", "60s", "--set", "initJob.enabled=false"]);
    assert!(first.status.success(), "{}", crate::support::text(&first));
    let run = sim.deploy(&crate::support::with_init(&[
        "--timeout",
        "60s",
        "--rollback-on-failure",
    ]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert!(run.report["rollback"].is_null(), "{}", run.describe());
    assert!(!run.stdout.contains("rolling back"), "{}", run.describe());
    let history = descriptions(&sim);
    assert_eq!(history.len(), 2, "{history:?}");
    let last = history.last().expect("a revision");
    assert_eq!((last.0, last.1.as_str()), (2, "deployed"), "{history:?}");
}

#[test]
fn recover_lock_never_deletes_a_stuck_first_install_and_says_the_resources_stay() {
    let sim = Sim::start_yaml(
        "namespaces: [apps]\nseed:\n  releases:\n    - name: demo\n      namespace: apps\n      revisions:\n        - {version: 1, status: pending-install, age: 20m, chart: deckapp, chart_version: \"0.4.2\"}\n",
    );
    let before = sim.get_json("/_sim/stats");
    let run = sim.deploy(&["--timeout", "60s", "--recover-lock", "--force"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(reason.contains("resources stay"), "{reason}");
    let command = reason
        .rsplit(": ")
        .next()
        .expect("the command ends the reason");
    assert!(
        command.starts_with("kubectl delete secret sh.helm.release.v1.demo.v1 "),
        "{reason}"
    );
    assert_eq!(
        before["writes"],
        sim.get_json("/_sim/stats")["writes"],
        "never run"
    );
    let out = sim.run_printed(command);
    assert_eq!(out.status.code(), Some(0), "{command}");
    assert_eq!(sim.deploy(&["--timeout", "60s"]).code, Some(0), "unblocked");
}

/// demo-web crash-loops from its second generation on: the first install lands, the upgrade's
/// rollout fails, and helmdeck rolls back to revision 1 (the old ReplicaSet's pods are still
/// ready, so the rolled-back revision rolls out).
pub const WEB_BREAKS_ON_UPGRADE: &str = "namespaces: [apps]\ndefaults: {start_after: 200ms, ready_after: 300ms}\nworkloads:\n  - {match: Deployment/*-web, generation: 2, crash_loop: 1}\n";

#[test]
fn rollback_on_failure_leaves_a_deployed_rollback_revision_and_verdict_1() {
    let sim = Sim::start_yaml(WEB_BREAKS_ON_UPGRADE);
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let run = sim.deploy(&[
        "--timeout",
        "8s",
        "--set",
        "image.tag=1.4.3",
        "--rollback-on-failure",
    ]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().starts_with("rollout failed: ")
            && run.reason().ends_with("; rolled back to 1"),
        "{}",
        run.describe()
    );
    let rollback = &run.report["rollback"];
    assert_eq!(rollback["from"], 2, "{rollback}");
    assert_eq!(rollback["to"], 1, "{rollback}");
    assert_eq!(rollback["revision"], 3, "{rollback}");
    assert_eq!(rollback["status"], "rolled-back", "{rollback}");
    let history = descriptions(&sim);
    let last = history.last().expect("a revision");
    assert_eq!(
        (last.0, last.1.as_str(), last.2.as_str()),
        (3, "deployed", "Rollback to 1"),
        "{history:?}"
    );
}

#[test]
fn without_a_deployed_revision_nothing_is_rolled_back() {
    let sim = Sim::start("crashloop");
    let run = sim.deploy(&["--timeout", "6s", "--rollback-on-failure"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.report["rollback"].is_null(), "{}", run.describe());
    assert!(
        run.stdout
            .contains("not rolled back: no deployed revision before revision 1"),
        "{}",
        run.describe()
    );
    assert_eq!(descriptions(&sim).len(), 1);
}

#[test]
fn helms_own_rollback_flag_is_a_usage_error_naming_helmdecks() {
    let sim = Sim::start("all-green");
    let run = sim.deploy(&["--", "--rollback-on-failure"]);
    assert_eq!(run.code, Some(2), "{}", run.describe());
    assert!(
        run.stderr.contains("helmdeck's own --rollback-on-failure"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_timeout_shorter_than_the_slowest_rollout_is_warned_about_in_preflight() {
    let sim = Sim::start("slow");
    let run = sim.deploy(&["--timeout", "12s", "--dry-run"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let warning = run.report["notes"]
        .as_array()
        .and_then(|n| {
            n.iter().find(|n| {
                n["step"] == "preflight"
                    && n["level"] == "warn"
                    && n["text"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("--timeout 12s"))
            })
        })
        .unwrap_or_else(|| panic!("no budget warning: {}", run.describe()));
    // demo-db: 2 replicas, one at a time, readiness 5s delay + 5s period.
    assert_eq!(
        warning["text"],
        "--timeout 12s is shorter than StatefulSet/demo-db may legitimately take to roll out \
         (StatefulSet/demo-db: 2 replicas ÷ surge 1 = 2 waves × (5s delay + 5s period) = 20s); \
         raise --timeout to at least 20s"
    );
    assert!(
        run.stdout.contains("warning: --timeout 12s"),
        "{}",
        run.describe()
    );
    let roomy = sim.deploy(&["--timeout", "10m", "--dry-run"]);
    assert!(
        !roomy.stdout.contains("warning: --timeout"),
        "{}",
        roomy.describe()
    );
}

/// Two `helm test` pods: one that passes, one (only with `failTest=true`) that fails.
pub(crate) const TEST_PODS: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test-ok
  annotations:
    "helm.sh/hook": test
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox:1.36
      command: ["wget", "-qO-", "http://{{ .Release.Name }}-api/healthz"]
{{- if .Values.failTest }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test-fail
  annotations:
    "helm.sh/hook": test
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox:1.36
      command: ["false"]
{{- end }}
"#;

pub(crate) const TESTED: &str = "namespaces: [apps]\ndefaults: {start_after: 200ms, ready_after: 300ms}\njobs:\n  - {match: \"*-test-fail\", outcome: fail, after: 300ms, logs: [\"checking demo-api\", \"GET /healthz: 503 Service Unavailable\"]}\n  - {match: \"*-test-ok\", after: 300ms, logs: [\"demo-api healthy\"]}\n";

#[test]
fn test_runs_helm_test_after_a_landed_deploy_and_a_failing_pod_turns_it_to_1() {
    let sim = Sim::start_yaml(TESTED);
    let dir = tempfile::tempdir().expect("a temp dir");
    let chart = crate::support::chart_copy(dir.path(), |_, text| text);
    std::fs::write(chart.join("templates/tests.yaml"), TEST_PODS).expect("write the tests");
    let passing = sim.deploy_chart(&chart, "pass.json", &["--timeout", "60s", "--test"]);
    assert_eq!(passing.code, Some(0), "{}", passing.describe());
    assert_eq!(
        passing.step("test")["status"],
        "succeeded",
        "{}",
        passing.describe()
    );
    assert!(
        passing.stdout.contains("test pod demo-test-ok: Succeeded"),
        "{}",
        passing.describe()
    );
    // Each test pod is a hook row with the phase helm recorded (the report's `tests`).
    let test_phase = |run: &crate::support::DeployRun, name: &str| {
        run.report["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .map(|t| t["phase"].clone())
    };
    assert_eq!(
        test_phase(&passing, "demo-test-ok"),
        Some(serde_json::json!("Succeeded")),
        "{}",
        passing.report
    );
    let failing = sim.deploy_chart(
        &chart,
        "fail.json",
        &["--timeout", "60s", "--test", "--set", "failTest=true"],
    );
    assert_eq!(failing.code, Some(1), "{}", failing.describe());
    let reason = failing.reason();
    assert!(reason.starts_with("test failed: "), "{reason}");
    assert!(
        reason.contains("test pod demo-test-fail Failed")
            && reason.contains("GET /healthz: 503 Service Unavailable"),
        "{}",
        failing.describe()
    );
    assert_eq!(
        test_phase(&failing, "demo-test-fail"),
        Some(serde_json::json!("Failed")),
        "{}",
        failing.report
    );
    // helm stops at the first failing test: the other did not run this time.
    assert_eq!(
        test_phase(&failing, "demo-test-ok"),
        Some(serde_json::json!("skipped")),
        "{}",
        failing.report
    );
    // Without --test no test runs: the step is not in the report.
    let untested = sim.deploy_chart(&chart, "plain.json", &["--timeout", "60s"]);
    assert_eq!(untested.code, Some(0), "{}", untested.describe());
    assert_eq!(untested.report["steps"].as_array().map(Vec::len), Some(4));
}
