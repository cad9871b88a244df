//! Two operators at once (issue 9 items 7 and 8): a deploy never claims another run's
//! revision or hook Jobs, never advises undoing a deploy that is still in progress, and reads a
//! lock's age from the record Secret's `metadata.creationTimestamp`.

use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{DeployRun, Sim, chart, finish, text, tool};

/// A scenario whose pre-upgrade migrate hook takes `migrate`, so an upgrade stays pending.
fn slow_migrate(migrate: &str, seed: &str) -> Sim {
    Sim::start_yaml(&format!(
        "namespaces: [apps]\njobs:\n  - {{match: '*-migrate', after: {migrate}}}\n  {seed}\n"
    ))
}

/// `helmdeck deploy demo <chart> -n apps --headless --report <name>.json <extra>`, started.
fn spawn_deploy(sim: &Sim, name: &str, extra: &[&str]) -> (Child, std::path::PathBuf) {
    let report = sim.home().join(format!("{name}.json"));
    let child = sim
        .deploy_command(&report, extra)
        .spawn()
        .expect("run helmdeck");
    (child, report)
}

/// A plain `helm upgrade --install` of the demo release, left running in the background.
fn spawn_helm_upgrade(sim: &Sim) -> Child {
    let chart = chart();
    sim.client_command(
        &tool("helm"),
        &[
            "upgrade",
            "--install",
            "demo",
            chart.to_str().expect("a UTF-8 path"),
            "-n",
            "apps",
            "--timeout",
            "120s",
        ],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("run helm")
}

/// The release record Secrets of demo, by name.
fn records(sim: &Sim) -> Vec<Value> {
    let out = sim.kubectl(&[
        "get",
        "secrets",
        "-n",
        "apps",
        "-l",
        "owner=helm,name=demo",
        "-o",
        "json",
    ]);
    let list: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    list["items"].as_array().cloned().unwrap_or_default()
}

/// Waits for revision `version` to be stored `pending-upgrade`; returns its creationTimestamp.
fn wait_pending(sim: &Sim, version: &str) -> String {
    let mut created = String::new();
    sim.wait_for(
        "a pending-upgrade release record",
        Duration::from_secs(30),
        |s| {
            let found = records(s).into_iter().find(|r| {
                r["metadata"]["labels"]["version"] == version
                    && r["metadata"]["labels"]["status"] == "pending-upgrade"
            });
            if let Some(r) = found {
                created = r["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
            }
            !created.is_empty()
        },
    );
    created
}

fn seconds_since(rfc3339: &str) -> i64 {
    let t: jiff::Timestamp = rfc3339.parse().expect("a Kubernetes timestamp");
    jiff::Timestamp::now().as_second() - t.as_second()
}

/// The number in "NNs ago" right after `prefix` in `text`.
fn age_after(text: &str, prefix: &str) -> i64 {
    let rest = text
        .split_once(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in {text:?}"))
        .1;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    assert!(
        rest[digits.len()..].starts_with("s ago"),
        "an age in seconds after {prefix:?}: {text:?}"
    );
    digits.parse().expect("an age")
}

/// Everything an operator reads: the reason, the next command and every printed line.
fn advice(run: &DeployRun) -> String {
    format!(
        "{}\n{}\n{}",
        run.reason(),
        run.report["verdict"]["next"],
        run.stdout
    )
}

/// v1 installed without hooks (quick), then a pause, so a later revision's record is visibly
/// younger than v1's (helm 4 copies v1's `modifiedAt` label onto the new record).
fn installed_then_paused(sim: &Sim, pause: Duration) {
    let out = sim.install_demo(&["--no-hooks", "--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));
    std::thread::sleep(pause);
}

#[test]
fn two_deploys_started_together_one_wins_and_the_loser_waits_claiming_nothing() {
    let sim = slow_migrate("4s", "");
    installed_then_paused(&sim, Duration::ZERO);
    let started = Instant::now();
    let (a, a_report) = spawn_deploy(&sim, "a", &["--timeout", "60s"]);
    let (b, b_report) = spawn_deploy(&sim, "b", &["--timeout", "60s"]);
    let a = finish(a.wait_with_output().expect("deploy a"), &a_report, started);
    let b = finish(b.wait_with_output().expect("deploy b"), &b_report, started);
    let (winner, loser) = match (a.code, b.code) {
        (Some(0), Some(1)) => (a, b),
        (Some(1), Some(0)) => (b, a),
        _ => panic!(
            "exactly one deploy must win:\n=== a\n{}\n=== b\n{}",
            a.describe(),
            b.describe()
        ),
    };
    assert_eq!(winner.report["revision"], 2, "{}", winner.describe());
    let reason = loser.reason();
    assert!(
        reason.contains("another deploy in progress since"),
        "the loser names the concurrent operation: {}",
        loser.describe()
    );
    assert!(
        reason.contains("upgrade of revision 2"),
        "{}",
        loser.describe()
    );
    assert!(
        reason.contains("wait for it to finish"),
        "the loser advises waiting: {}",
        loser.describe()
    );
    let said = advice(&loser);
    assert!(
        !said.contains("rollback") && !said.contains("delete secret"),
        "never advised away: {}",
        loser.describe()
    );
    assert_eq!(loser.report["verdict"]["next"], Value::Null);
    assert_ne!(
        loser.report["revision"],
        2,
        "the winner's revision is not the loser's: {}",
        loser.describe()
    );
    // The init step's own entry stays (this run never reached it); no helm hook is claimed.
    let helm_hooks: Vec<&Value> = loser.report["hooks"]
        .as_array()
        .map(|h| {
            h.iter()
                .filter(|h| h["events"] != serde_json::json!(["init"]))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        helm_hooks.is_empty(),
        "the winner's hooks are not the loser's: {}",
        loser.describe()
    );
    assert_eq!(loser.init_hook()["phase"], "not configured");
    assert!(
        !loser.stdout.contains("revision 2 deployed"),
        "{}",
        loser.describe()
    );
}

#[test]
fn a_deploy_during_a_young_pending_upgrade_is_told_to_wait_never_to_roll_back() {
    let sim = slow_migrate("60s", "");
    installed_then_paused(&sim, Duration::from_secs(6));
    let mut other = spawn_helm_upgrade(&sim);
    let created = wait_pending(&sim, "2");
    let age_before = seconds_since(&created);
    let run = sim.deploy(&["--timeout", "60s"]);
    let age_after_run = seconds_since(&created);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.step("preflight")["status"], "failed");
    let reason = run.reason();
    let since = format!("another deploy in progress since {created} (upgrade of revision 2");
    assert!(reason.contains(&since), "{since:?}: {}", run.describe());
    let age = age_after(reason, "pending-upgrade, ");
    assert!(
        (age_before - 1..=age_after_run + 1).contains(&age),
        "the lock's age is its record's ({age_before}s..{age_after_run}s), not {age}s: {reason}"
    );
    assert!(reason.contains("wait for it to finish"), "{reason}");
    let said = advice(&run);
    assert!(
        !said.contains("rollback") && !said.contains("delete secret"),
        "a young lock is never advised away: {}",
        run.describe()
    );
    assert_eq!(run.report["verdict"]["next"], Value::Null);
    assert_eq!(
        run.report["helm"]["exited"], false,
        "helm upgrade never ran"
    );
}

#[test]
fn a_lock_older_than_lock_min_age_keeps_the_recovery_advice_with_its_records_age() {
    let sim = slow_migrate("60s", "");
    installed_then_paused(&sim, Duration::from_secs(6));
    let mut other = spawn_helm_upgrade(&sim);
    let created = wait_pending(&sim, "2");
    std::thread::sleep(Duration::from_secs(2));
    let age_before = seconds_since(&created);
    let run = sim.deploy(&["--timeout", "60s", "--lock-min-age", "1s"]);
    let age_after_run = seconds_since(&created);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(
        reason.contains("release demo is locked: revision 2 is pending-upgrade (written "),
        "{}",
        run.describe()
    );
    let age = age_after(reason, "(written ");
    assert!(
        (age_before - 1..=age_after_run + 1).contains(&age),
        "the lock's age is its record's ({age_before}s..{age_after_run}s), not {age}s: {reason}"
    );
    assert!(
        reason.contains("clear it with: helm rollback demo 1 -n apps"),
        "{reason}"
    );
}

#[test]
fn a_previous_runs_failed_hook_job_is_not_shown_as_this_runs() {
    let seed = "- {match: '*-seed', outcome: fail, after: 300ms, logs: ['OLD RUN: seed failed']}";
    let sim = slow_migrate("4s", seed);
    let first = sim.deploy(&["--timeout", "60s"]);
    assert_eq!(first.code, Some(1), "{}", first.describe());
    assert!(
        first.stdout.contains("OLD RUN: seed failed"),
        "the first run's seed hook failed with its log: {}",
        first.describe()
    );
    // The next upgrade stops at its slow pre-upgrade hook: its own seed hook never runs, and
    // the first run's failed demo-seed Job is still in the namespace all along.
    let run = sim.deploy(&["--timeout", "2s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    // What the first run left: demo-seed Failed with its log, demo-init Succeeded. Neither ran
    // in this one (the record after helm says "skipped", which is right).
    let leftovers: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| {
            (l.contains("hook      demo-seed") && l.ends_with(": Failed"))
                || (l.contains("hook      demo-init") && l.ends_with(": Succeeded"))
                || l.contains("log demo-seed")
        })
        .collect();
    assert!(
        leftovers.is_empty(),
        "the previous run's hook Jobs shown as this run's: {leftovers:#?}\n{}",
        run.describe()
    );
    assert!(!run.stdout.contains("OLD RUN"), "{}", run.describe());
    let hooks = run.report["hooks"].as_array().cloned().unwrap_or_default();
    let seed = hooks.iter().find(|h| h["name"] == "demo-seed");
    assert!(
        seed.is_none_or(|h| h["phase"] != "Failed"),
        "report hooks: {hooks:?}"
    );
    assert!(
        !run.report["verdict"]["evidence"]
            .to_string()
            .contains("hook demo-seed (post-install,post-upgrade) failed"),
        "{}",
        run.describe()
    );
}
