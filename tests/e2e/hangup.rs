//! The terminal going away under the TUI (an ssh session dropped): the pty rows of issue 23's
//! cancel-anywhere table. helmdeck runs on a pseudo-terminal (stdin, stdout and stderr, and, in
//! most rows, as its controlling terminal), and the test closes the master side at one moment
//! of the deploy. A hang-up is a cancel: helm gets SIGTERM and is waited for, the report and the
//! record are finished, the exit is the verdict's (1 for a cancel), never a signal; and no
//! `pending-*` revision is left that the next deploy would refuse, unless the report names the
//! one command that clears it (the test runs it as printed).

use std::fs::File;
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{DEMO_INIT, SLOW_MIGRATE, Sim, chart, check_report};

const ROWS: NonZeroU16 = NonZeroU16::new(40).unwrap();
const COLS: NonZeroU16 = NonZeroU16::new(120).unwrap();
/// How long a row waits for its moment, and then for helmdeck to end after the hang-up.
const WAIT: Duration = Duration::from_secs(60);

/// A pseudo-terminal helmdeck runs on; what it draws is kept in a vt100 screen. The master is
/// held by the reader thread alone, so [`Pty::hang_up`] closes its last descriptor.
struct Pty {
    screen: Arc<Mutex<vt100::Parser>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl Pty {
    /// Starts `cmd` on a new pty: its stdin, stdout and stderr, in a session of its own; with
    /// `controlling`, the pty is that session's controlling terminal (so closing the master
    /// sends it SIGHUP, as sshd's hang-up does); without, only its reads and writes fail.
    fn spawn(mut cmd: std::process::Command, controlling: bool) -> (Pty, Child) {
        // The master is close-on-exec: were it to leak into helmdeck (or helm), closing ours
        // would not hang up.
        let (master, slave) = crate::support::openpty(ROWS.get(), COLS.get());
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .env("TERM", "xterm-256color");
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if controlling && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn helmdeck on the pty");
        // The slave's descriptors went with the command: only the child holds the slave now.
        drop(cmd);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (screen, stop) = (screen.clone(), stop.clone());
            std::thread::spawn(move || read_until_stopped(master, &screen, &stop))
        };
        (
            Pty {
                screen,
                stop,
                reader: Some(reader),
            },
            child,
        )
    }

    fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// The bottom line: the key bar.
    fn key_bar(&self) -> String {
        self.contents()
            .lines()
            .last()
            .unwrap_or_default()
            .to_string()
    }

    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) {
        let start = Instant::now();
        while !pred(&self.contents()) {
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}; the screen shows:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Closes the master: the terminal is gone.
    fn hang_up(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the pty reader");
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        self.hang_up();
    }
}

/// Feeds what the child writes into `screen`, answering the cursor-position query a terminal
/// answers (ratatui asks it once), until `stop`; then the master is dropped, closing it.
fn read_until_stopped(mut master: File, screen: &Mutex<vt100::Parser>, stop: &AtomicBool) {
    let mut buf = [0u8; 65536];
    while !stop.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        if unsafe { libc::poll(&mut pfd, 1, 50) } <= 0 {
            continue;
        }
        let n = match master.read(&mut buf) {
            Ok(0) | Err(_) => {
                // The child closed its side (it ended): nothing more comes.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        if chunk.windows(4).any(|w| w == b"\x1b[6n") {
            let _ = master.write_all(b"\x1b[1;1R");
        }
        screen.lock().unwrap().process(chunk);
    }
}

/// The init Job runs for a minute.
const SLOW_INIT: &str = "namespaces: [apps]\njobs:\n  - {match: '*-init', after: 60s}\n";

/// When a row closes the terminal.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// helm runs the upgrade (waiting on a slow pre-install hook).
    Helm,
    /// helm is done; the rollout wait runs (a workload that never gets ready).
    Rollout,
    /// The init step waits on its Job (a slow one).
    Init,
    /// `--plan`: the screen waits for `y`/`n` on the plan.
    PlanPrompt,
    /// Preflight found an old stuck lock and waits for `u` (the key bar offers it).
    LockPrompt,
    /// The verdict is on screen (landed); the screen waits for `q`.
    Verdict,
}

struct Row {
    name: &'static str,
    scenario: &'static str,
    extra: &'static [&'static str],
    moment: Moment,
    /// The pty is the session's controlling terminal: closing it sends SIGHUP.
    controlling: bool,
    code: i32,
    reason: &'static str,
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "helm running",
            scenario: SLOW_MIGRATE,
            extra: &[],
            moment: Moment::Helm,
            controlling: true,
            code: 1,
            reason: "cancelled",
        },
        Row {
            // No SIGHUP (helmdeck is not the terminal's session): only the failed writes say
            // the terminal is gone.
            name: "helm running, no controlling terminal",
            scenario: SLOW_MIGRATE,
            extra: &[],
            moment: Moment::Helm,
            controlling: false,
            code: 1,
            reason: "cancelled",
        },
        Row {
            name: "rollout wait",
            scenario: "readiness-never",
            extra: &[],
            moment: Moment::Rollout,
            controlling: true,
            code: 1,
            reason: "cancelled",
        },
        Row {
            // The release is live: a cancel during init is the init step's 3.
            name: "init step",
            scenario: SLOW_INIT,
            extra: &DEMO_INIT,
            moment: Moment::Init,
            controlling: true,
            code: 3,
            reason: "cancelled during init",
        },
        Row {
            name: "plan prompt",
            scenario: "all-green",
            extra: &["--plan"],
            moment: Moment::PlanPrompt,
            controlling: true,
            code: 1,
            reason: "cancelled",
        },
        Row {
            name: "lock prompt",
            scenario: "locked",
            extra: &[],
            moment: Moment::LockPrompt,
            controlling: true,
            code: 1,
            reason: "release demo is locked",
        },
        Row {
            // Nothing left to cancel: the screen goes with the verdict's own code.
            name: "after the verdict",
            scenario: "all-green",
            extra: &[],
            moment: Moment::Verdict,
            controlling: true,
            code: 0,
            reason: "gating workloads ready",
        },
    ]
}

/// The newest run record's text (the run's own: each row has its own simulator and HOME).
fn record_text(sim: &Sim) -> String {
    let dir = sim.home().join(".local/state/helmdeck");
    std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .next()
        .unwrap_or_default()
}

/// The newest revision's status (what helm and the next deploy's lock check look at), if any.
fn newest_status(sim: &Sim) -> Option<String> {
    let out = sim.helm(&["history", "demo", "-n", "apps", "-o", "json"]);
    let history: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    history
        .as_array()?
        .iter()
        .max_by_key(|r| r["revision"].as_i64())
        .map(|r| r["status"].as_str().unwrap_or("").to_string())
}

fn locked(status: &Option<String>) -> bool {
    status.as_deref().is_some_and(|s| s.starts_with("pending-"))
}

fn run_row(row: &Row) {
    let sim = if row.scenario.contains('\n') {
        Sim::start_yaml(row.scenario)
    } else {
        Sim::start(row.scenario)
    };
    let report = sim.home().join("report.json");
    let chart = chart();
    let mut args = vec![
        "deploy",
        "demo",
        chart.to_str().expect("a UTF-8 path"),
        "-n",
        "apps",
        "--timeout",
        "60s",
        "--report",
        report.to_str().expect("a UTF-8 path"),
    ];
    args.extend_from_slice(row.extra);
    let (mut pty, mut child) = Pty::spawn(sim.helmdeck_command(&args), row.controlling);
    let started = Instant::now();
    match row.moment {
        Moment::Helm => sim.wait_for_helm_on_the_migrate_hook(),
        Moment::Rollout => sim.wait_for("the rollout wait", WAIT, |s| {
            record_text(s).contains(r#""step":"rollout","type":"step_started""#)
        }),
        Moment::Init => sim.wait_for("the init step", WAIT, |s| {
            record_text(s).contains(r#""step":"init","type":"step_started""#)
        }),
        Moment::PlanPrompt => pty.wait_for("the plan's y/n", |s| s.contains("y apply the plan")),
        Moment::LockPrompt => {
            pty.wait_for("preflight waiting on the lock", |s| {
                s.contains("press u to see it")
            });
            // Item 18: while preflight waits for `u`, the key bar offers it.
            let keys = pty.key_bar();
            assert!(
                keys.starts_with(" u clear the lock"),
                "the key bar lacks u: {keys:?}"
            );
        }
        Moment::Verdict => pty.wait_for("the verdict", |s| s.contains("LANDED")),
    }
    let hung_up_after = started.elapsed();
    pty.hang_up();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for helmdeck") {
            break status;
        }
        if started.elapsed() > hung_up_after + WAIT {
            let _ = child.kill();
            panic!(
                "{}: helmdeck still runs {WAIT:?} after the hang-up",
                row.name
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let said = format!("{}: {status:?}", row.name);
    assert_eq!(status.signal(), None, "{said}: killed by a signal");
    assert_eq!(status.code(), Some(row.code), "{said}");

    let report: Value = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| panic!("{said}: no report"));
    check_report(&report);
    assert_eq!(report["state"], "finished", "{said}: {report:#}");
    let reason = report["verdict"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(row.reason), "{said}: {reason}");
    if matches!(row.moment, Moment::Helm) {
        assert_eq!(
            report["helm"]["cancelled"], true,
            "{said}: helm got SIGTERM"
        );
        assert_eq!(
            report["helm"]["exited"], true,
            "{said}: helm was waited for"
        );
    }
    // The record ends with its verdict: `replay --list` does not call it cut short.
    let record = record_text(&sim);
    let last = record.lines().last().unwrap_or_default();
    assert!(
        last.contains(r#""type":"verdict""#),
        "{said}: record ends {last}"
    );

    // No pending revision the next deploy would refuse (the newest one is what it looks at);
    // where one stays (the lock was there before the run), the report names the command that
    // clears it, and it runs as printed.
    if locked(&newest_status(&sim)) {
        // As `next:`, or as the lock's reason says it (`clear it with: …`).
        let next = report["verdict"]["next"]
            .as_str()
            .or_else(|| reason.split_once("clear it with: ").map(|(_, c)| c))
            .unwrap_or_else(|| {
                panic!("{said}: a pending revision stays and no command clears it: {report:#}")
            });
        let out = sim.run_printed(next);
        assert!(out.status.success(), "{said}: {next}: {out:?}");
    }
    let left = newest_status(&sim);
    assert!(!locked(&left), "{said}: the newest revision is {left:?}");
}

#[test]
fn a_terminal_hang_up_is_a_cancel_at_every_step() {
    // `HELMDECK_E2E_CASE=TEXT` runs only the rows whose name contains it (while debugging one).
    let only = std::env::var("HELMDECK_E2E_CASE").unwrap_or_default();
    let rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| r.name.contains(only.as_str()))
        .collect();
    assert!(!rows.is_empty(), "no row matches {only:?}");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..crate::support::E2E_PARALLEL {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(row) = rows.get(i) else { break };
                    let outcome =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_row(row)));
                    if outcome.is_err() {
                        failed.lock().unwrap().push(row.name.to_string());
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    assert!(failed.is_empty(), "a hang-up went wrong at: {failed:?}");
}
