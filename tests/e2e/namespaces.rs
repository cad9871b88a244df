//! Workloads outside the release namespace (issue 9 item 1): charts with `namespaceOverride`
//! (tests/charts/ns-override: `demo-server` in `apps`, `demo-state-metrics` and the DaemonSet
//! `demo-exporter` in `monitoring`, all with the instance label) are watched in the namespace
//! their manifest names, judged there, and named with it.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::{DeployRun, Sim, repo, stdout_json, text};

fn ns_chart() -> PathBuf {
    repo().join("tests/charts/ns-override")
}

/// A simulator where `apps` and `monitoring` exist; `rules` are extra `workloads:` entries.
fn sim_with(rules: &str) -> Sim {
    Sim::start_yaml(&format!(
        "namespaces: [apps, monitoring]\ndefaults: {{start_after: 300ms, ready_after: 500ms}}\nworkloads:\n{rules}"
    ))
}

/// `helmdeck deploy demo tests/charts/ns-override -n apps --headless --report … <extra>`.
fn deploy(sim: &Sim, extra: &[&str]) -> DeployRun {
    sim.deploy_chart(&ns_chart(), "ns-report.json", extra)
}

/// `(kind, namespace, name)` of every workload in a report or an inspection, sorted.
fn identities(workloads: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = workloads
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            let s = |k: &str| w[k].as_str().unwrap_or("<missing>").to_string();
            (s("kind"), s("namespace"), s("name"))
        })
        .collect();
    out.sort();
    out
}

fn expected() -> Vec<(String, String, String)> {
    [
        ("DaemonSet", "monitoring", "demo-exporter"),
        ("Deployment", "apps", "demo-server"),
        ("Deployment", "monitoring", "demo-state-metrics"),
    ]
    .iter()
    .map(|(k, n, w)| (k.to_string(), n.to_string(), w.to_string()))
    .collect()
}

#[test]
fn workloads_placed_by_namespace_override_are_watched_there_and_the_deploy_lands() {
    let sim = sim_with("  []\n");
    let run = deploy(&sim, &["--timeout", "60s"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "landed");
    assert_eq!(identities(&run.report["workloads"]), expected());
    for w in run.report["workloads"].as_array().expect("workloads") {
        assert_eq!(w["ready"], true, "{w}");
        assert_eq!(
            w["notes"],
            serde_json::json!([]),
            "labelled, so no note: {w}"
        );
    }
    assert!(
        !run.stdout.contains("not labelled"),
        "they carry the instance label: {}",
        run.describe()
    );
    // Headless lines name the other namespace; the release namespace's stay as they were.
    assert!(
        run.stdout
            .contains("✓ Deployment/monitoring/demo-state-metrics 2/2 ready"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("✓ DaemonSet/monitoring/demo-exporter"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("✓ Deployment/demo-server 1/1 ready"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_failing_workload_in_another_namespace_exits_1_naming_its_namespace() {
    let sim = sim_with(
        "  - {match: Deployment/*-state-metrics, start_after: 300ms, ready_after: 500ms, crash_loop: 1}\n",
    );
    let run = deploy(&sim, &["--timeout", "8s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(
        reason.contains("not ready: Deployment/monitoring/demo-state-metrics"),
        "the blocker is named with its namespace: {reason}"
    );
    assert!(!reason.contains("demo-server"), "{reason}");
    assert!(!reason.contains("demo-exporter"), "{reason}");
    assert_eq!(identities(&run.report["workloads"]), expected());
    let blocker = run.report["workloads"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["name"] == "demo-state-metrics"))
        .expect("demo-state-metrics in the report");
    assert_eq!(blocker["ready"], false, "{blocker}");
    // Its pods are read in its own namespace: the pod-level causes are theirs.
    let causes = blocker["podCauses"].as_array().expect("podCauses");
    assert!(
        !causes.is_empty()
            && causes.iter().all(|c| c
                .as_str()
                .is_some_and(|c| c.starts_with("pod demo-state-metrics-"))),
        "{blocker}"
    );
}

#[test]
fn inspect_finds_and_judges_workloads_in_another_namespace() {
    let sim = sim_with("  []\n");
    let chart = ns_chart();
    let out = sim.helm(&[
        "upgrade",
        "--install",
        "demo",
        chart.to_str().expect("a UTF-8 checkout path"),
        "-n",
        "apps",
        "--wait",
        "--timeout",
        "60s",
    ]);
    assert!(out.status.success(), "{}", text(&out));

    let out = sim
        .helmdeck_command(&["inspect", "demo", "-n", "apps", "--json"])
        .output()
        .expect("run helmdeck inspect");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc = stdout_json(&out);
    assert_eq!(identities(&doc["workloads"]), expected());
    for w in doc["workloads"].as_array().expect("workloads") {
        assert_eq!(w["ready"], true, "found and judged: {w}");
        assert_ne!(w["message"], "not found in the cluster", "{w}");
        assert!(
            !w["pods"].as_array().expect("pods").is_empty(),
            "its pods, read in its namespace: {w}"
        );
    }
    let metrics = doc["workloads"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["name"] == "demo-state-metrics"))
        .expect("demo-state-metrics");
    assert_eq!(
        metrics["message"],
        "deployment \"demo-state-metrics\" successfully rolled out"
    );

    let out = sim
        .helmdeck_command(&["inspect", "demo", "-n", "apps"])
        .output()
        .expect("run helmdeck inspect");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(!shown.contains("not found"), "{shown}");
    let line = shown
        .lines()
        .find(|l| l.contains("demo-state-metrics"))
        .unwrap_or_else(|| panic!("no demo-state-metrics line: {shown}"));
    assert!(
        line.contains("monitoring"),
        "named with its namespace: {line}"
    );
    assert!(line.contains('✓'), "judged ready: {line}");
}
