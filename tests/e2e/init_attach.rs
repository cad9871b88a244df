//! Issue 23 item 13: an init Job still running after a timeout. The printed `--only init` used
//! to refuse it as "running for another run; not replaced" and print the same `next:` again.
//! When this machine's records show the Job is its own earlier run's (run label and uid), the
//! next run attaches to it, streams its logs and judges it; a Job of a run it has no record of
//! is refused with the command that clears it, and that command runs as printed.

use std::time::Duration;

use crate::support::{Sim, printed_commands, text, with_init};

/// The init Job's pod runs this long: longer than the first run's timeout, shorter than the
/// first run's timeout and the attached run's together.
const SLOW_INIT: &str = "namespaces: [apps]\njobs:\n  - match: '*-init'\n    after: 12s\n    logs: [\"init of the first run\", \"init complete\"]\n";

fn installed(sim: &Sim) {
    let out = sim.install_demo(&["--set", "initJob.enabled=false", "--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));
}

fn job_uid(sim: &Sim) -> String {
    let job = sim.get_json("/apis/batch/v1/namespaces/apps/jobs/demo-init");
    job["metadata"]["uid"].as_str().unwrap_or("").to_string()
}

#[test]
fn the_printed_only_init_attaches_to_the_job_its_own_timed_out_run_left_running() {
    let sim = Sim::start_yaml(SLOW_INIT);
    installed(&sim);
    let first = sim.deploy(&with_init(&["--only", "init", "--timeout", "7s"]));
    assert_eq!(first.code, Some(3), "{}", first.describe());
    assert!(
        first.reason().contains("did not finish within 7s"),
        "{}",
        first.describe()
    );
    let uid = job_uid(&sim);
    assert!(!uid.is_empty(), "the first run's Job is still there");
    let next = printed_commands(&first)
        .into_iter()
        .find(|c| c.contains("--only init"))
        .unwrap_or_else(|| panic!("no --only init printed:\n{}", first.describe()));

    let out = sim.run_printed(&next);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{next}\n{said}");
    assert!(
        said.contains("init Job demo-init still runs for this machine's run of ")
            && said.contains("following it to its end, not replaced"),
        "{said}"
    );
    assert!(!said.contains("running for another run"), "{said}");
    // Its logs streamed, and the same Job judged: not replaced.
    assert!(said.contains("init complete"), "{said}");
    assert_eq!(job_uid(&sim), uid, "the Job was not replaced");
}

#[test]
fn a_job_of_a_run_this_machine_has_no_record_of_is_refused_with_the_command_that_clears_it() {
    let sim = Sim::start_yaml("namespaces: [apps]\njobs:\n  - match: '*-init'\n    after: 60s\n");
    installed(&sim);
    // Another machine's init Job: its run label is in no record here.
    for args in [
        &[
            "create",
            "job",
            "demo-init",
            "--image=busybox",
            "-n",
            "apps",
        ][..],
        &[
            "label",
            "job",
            "demo-init",
            "helmdeck.io/run=1-elsewhere",
            "-n",
            "apps",
        ],
    ] {
        let out = sim.kubectl(args);
        assert!(out.status.success(), "{}", text(&out));
    }
    sim.wait_for("the other run's init pod", Duration::from_secs(30), |s| {
        s.get_json("/apis/batch/v1/namespaces/apps/jobs/demo-init")["status"]["active"].as_i64()
            == Some(1)
    });
    let uid = job_uid(&sim);
    let run = sim.deploy(&with_init(&["--only", "init", "--timeout", "30s"]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert!(
        run.reason()
            .contains("init Job demo-init is running for another run (started ")
            && run.reason().contains("not replaced"),
        "{}",
        run.describe()
    );
    assert_eq!(job_uid(&sim), uid, "another run's Job is never replaced");
    let clear = "kubectl delete job demo-init -n apps";
    assert!(
        printed_commands(&run).iter().any(|c| c == clear),
        "{:?}\n{}",
        printed_commands(&run),
        run.describe()
    );
    let out = sim.run_printed(clear);
    assert!(out.status.success(), "{}", text(&out));
    sim.wait_for("the Job gone", Duration::from_secs(30), |s| {
        !s.get("/apis/batch/v1/namespaces/apps/jobs")
            .contains("\"name\":\"demo-init\"")
    });
}
