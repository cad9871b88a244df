//! The demo stories of issue 21, run as `helmdeck demo --headless` tells them: a missing Secret,
//! volume claims that never bind and an initContainer that keeps failing each end in exit 1 with
//! the kubelet's or the scheduler's own words as the evidence, never in a green 0.

use std::time::{Duration, Instant};

use crate::support::{DEMO_INIT, DeployRun, Sim, finish, text};

/// `helmdeck demo --scenario NAME --headless`, run to its end on its own embedded simulator.
fn story(home: &Sim, scenario: &str) -> DeployRun {
    let report = home.home().join(format!("{scenario}-report.json"));
    let args = [
        "demo",
        "--headless",
        "--scenario",
        scenario,
        "--report",
        report.to_str().expect("utf-8 path"),
    ];
    let started = Instant::now();
    let out = home
        .helmdeck_command(&args)
        .output()
        .expect("run helmdeck demo");
    finish(out, &report, started)
}

fn all_text(run: &DeployRun) -> String {
    format!("{}\n{}\n{}", run.stdout, run.stderr, run.report)
}

#[test]
fn a_missing_secret_is_exit_1_naming_the_secret_not_a_green_deploy() {
    let home = Sim::start("all-green");
    let run = story(&home, "missing-secret");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let all = all_text(&run);
    assert!(all.contains("CreateContainerConfigError"), "{all}");
    assert!(
        all.contains("secret \\\"deck-db-credentials\\\" not found")
            || all.contains("secret \"deck-db-credentials\" not found"),
        "{all}"
    );
    assert_eq!(
        run.workload("Deployment", "demo-api")["ready"],
        false,
        "{all}"
    );
    assert_eq!(
        run.workload("StatefulSet", "demo-db")["ready"],
        true,
        "{all}"
    );
}

#[test]
fn volume_claims_that_never_bind_are_exit_1_in_the_schedulers_words() {
    let home = Sim::start("all-green");
    let run = story(&home, "pvc-pending");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let all = all_text(&run);
    assert!(
        all.contains("unbound immediate PersistentVolumeClaims"),
        "{all}"
    );
    assert_eq!(
        run.workload("StatefulSet", "demo-db")["ready"],
        false,
        "{all}"
    );
    assert_eq!(
        run.workload("Deployment", "demo-web")["ready"],
        true,
        "{all}"
    );
}

#[test]
fn an_init_container_that_keeps_failing_is_exit_1_naming_it() {
    let home = Sim::start("all-green");
    let run = story(&home, "init-container-fails");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let all = all_text(&run);
    assert!(all.contains("check-schema"), "{all}");
    assert!(all.contains("CrashLoopBackOff"), "{all}");
    assert_eq!(
        run.workload("Deployment", "demo-api")["ready"],
        false,
        "{all}"
    );
}

/// The Secret made while helmdeck waits: the kubelet starts the container on its next try and
/// the same deploy lands 0, as on a real cluster where someone fixes the reference in time.
#[test]
fn the_secret_made_during_the_wait_lets_the_same_deploy_land() {
    let sim = Sim::start("all-green");
    let report = sim.home().join("report.json");
    let mut extra: Vec<&str> = DEMO_INIT.to_vec();
    extra.extend([
        "--timeout",
        "90s",
        "--set",
        "api.existingSecret=deck-db-credentials",
    ]);
    let started = Instant::now();
    let child = sim
        .deploy_command(&report, &extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start helmdeck deploy");
    sim.wait_for("CreateContainerConfigError", Duration::from_secs(60), |s| {
        let out = s.kubectl(&[
            "get",
            "pods",
            "-n",
            "apps",
            "-l",
            "app.kubernetes.io/component=api",
        ]);
        String::from_utf8_lossy(&out.stdout).contains("CreateContainerConfigError")
    });
    let out = sim.kubectl(&[
        "create",
        "secret",
        "generic",
        "deck-db-credentials",
        "-n",
        "apps",
        "--from-literal=password=not-shown",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let out = child.wait_with_output().expect("deploy ends");
    let run = finish(out, &report, started);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(!run.stdout.contains("not-shown") && !run.report.to_string().contains("not-shown"));
}
