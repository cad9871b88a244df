//! Cancels that leave no lock (issue 23 items 2 and 19): a cancel by SIGINT, SIGTERM or SIGHUP
//! at any step, helmdeck's own rollback and the plan prompt included, leaves no `pending-*`
//! revision the next deploy would refuse, or names it with the one command that clears it; the
//! next deploy on this machine knows a lock its own run left; and a SIGKILL of helmdeck takes
//! helm down with a SIGTERM, never leaving it to run on its own.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{DeployRun, Sim, finish, printed_commands, text, tool, with_init};

/// helm's pre-rollback hook, so a `helm rollback` takes as long as the scenario says.
const PRE_ROLLBACK_HOOK: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-prerollback
  annotations:
    helm.sh/hook: pre-rollback
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: prerollback
          image: busybox:1.36
          args: ["sleep", "5"]
"#;

/// The demo chart with [`PRE_ROLLBACK_HOOK`], in `dir`.
fn rollback_chart(dir: &Path) -> PathBuf {
    let chart = crate::support::chart_copy(dir, |_, text| text);
    std::fs::write(chart.join("templates/prerollback.yaml"), PRE_ROLLBACK_HOOK)
        .expect("write the pre-rollback hook");
    chart
}

const FAST: &str = "namespaces: [apps]\ndefaults: {start_after: 200ms, ready_after: 300ms}\n";

/// demo-web crash-loops on its second generation (the upgrade's rollout fails and helmdeck
/// rolls back), and the pre-rollback hook takes `hook`.
fn rollback_scenario(hook: &str) -> String {
    format!(
        "{FAST}workloads:\n  - {{match: Deployment/*-web, generation: 2, crash_loop: 1}}\njobs:\n  - {{match: '*-prerollback', after: {hook}}}\n"
    )
}

/// The release's revisions as `helm history` lists them: (revision, status).
fn history(sim: &Sim) -> Vec<(i64, String)> {
    let out = sim.helm(&["history", "demo", "-n", "apps", "-o", "json"]);
    if !out.status.success() {
        // No release at all: helm says "release: not found".
        return vec![];
    }
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", text(&out)))
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| {
            (
                r["revision"].as_i64().unwrap_or(0),
                r["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn pending_latest(sim: &Sim) -> Option<(i64, String)> {
    history(sim)
        .last()
        .filter(|(_, s)| s.starts_with("pending-"))
        .cloned()
}

/// A deploy started with its stdout read as it comes: `when` sees the output so far (and the
/// sim), polled every 100 ms whether or not a line came (helm waiting on a hook prints
/// nothing), and says when to send `signal`; the run to its end.
fn signal_when(
    sim: &Sim,
    chart: &Path,
    report: &str,
    extra: &[&str],
    signal: i32,
    when: impl Fn(&str, &Sim) -> bool,
) -> DeployRun {
    let report = sim.home().join(report);
    let started = Instant::now();
    let mut child = sim
        .deploy_chart_command(chart, &report, extra)
        .spawn()
        .expect("run helmdeck");
    let stdout = child.stdout.take().expect("piped stdout");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let mut seen = seen.lock().expect("the output");
                seen.push_str(&line);
                seen.push('\n');
            }
        })
    };
    let mut sent = false;
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("helmdeck's status").is_none() {
        assert!(Instant::now() < deadline, "helmdeck ran for 120 s");
        let output = seen.lock().expect("the output").clone();
        if !sent && when(&output, sim) {
            // SAFETY: kill(2) touches no memory; the pid is our unreaped child.
            unsafe { libc::kill(child.id() as i32, signal) };
            sent = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().expect("the output reader");
    let out = child.wait_with_output().expect("wait for helmdeck");
    let mut run = finish(out, &report, started);
    run.stdout = seen.lock().expect("the output").clone();
    assert!(sent, "the moment to signal never came: {}", run.describe());
    run
}

/// Polls `f` until it holds (within `secs`).
fn eventually(what: &str, secs: u64, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("timed out after {secs}s waiting for {what}");
}

fn job_exists(sim: &Sim, name: &str) -> bool {
    sim.get(&format!("/apis/batch/v1/namespaces/apps/jobs/{name}"))
        .contains("\"kind\":\"Job\"")
}

/// A deploy that fails its rollout (demo-web crash-loops) with `--rollback-on-failure`, after a
/// first install that landed, signalled once helm's rollback waits on the pre-rollback hook.
fn cancel_during_rollback(sim: &Sim, chart: &Path, signal: i32, report: &str) -> DeployRun {
    let first = sim.deploy_chart(chart, "first.json", &["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    signal_when(
        sim,
        chart,
        report,
        &[
            // Longer than the pre-rollback hook: helm is still waiting on it at the signal.
            "--timeout",
            "10s",
            "--set",
            "image.tag=1.4.3",
            "--rollback-on-failure",
        ],
        signal,
        |_, s| job_exists(s, "demo-prerollback"),
    )
}

/// Item 2: SIGTERM while helmdeck's own `helm rollback` waits on a slow pre-rollback hook.
/// helm handles no signal during a rollback and leaves revision 3 `pending-rollback`: the
/// verdict names it and prints the command that clears it; the next deploy on this machine
/// knows the lock is its own run's (never while a record of ours is missing or its helm still
/// runs) and `--recover-lock` clears it at once, young as it is.
#[test]
fn a_cancelled_rollback_names_its_lock_and_the_next_deploy_knows_it_is_ours() {
    let sim = Sim::start_yaml(&rollback_scenario("8s"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let chart = rollback_chart(dir.path());
    let run = cancel_during_rollback(&sim, &chart, libc::SIGTERM, "cancelled.json");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(
        pending_latest(&sim),
        Some((3, "pending-rollback".into())),
        "{}",
        run.describe()
    );
    assert!(
        run.reason()
            .ends_with("; helm rollback left revision 3 pending-rollback"),
        "{}",
        run.describe()
    );
    assert_eq!(
        run.report["verdict"]["next"],
        "helm rollback demo 1 -n apps",
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("next: helm rollback demo 1 -n apps"),
        "{}",
        run.describe()
    );

    // Not ours without a record of ours: the state directory of another machine.
    let elsewhere = sim.home().join("elsewhere");
    let mut cmd = sim.deploy_chart_command(
        &chart,
        &sim.home().join("other.json"),
        &["--timeout", "30s"],
    );
    cmd.env("XDG_STATE_HOME", &elsewhere);
    let other = finish(
        cmd.output().expect("run helmdeck"),
        &sim.home().join("other.json"),
        Instant::now(),
    );
    assert_eq!(other.code, Some(1), "{}", other.describe());
    assert!(
        other.reason().contains("another deploy in progress"),
        "{}",
        other.describe()
    );

    // Not ours while the helm our record names still runs: this test process stands in for it.
    let record = newest_record(&sim);
    let kept = std::fs::read_to_string(&record).expect("the record");
    let me = std::process::id();
    let stamp = helmdeck::helm::spawn::start_stamp(me).expect("our start stamp");
    let alive: String = kept
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("a record line");
            if v["event"]["type"] == "left_lock" {
                v["event"]["helmPid"] = me.into();
                v["event"]["helmStart"] = stamp.clone().into();
            }
            format!("{v}\n")
        })
        .collect();
    assert_ne!(alive, kept, "the record names the lock its helm left");
    std::fs::write(&record, alive).expect("rewrite the record");
    let busy = sim.deploy_chart(&chart, "busy.json", &["--timeout", "30s"]);
    assert!(
        busy.reason().contains("another deploy in progress"),
        "{}",
        busy.describe()
    );
    std::fs::write(&record, kept).expect("restore the record");

    // Ours: said so, with both ways out, at once (the lock is seconds old, --lock-min-age 10m).
    let next = sim.deploy_chart(&chart, "next.json", &["--timeout", "30s"]);
    assert_eq!(next.code, Some(1), "{}", next.describe());
    assert!(
        next.reason()
            .contains("left by this machine's own helmdeck run")
            && next.reason().contains("--recover-lock")
            && next
                .reason()
                .ends_with("clear it with: helm rollback demo 1 -n apps"),
        "{}",
        next.describe()
    );
    assert!(
        !next.reason().contains("another deploy in progress"),
        "{}",
        next.describe()
    );
    let recovered = sim.deploy_chart(
        &chart,
        "recovered.json",
        &["--timeout", "90s", "--recover-lock"],
    );
    assert_eq!(recovered.code, Some(0), "{}", recovered.describe());
    assert_eq!(pending_latest(&sim), None, "{:?}", history(&sim));
}

/// The newest record in the sim's state directory.
fn newest_record(sim: &Sim) -> PathBuf {
    let dir = sim.home().join(".local/state/helmdeck");
    let mut records: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the state directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
        .collect();
    records.sort();
    records.pop().expect("a record")
}

/// The pids whose parent is `pid`, with their command names.
fn children(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let name = head
            .split_once('(')
            .map(|(_, n)| n.to_string())
            .unwrap_or_default();
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push((child, name));
        }
    }
    out
}

/// Whether `pid` runs (a zombie has ended).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Item 19: helmdeck killed with SIGKILL mid-upgrade (helm waits on a one-minute hook). helm,
/// in a process group of its own, gets the SIGTERM a cancel sends (PR_SET_PDEATHSIG) and ends
/// as on Ctrl+C, never left running on its own; the replay of the killed run's record says helm
/// may still have been running.
#[test]
fn sigkill_of_helmdeck_cancels_helm_and_its_replay_says_helm_may_have_run_on() {
    let sim = Sim::start_yaml(crate::support::SLOW_MIGRATE);
    let report = sim.home().join("killed.json");
    let mut child: Child = sim
        .deploy_command(&report, &[])
        .spawn()
        .expect("run helmdeck");
    sim.wait_for_helm_on_the_migrate_hook();
    let helm: Vec<u32> = children(child.id())
        .into_iter()
        .filter(|(_, name)| name == "helm")
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(helm.len(), 1, "one helm under helmdeck: {helm:?}");
    let helm = helm[0];
    child.kill().expect("SIGKILL helmdeck");
    let _ = child.wait();
    eventually("helm to end after helmdeck's SIGKILL", 20, || {
        !running(helm)
    });
    // helm ended as a cancel ends it: revision 1 `failed`, or still `pending-install` when it
    // died of SIGPIPE printing its cancel notice to the pipe helmdeck no longer reads (before
    // marking the revision); never carried on alone to `deployed`.
    let left = history(&sim);
    assert!(
        left == [(1, "failed".to_string())] || left == [(1, "pending-install".to_string())],
        "{left:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(history(&sim), left, "nothing writes the release any more");

    let replay = sim
        .helmdeck_command(&[
            "replay",
            newest_record(&sim).to_str().expect("UTF-8"),
            "--headless",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run helmdeck replay");
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay));
    let stderr = String::from_utf8_lossy(&replay.stderr);
    assert!(
        stderr.contains("during upgrade (helmdeck killed?): helm may still have been running")
            && stderr.contains("helm history demo -n apps"),
        "{}",
        text(&replay)
    );
}

/// Where a cancel lands.
#[derive(Debug, Clone, Copy, PartialEq)]
enum At {
    Preflight,
    Upgrade,
    Rollout,
    Init,
    Rollback,
    PlanPrompt,
}

const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
];

/// One row: cancel at `at` with `signal`; then no lock the next deploy would refuse, or the one
/// printed command clears it (run as printed); then the next deploy lands.
fn cancel_row(at: At, signal: i32) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let demo = crate::support::chart();
    let (sim, chart, run) = match at {
        At::Preflight => {
            // Every API answer 1 s late at first: preflight's reads take seconds.
            let sim = Sim::start_yaml(&format!(
                "{FAST}faults:\n  - {{at: 0s, anchor: start, do: latency, delay: 1s, for: 8s}}\n"
            ));
            let run = signal_when(
                &sim,
                &demo,
                "cancel.json",
                &["--timeout", "30s"],
                signal,
                |l, _| l.contains("preflight started"),
            );
            (sim, demo, run)
        }
        At::Upgrade => {
            let sim = Sim::start_yaml(&format!(
                "{FAST}jobs:\n  - {{match: '*-migrate', after: 6s}}\n"
            ));
            let run = signal_when(
                &sim,
                &demo,
                "cancel.json",
                &["--timeout", "30s"],
                signal,
                |_, s| job_exists(s, "demo-migrate"),
            );
            (sim, demo, run)
        }
        At::Rollout => {
            let sim = Sim::start_yaml(&format!(
                "{FAST}workloads:\n  - {{match: Deployment/*-web, ready_after: 8s}}\n"
            ));
            let run = signal_when(
                &sim,
                &demo,
                "cancel.json",
                &["--timeout", "30s"],
                signal,
                |l, _| l.contains("rollout   started"),
            );
            (sim, demo, run)
        }
        At::Init => {
            let sim = Sim::start_yaml(&format!(
                "{FAST}jobs:\n  - {{match: '*-init', after: 5s}}\n"
            ));
            let run = signal_when(
                &sim,
                &demo,
                "cancel.json",
                &with_init(&["--timeout", "30s"]),
                signal,
                |l, _| l.contains("init      started"),
            );
            (sim, demo, run)
        }
        At::Rollback => {
            let sim = Sim::start_yaml(&rollback_scenario("6s"));
            let chart = rollback_chart(dir.path());
            let run = cancel_during_rollback(&sim, &chart, signal, "cancel.json");
            (sim, chart, run)
        }
        At::PlanPrompt => {
            let sim = Sim::start_yaml(FAST);
            let run = cancel_at_the_plan_prompt(&sim, dir.path(), signal);
            (sim, demo, run)
        }
    };
    let what = format!("{at:?} × signal {signal}: {}", run.describe());
    let want = if at == At::Init { 3 } else { 1 };
    assert_eq!(run.code, Some(want), "{what}");
    if at != At::PlanPrompt {
        assert!(run.reason().contains("cancel"), "{what}");
    }
    if let Some((revision, status)) = pending_latest(&sim) {
        // Left locked: the verdict names it and prints the one command that clears it.
        assert!(
            run.reason()
                .contains(&format!("left revision {revision} {status}")),
            "{what}"
        );
        let commands = printed_commands(&run);
        let fix = run.report["verdict"]["next"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(commands.contains(&fix), "{fix:?} not printed: {what}");
        let out = sim.run_printed(&fix);
        assert_eq!(out.status.code(), Some(0), "{fix}: {}", text(&out));
        assert_eq!(pending_latest(&sim), None, "{fix} left the lock: {what}");
    }
    if at == At::Init {
        // The cancel stops its own init Job; one still running (a slow delete) would be another
        // run's to the next deploy, so it waits for the Job to be gone or ended.
        eventually("the init Job to be gone or ended", 30, || {
            let job = sim.get_json("/apis/batch/v1/namespaces/apps/jobs/demo-init");
            job["kind"] != "Job"
                || job["status"]["succeeded"].as_i64().unwrap_or(0) > 0
                || job["status"]["failed"].as_i64().unwrap_or(0) > 0
        });
    }
    let extra = if at == At::Init {
        with_init(&["--timeout", "60s"])
    } else {
        vec!["--timeout", "60s"]
    };
    let next = sim.deploy_chart(&chart, "next.json", &extra);
    assert_eq!(
        next.code,
        Some(0),
        "the next deploy after {at:?} × {signal}: {}",
        next.describe()
    );
}

/// `helmdeck deploy --plan` on a terminal (tmux), sent `signal` while the plan waits for `y`.
fn cancel_at_the_plan_prompt(sim: &Sim, work: &Path, signal: i32) -> DeployRun {
    use crate::tui::{BANNER_TIMEOUT, Tmux, exit_file, sim_env, strip, wait_exit};
    let exit = exit_file(work);
    let report = work.join("plan.json");
    let command = format!(
        "{} {} deploy demo {} -n apps --plan --helm {} --timeout 30s --report {}; echo EXIT=$? > {}",
        sim_env(sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        crate::support::chart().display(),
        tool("helm").display(),
        report.display(),
        exit.display()
    );
    let started = Instant::now();
    let tmux = Tmux::start(120, 30, &command);
    tmux.wait_for("the plan prompt", BANNER_TIMEOUT, |s| {
        strip(s).contains("apply the plan")
    });
    let shell: u32 = tmux.pane_pid();
    let helmdeck: Vec<u32> = children(shell)
        .into_iter()
        .filter(|(_, name)| name == "helmdeck")
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(
        helmdeck.len(),
        1,
        "helmdeck under the pane's shell: {helmdeck:?}"
    );
    // SAFETY: kill(2) touches no memory; the pid is the helmdeck the pane runs.
    unsafe { libc::kill(helmdeck[0] as i32, signal) };
    let code = wait_exit(&tmux, &exit, "a signal at the plan prompt");
    let report: Value = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    DeployRun {
        code: code.strip_prefix("EXIT=").and_then(|c| c.parse().ok()),
        stdout: strip(&tmux.capture()),
        stderr: String::new(),
        report,
        elapsed: started.elapsed(),
    }
}

/// What must be shown: SIGINT, SIGTERM and SIGHUP (headless; the plan prompt on a terminal)
/// at preflight, the upgrade, the rollout wait, the init step, helmdeck's own rollback and the
/// plan prompt. The rows run a few at a time, each on its own simulator.
#[test]
fn a_cancel_at_any_step_leaves_no_lock_or_prints_the_command_that_clears_it() {
    // `HELMDECK_E2E_CASE=TEXT` runs only the rows whose name contains it (while debugging one).
    let only = std::env::var("HELMDECK_E2E_CASE").unwrap_or_default();
    let rows: Vec<(At, i32, String)> = [
        At::Preflight,
        At::Upgrade,
        At::Rollout,
        At::Init,
        At::Rollback,
        At::PlanPrompt,
    ]
    .into_iter()
    .flat_map(|at| SIGNALS.map(|(signal, name)| (at, signal, format!("{at:?} {name}"))))
    .filter(|(_, _, name)| name.contains(only.as_str()))
    .collect();
    assert!(!rows.is_empty(), "no row matches {only:?}");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..crate::support::E2E_PARALLEL {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some((at, signal, name)) = rows.get(i) else {
                        break;
                    };
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        cancel_row(*at, *signal)
                    }));
                    if outcome.is_err() {
                        failed.lock().expect("the list").push(name.clone());
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().expect("the list");
    assert!(failed.is_empty(), "rows failed: {failed:?}");
}
