//! `helmdeck watch`: the test's own helm is "someone else"; the watch runs with no chart, and
//! with `HELM_BIN` and the first `PATH` entry pointing at a helm that only leaves a mark, so a
//! watch that ran helm at all (even `helm version`) is caught.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{DeployRun, Sim, finish, printed_commands, text, with_init};

/// A `helm` that must never run: it appends its arguments to a marker file and exits 1.
pub struct HelmTrap {
    pub dir: PathBuf,
    pub marker: PathBuf,
}

impl HelmTrap {
    pub fn new(home: &Path) -> HelmTrap {
        use std::os::unix::fs::PermissionsExt;
        let dir = home.join("trap-bin");
        std::fs::create_dir_all(&dir).expect("the trap's directory");
        let marker = home.join("helm-ran");
        let script = dir.join("helm");
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", marker.display()),
        )
        .expect("the trap helm");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("the trap helm is executable");
        HelmTrap { dir, marker }
    }

    pub fn helm(&self) -> PathBuf {
        self.dir.join("helm")
    }

    /// `PATH` with the trap first (then only system directories, which hold no helm).
    pub fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.dir.display())
    }

    /// Points `cmd`'s helm lookups (`HELM_BIN`, then `PATH`) at the trap.
    pub fn arm(&self, cmd: &mut Command) {
        cmd.env("HELM_BIN", self.helm()).env("PATH", self.path());
    }

    pub fn assert_untouched(&self, what: &str) {
        assert!(
            !self.marker.exists(),
            "{what} ran helm: {}",
            std::fs::read_to_string(&self.marker).unwrap_or_default()
        );
    }
}

impl Sim {
    /// `helmdeck watch demo -n apps --headless --report <home>/<report> <extra>`, not yet run,
    /// with helm trapped (see [`HelmTrap`]).
    fn watch_command(&self, report: &Path, extra: &[&str]) -> Command {
        let mut args = vec![
            "watch",
            "demo",
            "-n",
            "apps",
            "--headless",
            "--report",
            report.to_str().expect("a UTF-8 path"),
        ];
        args.extend_from_slice(extra);
        let mut cmd = self.helmdeck_command(&args);
        HelmTrap::new(self.home()).arm(&mut cmd);
        cmd
    }

    fn watch(&self, extra: &[&str]) -> DeployRun {
        let report = self.home().join("watch.json");
        let started = Instant::now();
        let out = self
            .watch_command(&report, extra)
            .output()
            .expect("run helmdeck watch");
        let run = finish(out, &report, started);
        HelmTrap::new(self.home()).assert_untouched("helmdeck watch");
        run
    }

    /// After a watch this test spawned itself: it never ran helm.
    fn assert_watch_ran_no_helm(&self) {
        HelmTrap::new(self.home()).assert_untouched("helmdeck watch");
    }
}

fn no_helm_on_path() {
    assert!(
        ["/usr/bin/helm", "/bin/helm"]
            .iter()
            .all(|p| !Path::new(p).exists()),
        "the watch's PATH must lack helm for these tests to mean anything"
    );
}

#[test]
fn attached_before_the_install_starts_it_watches_it_to_0() {
    no_helm_on_path();
    let sim = Sim::start("all-green");
    let report = sim.home().join("watch.json");
    let started = Instant::now();
    let child = sim
        .watch_command(&report, &["--timeout", "60s"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let run = finish(child.wait_with_output().unwrap(), &report, started);
    sim.assert_watch_ran_no_helm();
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stdout.contains("waiting for a release record"),
        "{}",
        run.describe()
    );
    assert!(run.stdout.contains("pending-install"), "{}", run.describe());
    assert_eq!(run.report["chart"], "(watch: no chart)");
    assert_eq!(run.workload("StatefulSet", "demo-db")["ready"], true);
}

/// A seed hook (post-install, post-upgrade) that fails slowly, so a watch attaches while it runs.
const SLOW_FAILING_SEED: &str = "namespaces: [apps]\njobs:\n  - {match: '*-seed', outcome: fail, after: 6s, exit_code: 1, logs: ['error: orders.yaml row 17: customer 4711 not found']}\n";

/// The `metadata.creationTimestamp` of the object at `path`, when it exists.
fn created(sim: &Sim, path: &str) -> Option<jiff::Timestamp> {
    let v: serde_json::Value = serde_json::from_str(&sim.get(path)).ok()?;
    v.pointer("/metadata/creationTimestamp")?
        .as_str()?
        .parse()
        .ok()
}

#[test]
fn attached_mid_way_through_a_failing_post_upgrade_hook_it_names_the_hook_and_its_log() {
    no_helm_on_path();
    let sim = Sim::start_yaml(SLOW_FAILING_SEED);
    // Revision 1 runs no hook, so it lands and leaves no demo-seed Job behind: the one the watch
    // attaches to can only be the upgrade's.
    let install = sim.install_demo(&["--no-hooks", "--timeout", "60s"]);
    assert!(install.status.success(), "{install:?}");
    let upgrade = sim
        .client_command(
            &crate::support::tool("helm"),
            &[
                "upgrade",
                "demo",
                crate::support::chart().to_str().unwrap(),
                "-n",
                "apps",
                "--timeout",
                "60s",
            ],
        )
        .spawn()
        .unwrap();
    let record = "/api/v1/namespaces/apps/secrets/sh.helm.release.v1.demo.v2";
    let seed = "/apis/batch/v1/namespaces/apps/jobs/demo-seed";
    sim.wait_for(
        "the upgrade's post-upgrade seed hook Job",
        Duration::from_secs(30),
        |s| {
            s.get(record).contains("pending-upgrade")
                && created(s, seed)
                    .zip(created(s, record))
                    .is_some_and(|(job, rev)| job >= rev)
        },
    );
    let run = sim.watch(&["--timeout", "60s", "--lock-min-age", "10m"]);
    let _ = { upgrade }.wait();
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stdout.contains("revision 2 is pending-upgrade"),
        "{}",
        run.describe()
    );
    // A pending record younger than --lock-min-age is a deploy at work, not a stuck lock.
    assert!(
        run.stdout.contains("another deploy in progress"),
        "{}",
        run.describe()
    );
    for lock_words in ["is locked", "clear it with"] {
        assert!(
            !run.stdout.contains(lock_words) && !run.stderr.contains(lock_words),
            "{lock_words}: {}",
            run.describe()
        );
    }
    let hook_line = |phase: &str| {
        run.stdout
            .lines()
            .position(|l| l.contains("hook") && l.contains("demo-seed") && l.ends_with(phase))
    };
    let (running, failed) = (hook_line(": Running"), hook_line(": Failed"));
    assert!(
        running.is_some() && failed.is_some() && running < failed,
        "the hook is seen running, then failing: {}",
        run.describe()
    );
    assert!(
        run.reason().contains("failing hooks: demo-seed"),
        "{}",
        run.describe()
    );
    assert!(
        run.evidence_has("customer 4711 not found"),
        "the failing hook's log line: {}",
        run.describe()
    );
    // Revision 1 is deployed: the advice rolls back to it, and nothing else.
    assert_eq!(
        run.report["verdict"]["next"],
        "helm rollback demo 1 -n apps",
        "{}",
        run.describe()
    );
}

#[test]
fn a_first_install_whose_hook_fails_advises_no_rollback() {
    no_helm_on_path();
    let sim = Sim::start_yaml(SLOW_FAILING_SEED);
    let report = sim.home().join("watch.json");
    let started = Instant::now();
    let child = sim
        .watch_command(&report, &["--timeout", "60s"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert!(!sim.install_demo(&["--timeout", "60s"]).status.success());
    let run = finish(child.wait_with_output().unwrap(), &report, started);
    sim.assert_watch_ran_no_helm();
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stdout.contains("revision 1 is pending-install")
            && run.stdout.contains("revision 1 is failed"),
        "{}",
        run.describe()
    );
    assert!(
        run.reason().contains("failing hooks: demo-seed"),
        "{}",
        run.describe()
    );
    // Nothing was ever deployed: no rollback (least of all to the failed revision itself).
    assert_eq!(
        run.report["verdict"]["next"],
        serde_json::Value::Null,
        "{}",
        run.describe()
    );
    assert!(!run.stdout.contains("helm rollback"), "{}", run.describe());
}

#[test]
fn a_crash_looping_rollout_ends_1_naming_crashloopbackoff_and_advises_no_rollback_on_install() {
    no_helm_on_path();
    let sim = Sim::start("crashloop");
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let run = sim.watch(&["--timeout", "6s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("CrashLoopBackOff"),
        "{}",
        run.reason()
    );
    assert_eq!(run.report["verdict"]["next"], serde_json::Value::Null);
    assert!(!run.stdout.contains("helm rollback"), "{}", run.describe());
    // `deploy --only rollout` means the same: no rollback to the failing first revision.
    let only = sim.deploy(&["--only", "rollout", "--timeout", "6s"]);
    assert_eq!(only.code, Some(1), "{}", only.describe());
    assert!(
        !only.stdout.contains("helm rollback"),
        "{}",
        only.describe()
    );
}

#[test]
fn follow_gives_one_verdict_per_revision() {
    no_helm_on_path();
    let sim = Sim::start("all-green");
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let report = sim.home().join("watch.json");
    let started = Instant::now();
    let mut child = sim
        .watch_command(&report, &["--follow", "--timeout", "60s"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let mut verdicts = 0;
    let next_verdict = |seen: &mut Vec<String>| loop {
        let line = rx
            .recv_timeout(Duration::from_secs(90))
            .unwrap_or_else(|_| panic!("no verdict line:\n{}", seen.join("\n")));
        seen.push(line.clone());
        if line.starts_with("verdict:") {
            return line;
        }
    };
    // Revision 1 is judged at once, then each upgrade in turn.
    assert!(next_verdict(&mut seen).contains("exit 0"));
    verdicts += 1;
    for _ in 0..2 {
        assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
        assert!(
            next_verdict(&mut seen).contains("exit 0"),
            "{}",
            seen.join("\n")
        );
        verdicts += 1;
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    sim.assert_watch_ran_no_helm();
    let all = seen.join("\n");
    assert_eq!(verdicts, 3);
    for revision in ["revision 2 is", "revision 3 is"] {
        assert!(all.contains(revision), "{all}");
    }
    assert_eq!(status.code(), Some(0), "the last verdict's code:\n{all}");
    let _ = started;
}

/// `helm uninstall` while the watch follows a pending upgrade deletes every record: the watch
/// says the release was uninstalled, at once, ends 1, and advises nothing (a `helm rollback`
/// of a release that has no records cannot run).
#[test]
fn an_uninstall_under_the_watch_is_said_and_advises_no_rollback() {
    no_helm_on_path();
    let sim = Sim::start_yaml("namespaces: [apps]\njobs:\n  - {match: '*-seed', outcome: hang}\n");
    assert!(sim.install_demo(&["--no-hooks"]).status.success());
    // Revision 2 stays pending-upgrade: its post-upgrade seed hook never ends.
    let mut upgrade = sim
        .client_command(
            &crate::support::tool("helm"),
            &[
                "upgrade",
                "demo",
                crate::support::chart().to_str().unwrap(),
                "-n",
                "apps",
                "--timeout",
                "120s",
            ],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    sim.wait_for("revision 2 pending", Duration::from_secs(30), |s| {
        s.get("/api/v1/namespaces/apps/secrets/sh.helm.release.v1.demo.v2")
            .contains("pending-upgrade")
    });
    let report = sim.home().join("watch.json");
    let started = Instant::now();
    let child = sim
        .watch_command(&report, &["--timeout", "40s"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let uninstalled = sim.helm(&["uninstall", "demo", "-n", "apps"]);
    assert!(uninstalled.status.success(), "{}", text(&uninstalled));
    let run = finish(child.wait_with_output().unwrap(), &report, started);
    let _ = upgrade.kill();
    let _ = upgrade.wait();
    sim.assert_watch_ran_no_helm();
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stdout.contains("revision 2 is pending-upgrade"),
        "{}",
        run.describe()
    );
    assert!(
        (run.reason().contains("release demo was uninstalled")
            || run.reason().contains("release demo is being uninstalled"))
            && !run.reason().contains("pending"),
        "{}",
        run.describe()
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "said at once, not after --timeout: {}",
        run.describe()
    );
    assert!(
        run.report["verdict"]["next"].is_null() && !run.stdout.contains("helm rollback"),
        "nothing to roll back to: {}",
        run.describe()
    );
}

/// SIGINT while `--follow` waits for the next revision: the exit is the last verdict's (0), and
/// what is printed last says so: it stopped following, the last verdict stands. No cancelled
/// verdict (exit 1) is printed, and nothing says helm gets a signal: a watch runs no helm.
#[test]
fn sigint_while_following_ends_with_the_last_verdicts_code_and_says_so() {
    no_helm_on_path();
    let sim = Sim::start("all-green");
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let report = sim.home().join("watch.json");
    let mut child = sim
        .watch_command(&report, &["--follow", "--timeout", "60s"])
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(90))
            .unwrap_or_else(|_| panic!("no verdict line:\n{}", seen.join("\n")));
        seen.push(line.clone());
        if line.starts_with("verdict:") {
            assert!(line.contains("exit 0"), "{}", seen.join("\n"));
            break;
        }
    }
    // Well into the wait for revision 2.
    std::thread::sleep(Duration::from_secs(3));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    sim.assert_watch_ran_no_helm();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{}\n--- stderr\n{stderr}", seen.join("\n"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "the last verdict's code:\n{all}"
    );
    let last = seen
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .expect("some output");
    assert!(
        last.starts_with("stopped following demo") && last.contains("LANDED (exit 0)"),
        "the last line says what the exit is:\n{all}"
    );
    assert_eq!(
        seen.iter().filter(|l| l.starts_with("verdict:")).count(),
        1,
        "only revision 1 was judged:\n{all}"
    );
    assert!(
        !all.contains("helm gets") && !stderr.replace("helmdeck", "").contains("helm"),
        "a watch runs no helm:\n{all}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        report["verdict"]["code"], 0,
        "the report holds the last verdict"
    );
}

#[test]
fn a_watched_init_failure_ends_3_and_its_printed_next_step_runs_as_printed() {
    no_helm_on_path();
    let sim = Sim::start("init-fails");
    let report = sim.home().join("watch.json");
    let started = Instant::now();
    let child = sim
        .watch_command(&report, &["--init-job", "demo-init", "--timeout", "60s"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    // Someone else's deploy, with its init step: the Job fails (exit 3 for them too).
    let deploy = sim.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(deploy.code, Some(3), "{}", deploy.describe());
    let run = finish(child.wait_with_output().unwrap(), &report, started);
    sim.assert_watch_ran_no_helm();
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let commands = printed_commands(&run);
    assert_eq!(commands.len(), 1, "{commands:?}\n{}", run.describe());
    let command = &commands[0];
    // The watch has no chart: it never advises a deploy, only what it can see.
    assert_eq!(
        command,
        "kubectl logs job/demo-init -n apps",
        "{}",
        run.describe()
    );
    assert_eq!(run.report["verdict"]["next"], command.as_str());
    let out = sim.run_printed(command);
    assert!(out.status.success(), "{command}\n{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("connect: connection refused"),
        "the init Job's failing log line: {}",
        text(&out)
    );
}

#[test]
fn a_rollback_whose_hook_fails_stays_pending_rollback_and_the_watch_names_the_hook() {
    no_helm_on_path();
    let sim = Sim::start_yaml(
        "namespaces: [apps]\njobs:\n  - {match: '*-seed', outcome: fail, after: 2s, exit_code: 1, logs: ['error: rollback seed: table orders is locked']}\n",
    );
    // The seed hook also runs on a rollback; the install and the upgrade run no hooks.
    let chart = crate::support::chart_copy(&sim.home().join("chart"), |path, text| {
        if path.ends_with("seed-job.yaml") {
            text.replace(
                "post-install,post-upgrade",
                "post-install,post-upgrade,post-rollback",
            )
        } else {
            text
        }
    });
    let chart = chart.to_str().expect("a UTF-8 path");
    for _ in 0..2 {
        let out = sim.helm(&[
            "upgrade",
            "--install",
            "demo",
            chart,
            "-n",
            "apps",
            "--no-hooks",
        ]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let rollback = sim
        .client_command(
            &crate::support::tool("helm"),
            &["rollback", "demo", "1", "-n", "apps", "--timeout", "60s"],
        )
        .spawn()
        .unwrap();
    sim.wait_for("the rollback's record", Duration::from_secs(30), |s| {
        s.get("/api/v1/namespaces/apps/secrets/sh.helm.release.v1.demo.v3")
            .contains("pending-rollback")
    });
    let run = sim.watch(&["--timeout", "60s"]);
    let _ = { rollback }.wait();
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stdout.contains("revision 3 is pending-rollback"),
        "{}",
        run.describe()
    );
    // Named from the failed Job, not left to time out on a record helm never writes again.
    assert!(
        run.reason().contains("failing hooks: demo-seed")
            && !run.reason().contains("still pending"),
        "{}",
        run.describe()
    );
    assert!(
        run.evidence_has("table orders is locked"),
        "the failing hook's log line: {}",
        run.describe()
    );
    assert!(
        sim.get("/api/v1/namespaces/apps/secrets/sh.helm.release.v1.demo.v3")
            .contains("pending-rollback"),
        "helm left the rollback pending"
    );
    // Revision 2 is still the deployed one: the only rollback target there is.
    assert_eq!(
        run.report["verdict"]["next"],
        "helm rollback demo 2 -n apps",
        "{}",
        run.describe()
    );
}
