//! The FLIP-shaped chart deployed with plain helm and followed by `helmdeck watch --init-job`:
//! the xnat-init Job ran as a hook, so its outcome is the phase helm recorded, whether or not the
//! Job is still there.

use std::time::{Duration, Instant};

use crate::flip::{INIT_JOB, RELEASE, create_trust_secret, flip_chart, helm_install_flip};
use crate::support::{DeployRun, Sim, finish, text};
use crate::watch::HelmTrap;

/// `helm upgrade --install trust-release tests/charts/flip-like -n apps` plus `extra`.
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

/// The admin password of the masking proof: NOTES print it (`secrets.create: true`) and the
/// vocabulary loader's first, failing pod logs it.
const ADMIN_PASSWORD: &str = "Xn4t-Adm1n-Pw";
const DB_PASSWORD: &str = "pg-Db-Pw-77";

/// The omop-vocab-load hook's first pod fails (its log is fetched) and the retry succeeds, so
/// the deploy lands with a log line holding the password in what helmdeck saw.
fn leaky_vocab_scenario() -> String {
    format!(
        "nodes: 3\nnamespaces: [apps]\ndefaults: {{start_after: 100ms, ready_after: 200ms}}\njobs:\n  - {{match: '*-omop-vocab-load', fail_first: 1, after: 300ms, exit_code: 1, logs: ['load-vocab: XNAT refused password {ADMIN_PASSWORD}, retrying']}}\n"
    )
}

/// Every file under `dir`, as text.
fn all_text_under(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&all_text_under(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push_str(&text);
        }
    }
    out
}

#[test]
fn flip_with_its_values_files_keeps_every_workload_name_whole_and_the_password_nowhere() {
    let sim = Sim::start_yaml(&leaky_vocab_scenario());
    let secrets = sim.home().join("secrets.yaml");
    std::fs::write(
        &secrets,
        format!(
            "secrets:\n  create: true\n  xnatAdminPassword: {ADMIN_PASSWORD}\n  dbPassword: {DB_PASSWORD}\n"
        ),
    )
    .expect("write the secrets values file");
    let values = flip_chart().join("values.yaml");
    let junit = sim.home().join("junit.xml");
    let run = crate::flip::deploy_flip(
        &sim,
        "masking.json",
        &[
            "--timeout",
            "60s",
            "-f",
            values.to_str().expect("a UTF-8 path"),
            "-f",
            secrets.to_str().expect("a UTF-8 path"),
            "--junit",
            junit.to_str().expect("a UTF-8 path"),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    // Not vacuous: helm's record of the release holds the NOTES with the password.
    let notes = sim.helm(&["get", "notes", RELEASE, "-n", &sim.namespace]);
    assert!(
        text(&notes).contains(&format!("password {ADMIN_PASSWORD}")),
        "the chart prints the password: {}",
        text(&notes)
    );
    let records = all_text_under(&sim.home().join(".local/state/helmdeck"));
    assert!(
        records.contains("load-vocab: XNAT refused password ***, retrying"),
        "the failing pod's log line reached the record, masked in place: {}",
        records
            .lines()
            .filter(|l| l.contains("vocab") || l.contains("password"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        records.contains(", password ***)"),
        "the NOTES reached the record, masked in place"
    );
    let inspect = sim
        .helmdeck_command(&["inspect", RELEASE, "-n", &sim.namespace, "--headless"])
        .output()
        .expect("run helmdeck inspect");
    let report = run.report.to_string();
    let junit_text = std::fs::read_to_string(&junit).expect("the JUnit file");
    let outputs = [
        ("the report", report.as_str()),
        ("the JUnit file", junit_text.as_str()),
        ("the records", records.as_str()),
        ("the headless stdout", run.stdout.as_str()),
        ("the headless stderr", run.stderr.as_str()),
        ("inspect", &text(&inspect)),
    ];
    for (what, out) in outputs {
        for secret in [ADMIN_PASSWORD, DB_PASSWORD] {
            assert!(!out.contains(secret), "{secret} in {what}:\n{out}");
        }
    }
    let workloads = [
        "trust-api",
        "data-access-api",
        "imaging-api",
        "xnat-web",
        "fl-client",
    ];
    for (what, out) in [("the report", &report), ("the JUnit file", &junit_text)] {
        for w in workloads {
            assert!(
                out.contains(&format!("{}{w}", crate::flip::PREFIX)),
                "{w} whole in {what}:\n{out}"
            );
        }
        assert!(
            !out.contains("-***") && !out.contains("***-"),
            "a mask inside a name in {what}:\n{out}"
        );
    }
}
