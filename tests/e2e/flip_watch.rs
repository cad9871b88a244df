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

/// The UI test writes bats' TAP lines; `fail: true` makes it fail as the jenkins UI test does.
fn jenkins_scenario(fail: bool) -> String {
    let (outcome, logs) = if fail {
        (
            "fail",
            "['1..1', 'not ok 1 Testing Jenkins UI is accessible', '# curl: (7) Failed to connect to demo-jenkins-like port 8080']",
        )
    } else {
        (
            "succeed",
            "['1..1', 'ok 1 Testing Jenkins UI is accessible']",
        )
    };
    format!(
        "namespaces: [apps]\ndefaults: {{start_after: 200ms, ready_after: 300ms}}\njobs:\n  - {{match: '*-ui-test', outcome: {outcome}, after: 300ms, logs: {logs}}}\n"
    )
}

fn deploy_jenkins_with_test(sim: &Sim) -> DeployRun {
    let chart = crate::support::repo().join("tests/charts/jenkins-like");
    sim.deploy_chart(&chart, "test.json", &["--timeout", "60s", "--test"])
}

/// The report's `tests` entry of `name`.
fn test_entry<'a>(run: &'a DeployRun, name: &str) -> &'a serde_json::Value {
    run.report["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no test {name}: {}", run.report["tests"]))
}

#[test]
fn test_beside_a_configmap_test_hook_lands_0_with_the_pods_log() {
    let sim = Sim::start_yaml(&jenkins_scenario(false));
    let run = deploy_jenkins_with_test(&sim);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(
        run.step("test")["status"],
        "succeeded",
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("helm test demo") && !run.stdout.contains("--logs"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout
            .contains("test pod demo-ui-test: Succeeded · ok 1 Testing Jenkins UI is accessible"),
        "{}",
        run.describe()
    );
    // The ConfigMap of test scripts is a test hook, never a test pod.
    assert!(
        run.stdout
            .contains("test hook ConfigMap/demo-jenkins-like-tests: Succeeded (not a pod"),
        "{}",
        run.describe()
    );
    assert!(
        !run.stdout.contains("test pod demo-jenkins-like-tests"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("1 test pod(s) passed"),
        "{}",
        run.describe()
    );
    assert_eq!(test_entry(&run, "demo-ui-test")["phase"], "Succeeded");
    assert_eq!(
        test_entry(&run, "demo-jenkins-like-tests")["kind"],
        "ConfigMap"
    );
    let report = run.report.to_string();
    assert!(
        report.contains("ok 1 Testing Jenkins UI is accessible"),
        "the pod's log in the report: {report}"
    );
}

#[test]
fn test_whose_pod_fails_ends_1_naming_it_with_its_log_line() {
    let sim = Sim::start_yaml(&jenkins_scenario(true));
    let run = deploy_jenkins_with_test(&sim);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(reason.starts_with("test failed: "), "{}", run.describe());
    assert!(
        reason.contains("test pod demo-ui-test Failed")
            && reason.contains("# curl: (7) Failed to connect to demo-jenkins-like port 8080"),
        "{}",
        run.describe()
    );
    assert!(
        !reason.contains("demo-jenkins-like-tests"),
        "the ConfigMap succeeded: {reason}"
    );
    assert_eq!(test_entry(&run, "demo-ui-test")["phase"], "Failed");
}
