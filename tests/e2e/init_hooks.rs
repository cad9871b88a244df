//! The init step applies what its toggle adds (issue 9 items 5 and 7, issue 22 item 1): the
//! hook objects beside the init Job, in helm's order, labelled with the run and deleted as
//! their policies say; plain objects of the kinds an init Job reads, applied and kept; any
//! other plain object is a usage error; and two runs at once never replace each other's Job.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{DEMO_INIT, DeployRun, Sim, finish, repo, stdout_json, text};

const INIT_SA: [&str; 4] = ["--init-toggle", "init.enabled", "--init-job", "demo-init"];

fn init_sa_chart() -> PathBuf {
    repo().join("tests/charts/init-sa")
}

/// `helmdeck deploy demo CHART -n apps --headless --report …` plus `extra`.
fn deploy_chart(sim: &Sim, chart: &Path, report: &str, extra: &[&str]) -> DeployRun {
    sim.deploy_chart(chart, report, extra)
}

fn with(base: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = base.to_vec();
    v.extend_from_slice(extra);
    v
}

/// `kubectl get KIND NAME -n apps -o json`, or None when it is not there.
fn get(sim: &Sim, kind: &str, name: &str) -> Option<Value> {
    let out = sim.kubectl(&["get", kind, name, "-n", "apps", "-o", "json"]);
    if out.status.success() {
        return Some(stdout_json(&out));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("NotFound"),
        "kubectl get {kind} {name}: {}",
        text(&out)
    );
    None
}

fn label<'v>(obj: &'v Value, key: &str) -> &'v str {
    obj["metadata"]["labels"][key].as_str().unwrap_or("")
}

/// The line numbers of `needles` in `haystack`'s lines, each the first line containing it.
fn line_of(haystack: &str, needle: &str) -> usize {
    haystack
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{haystack}"))
}

#[test]
fn the_simulator_refuses_a_pod_whose_service_account_is_missing() {
    let sim = Sim::start("all-green");
    let sa = sim.kubectl(&["get", "serviceaccount", "default", "-n", "apps"]);
    assert!(sa.status.success(), "{}", text(&sa));
    let out = sim.kubectl(&[
        "run",
        "probe",
        "-n",
        "apps",
        "--image=busybox",
        "--restart=Never",
        "--overrides={\"spec\":{\"serviceAccountName\":\"ci\"}}",
    ]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "Error from server (Forbidden): pods \"probe\" is forbidden: error looking up service account apps/ci: serviceaccount \"ci\" not found"
        ),
        "{}",
        text(&out)
    );
}

#[test]
fn init_applies_the_hook_objects_its_toggle_adds_then_the_job() {
    let sim = Sim::start("all-green");
    let chart = init_sa_chart();
    let run = deploy_chart(
        &sim,
        &chart,
        "first.json",
        &with(&INIT_SA, &["--timeout", "20s"]),
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.step("init")["status"], "succeeded");
    assert!(run.stdout.contains("init complete"), "{}", run.describe());
    // Weight first, then helm's kind order, then name; the Job last.
    let order = [
        "created ConfigMap demo-init-script",
        "created ServiceAccount demo-init",
        "created Role demo-init",
        "created RoleBinding demo-init",
        "created Job demo-init",
    ]
    .map(|n| line_of(&run.stdout, n));
    assert!(order.is_sorted(), "{order:?}\n{}", run.describe());
    // hook-succeeded: gone after the Job succeeded; before-hook-creation alone: kept.
    for (kind, name) in [
        ("configmap", "demo-init-script"),
        ("role", "demo-init"),
        ("rolebinding", "demo-init"),
    ] {
        assert!(get(&sim, kind, name).is_none(), "{kind}/{name} was kept");
    }
    let sa = get(&sim, "serviceaccount", "demo-init").expect("the ServiceAccount is kept");
    let job = get(&sim, "job", "demo-init").expect("the Job is kept");
    assert_eq!(label(&sa, "app.kubernetes.io/instance"), "demo");
    let run_id = label(&job, "helmdeck.io/run");
    assert!(!run_id.is_empty(), "{job}");
    assert_eq!(label(&sa, "helmdeck.io/run"), run_id);
    assert!(sa["metadata"]["annotations"]["helm.sh/hook"].is_null());

    // Again: before-hook-creation replaces the kept ServiceAccount and Job.
    let again = deploy_chart(
        &sim,
        &chart,
        "again.json",
        &with(&INIT_SA, &["--only", "init", "--timeout", "20s"]),
    );
    assert_eq!(again.code, Some(0), "{}", again.describe());
    assert!(
        again
            .stdout
            .contains("deleted the previous ServiceAccount demo-init"),
        "{}",
        again.describe()
    );
    let sa = get(&sim, "serviceaccount", "demo-init").expect("the ServiceAccount is kept");
    let job = get(&sim, "job", "demo-init").expect("the Job is kept");
    assert_ne!(label(&job, "helmdeck.io/run"), run_id, "a new run");
    assert_eq!(
        label(&sa, "helmdeck.io/run"),
        label(&job, "helmdeck.io/run")
    );
}

#[test]
fn an_init_job_whose_pod_is_refused_times_out_naming_the_refusal() {
    let sim = Sim::start("all-green");
    let run = deploy_chart(
        &sim,
        &init_sa_chart(),
        "refused.json",
        &with(
            &INIT_SA,
            &[
                "--set",
                "init.createServiceAccount=false",
                "--timeout",
                "4s",
            ],
        ),
    );
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let reason = run.reason();
    assert!(
        reason.contains("did not finish within 4s; Job events: FailedCreate: Error creating: pods \"demo-init-\" is forbidden: error looking up service account apps/demo-init: serviceaccount \"demo-init\" not found"),
        "{reason}"
    );
}

#[test]
fn a_toggle_that_adds_a_plain_config_map_applies_it_before_the_job_and_keeps_it() {
    let sim = Sim::start("all-green");
    let run = deploy_chart(
        &sim,
        &init_sa_chart(),
        "plain.json",
        &with(
            &INIT_SA,
            &["--set", "init.plainConfig=true", "--timeout", "20s"],
        ),
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    // A plain object weighs 0: after the hooks of -10 and -5, before the Job.
    let order = [
        "created ConfigMap demo-init-script",
        "created RoleBinding demo-init",
        "applied ConfigMap demo-init-settings",
        "created Job demo-init",
    ]
    .map(|n| line_of(&run.stdout, n));
    assert!(order.is_sorted(), "{order:?}\n{}", run.describe());
    let settings = get(&sim, "configmap", "demo-init-settings").expect("kept after the init");
    let job = get(&sim, "job", "demo-init").expect("the Job is kept");
    assert_eq!(
        label(&settings, "helmdeck.io/run"),
        label(&job, "helmdeck.io/run")
    );
    assert_eq!(label(&settings, "app.kubernetes.io/managed-by"), "Helm");
    assert_eq!(settings["data"]["mode"], "first-run");
}

#[test]
fn a_toggle_that_adds_a_plain_object_of_another_kind_is_exit_2_naming_it() {
    let sim = Sim::start("all-green");
    let before = sim.get_json("/_sim/stats")["requests"].as_u64();
    let run = deploy_chart(
        &sim,
        &init_sa_chart(),
        "service.json",
        &with(
            &INIT_SA,
            &[
                "--set",
                "init.plainConfig=true",
                "--set",
                "init.plainService=true",
                "--timeout",
                "20s",
            ],
        ),
    );
    assert_eq!(run.code, Some(2), "{}", run.describe());
    let err = run.stderr.trim();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("Service/demo-init-status"), "{err}");
    assert!(
        !err.contains("ConfigMap/demo-init-settings"),
        "an accepted kind is not named: {err}"
    );
    assert!(
        err.contains("plain ConfigMap, Secret, ServiceAccount, Role, RoleBinding"),
        "{err}"
    );
    let after = sim.get_json("/_sim/stats")["requests"].as_u64();
    assert_eq!(
        after.map(|n| n - 1),
        before,
        "no cluster request besides the stats themselves"
    );
}

#[test]
fn a_second_only_init_refuses_to_replace_a_job_running_for_another_run() {
    let sim = Sim::start_yaml(
        "namespaces: [apps]\njobs:\n  - match: '*-init'\n    after: 6s\n    logs: [\"init of the first run\", \"init complete\"]\n",
    );
    let installed = sim.install_demo(&["--set", "initJob.enabled=false", "--timeout", "60s"]);
    assert!(installed.status.success(), "{}", text(&installed));
    let chart = crate::support::chart();
    let report_a = sim.home().join("first.json");
    let started = Instant::now();
    let first = sim
        .deploy_command(
            &report_a,
            &with(&DEMO_INIT, &["--only", "init", "--timeout", "60s"]),
        )
        .stdin(Stdio::null())
        .spawn()
        .expect("start the first run");
    // The first run's Job has its pod running.
    let mut uid = String::new();
    sim.wait_for("the first run's init pod", Duration::from_secs(30), |s| {
        let job = s.get_json("/apis/batch/v1/namespaces/apps/jobs/demo-init");
        uid = job["metadata"]["uid"].as_str().unwrap_or("").to_string();
        job["status"]["active"].as_i64() == Some(1)
    });
    let second = deploy_chart(
        &sim,
        &chart,
        "second.json",
        &with(&DEMO_INIT, &["--only", "init", "--timeout", "60s"]),
    );
    assert_eq!(second.code, Some(3), "{}", second.describe());
    let reason = second.reason();
    assert!(
        reason.contains("init Job demo-init is running for another run (started ")
            && reason.contains("not replaced"),
        "{reason}"
    );
    let first = finish(
        first.wait_with_output().expect("the first run ends"),
        &report_a,
        started,
    );
    assert_eq!(first.code, Some(0), "{}", first.describe());
    assert!(
        first.stdout.contains("init complete"),
        "{}",
        first.describe()
    );
    // Its own Job, untouched, and only its own pod's log.
    let job = sim.get_json("/apis/batch/v1/namespaces/apps/jobs/demo-init");
    assert_eq!(job["metadata"]["uid"], uid.as_str());
    let pods = sim.get_json(&format!(
        "/api/v1/namespaces/apps/pods?labelSelector=controller-uid%3D{uid}"
    ));
    let own: Vec<&str> = pods["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["metadata"]["name"].as_str())
        .collect();
    assert_eq!(own.len(), 1, "{pods}");
    let followed: Vec<&str> = first
        .stdout
        .lines()
        .filter(|l| l.contains(" │ "))
        .filter_map(|l| l.split(" log ").nth(1)?.split('/').next())
        .collect();
    assert!(!followed.is_empty(), "{}", first.describe());
    assert!(
        followed.iter().all(|p| *p == own[0]),
        "{followed:?} vs {own:?}"
    );
}
