//! The manifest cross-check: a workload in the release manifest without the
//! `app.kubernetes.io/instance` label (tests/charts/unlabelled, labelled the Helm 2 way) still
//! gates the verdict, and the report says the label is missing.

use crate::support::{DeployRun, Sim, repo};

const NOTE: &str = "in the release manifest but not labelled app.kubernetes.io/instance=demo";

/// `helmdeck deploy demo tests/charts/unlabelled -n apps --headless --report … <extra>`.
fn deploy_unlabelled(sim: &Sim, extra: &[&str]) -> DeployRun {
    sim.deploy_chart(
        &repo().join("tests/charts/unlabelled"),
        "unlabelled-report.json",
        extra,
    )
}

#[test]
fn an_unlabelled_manifest_workload_that_fails_gates_with_exit_1() {
    let sim = Sim::start_yaml(
        "namespaces: [apps]\nworkloads:\n  - {match: Deployment/*-plain, start_after: 300ms, ready_after: 500ms, crash_loop: 1}\n",
    );
    let run = deploy_unlabelled(&sim, &["--timeout", "8s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(
        reason.contains("not ready: Deployment/demo-plain"),
        "the unlabelled workload must be the blocker: {reason}"
    );
    assert!(!reason.contains("demo-labelled"), "{reason}");
    let plain = run.workload("Deployment", "demo-plain");
    assert_eq!(plain["ready"], false, "{plain}");
    assert_eq!(plain["notes"], serde_json::json!([NOTE]), "{plain}");
    assert_eq!(run.workload("Deployment", "demo-labelled")["ready"], true);
}

#[test]
fn a_healthy_unlabelled_manifest_workload_lands_with_the_note() {
    let sim = Sim::start("all-green");
    let run = deploy_unlabelled(&sim, &["--timeout", "60s"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "landed");
    let plain = run.workload("Deployment", "demo-plain");
    assert_eq!(plain["ready"], true, "{plain}");
    assert_eq!(plain["optional"], false, "it gates: {plain}");
    assert_eq!(plain["notes"], serde_json::json!([NOTE]), "{plain}");
    let labelled = run.workload("Deployment", "demo-labelled");
    assert_eq!(labelled["notes"], serde_json::json!([]), "{labelled}");
    assert!(
        run.stdout.contains(
            "Deployment/demo-plain is in the release manifest but not labelled \
             app.kubernetes.io/instance=demo: it gates all the same"
        ),
        "{}",
        run.describe()
    );
}
