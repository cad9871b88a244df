//! `helmdeck demo --chart DIR` (issue 11 item 5): any chart rehearsed through the whole split
//! deploy on the in-process simulator, with deploy's flags and deploy's validation.

use std::path::Path;
use std::time::Instant;

use crate::support::{DeployRun, Sim, finish, repo};

/// `helmdeck demo <args> --headless --report <home>/demo-report.json`, run to its end. The
/// simulator given only provides a private HOME; the demo starts its own.
fn demo(home: &Sim, args: &[&str]) -> DeployRun {
    let report = home.home().join("demo-report.json");
    let _ = std::fs::remove_file(&report);
    let mut all = vec!["demo", "--headless", "--report", report.to_str().unwrap()];
    all.extend_from_slice(args);
    let started = Instant::now();
    let out = home
        .helmdeck_command(&all)
        .output()
        .expect("run helmdeck demo");
    finish(out, &report, started)
}

fn chart(name: &str) -> String {
    repo().join("tests/charts").join(name).display().to_string()
}

#[test]
fn demo_rehearses_a_chart_of_the_users_with_deploys_flags() {
    let home = Sim::start("all-green");
    let chart = chart("stateful-like");
    let run = demo(
        &home,
        &[
            "--chart",
            &chart,
            "--scenario",
            "all-green",
            "-n",
            "vault",
            "--set",
            "server.replicas=2",
            "--timeout",
            "60s",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["namespace"], "vault", "{}", run.report);
    let store = run.workload("StatefulSet", "demo-store");
    assert_eq!(store["namespace"], "vault", "{store}");
    assert_eq!(store["ready"], true, "{store}");
    // The --set reached helm: two replicas, not the chart's three.
    assert_eq!(store["replicas"]["desired"], 2, "{store}");
    assert_eq!(run.workload("DaemonSet", "demo-shipper")["ready"], true);
    assert_eq!(run.step("init")["status"], "skipped", "{}", run.describe());
}

#[test]
fn demo_scenario_rules_match_the_charts_workloads_by_glob() {
    let home = Sim::start("all-green");
    let scenario = home.home().join("stuck.yaml");
    std::fs::write(
        &scenario,
        "description: the store never passes its readiness probe\nworkloads:\n  - {match: 'StatefulSet/*-store', readiness_never: true}\n",
    )
    .unwrap();
    let chart = chart("stateful-like");
    let run = demo(
        &home,
        &[
            "--chart",
            &chart,
            "--scenario",
            scenario.to_str().unwrap(),
            "--timeout",
            "6s",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.reason().contains("demo-store"), "{}", run.reason());
    assert_eq!(run.workload("DaemonSet", "demo-shipper")["ready"], true);
    // --optional takes the stuck one out of the verdict, as on deploy.
    let run = demo(
        &home,
        &[
            "--chart",
            &chart,
            "--scenario",
            scenario.to_str().unwrap(),
            "--timeout",
            "6s",
            "--optional",
            "StatefulSet/*-store",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.workload("StatefulSet", "demo-store")["optional"], true);
}

#[test]
fn demo_holds_its_input_to_deploys_rules_exit_2_one_line() {
    let home = Sim::start("all-green");
    let chart = chart("stateful-like");
    let missing = Path::new("/nonexistent/chart").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--chart", &missing], "/nonexistent/chart"),
        (vec!["--chart", &chart, "-n", "Bad_NS"], "namespace"),
        (
            vec!["--chart", &chart, "--set", "db.password=abc,set-hunter2"],
            "helm cannot parse it",
        ),
        (vec!["--chart", &chart, "--timeout", "0s"], "--timeout"),
        (vec!["--chart", &chart, "--optional", "Job/x"], "--optional"),
        (
            vec!["--chart", &chart, "--kube-context", "prod"],
            "--kube-context",
        ),
        (vec!["--chart", &chart, "--only", "init"], "--only"),
        (vec!["--chart", &chart, "--", "--wait"], "--wait"),
    ];
    let mut failures = Vec::new();
    for (args, said) in &cases {
        let run = demo(&home, args);
        let lines: Vec<&str> = run.stderr.lines().collect();
        let quiet = !run.stderr.contains("hunter2");
        if run.code != Some(2) || lines.len() != 1 || !lines[0].contains(said) || !quiet {
            failures.push(format!("{args:?}: {}", run.describe()));
        }
        if !run.report.is_null() {
            assert_eq!(run.report["verdict"]["code"], 2, "{args:?}: {}", run.report);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The `helm_line` texts of the one deploy record under the home's state directory.
fn recorded_helm_lines(home: &Sim) -> Vec<String> {
    let dir = home.home().join(".local/state/helmdeck");
    let records: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    std::fs::read_to_string(&records[0])
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"]["type"] == "helm_line")
        .filter_map(|v| v["event"]["text"].as_str().map(String::from))
        .collect()
}

#[test]
fn demo_lands_a_chart_with_a_values_file_an_init_job_and_helm_args_after_the_dashes() {
    let home = Sim::start("all-green");
    let chart = chart("portable");
    let values = home.home().join("more.yaml");
    // Only this file turns the StatefulSet and the DaemonSet on.
    std::fs::write(&values, "allKinds: true\nnote: from-the-file\n").unwrap();
    let run = demo(
        &home,
        &[
            "--chart",
            &chart,
            "--scenario",
            "all-green",
            "-f",
            values.to_str().unwrap(),
            "--init-toggle",
            "initJob.enabled",
            "--init-job",
            "demo-init",
            "--timeout",
            "60s",
            "--",
            "--description",
            "rehearsed by the e2e test",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    // The values file reached helm: the kinds it enables were deployed and gated.
    for (kind, name) in [
        ("Deployment", "demo-app"),
        ("StatefulSet", "demo-store"),
        ("DaemonSet", "demo-agent"),
    ] {
        assert_eq!(run.workload(kind, name)["ready"], true, "{kind}/{name}");
    }
    assert_eq!(
        run.step("init")["status"],
        "succeeded",
        "{}",
        run.describe()
    );
    let init = run.init_hook();
    assert_eq!(
        (&init["name"], &init["phase"]),
        (
            &serde_json::json!("demo-init"),
            &serde_json::json!("Succeeded")
        ),
        "{init}"
    );
    // helm's own report of the release it stored, as the record kept it.
    let lines = recorded_helm_lines(&home);
    assert!(
        lines
            .iter()
            .any(|l| l == "DESCRIPTION: rehearsed by the e2e test"),
        "{lines:?}"
    );
}
