//! One release to many clusters (`--target`, `[[target]]`, `demo --fleet`): several
//! `helmdeck sim` processes, one per kube context, the real helm, one KUBECONFIG listing them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// The three clusters of the fleet: a landing, an init that fails (3) and a failing hook (1),
/// the last under an EKS ARN (colons and a slash in its name).
const GSTT: &str = "gstt";
const KCH: &str = "kch";
const TRUST_1: &str = "arn:aws:eks:eu-west-2:123456789012:cluster/trust-1";

/// `helmdeck deploy demo CHART -n apps --headless <args>` with `KUBECONFIG` listing every sim's
/// file (the first sim's HOME and helm directories).
fn fleet_command(sims: &[&Sim], args: &[&str]) -> Command {
    let kubeconfig = std::env::join_paths(sims.iter().map(|s| s.kubeconfig.clone()))
        .expect("kubeconfig paths join");
    let chart = chart();
    let mut all = vec![
        "deploy",
        "demo",
        chart.to_str().expect("a UTF-8 path"),
        "-n",
        "apps",
        "--headless",
    ];
    all.extend_from_slice(args);
    let mut cmd = sims[0].helmdeck_command(&all);
    cmd.env("KUBECONFIG", kubeconfig);
    cmd
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn per_target(fleet_report: &Path, file_label: &str) -> PathBuf {
    fleet_report.with_file_name(format!("fleet.{file_label}.json"))
}

/// What a report says of a deploy, without its times and names of temporary things: the
/// verdict's code and outcome, each step's status, each workload's readiness.
fn gist(report: &Value) -> Value {
    let steps: Vec<Value> = report["steps"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|s| serde_json::json!([s["step"], s["status"]]))
                .collect()
        })
        .unwrap_or_default();
    let workloads: Vec<Value> = report["workloads"]
        .as_array()
        .map(|w| {
            w.iter()
                .map(|w| serde_json::json!([w["kind"], w["name"], w["ready"], w["optional"]]))
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({
        "code": report["verdict"]["code"],
        "outcome": report["verdict"]["outcome"],
        "steps": steps,
        "workloads": workloads,
    })
}

fn said(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn three_targets_on_three_scenarios_give_0_3_1_and_the_fleet_exits_1() {
    let gstt = Sim::start_as("all-green", GSTT);
    let kch = Sim::start_as("init-fails", KCH);
    let trust = Sim::start_as("hook-fails", TRUST_1);
    let report = gstt.home().join("fleet.json");
    let junit = gstt.home().join("fleet.xml");
    let mut args = with_init(&["--timeout", "60s", "--report"]);
    args.push(report.to_str().unwrap());
    args.extend(["--junit", junit.to_str().unwrap()]);
    args.extend(["--target", GSTT, "--target", KCH, "--target", TRUST_1]);
    let out = fleet_command(&[&gstt, &kch, &trust], &args)
        .output()
        .expect("run helmdeck");
    let all = said(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let fleet = read_json(&report);
    assert_eq!(fleet["exitCode"], 1, "{fleet:#}");
    assert_eq!(
        fleet["summary"], "1 landed · 1 live-init-incomplete · 1 failed",
        "{fleet:#}"
    );
    let codes: Vec<&Value> = fleet["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["exitCode"])
        .collect();
    assert_eq!(codes, [&Value::from(0), &Value::from(3), &Value::from(1)]);
    // One report per target beside the fleet's, each a full report of the schema, named with
    // the target's label made a file name.
    for (label, code) in [
        (GSTT, 0),
        (KCH, 3),
        ("arn-aws-eks-eu-west-2-123456789012-cluster-trust-1", 1),
    ] {
        let r = read_json(&per_target(&report, label));
        check_report(&r);
        assert_eq!(r["verdict"]["code"], code, "{label}: {r:#}");
    }
    // Each line is its target's, by its label; the fleet's line closes the output.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    for prefix in ["[gstt] ", "[kch] ", &format!("[{TRUST_1}] ")] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(prefix) && l.contains("verdict:")),
            "no verdict line of {prefix}\n{all}"
        );
    }
    assert!(
        lines[..lines.len() - 1].iter().all(|l| l.starts_with('[')),
        "an unprefixed line\n{all}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("fleet · demo: 1 landed · 1 live-init-incomplete · 1 failed (exit 1)")
    );
    // One JUnit suite per target.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testsuite ").count(), 3, "{xml}");
    assert!(xml.contains("@ kch\""), "{xml}");
    // Each target ran its own helm against its own cluster.
    let status = |sim: &Sim| {
        stdout_json(&sim.helm(&["status", "demo", "-n", "apps", "-o", "json"]))["info"]["status"]
            .clone()
    };
    assert_eq!(status(&gstt), "deployed");
    assert_eq!(status(&kch), "deployed");
    assert_eq!(status(&trust), "failed");

    // The init target's next step runs as printed, against its own cluster (its context named).
    let next = read_json(&per_target(&report, KCH))["verdict"]["next"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_default();
    assert!(next.contains("--kube-context kch"), "{next}");
    let again = kch.run_printed(&next);
    assert_eq!(again.status.code(), Some(3), "{next}\n{}", text(&again));

    // A target's report agrees with a single deploy of the same scenario.
    let alone = Sim::start("init-fails");
    let single = alone.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(single.code, Some(3), "{}", single.describe());
    assert_eq!(
        gist(&read_json(&per_target(&report, KCH))),
        gist(&single.report)
    );
}

#[test]
fn a_canary_that_does_not_land_starts_no_other_target() {
    let bad = Sim::start_as("hook-fails", "bad");
    let good = Sim::start_as("all-green", "good");
    let report = good.home().join("fleet.json");
    let out = fleet_command(
        &[&bad, &good],
        &[
            "--timeout",
            "60s",
            "--report",
            report.to_str().unwrap(),
            "--target",
            "good",
            "--target",
            "bad",
            "--canary",
            "bad",
        ],
    )
    .output()
    .expect("run helmdeck");
    let all = said(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let fleet = read_json(&report);
    let good_row = &fleet["targets"][0];
    assert_eq!(good_row["status"], "not-started", "{fleet:#}");
    assert!(
        good_row["reason"]
            .as_str()
            .is_some_and(|r| r.contains("the canary bad did not land (exit 1)")),
        "{fleet:#}"
    );
    let good_report = read_json(&per_target(&report, "good"));
    assert_eq!(good_report["verdict"]["code"], 1, "{good_report:#}");
    // Nothing reached the good cluster: no release there at all.
    let history = good.helm(&["history", "demo", "-n", "apps"]);
    assert!(!history.status.success(), "{}", text(&history));
    assert!(
        all.contains("[good] good: not started: the canary bad did not land"),
        "{all}"
    );
}

#[test]
fn a_cancel_mid_upgrade_leaves_no_targets_release_pending() {
    let a = Sim::start_as(&format!("yaml:{SLOW_MIGRATE}"), "site-a");
    let b = Sim::start_as(&format!("yaml:{SLOW_MIGRATE}"), "site-b");
    let report = a.home().join("fleet.json");
    let started = Instant::now();
    let child = fleet_command(
        &[&a, &b],
        &[
            "--report",
            report.to_str().unwrap(),
            "--target",
            "site-a",
            "--target",
            "site-b",
        ],
    )
    .spawn()
    .expect("run helmdeck");
    a.wait_for_helm_on_the_migrate_hook();
    b.wait_for_helm_on_the_migrate_hook();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("helmdeck ends");
    let all = said(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the cancel waited for the hook"
    );
    for sim in [&a, &b] {
        let history = stdout_json(&sim.helm(&["history", "demo", "-n", "apps", "-o", "json"]));
        let last = history.as_array().and_then(|h| h.last()).cloned();
        let status = last.as_ref().map(|l| l["status"].clone());
        assert_eq!(status, Some(Value::from("failed")), "{history:#}\n{all}");
    }
    let fleet = read_json(&report);
    assert_eq!(fleet["exitCode"], 1, "{fleet:#}");
}

#[test]
fn a_target_whose_context_is_not_in_the_kubeconfig_is_refused_before_any_request() {
    let sim = Sim::start_as("all-green", "here");
    let report = sim.home().join("fleet.json");
    let out = fleet_command(
        &[&sim],
        &[
            "--report",
            report.to_str().unwrap(),
            "--target",
            "here",
            "--target",
            "nowhere",
        ],
    )
    .output()
    .expect("run helmdeck");
    let all = said(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{all}");
    assert!(
        stderr.contains("target nowhere: context nowhere is not in the kubeconfig"),
        "{all}"
    );
    // The fleet's report says it was refused, with the usage code; no target's report.
    let refused = read_json(&report);
    assert_eq!(
        (&refused["status"], &refused["exitCode"]),
        (&Value::from("refused"), &Value::from(2)),
        "{refused:#}"
    );
    assert!(!per_target(&report, "here").exists());
    let history = sim.helm(&["history", "demo", "-n", "apps"]);
    assert!(!history.status.success(), "{}", text(&history));
}

/// `[[target]]` tables: each its own label, namespace and `--set`; a bad `--set` in one is
/// refused (exit 2, naming the label) before any request, the secret in it never echoed.
#[test]
fn a_tables_bad_set_is_refused_before_any_request_and_a_good_table_deploys() {
    let sim = Sim::start_as("all-green", "site-ctx");
    let dir = tempfile::tempdir().unwrap();
    let write_chart = |tables: &str| {
        let chart = chart_copy(dir.path(), |_, text| text);
        std::fs::write(chart.join("helmdeck.toml"), tables).unwrap();
        chart
    };
    let chart = write_chart(
        "init-toggle = \"initJob.enabled\"\ninit-job = \"demo-init\"\n\
         [[target]]\nlabel = \"north\"\ncontext = \"site-ctx\"\nset = [\"db.password=abc,set-hunter2\"]\n",
    );
    let report = sim.home().join("fleet.json");
    let run = |chart: &Path| {
        let kubeconfig = sim.kubeconfig.clone();
        let mut cmd = sim.helmdeck_command(&[
            "deploy",
            "demo",
            chart.to_str().unwrap(),
            "-n",
            "apps",
            "--headless",
            "--timeout",
            "60s",
            "--report",
            report.to_str().unwrap(),
        ]);
        cmd.env("KUBECONFIG", kubeconfig);
        cmd.output().expect("run helmdeck")
    };
    let out = run(&chart);
    let all = said(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("target north"), "{all}");
    assert!(!all.contains("hunter2"), "the value was echoed\n{all}");
    let refused = std::fs::read_to_string(&report).expect("the fleet's refusal report");
    assert!(refused.contains("target north"), "{refused}");
    assert!(
        !refused.contains("hunter2"),
        "the value was written\n{refused}"
    );
    assert!(!per_target(&report, "north").exists());

    let good = write_chart(
        "init-toggle = \"initJob.enabled\"\ninit-job = \"demo-init\"\n\
         [[target]]\nlabel = \"north\"\ncontext = \"site-ctx\"\nnamespace = \"apps\"\n\
         set = [\"api.replicas=3\"]\n",
    );
    let out = run(&good);
    let all = said(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("[north] "), "{all}");
    let deployment = sim.get_json("/apis/apps/v1/namespaces/apps/deployments/demo-api");
    assert_eq!(deployment["spec"]["replicas"], 3, "{deployment:#}");
}

#[test]
fn the_demo_rehearses_a_fleet_of_three_simulated_clusters() {
    let home = tempfile::tempdir().unwrap();
    let report = home.path().join("fleet.json");
    let out = Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .args([
            "demo",
            "--fleet",
            "3",
            "--headless",
            "--no-record",
            "--report",
        ])
        .arg(&report)
        .env("HOME", home.path())
        .env("HELM_BIN", tool("helm"))
        .env_remove("KUBECONFIG")
        .output()
        .expect("run helmdeck demo");
    let all = said(&out);
    // all-green, optional-pending, init-fails: 0, 0, 3.
    assert_eq!(out.status.code(), Some(3), "{all}");
    let fleet = read_json(&report);
    assert_eq!(
        fleet["summary"], "2 landed · 1 live-init-incomplete",
        "{fleet:#}"
    );
    for label in ["site-1", "site-2", "site-3"] {
        check_report(&read_json(&per_target(&report, label)));
    }
}
