//! Every command helmdeck prints as advice (the next step, a rollback, a lock's recovery) runs
//! exactly as printed and does what it says (issue 9 item 3).

use std::time::{Duration, Instant};

use crate::support::{DeployRun, Sim, printed_commands, text, with_init};

/// The one command `run` printed, checked to be the kind expected.
fn the_command(run: &DeployRun, starts: &str) -> String {
    let commands = printed_commands(run);
    assert_eq!(commands.len(), 1, "{commands:?}\n{}", run.describe());
    assert!(commands[0].starts_with(starts), "{commands:?}");
    commands[0].clone()
}

fn history(sim: &Sim) -> Vec<serde_json::Value> {
    serde_json::from_value(sim.helm_history()).expect("helm history is a list")
}

#[test]
fn the_printed_only_init_reruns_init_with_every_setting_and_no_value() {
    let sim = Sim::start("init-fails");
    let values = sim.home().join("values.yaml");
    std::fs::write(&values, "api:\n  secretToken: hunter2\n").unwrap();
    let run = sim.deploy(&with_init(&[
        "--kube-context",
        "helmdeck-sim",
        "--timeout",
        "45s",
        "-f",
        values.to_str().unwrap(),
        "--set",
        "web.secret=s3cret",
        "--",
        "--set-string",
        "initJob.siteName=Site Name",
        "--history-max",
        "5",
    ]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let command = the_command(&run, "helmdeck deploy demo ");
    for flag in [
        "--init-toggle initJob.enabled",
        "--init-job demo-init",
        "--kube-context helmdeck-sim",
        "--timeout 45s",
        "--only init",
    ] {
        assert!(command.contains(flag), "{flag} missing: {command}");
    }
    for value in [
        "hunter2",
        "s3cret",
        "Site Name",
        "values.yaml",
        "--set",
        "-f ",
    ] {
        assert!(!command.contains(value), "{value} shown: {command}");
    }
    let out = sim.run_printed(&command);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{command}\n{}", text(&out));
    assert!(
        stdout.contains("created Job demo-init") && stdout.contains("BackoffLimitExceeded"),
        "init ran again and failed the same way: {}",
        text(&out)
    );
    // From the deployed revision's values, not the chart's defaults.
    assert!(
        sim.job_args("demo-init")
            .contains(&"--site-name=Site Name".to_string()),
        "{:?}",
        sim.job_args("demo-init")
    );
}

/// `--only init` runs no rollout: the preflight's timeout budget (a render with the command
/// line's values, judged against the rollout's timeout) does not apply, so the printed command
/// neither warns about the budget nor says it was not checked (issue 22 item 10b).
#[test]
fn the_printed_only_init_says_nothing_about_the_rollout_budget() {
    let sim = Sim::start("init-fails");
    // 12s is under demo-db's 20s budget: the full deploy warns (tests/e2e/recover.rs).
    let run = sim.deploy(&with_init(&["--timeout", "12s"]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert!(
        run.stdout.contains("warning: --timeout 12s"),
        "the full deploy checks the budget: {}",
        run.describe()
    );
    let command = the_command(&run, "helmdeck deploy demo ");
    assert!(command.contains("--only init"), "{command}");
    let out = sim.run_printed(&command);
    assert_eq!(out.status.code(), Some(3), "{command}\n{}", text(&out));
    let all = text(&out);
    assert!(all.contains("created Job demo-init"), "init ran: {all}");
    for said in ["--timeout 12s is shorter", "timeout budget"] {
        assert!(!all.contains(said), "{said:?} said by --only init: {all}");
    }
}

#[test]
fn the_printed_only_init_after_a_cancel_during_init_lands() {
    let sim = Sim::start_yaml("namespaces: [apps]\njobs:\n  - {match: '*-init', after: 5s}\n");
    let report = sim.home().join("cancel.json");
    let started = Instant::now();
    let child = sim
        .deploy_command(&report, &with_init(&["--timeout", "60s"]))
        .spawn()
        .unwrap();
    sim.wait_for(
        "the init Job helmdeck creates",
        Duration::from_secs(60),
        |s| {
            s.get("/apis/batch/v1/namespaces/apps/jobs")
                .contains("\"demo-init\"")
        },
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let run = crate::support::finish(child.wait_with_output().unwrap(), &report, started);
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert_eq!(run.reason(), "cancelled during init", "{}", run.describe());
    let command = the_command(&run, "helmdeck deploy demo ");
    let out = sim.run_printed(&command);
    assert_eq!(out.status.code(), Some(0), "{command}\n{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("created Job demo-init"),
        "{}",
        text(&out)
    );
}

#[test]
fn the_printed_rollback_after_a_failed_upgrade_rolls_back() {
    let sim = Sim::start("all-green");
    assert_eq!(sim.deploy(&["--timeout", "60s"]).code, Some(0));
    let run = sim.deploy(&[
        "--timeout",
        "60s",
        "--kube-context",
        "helmdeck-sim",
        "--set",
        "db.storage=5Gi",
    ]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let command = the_command(&run, "helm rollback demo 1 ");
    assert!(command.contains("--kube-context helmdeck-sim"), "{command}");
    let out = sim.run_printed(&command);
    assert_eq!(out.status.code(), Some(0), "{command}\n{}", text(&out));
    let history = history(&sim);
    let last = history.last().expect("a revision");
    assert_eq!(last["status"], "deployed", "{history:?}");
    assert_eq!(last["description"], "Rollback to 1", "{history:?}");
}

/// After two failed upgrades the rollback still targets revision 1, the last one `deployed`,
/// never revision 2, which failed.
#[test]
fn the_printed_rollback_skips_a_failed_revision() {
    let sim = Sim::start("all-green");
    assert_eq!(sim.deploy(&["--timeout", "60s"]).code, Some(0));
    let immutable = ["--timeout", "60s", "--set", "db.storage=5Gi"];
    assert_eq!(sim.deploy(&immutable).code, Some(1));
    let run = sim.deploy(&immutable);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.report["revisionBefore"], 2, "{}", run.describe());
    assert_eq!(
        run.report["verdict"]["next"],
        "helm rollback demo 1 -n apps",
        "{}",
        run.describe()
    );
}

#[test]
fn the_printed_lock_recovery_clears_the_lock() {
    let sim = Sim::start("locked");
    let run = sim.deploy(&["--timeout", "60s", "--kube-context", "helmdeck-sim"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let command = the_command(&run, "helm rollback demo 2 ");
    assert!(command.contains("--kube-context helmdeck-sim"), "{command}");
    // inspect prints the same command for the same lock.
    let inspect = sim
        .helmdeck_command(&[
            "inspect",
            "demo",
            "-n",
            "apps",
            "--json",
            "--kube-context",
            "helmdeck-sim",
        ])
        .output()
        .unwrap();
    let doc = crate::support::stdout_json(&inspect);
    assert_eq!(doc["lock"]["command"], command.as_str(), "{doc:#}");
    let out = sim.run_printed(&command);
    assert_eq!(out.status.code(), Some(0), "{command}\n{}", text(&out));
    let history = history(&sim);
    let last = history.last().expect("a revision");
    assert_eq!(last["description"], "Rollback to 2", "{history:?}");
    assert_eq!(sim.deploy(&["--timeout", "60s"]).code, Some(0), "unlocked");
}

#[test]
fn the_printed_record_deletion_unblocks_a_stuck_first_install() {
    let sim = Sim::start_yaml(
        "namespaces: [apps]\nseed:\n  releases:\n    - name: demo\n      namespace: apps\n      revisions:\n        - {version: 1, status: pending-install, age: 20m, chart: deckapp, chart_version: \"0.4.2\"}\n",
    );
    let run = sim.deploy(&["--timeout", "60s", "--kube-context", "helmdeck-sim"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let command = the_command(&run, "kubectl delete secret sh.helm.release.v1.demo.v1 ");
    assert!(command.contains("--context helmdeck-sim"), "{command}");
    let out = sim.run_printed(&command);
    assert_eq!(out.status.code(), Some(0), "{command}\n{}", text(&out));
    assert_eq!(sim.deploy(&["--timeout", "60s"]).code, Some(0), "unlocked");
}

#[test]
fn only_init_without_init_settings_is_exit_2_before_any_cluster_request() {
    let sim = Sim::start("all-green");
    let run = sim.deploy(&["--only", "init"]);
    assert_eq!(run.code, Some(2), "{}", run.describe());
    let message = run.stderr.trim();
    assert!(
        message.contains("--only init needs --init-toggle and --init-job"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    assert_eq!(
        sim.get_json("/_sim/stats")["requests"],
        1,
        "only the stats request"
    );
}
