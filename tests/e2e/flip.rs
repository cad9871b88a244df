//! The FLIP-shaped test chart (`tests/charts/flip-like`): helpers shared by the tests that
//! deploy it as `trust-release` (every object name then starts with the 25-character
//! `trust-release-flip-trust-`), and the smoke test that it lands as it ships.

use std::path::PathBuf;
use std::time::Instant;

use crate::support::{DeployRun, Sim, finish, repo, text};

pub const RELEASE: &str = "trust-release";
/// The prefix every object of the release shares.
pub const PREFIX: &str = "trust-release-flip-trust-";
/// The init Job the `xnat.initJob.enabled` toggle adds.
pub const INIT_JOB: &str = "trust-release-flip-trust-xnat-init";
/// `--init-toggle … --init-job …` for the chart's xnat-init step.
pub const INIT: [&str; 4] = [
    "--init-toggle",
    "xnat.initJob.enabled",
    "--init-job",
    INIT_JOB,
];

/// trust-api (2 replicas) exits 1 after every start; everything else is healthy.
pub const CRASHING_API: &str = r#"
description: "FLIP-shaped: trust-api crash-loops"
namespaces: [apps]
defaults:
  start_after: 300ms
  ready_after: 500ms
workloads:
  - match: Deployment/*-trust-api
    start_after: 300ms
    crash_loop: 1
    logs:
      - "trust-api: connecting to postgres"
      - "FATAL: password authentication failed"
"#;

pub fn flip_chart() -> PathBuf {
    repo().join("tests/charts/flip-like")
}

/// Creates the Secret the chart's pods read (`secrets.create` is false by default), with
/// the given passwords.
pub fn create_trust_secret(sim: &Sim, db_password: &str, admin_password: &str) {
    let out = sim.kubectl(&[
        "create",
        "secret",
        "generic",
        "trust-secrets",
        "-n",
        &sim.namespace,
        &format!("--from-literal=db-password={db_password}"),
        &format!("--from-literal=xnat-admin-password={admin_password}"),
    ]);
    assert!(
        out.status.success(),
        "kubectl create secret: {}",
        text(&out)
    );
}

/// `helmdeck deploy trust-release tests/charts/flip-like -n apps --headless --report
/// <home>/<report> <extra>`, run to its end.
pub fn deploy_flip(sim: &Sim, report: &str, extra: &[&str]) -> DeployRun {
    let chart = flip_chart();
    let report = sim.home().join(report);
    let _ = std::fs::remove_file(&report);
    let mut args = vec![
        "deploy",
        RELEASE,
        chart.to_str().expect("a UTF-8 path"),
        "-n",
        &sim.namespace,
        "--headless",
        "--report",
        report.to_str().expect("a UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    let started = Instant::now();
    let out = sim.helmdeck_command(&args).output().expect("run helmdeck");
    finish(out, &report, started)
}

/// A plain `helm upgrade --install trust-release tests/charts/flip-like -n apps <extra>`.
pub fn helm_install_flip(sim: &Sim, extra: &[&str]) -> std::process::Output {
    let chart = flip_chart();
    let mut args = vec![
        "upgrade",
        "--install",
        RELEASE,
        chart.to_str().expect("a UTF-8 path"),
        "-n",
        &sim.namespace,
    ];
    args.extend_from_slice(extra);
    sim.helm(&args)
}

#[test]
fn the_flip_shaped_chart_lands_without_the_init_step() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let run = deploy_flip(&sim, "plain.json", &["--timeout", "60s"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stdout
            .contains(&format!("Deployment/{PREFIX}trust-api 2/2 ready")),
        "{}",
        run.describe()
    );
}
