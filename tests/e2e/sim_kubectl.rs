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

#[test]
fn kubectl_get_in_chunks_lists_every_pod_once() {
    let sim = Sim::start("all-green");
    let pods: String = (0..5)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: chunk-{i}\n  namespace: apps\n\
spec:\n  containers:\n  - name: c\n    image: busybox\n"
            )
        })
        .collect();
    let file = sim.home().join("pods.yaml");
    std::fs::write(&file, pods).unwrap();
    let out = sim.kubectl(&["apply", "-f", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let expected: Vec<String> = (0..5).map(|i| format!("chunk-{i}")).collect();
    // As names (a list) and as kubectl's table (server-side Table rows), two pods a page.
    for output in [&["-o", "name"][..], &[][..]] {
        let mut args = vec!["get", "pods", "-n", "apps", "--chunk-size=2"];
        args.extend_from_slice(output);
        let out = sim.kubectl(&args);
        assert!(out.status.success(), "{}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut listed: Vec<String> = stdout
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.contains("chunk-"))
            .map(|w| w.trim_start_matches("pod/").to_string())
            .collect();
        listed.sort();
        assert_eq!(listed, expected, "{output:?}: {stdout}");
    }
    let requests = sim.get("/_sim/requests");
    let continued = requests
        .lines()
        .filter(|l| l.contains("/namespaces/apps/pods?") && l.contains("continue="))
        .count();
    // 5 pods in pages of 2: two follow-up pages for each of the two gets.
    assert_eq!(continued, 4, "{requests}");
}
