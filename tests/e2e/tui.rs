//! The TUI in a real terminal: `helmdeck demo` under tmux, read back with its escapes
//! (`capture-pane -e`), driven with keys, quit with `q`; then the exit code and the terminal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::tool;

pub(crate) const BANNER_TIMEOUT: Duration = Duration::from_secs(90);
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A private tmux server (its own socket, no user config, a temporary HOME), killed on drop.
pub(crate) struct Tmux {
    socket: String,
    home: tempfile::TempDir,
}

impl Tmux {
    pub(crate) fn start(width: u16, height: u16, command: &str) -> Tmux {
        match Command::new("tmux").arg("-V").output() {
            Ok(out) if out.status.success() => {}
            _ => panic!("tmux is not installed: the TUI test needs it (apt-get install -y tmux)"),
        }
        let home = tempfile::tempdir().expect("a temporary HOME");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let tmux = Tmux {
            socket: format!("helmdeck-tui-{}-{nanos}", std::process::id()),
            home,
        };
        let (w, h) = (width.to_string(), height.to_string());
        // remain-on-exit keeps the pane after the program ends, so the restored terminal can be
        // inspected; it is set in the same command, before the program can finish.
        let out = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &w,
            "-y",
            &h,
            command,
            ";",
            "set-option",
            "-t",
            "t",
            "remain-on-exit",
            "on",
        ]);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env("HOME", self.home.path())
            .env_remove("TMUX")
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .output()
            .expect("running tmux")
    }

    /// The pid of the pane's process (the shell running the command).
    pub(crate) fn pane_pid(&self) -> u32 {
        let pid = self.display("#{pane_pid}");
        pid.parse()
            .unwrap_or_else(|_| panic!("no pane pid: {pid:?}"))
    }

    /// The pane as text with its SGR escapes.
    pub(crate) fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-e", "-t", "t"]).stdout)
            .into_owned()
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        for k in keys {
            let out = self.run(&["send-keys", "-t", "t", k]);
            assert!(
                out.status.success(),
                "send-keys {k}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    fn literal(&self, text: &str) {
        let out = self.run(&["send-keys", "-t", "t", "-l", text]);
        assert!(out.status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    fn display(&self, format: &str) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["display-message", "-p", "-t", "t", format])
                .stdout,
        )
        .trim()
        .to_string()
    }

    /// Polls the pane until `pred` holds; fails with the last capture.
    pub(crate) fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!(
                    "timed out after {timeout:?} waiting for {what}; the pane shows:\n{}",
                    strip(&screen)
                );
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// The text without escapes.
pub(crate) fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) && c != '[' {
                        break;
                    }
                }
            } else {
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The SGR attribute numbers in effect before `needle` on `line` (colour arguments skipped).
fn sgr_before(line: &str, needle: &str) -> Vec<u16> {
    let at = line.find(needle).expect("the needle is on the line");
    let mut attrs = Vec::new();
    let mut rest = &line[..at];
    while let Some(i) = rest.find("\u{1b}[") {
        let body = &rest[i + 2..];
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(body.len());
        if body[end..].starts_with('m') {
            let nums: Vec<u16> = body[..end]
                .split(';')
                .map(|n| n.parse().unwrap_or(0))
                .collect();
            let mut k = 0;
            while k < nums.len() {
                match nums[k] {
                    0 => attrs.clear(),
                    38 | 48 => {
                        k += if nums.get(k + 1) == Some(&5) { 2 } else { 4 };
                    }
                    n => attrs.push(n),
                }
                k += 1;
            }
        }
        rest = &body[end..];
    }
    attrs
}

pub(crate) fn exit_file(dir: &Path) -> PathBuf {
    dir.join("exit")
}

#[test]
fn demo_under_tmux_lands_greys_the_optional_row_drills_down_and_restores_the_terminal() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let command = format!(
        "{} demo --scenario optional-pending --helm {}; echo EXIT=$? > {}",
        env!("CARGO_BIN_EXE_helmdeck"),
        tool("helm").display(),
        exit.display()
    );
    let tmux = Tmux::start(160, 48, &command);

    let screen = tmux.wait_for("the verdict banner", BANNER_TIMEOUT, |s| {
        s.contains("LANDED")
    });
    let plain = strip(&screen);
    assert!(
        plain.contains("✓ LANDED") && plain.contains("exit 0"),
        "{plain}"
    );
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "1",
        "the TUI runs on the alternate screen"
    );

    // The optional row is greyed: DIM (SGR 2) is in effect on its name.
    let row = screen
        .lines()
        .find(|l| l.contains("demo-gpu-client") && l.contains("optional"))
        .unwrap_or_else(|| panic!("no optional row:\n{plain}"));
    let attrs = sgr_before(row, "demo-gpu-client");
    assert!(
        attrs.contains(&2),
        "the optional row is not dim: SGR {attrs:?} in {row:?}"
    );
    // A gating row is not.
    let gating = screen
        .lines()
        .find(|l| l.contains("demo-api") && l.contains("Deployment"))
        .expect("the demo-api row");
    assert!(!sgr_before(gating, "demo-api").contains(&2), "{gating:?}");

    // Select demo-gpu-client (filter, then Enter) and drill down: its pod's reason shows.
    tmux.literal("/gpu");
    tmux.keys(&["Enter", "Enter"]);
    let detail = tmux.wait_for("the drill-down of demo-gpu-client", STEP_TIMEOUT, |s| {
        let p = strip(s);
        p.contains("PODS") && p.contains("demo-gpu-client ·") && p.contains("Unschedulable")
    });
    assert!(
        strip(&detail).contains("FailedScheduling"),
        "{}",
        strip(&detail)
    );

    // Back, clear the filter, and into demo-api: its container log streams in on demand.
    tmux.keys(&["Escape", "Escape"]);
    tmux.literal("/demo-api");
    tmux.keys(&["Enter", "Enter"]);
    tmux.wait_for("demo-api's log", STEP_TIMEOUT, |s| {
        strip(s).contains("listening on :8080")
    });
    tmux.keys(&["Escape"]);

    // q after the verdict quits at once, with the verdict's code, and restores the terminal.
    tmux.keys(&["q"]);
    let code = wait_exit(&tmux, &exit, "q");
    assert_eq!(code, "EXIT=0");
    assert_restored(&tmux, "verdict: LANDED (exit 0)");
}

/// Waits for the `EXIT=code` line the tmux command leaves in `exit`, and returns it.
pub(crate) fn wait_exit(tmux: &Tmux, exit: &Path, what: &str) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(exit)
            && text.contains("EXIT=")
        {
            return text.trim().to_string();
        }
        assert!(
            start.elapsed() < STEP_TIMEOUT,
            "helmdeck did not exit after {what}:\n{}",
            strip(&tmux.capture())
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The alternate screen was left and the verdict line stays in the scrollback.
fn assert_restored(tmux: &Tmux, verdict: &str) {
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "0",
        "the alternate screen was left"
    );
    let after = strip(&tmux.capture());
    assert!(
        after.contains(verdict),
        "the verdict is left in the scrollback:\n{after}"
    );
}

#[test]
fn cancel_under_tmux_asks_first_then_ends_at_its_verdict_and_restores_the_terminal() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    // readiness-never without its short demo timeout: the rollout waits long enough to cancel.
    let scenario = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/helmdeck-sim/scenarios/readiness-never.yaml"),
    )
    .expect("the readiness-never scenario");
    let scenario = scenario
        .split("\ndemo:")
        .next()
        .expect("split yields at least one part");
    let scenario_path = work.path().join("readiness-never-long.yaml");
    std::fs::write(&scenario_path, scenario).expect("writing the scenario");
    let command = format!(
        "{} demo --scenario {} --helm {}; echo EXIT=$? > {}",
        env!("CARGO_BIN_EXE_helmdeck"),
        scenario_path.display(),
        tool("helm").display(),
        exit.display()
    );
    let tmux = Tmux::start(120, 40, &command);
    tmux.wait_for("the rollout waiting on demo-web", BANNER_TIMEOUT, |s| {
        strip(s).contains("demo-web")
    });

    // q asks first; n keeps the deploy going.
    tmux.keys(&["q"]);
    tmux.wait_for("the cancel question", STEP_TIMEOUT, |s| {
        strip(s).contains("Cancel the deploy?")
    });
    tmux.keys(&["n"]);
    tmux.wait_for("the question to close", STEP_TIMEOUT, |s| {
        !strip(s).contains("Cancel the deploy?")
    });
    assert!(
        !exit.exists(),
        "n must not end the deploy:\n{}",
        strip(&tmux.capture())
    );

    // Ctrl+C asks the same; y cancels, and the screen ends at the cancelled verdict by itself.
    tmux.keys(&["C-c"]);
    tmux.wait_for("the cancel question after Ctrl+C", STEP_TIMEOUT, |s| {
        strip(s).contains("Cancel the deploy?")
    });
    tmux.keys(&["y"]);
    assert_eq!(wait_exit(&tmux, &exit, "a confirmed cancel"), "EXIT=1");
    assert_restored(&tmux, "verdict: FAILED (exit 1): cancelled");
}

/// `env K=V ...`: the simulator's client environment for a command run under tmux.
pub(crate) fn sim_env(sim: &crate::support::Sim) -> String {
    let env = [
        ("HOME", sim.home().to_path_buf()),
        ("XDG_STATE_HOME", sim.home().join(".local/state")),
        ("KUBECONFIG", sim.kubeconfig.clone()),
        ("HELM_CACHE_HOME", sim.home().join(".cache/helm")),
        ("HELM_CONFIG_HOME", sim.home().join(".config/helm")),
        ("HELM_DATA_HOME", sim.home().join(".local/share/helm")),
    ];
    let env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", v.display()))
        .collect();
    format!("env {}", env.join(" "))
}

/// `helmdeck deploy --plan` of tests/charts/plan under tmux, with the simulator's client
/// environment, changing the web image and the claim size; `EXIT=code` lands in `exit`.
fn plan_under_tmux(sim: &crate::support::Sim, exit: &Path) -> Tmux {
    let command = format!(
        "{} {} deploy demo {} -n apps --plan --helm {} --set image=registry.example/web:2.0 \
         --set storage=5Gi --set password=plan-s3cr3t-two; echo EXIT=$? > {}",
        sim_env(sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        crate::support::repo().join("tests/charts/plan").display(),
        tool("helm").display(),
        exit.display()
    );
    Tmux::start(120, 30, &command)
}

#[test]
fn plan_under_tmux_is_browsable_and_n_declines_with_nothing_written() {
    let sim = crate::support::Sim::start("all-green");
    let chart = crate::support::repo().join("tests/charts/plan");
    let first = sim.deploy_chart(&chart, "first.json", &["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let writes = |sim: &crate::support::Sim| sim.get_json("/_sim/stats")["writes"].clone();
    let before = writes(&sim);
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let tmux = plan_under_tmux(&sim, &exit);

    let screen = tmux.wait_for("the plan pane", BANNER_TIMEOUT, |s| {
        strip(s).contains("apply the plan")
    });
    let plain = strip(&screen);
    assert!(
        plain.contains("~ Deployment/demo-web") && plain.contains("will roll"),
        "{plain}"
    );
    assert!(plain.contains("helm will be refused"), "{plain}");
    assert!(!plain.contains("s3cr3t"), "{plain}");
    // Enter on the first object (the Deployment, in kind order after none) opens its diff.
    tmux.keys(&["Enter"]);
    let diff = tmux.wait_for("a diff", STEP_TIMEOUT, |s| strip(s).contains("@@"));
    assert!(!strip(&diff).contains("s3cr3t"), "{}", strip(&diff));
    tmux.keys(&["Escape"]);
    tmux.wait_for("the list again", STEP_TIMEOUT, |s| {
        strip(s).contains("enter diff")
    });

    tmux.keys(&["n"]);
    tmux.wait_for("the declined verdict", STEP_TIMEOUT, |s| {
        strip(s).contains("plan declined")
    });
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "n then q"), "EXIT=1");
    assert_restored(&tmux, "cancelled: plan declined");
    assert_eq!(writes(&sim), before, "n at the plan wrote to the cluster");
    let secrets = sim.kubectl(&[
        "get",
        "secrets",
        "-n",
        "apps",
        "-l",
        "owner=helm",
        "-o",
        "name",
    ]);
    let records = String::from_utf8_lossy(&secrets.stdout).lines().count();
    assert_eq!(records, 1, "only revision 1's record");
}

#[test]
fn plan_under_tmux_y_applies_it() {
    let sim = crate::support::Sim::start("all-green");
    let chart = crate::support::repo().join("tests/charts/plan");
    let first = sim.deploy_chart(&chart, "first.json", &["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let tmux = plan_under_tmux(&sim, &exit);
    tmux.wait_for("the plan pane", BANNER_TIMEOUT, |s| {
        strip(s).contains("apply the plan")
    });
    tmux.keys(&["y"]);
    // The claim size change is refused by the API server: helm fails, as the plan said.
    // The header's verdict, not helm's own "exit 1" line that comes just before it.
    let screen = tmux.wait_for("the verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains("verdict FAILED (exit 1)")
    });
    assert!(strip(&screen).contains("upgrade"), "{}", strip(&screen));
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "y then q"), "EXIT=1");
}

/// The failed upgrade of `WEB_BREAKS_ON_UPGRADE` (revision 2 crash-loops, revision 1 deployed):
/// `R` then `y` rolls it back as `--rollback-on-failure` would, and the verdict stays 1.
#[test]
fn r_then_y_after_a_failed_rollout_rolls_back_to_the_deployed_revision_and_exits_1() {
    let sim = crate::support::Sim::start_yaml(crate::recover::WEB_BREAKS_ON_UPGRADE);
    let first = sim.install_demo(&["--timeout", "60s"]);
    assert!(first.status.success(), "{}", crate::support::text(&first));
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let report = work.path().join("report.json");
    let command = format!(
        "{} {} deploy demo {} -n apps --helm {} --timeout 8s --set image.tag=1.4.3 \
         --report {}; echo EXIT=$? > {}",
        sim_env(&sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        crate::support::chart().display(),
        tool("helm").display(),
        report.display(),
        exit.display()
    );
    let tmux = Tmux::start(120, 40, &command);
    let failed = tmux.wait_for("the failed verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains("verdict FAILED (exit 1)")
    });
    let plain = strip(&failed);
    let shown: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report"))
            .expect("the report is JSON");
    assert_eq!(
        (
            &shown["state"],
            &shown["verdict"]["code"],
            &shown["rollback"]
        ),
        (
            &serde_json::json!("finished"),
            &serde_json::json!(1),
            &serde_json::Value::Null
        ),
        "the first verdict is in the report while its banner shows: {shown}"
    );
    assert!(
        plain.contains("R roll back"),
        "the key bar offers R:\n{plain}"
    );
    assert!(
        plain.contains("next: helm rollback demo 1 -n apps"),
        "{plain}"
    );
    tmux.keys(&["R"]);
    tmux.wait_for("the rollback prompt", STEP_TIMEOUT, |s| {
        strip(s).contains("Roll revision 2 back to revision 1?")
    });
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("the verdict after the rollback", BANNER_TIMEOUT, |s| {
        strip(s).contains("rolled back to 1")
    });
    let plain = strip(&screen);
    assert!(plain.contains("revision 1 → 2 ↺ 3"), "{plain}");
    assert!(plain.contains("✓ rollback"), "{plain}");
    assert!(
        plain.contains("R at the screen: revision 2 failed: rolling back to revision 1"),
        "{plain}"
    );
    assert!(plain.contains("next: helm history demo -n apps"), "{plain}");
    // The verdict `R` decided again is in the report while the screen still shows it.
    let shown: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report"))
            .expect("the report is JSON");
    assert_eq!(shown["state"], "finished", "{shown}");
    assert!(
        shown["verdict"]["reason"]
            .as_str()
            .is_some_and(|r| r.ends_with("; rolled back to 1")),
        "{shown}"
    );
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "R, y, then q"), "EXIT=1");
    assert_restored(&tmux, "rolled back to 1");

    let history = sim.helm_history();
    let last = history
        .as_array()
        .and_then(|h| h.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["revision"], 3, "{history}");
    assert_eq!(last["status"], "deployed", "{history}");
    assert_eq!(last["description"], "Rollback to 1", "{history}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report"))
            .expect("the report is JSON");
    assert_eq!(report["verdict"]["code"], 1, "{report}");
    assert!(
        report["verdict"]["reason"]
            .as_str()
            .is_some_and(|r| r.ends_with("; rolled back to 1")),
        "{report}"
    );
    // The next step runs exactly as printed.
    let next = report["verdict"]["next"].as_str().unwrap_or_default();
    assert_eq!(next, "helm history demo -n apps", "{report}");
    let ran = sim.run_printed(next);
    assert!(ran.status.success(), "{}", crate::support::text(&ran));
    let rollback = &report["rollback"];
    assert_eq!(
        (
            &rollback["from"],
            &rollback["to"],
            &rollback["revision"],
            &rollback["status"]
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(1),
            &serde_json::json!(3),
            &serde_json::json!("rolled-back")
        ),
        "{report}"
    );
}

/// `q` after a failed verdict ends the engine's wait for `R`: nothing is rolled back.
#[test]
fn q_after_a_failed_rollout_under_tmux_exits_1_without_a_rollback() {
    let sim = crate::support::Sim::start_yaml(crate::recover::WEB_BREAKS_ON_UPGRADE);
    let first = sim.install_demo(&["--timeout", "60s"]);
    assert!(first.status.success(), "{}", crate::support::text(&first));
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let command = format!(
        "{} {} deploy demo {} -n apps --helm {} --timeout 8s --set image.tag=1.4.3; \
         echo EXIT=$? > {}",
        sim_env(&sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        crate::support::chart().display(),
        tool("helm").display(),
        exit.display()
    );
    let tmux = Tmux::start(120, 40, &command);
    tmux.wait_for("the failed verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains("verdict FAILED (exit 1)")
    });
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "q"), "EXIT=1");
    let history = sim.helm_history();
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history}");
}

/// `helmdeck watch demo -n apps --follow` for tmux, helm trapped: its pid lands in `dir/pid`
/// (the shell execs it), `EXIT=code` in `dir/exit`, the report in `dir/watch.json`.
fn follow_command(sim: &crate::support::Sim, dir: &Path, trap: &crate::watch::HelmTrap) -> String {
    let env = [
        ("HOME", sim.home().to_path_buf()),
        ("KUBECONFIG", sim.kubeconfig.clone()),
        ("HELM_BIN", trap.helm()),
        ("PATH", PathBuf::from(trap.path())),
    ];
    let env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", v.display()))
        .collect();
    format!(
        "sh -c 'echo $$ > {pid}; exec env {env} {bin} watch demo -n apps --follow --timeout 60s \
         --report {report}'; echo EXIT=$? > {exit}",
        pid = dir.join("pid").display(),
        env = env.join(" "),
        bin = env!("CARGO_BIN_EXE_helmdeck"),
        report = dir.join("watch.json").display(),
        exit = exit_file(dir).display()
    )
}

/// The seed hook fails, quickly: upgrades run with `--no-hooks` land, one with hooks fails.
const FAILING_SEED: &str = "namespaces: [apps]\njobs:\n  - {match: '*-seed', outcome: fail, after: 1s, exit_code: 1, logs: ['error: orders.yaml row 17']}\n";

#[test]
fn watch_follow_under_tmux_lists_each_revisions_verdict_and_q_leaves_with_the_last_code() {
    let sim = crate::support::Sim::start_yaml(FAILING_SEED);
    let install = sim.install_demo(&["--no-hooks", "--timeout", "60s"]);
    assert!(install.status.success(), "{install:?}");
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let trap = crate::watch::HelmTrap::new(work.path());
    let command = follow_command(&sim, work.path(), &trap);
    let tmux = Tmux::start(120, 40, &command);
    let history = |n: usize| format!("History  {n} verdict{}", if n == 1 { "" } else { "s" });
    // Revision 1 is settled: judged at once, then the screen waits for the next.
    tmux.wait_for("revision 1's verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains(&history(1))
    });
    assert_eq!(tmux.display("#{alternate_on}"), "1");
    // Someone else's two upgrades: one that lands, one whose seed hook fails.
    let landed = sim.install_demo(&["--no-hooks", "--timeout", "60s"]);
    assert!(landed.status.success(), "{landed:?}");
    tmux.wait_for("revision 2's verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains(&history(2))
    });
    let failed = sim.install_demo(&["--timeout", "60s"]);
    assert!(!failed.status.success(), "the seed hook fails the upgrade");
    let screen = strip(&tmux.wait_for("revision 3's verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains(&history(3))
    }));
    let row = |revision: &str| {
        screen
            .lines()
            // The pane pads the revision; the banner's reason says "revision N is".
            .find(|l| l.contains(&format!("{revision}  ")) && l.contains("exit "))
            .unwrap_or_else(|| panic!("no history row for {revision}:\n{screen}"))
            .to_string()
    };
    assert!(row("revision 2").contains("LANDED exit 0"), "{screen}");
    assert!(row("revision 3").contains("FAILED exit 1"), "{screen}");
    assert!(screen.contains("failing hooks: demo-seed"), "{screen}");
    // q while waiting for the next revision leaves at once, with the last verdict's code.
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "q"), "EXIT=1");
    assert_restored(&tmux, "verdict: FAILED (exit 1)");
    let after = strip(&tmux.capture());
    assert!(
        after.contains("verdict: LANDED (exit 0)"),
        "each revision's verdict stays in the scrollback:\n{after}"
    );
    trap.assert_untouched("helmdeck watch --follow");
}

#[test]
fn watch_follow_under_tmux_left_by_a_signal_while_waiting_keeps_the_last_verdict() {
    let sim = crate::support::Sim::start("all-green");
    let install = sim.install_demo(&["--timeout", "60s"]);
    assert!(install.status.success(), "{install:?}");
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let trap = crate::watch::HelmTrap::new(work.path());
    let tmux = Tmux::start(120, 40, &follow_command(&sim, work.path(), &trap));
    tmux.wait_for("revision 1's verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains("History  1 verdict ")
    });
    let pid: i32 = std::fs::read_to_string(work.path().join("pid"))
        .expect("the watch's pid")
        .trim()
        .parse()
        .expect("a pid");
    // What a pipeline's runner sends: the screen waits for revision 2, which never comes.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(wait_exit(&tmux, &exit, "SIGTERM"), "EXIT=0");
    assert_restored(&tmux, "verdict: LANDED (exit 0)");
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(work.path().join("watch.json")).expect("the report"),
    )
    .expect("the report is JSON");
    assert_eq!(
        report["verdict"]["code"], 0,
        "the last verdict stands, not the cancelled wait: {report}"
    );
    trap.assert_untouched("helmdeck watch --follow");
}

/// Issue 24: `helmdeck inspect` on a terminal with demo-api scaled (real `kubectl scale`) to
/// 1,200 replicas, more than the simulator's nodes hold: its Workloads row shows READY
/// `N/1200` whole at 80 and 160 columns, and at 160 a gauge of updated-not-ready cells (`▒`).
#[test]
fn inspect_under_tmux_shows_four_digit_counts_whole_and_a_gauge_when_wide() {
    let sim = crate::support::Sim::start("all-green");
    let out = sim.install_demo(&["--no-hooks", "--timeout", "60s"]);
    assert!(out.status.success(), "{}", crate::support::text(&out));
    let out = sim.kubectl(&[
        "scale",
        "deployment/demo-api",
        "-n",
        "apps",
        "--replicas=1200",
    ]);
    assert!(out.status.success(), "{}", crate::support::text(&out));
    sim.wait_for("1,200 updated replicas", Duration::from_secs(120), |s| {
        s.get_json("/apis/apps/v1/namespaces/apps/deployments/demo-api")["status"]
            ["updatedReplicas"]
            == 1200
    });
    for (w, h) in [(80, 24), (160, 48)] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let exit = exit_file(dir.path());
        let command = format!(
            "{} {} inspect demo -n apps; echo EXIT=$? > {}",
            sim_env(&sim),
            env!("CARGO_BIN_EXE_helmdeck"),
            exit.display()
        );
        let tmux = Tmux::start(w, h, &command);
        let screen = strip(&tmux.wait_for("the demo-api row", STEP_TIMEOUT, |s| {
            strip(s).contains("demo-api")
        }));
        let row = screen
            .lines()
            .find(|l| l.contains(" demo-api "))
            .unwrap_or_else(|| panic!("the demo-api row at {w}x{h}:\n{screen}"));
        let whole = row.split_whitespace().any(|word| {
            word.strip_suffix("/1200")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        });
        assert!(whole, "READY whole at {w}x{h}: {row}\n{screen}");
        assert_eq!(row.contains('▒'), w == 160, "the gauge at {w}x{h}: {row}");
        tmux.keys(&["q"]);
        assert_eq!(wait_exit(&tmux, &exit, "q"), "EXIT=0");
    }
}

/// `demo --fleet 3` under tmux: the fleet screen lists every target to its verdict; Enter opens
/// one target's own deploy screen, Esc returns to the list, `q` (everything ended) leaves with
/// the fleet's worst code, and the terminal is restored with the fleet's line in the scrollback.
#[test]
fn demo_fleet_under_tmux_opens_and_leaves_a_targets_screen() {
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let command = format!(
        "{} demo --fleet 3 --no-record --helm {}; echo EXIT=$? > {}",
        env!("CARGO_BIN_EXE_helmdeck"),
        tool("helm").display(),
        exit.display()
    );
    let tmux = Tmux::start(160, 48, &command);
    let list = tmux.wait_for("every target's verdict", BANNER_TIMEOUT, |s| {
        strip(s).contains("2 landed · 1 live-init-incomplete")
    });
    let plain = strip(&list);
    for label in ["site-1", "site-2", "site-3"] {
        assert!(plain.contains(label), "{plain}");
    }
    assert!(plain.contains("LIVE — INIT INCOMPLETE · exit 3"), "{plain}");
    assert_eq!(tmux.display("#{alternate_on}"), "1");

    // site-3 (init-fails): its own screen, with its banner and its init Job.
    tmux.keys(&["Down", "Down", "Enter"]);
    let own = tmux.wait_for("site-3's own screen", STEP_TIMEOUT, |s| {
        let p = strip(s);
        p.contains("LIVE — INIT INCOMPLETE") && p.contains("demo-init") && !p.contains("TARGET")
    });
    assert!(strip(&own).contains("esc"), "{}", strip(&own));

    tmux.keys(&["Escape"]);
    tmux.wait_for("the list again", STEP_TIMEOUT, |s| {
        let p = strip(s);
        p.contains("TARGET") && p.contains("site-1")
    });

    tmux.keys(&["q"]);
    let code = wait_exit(&tmux, &exit, "q on the fleet");
    assert_eq!(code, "EXIT=3");
    assert_restored(
        &tmux,
        "demo --fleet 3: 2 landed · 1 live-init-incomplete (exit 3)",
    );
}
