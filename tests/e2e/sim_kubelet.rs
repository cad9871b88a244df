//! The simulated kubelet as the real kubectl sees it: initContainers with their own logs and
//! STATUS (`Init:0/2`, `Init:Error`, `Init:CrashLoopBackOff`), and an OnFailure Job whose one
//! pod restarts until the backoffLimit.

use std::process::Stdio;
use std::time::Duration;

use crate::support::{Sim, text, tool};

const SCENARIO: &str = r#"
namespaces: [apps]
# 20 simulated seconds per real second: back-offs of 0.5 s, 1 s, 2 s ...
time_scale: 20
init_containers:
  - match: "once"
    container: setup
    run_for: 300ms
    exit_code: 2
    logs: ["setup: connecting to db:5432", "setup: connection refused"]
  - match: "loop-*"
    container: setup
    run_for: 200ms
    exit_code: 1
  - match: "slow"
    container: wait
    hang: true
    logs: ["waiting for db"]
jobs:
  - match: seed
    outcome: fail
    exit_code: 3
    after: 200ms
    logs: ["seed: boom"]
"#;

const MANIFESTS: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: once}
spec:
  restartPolicy: Never
  initContainers: [{name: setup, image: "busybox:1"}]
  containers: [{name: app, image: "web:1"}]
---
apiVersion: v1
kind: Pod
metadata: {name: slow}
spec:
  initContainers: [{name: wait, image: "busybox:1"}, {name: migrate, image: "busybox:1"}]
  containers: [{name: app, image: "web:1"}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: loop}
spec:
  replicas: 1
  selector: {matchLabels: {app: loop}}
  template:
    metadata: {labels: {app: loop}}
    spec:
      initContainers: [{name: setup, image: "busybox:1"}]
      containers: [{name: app, image: "web:1"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: seed}
spec:
  backoffLimit: 3
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: seed, image: "busybox:1"}]
"#;

fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}", text(out));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `kubectl get pods` columns of the pod whose name starts with `prefix`.
fn row(sim: &Sim, prefix: &str) -> Option<Vec<String>> {
    let out = ok(
        &sim.kubectl(&["get", "pods", "-n", "apps", "--no-headers"]),
        "get pods",
    );
    out.lines()
        .find(|l| l.starts_with(prefix))
        .map(|l| l.split_whitespace().map(String::from).collect())
}

fn status_is(sim: &Sim, prefix: &str, want: &str) -> bool {
    row(sim, prefix).is_some_and(|r| r.get(2).map(String::as_str) == Some(want))
}

fn started() -> Sim {
    let sim = Sim::start_yaml(SCENARIO);
    let file = sim.home().join("kubelet.yaml");
    std::fs::write(&file, MANIFESTS).unwrap();
    ok(
        &sim.kubectl(&["apply", "-n", "apps", "-f", file.to_str().unwrap()]),
        "apply",
    );
    sim
}

#[test]
fn init_containers_show_their_status_and_logs_in_kubectl() {
    let sim = started();
    let wait = Duration::from_secs(20);
    sim.wait_for("once: Init:Error", wait, |s| {
        status_is(s, "once", "Init:Error")
    });
    let log = ok(
        &sim.kubectl(&["logs", "-n", "apps", "once", "-c", "setup"]),
        "logs -c setup",
    );
    assert_eq!(
        log,
        "setup: connecting to db:5432\nsetup: connection refused\n"
    );
    let app = sim.kubectl(&["logs", "-n", "apps", "once", "-c", "app"]);
    assert!(
        text(&app).contains("is waiting to start: PodInitializing"),
        "{}",
        text(&app)
    );
    // A hanging first initContainer of two: Init:0/2, and its log so far.
    sim.wait_for("slow: Init:0/2", wait, |s| status_is(s, "slow", "Init:0/2"));
    let log = ok(
        &sim.kubectl(&["logs", "-n", "apps", "slow", "-c", "wait"]),
        "logs -c wait",
    );
    assert_eq!(log, "waiting for db\n");
    // restartPolicy Always: the failing initContainer restarts with back-off.
    sim.wait_for("loop: Init:CrashLoopBackOff", wait, |s| {
        status_is(s, "loop-", "Init:CrashLoopBackOff")
    });
    let describe = ok(
        &sim.kubectl(&["describe", "pod", "-n", "apps", "-l", "app=loop"]),
        "describe",
    );
    assert!(
        describe.contains("Back-off restarting failed container setup in pod loop-"),
        "{describe}"
    );
}

#[test]
fn an_on_failure_job_restarts_one_pod_until_its_backoff_limit() {
    let sim = Sim::start_yaml(SCENARIO);
    // Every version of the Job's pods, as `kubectl get -w` prints them: the pod is deleted
    // when the Job fails, so only a watch sees its last restart count.
    let mut watch = sim
        .client_command(
            &tool("kubectl"),
            &[
                "get", "pods", "-n", "apps", "-l", "job-name=seed", "-w", "--no-headers", "-o",
                "custom-columns=NAME:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount",
            ],
        )
        .stdout(Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    let file = sim.home().join("kubelet.yaml");
    std::fs::write(&file, MANIFESTS).unwrap();
    ok(
        &sim.kubectl(&["apply", "-n", "apps", "-f", file.to_str().unwrap()]),
        "apply",
    );
    sim.wait_for("the Job failed", Duration::from_secs(30), |s| {
        let reason = s.kubectl(&[
            "get",
            "job",
            "seed",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}",
        ]);
        text(&reason).contains("BackoffLimitExceeded")
    });
    std::thread::sleep(Duration::from_secs(1));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("watch output");
    let seen = String::from_utf8_lossy(&out.stdout).to_string();
    let rows: Vec<(&str, u32)> = seen
        .lines()
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            Some((cols.next()?, cols.next()?.parse().ok()?))
        })
        .collect();
    let names: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(names.len(), 1, "one pod: {seen}");
    assert_eq!(rows.iter().map(|r| r.1).max(), Some(3), "{seen}");
    let job = ok(
        &sim.kubectl(&[
            "get",
            "job",
            "seed",
            "-n",
            "apps",
            "-o",
            "jsonpath={.status.failed}",
        ]),
        "job status",
    );
    assert_eq!(job, "1");
}
