//! The report file (`reportVersion` 2): replaced by a `running` report as a run starts, so a
//! killed run never leaves an older verdict behind; written atomically (a symlink at the path is
//! replaced, not followed); a refused run (exit 2) still says so in it.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Sim, text};

/// What an earlier, landed run left at the path.
const OLD_LANDED: &str =
    r#"{"reportVersion": 1, "verdict": {"code": 0, "outcome": "landed", "reason": "old"}}"#;

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let report = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    crate::support::check_report(&report);
    report
}

#[test]
fn a_run_killed_mid_rollout_leaves_a_running_report_not_an_older_verdict() {
    // Pods that take minutes to start: the rollout step is still waiting when the kill comes.
    let sim = Sim::start_yaml(
        "namespaces: [apps]\ndefaults: {start_after: 10m}\njobs:\n  - {match: '*', after: 200ms}\n",
    );
    let report = sim.home().join("report.json");
    std::fs::write(&report, OLD_LANDED).unwrap();
    let mut child = sim
        .deploy_command(&report, &["--timeout", "5m"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // helm has finished (the record says deployed): helmdeck is waiting for the rollout.
    sim.wait_for("a deployed release record", Duration::from_secs(60), |s| {
        s.get("/api/v1/namespaces/apps/secrets?labelSelector=owner%3Dhelm")
            .contains("\"deployed\"")
    });
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None, "killed by SIGKILL");
    let r = read(&report);
    assert_eq!(r["reportVersion"], 2, "{r}");
    assert_eq!(r["state"], "running", "{r}");
    assert_eq!(r["verdict"], Value::Null, "{r}");
    assert_eq!(r["release"], "demo", "{r}");
}

#[test]
fn a_refused_run_writes_a_report_with_code_2() {
    let sim = Sim::start("all-green");
    let report = sim.home().join("report.json");
    std::fs::write(&report, OLD_LANDED).unwrap();
    let out = sim
        .deploy_command(&report, &["--timeout", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let r = read(&report);
    assert_eq!(r["reportVersion"], 2, "{r}");
    assert_eq!(r["state"], "finished", "{r}");
    assert_eq!(r["verdict"]["code"], 2, "{r}");
    assert_eq!(r["verdict"]["outcome"], "usage", "{r}");
    let reason = r["verdict"]["reason"].as_str().unwrap_or("");
    assert!(
        reason.starts_with("--timeout: \"soon\" is not a duration"),
        "{r}"
    );
    assert_eq!(r["release"], "demo");
    assert_eq!(r["namespace"], "apps");
    assert_eq!(
        sim.get_json("/_sim/stats")["requests"],
        1,
        "only the stats request itself"
    );
}

#[test]
fn a_symlink_at_the_report_path_is_replaced_not_followed() {
    let sim = Sim::start("all-green");
    let target = sim.home().join("precious.txt");
    std::fs::write(&target, "not a report").unwrap();
    let report = sim.home().join("report.json");
    std::os::unix::fs::symlink(&target, &report).unwrap();
    let out = sim
        .deploy_command(&report, &["--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "not a report");
    let meta = std::fs::symlink_metadata(&report).unwrap();
    assert!(
        meta.file_type().is_file(),
        "the symlink was replaced by the report"
    );
    let r = read(&report);
    assert_eq!(r["reportVersion"], 2, "{r}");
    assert_eq!(r["state"], "finished", "{r}");
    assert_eq!(r["verdict"]["code"], 0, "{r}");
    let left: Vec<_> = std::fs::read_dir(sim.home())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".helmdeck"))
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}
