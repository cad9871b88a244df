//! How a run ends when something other than the deploy ends it: SIGHUP cancels a headless
//! deploy as it cancels the TUI's (helm gets SIGTERM and is waited for), and a terminal that
//! cannot show the screen gets the plain lines instead of an error.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use crate::support::{Sim, chart, signal_during_helm};

#[test]
fn sighup_during_helm_cancels_and_leaves_the_release_failed_not_pending() {
    let (sim, run) = signal_during_helm(libc::SIGHUP, "hangup.json");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.reason(), "cancelled", "{}", run.describe());
    assert_eq!(run.report["helm"]["cancelled"], true, "helm got SIGTERM");
    assert_eq!(run.report["helm"]["exited"], true, "helm was waited for");
    let history = sim.helm_history();
    assert_eq!(
        history[0]["status"], "failed",
        "not pending-install: {history}"
    );
}

/// A pseudo-terminal that reports its size as 0x0, with no controlling terminal behind it
/// (as under some CI runners): stdout is a terminal, but no screen fits on it.
#[test]
fn a_terminal_without_a_size_gets_the_plain_lines_instead() {
    let sim = Sim::start("all-green");
    let chart = chart();
    let chart = chart.to_str().unwrap();
    let (code, shown, stderr) =
        under_a_0x0_pty(&sim, &["deploy", "demo", chart, "-n", "apps", "--dry-run"]);
    assert_eq!(code, Some(0), "{stderr}\n--- terminal\n{shown}");
    // A dry run is never LANDED (issue 10): it says what it is.
    assert!(shown.contains("verdict: DRY RUN (exit 0)"), "{shown}");
    assert!(stderr.contains("plain output instead"), "{stderr}");
    // inspect likewise prints its text (the dry run left no record: exit 1, said in the text).
    let (code, shown, stderr) = under_a_0x0_pty(&sim, &["inspect", "demo", "-n", "apps"]);
    assert_eq!(code, Some(1), "{stderr}\n--- terminal\n{shown}");
    assert!(shown.contains("demo"), "{shown}");
    assert!(stderr.contains("plain output instead"), "{stderr}");
}

/// Runs helmdeck with stdout on a 0x0 pseudo-terminal in a session of its own; returns its
/// exit code, what reached the terminal, and its stderr.
fn under_a_0x0_pty(sim: &Sim, args: &[&str]) -> (Option<i32>, String, String) {
    let (mut master, slave) = openpty_0x0();
    let mut cmd = sim.helmdeck_command(args);
    cmd.stdout(Stdio::from(slave)).stdin(Stdio::null());
    // A new session: no controlling terminal, so /dev/tty is not there either.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        // Ends with EIO once the last writer (the child) is gone.
        let _ = master.read_to_end(&mut seen);
        String::from_utf8_lossy(&seen).into_owned()
    });
    let out = child.wait_with_output().unwrap();
    let shown = reader.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), shown, stderr)
}

fn openpty_0x0() -> (std::fs::File, OwnedFd) {
    crate::support::openpty(0, 0)
}
