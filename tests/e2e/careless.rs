//! Issue 23, a careless operator: a dry run or a plan that asks for a lock recovery is refused
//! before any request (both write nothing, ever); a closed stdout is a quiet exit; replay's
//! speed out of range is refused; a missing kubeconfig's path is shown, not masked.

use std::process::{Command, Stdio};

use crate::support::{Sim, chart};

fn helmdeck() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_helmdeck"));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `--recover-lock` is a `helm rollback`: with `--dry-run` or `--plan-only` it is refused (exit
/// 2, one line saying why and what to run) before the first request, so nothing is written.
#[test]
fn recover_lock_with_a_dry_run_or_a_plan_is_refused_before_any_request() {
    let sim = Sim::start("locked");
    for (flags, named) in [
        (&["--recover-lock", "--dry-run"][..], "--dry-run"),
        (&["--recover-lock", "--plan-only"][..], "--plan-only"),
        (&["--recover-lock", "--force", "--dry-run"][..], "--dry-run"),
        (
            &["--recover-lock", "--force", "--plan-only"][..],
            "--plan-only",
        ),
    ] {
        let before = sim.get_json("/_sim/stats");
        let report = sim.home().join("report-careless.json");
        let out = sim
            .deploy_command(&report, flags)
            .output()
            .expect("run helmdeck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert_eq!(
            stderr.trim().lines().count(),
            1,
            "{flags:?}: one line: {stderr}"
        );
        assert!(
            stderr.contains("--recover-lock") && stderr.contains(named),
            "{flags:?}: names both flags: {stderr}"
        );
        assert!(
            stderr.contains("writes nothing"),
            "{flags:?}: says why: {stderr}"
        );
        let after = sim.get_json("/_sim/stats");
        assert_eq!(
            before["writes"], after["writes"],
            "{flags:?}: nothing written"
        );
        // The stats request itself is the one request between the two reads.
        let count = |stats: &serde_json::Value| stats["requests"].as_u64().expect("a count");
        assert_eq!(
            count(&after),
            count(&before) + 1,
            "{flags:?}: no request at all"
        );
    }
    let history = sim.helm_history();
    let revisions = history.as_array().map_or(0, Vec::len);
    assert_eq!(
        revisions, 3,
        "still revisions 1 to 3, no rollback: {history}"
    );
}

/// Output into a pipe whose reader went away at once (`| head -c0`): exit 0, nothing on stderr.
#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    for args in [
        &["sim", "--list"][..],
        &["completions", "bash"][..],
        &["man"][..],
    ] {
        let mut child = helmdeck().args(args).spawn().expect("spawn helmdeck");
        // Closes the read end before helmdeck writes a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait for helmdeck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: stderr: {stderr}");
    }
}

/// The replay speed is 0.25 to 64 (the screen's own bounds): outside it, exit 2 and one line
/// naming `--speed`, never a silent clamp; the bounds themselves are accepted.
#[test]
fn replay_speed_out_of_range_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-record.ndjson");
    let missing = missing.to_str().expect("a UTF-8 path");
    for speed in ["100", "0.1", "64.5", "NaN"] {
        let out = helmdeck()
            .args(["replay", "--headless", "--speed", speed, missing])
            .output()
            .expect("run helmdeck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{speed}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{speed}: {stderr}");
        assert!(
            stderr.contains("--speed must be from 0.25 to 64"),
            "{speed}: {stderr}"
        );
    }
    for speed in ["0.25", "64"] {
        let out = helmdeck()
            .args(["replay", "--headless", "--speed", speed, missing])
            .output()
            .expect("run helmdeck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("--speed"), "{speed} is in range: {stderr}");
        assert!(
            stderr.contains("no-such-record"),
            "{speed}: gets to the file: {stderr}"
        );
    }
}

/// A kubeconfig that is not there: its path is shown as given (a path is not a value), both
/// the default `~/.kube/config` and `$KUBECONFIG`'s.
#[test]
fn a_missing_kubeconfig_path_is_shown_not_masked() {
    let home = tempfile::tempdir().expect("tempdir");
    let chart = chart();
    let chart = chart.to_str().expect("a UTF-8 path");
    let default = home.path().join(".kube/config");
    let named = home.path().join("elsewhere/kubeconfig");
    for (kubeconfig, shown) in [(None, &default), (Some(&named), &named)] {
        let mut cmd = helmdeck();
        cmd.args(["deploy", "demo", chart, "-n", "apps", "--headless"])
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("KUBERNETES_SERVICE_PORT");
        match kubeconfig {
            Some(path) => cmd.env("KUBECONFIG", path),
            None => cmd.env_remove("KUBECONFIG"),
        };
        let out = cmd.output().expect("run helmdeck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let shown = shown.to_str().expect("a UTF-8 path");
        assert!(stderr.contains(shown), "names {shown}: {stderr}");
        assert!(!stderr.contains("***"), "a path is not masked: {stderr}");
    }
}
