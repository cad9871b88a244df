//! Real kubectl against the simulator: rollout status and logs end as the scenario says.

use crate::support::{Sim, text};
use std::time::Duration;

fn rollout(sim: &Sim, workload: &str, timeout: &str) -> std::process::Output {
    sim.kubectl(&[
        "rollout",
        "status",
        workload,
        "-n",
        "apps",
        &format!("--timeout={timeout}"),
    ])
}

#[test]
fn rollout_status_is_done_for_every_workload_when_all_green() {
    let sim = Sim::start("all-green");
    let out = sim.install_demo(&["--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));
    for (workload, done) in [
        ("deployment/demo-api", "successfully rolled out"),
        ("deployment/demo-web", "successfully rolled out"),
        ("statefulset/demo-db", "roll out complete"),
        ("daemonset/demo-agent", "successfully rolled out"),
        ("deployment/demo-gpu-client", "successfully rolled out"),
    ] {
        let out = rollout(&sim, workload, "60s");
        assert!(out.status.success(), "{workload}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(done),
            "{workload}: {}",
            text(&out)
        );
    }
}

#[test]
fn rollout_status_reports_progress_deadline_exceeded() {
    let sim = Sim::start("progress-deadline");
    let out = sim.install_demo(&["--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = rollout(&sim, "deployment/demo-web", "60s");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exceeded its progress deadline"),
        "{}",
        text(&out)
    );
}

#[test]
fn rollout_status_still_waits_for_an_unschedulable_workload_at_its_timeout() {
    let sim = Sim::start("optional-pending");
    let out = sim.install_demo(&["--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = rollout(&sim, "deployment/demo-gpu-client", "4s");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("Waiting for deployment \"demo-gpu-client\" rollout to finish"),
        "{all}"
    );
    assert!(all.contains("timed out"), "{all}");
    // The pod says why.
    let pods = sim.kubectl(&[
        "get",
        "pods",
        "-n",
        "apps",
        "-l",
        "app.kubernetes.io/component=gpu-client",
        "-o",
        "json",
    ]);
    let pods: serde_json::Value = serde_json::from_slice(&pods.stdout).unwrap();
    let cond = &pods["items"][0]["status"]["conditions"][0];
    assert_eq!(cond["reason"], "Unschedulable", "{pods}");
    assert!(
        cond["message"].as_str().unwrap().contains("nvidia.com/gpu"),
        "{pods}"
    );
}

#[test]
fn kubectl_logs_of_a_job_pod_return_the_scripted_lines() {
    let sim = Sim::start("init-fails");
    let out = sim.install_demo(&["--timeout", "60s"]);
    // The init Job fails in this scenario, so helm fails on its post-install hook.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = sim.kubectl(&["logs", "job/demo-init", "-n", "apps"]);
    assert!(out.status.success(), "{}", text(&out));
    let logs = String::from_utf8_lossy(&out.stdout);
    let scenario = std::fs::read_to_string(
        crate::support::repo().join("crates/helmdeck-sim/scenarios/init-fails.yaml"),
    )
    .unwrap();
    let parsed: serde_json::Value = serde_saphyr::from_str(&scenario).unwrap();
    let rule = parsed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["match"] == "*-init")
        .unwrap();
    for line in rule["logs"].as_array().unwrap() {
        assert!(
            logs.contains(line.as_str().unwrap()),
            "missing {line} in {logs}"
        );
    }
    let _ = Duration::ZERO;
}
