//! The FLIP-shaped chart deployed with plain helm and followed by `helmdeck watch --init-job`:
//! the xnat-init Job ran as a hook, so its outcome is the phase helm recorded, whether or not the
//! Job is still there.

use std::time::{Duration, Instant};

use crate::flip::{INIT_JOB, RELEASE, create_trust_secret, flip_chart};
use crate::support::{DeployRun, Sim, finish, text};
use crate::watch::HelmTrap;

/// `helm upgrade --install trust-release tests/charts/flip-like -n apps` plus `extra`.
fn helm_install_flip(sim: &Sim, extra: &[&str]) -> std::process::Output {
    let chart = flip_chart();
    let mut args = vec![
        "upgrade",
        "--install",
        RELEASE,
        chart.to_str().expect("a UTF-8 path"),
        "-n",
        &sim.namespace,
    ];
    args.extend_from_slice(extra);
    sim.helm(&args)
}

/// `helmdeck watch trust-release -n apps --headless --init-job <xnat-init>` with helm trapped.
fn watch_flip(sim: &Sim, extra: &[&str]) -> DeployRun {
    let report = sim.home().join("watch.json");
    let mut args = vec![
        "watch",
        RELEASE,
        "-n",
        &sim.namespace,
        "--headless",
        "--report",
        report.to_str().expect("a UTF-8 path"),
        "--init-job",
        INIT_JOB,
    ];
    args.extend_from_slice(extra);
    let mut cmd = sim.helmdeck_command(&args);
    let trap = HelmTrap::new(sim.home());
    trap.arm(&mut cmd);
    let started = Instant::now();
    let out = cmd.output().expect("run helmdeck watch");
    let run = finish(out, &report, started);
    trap.assert_untouched("helmdeck watch");
    run
}

#[test]
fn watch_of_a_plain_helm_deploy_judges_the_init_from_its_hook_phase() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let out = helm_install_flip(&sim, &["--timeout", "60s"]);
    assert!(out.status.success(), "helm: {}", text(&out));
    // The premise: the hook succeeded and helm deleted it (hook-succeeded).
    let job = sim.kubectl(&["get", "job", INIT_JOB, "-n", &sim.namespace]);
    assert!(
        !job.status.success(),
        "the xnat-init Job should be gone: {}",
        text(&job)
    );
    let run = watch_flip(&sim, &["--timeout", "120s"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.elapsed < Duration::from_secs(10),
        "judged from the record, not waited for: {}",
        run.describe()
    );
    assert!(
        run.stdout.contains(&format!(
            "Job {INIT_JOB} is a post-install,post-upgrade hook of revision 1: Succeeded in helm's record"
        )),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("no longer in the cluster"),
        "{}",
        run.describe()
    );
    assert_eq!(
        run.step("init")["status"],
        "succeeded",
        "{}",
        run.describe()
    );
    // Nothing cites a Job that is gone.
    assert!(!run.stdout.contains("kubectl logs"), "{}", run.describe());
}

/// The xnat-init hook fails every run; back-off is fast so helm gives up in seconds.
const XNAT_INIT_FAILS: &str = "namespaces: [apps]\ntime_scale: 200\njobs:\n  - {match: '*-xnat-init', outcome: fail, exit_code: 2, logs: ['configure-dcm2niix: XNAT refused the login']}\n";

#[test]
fn watch_of_a_plain_helm_deploy_whose_init_hook_failed_ends_1_naming_it() {
    let sim = Sim::start_yaml(XNAT_INIT_FAILS);
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let out = helm_install_flip(&sim, &["--timeout", "90s"]);
    assert!(!out.status.success(), "helm must fail: {}", text(&out));
    let run = watch_flip(&sim, &["--timeout", "120s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.elapsed < Duration::from_secs(30),
        "no wait for a Job that will not come: {}",
        run.describe()
    );
    assert!(
        run.reason().contains(&format!("failing hooks: {INIT_JOB}")),
        "{}",
        run.describe()
    );
}
