//! Fail fast, opt-in (`--failures-allowed-per-replica`, and its annotations) on the
//! FLIP-shaped chart with the real helm: a crash-looping trust-api ends the rollout as failed
//! long before `--timeout` with the flag, and waits to the timeout without it.

use std::time::Duration;

use crate::flip::{CRASHING_API, PREFIX, create_trust_secret, deploy_flip};
use crate::support::Sim;

/// The trust-api Deployment as the verdict names it.
fn api() -> String {
    format!("Deployment/{PREFIX}trust-api")
}

/// A values file (in the sim's home) that annotates the trust-api Deployment with `key: value`.
fn annotated(sim: &Sim, key: &str, value: &str) -> String {
    let path = sim.home().join("annotations.yaml");
    let yaml = format!("trustApi:\n  annotations:\n    {key}: {value:?}\n");
    std::fs::write(&path, yaml).expect("write the values file");
    path.to_str().expect("a UTF-8 path").to_string()
}

fn crashing() -> Sim {
    let sim = Sim::start_yaml(CRASHING_API);
    create_trust_secret(&sim, "db-pw-ff", "admin-pw-ff");
    sim
}

const TIMEOUT: Duration = Duration::from_secs(90);

#[test]
fn the_flag_fails_a_crash_loop_long_before_the_timeout() {
    let sim = crashing();
    let run = deploy_flip(
        &sim,
        "ff.json",
        &["--timeout", "90s", "--failures-allowed-per-replica", "1"],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(
        reason.contains(&format!("{}: fail fast: ", api())),
        "{}",
        run.describe()
    );
    assert!(
        reason.contains(" restarts > 1 allowed × 2 replicas"),
        "{}",
        run.describe()
    );
    // A crash loop backs off 1 s, 2 s, 4 s (time scale 10): three restarts come in seconds.
    assert!(
        run.elapsed < TIMEOUT / 3,
        "took {:?} of a {TIMEOUT:?} timeout",
        run.elapsed
    );
}

#[test]
fn without_the_flag_a_crash_loop_waits_to_the_timeout() {
    let sim = crashing();
    let run = deploy_flip(&sim, "wait.json", &["--timeout", "8s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("timed out after 8s") && !run.reason().contains("fail fast"),
        "{}",
        run.describe()
    );
    assert!(run.elapsed >= Duration::from_secs(8), "{:?}", run.elapsed);
}

#[test]
fn the_annotation_wins_over_the_flag_for_its_workload() {
    let sim = crashing();
    // werf's annotation allows 1 failure per replica where the flag would allow 1000.
    let values = annotated(&sim, "werf.io/failures-allowed-per-replica", "1");
    let run = deploy_flip(
        &sim,
        "annotated.json",
        &[
            "--timeout",
            "90s",
            "--failures-allowed-per-replica",
            "1000",
            "-f",
            &values,
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains(&format!("{}: fail fast: ", api()))
            && run.reason().contains("> 1 allowed × 2 replicas"),
        "{}",
        run.describe()
    );
    assert!(run.elapsed < TIMEOUT / 3, "{:?}", run.elapsed);
}

#[test]
fn a_bad_annotation_is_a_warning_and_that_workload_waits_to_the_timeout() {
    let sim = crashing();
    let values = annotated(&sim, "helmdeck.io/failures-allowed-per-replica", "-1");
    let run = deploy_flip(
        &sim,
        "bad.json",
        &[
            "--timeout",
            "8s",
            "--failures-allowed-per-replica",
            "0",
            "-f",
            &values,
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stdout.contains(&format!(
            "{PREFIX}trust-api: annotation helmdeck.io/failures-allowed-per-replica=\"-1\" is not a non-negative integer"
        )),
        "{}",
        run.describe()
    );
    assert!(
        run.reason().contains("timed out after 8s"),
        "{}",
        run.describe()
    );
}

/// The screen writes the finished report and JUnit at the verdict, not when it closes: while
/// the banner is on screen both files already hold it. At 80 columns the FLIP names keep the
/// part that differs.
#[test]
fn the_screens_report_and_junit_are_finished_while_the_banner_shows() {
    use crate::tui::{BANNER_TIMEOUT, Tmux, exit_file, sim_env, strip, wait_exit};
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-tui", "admin-pw-tui");
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let (report, junit) = (work.path().join("r.json"), work.path().join("r.xml"));
    let command = format!(
        "{} {} deploy {} {} -n apps --helm {} --timeout 60s --report {} --junit {}; \
         echo EXIT=$? > {}",
        sim_env(&sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        crate::flip::RELEASE,
        crate::flip::flip_chart().display(),
        crate::support::tool("helm").display(),
        report.display(),
        junit.display(),
        exit.display()
    );
    let tmux = Tmux::start(80, 30, &command);
    let screen = strip(&tmux.wait_for("the LANDED banner", BANNER_TIMEOUT, |s| {
        strip(s).contains("LANDED")
    }));
    // At 80 columns the 25-character prefix is said once, and each row shows what differs.
    assert!(
        screen.contains(&format!("{PREFIX}…")) && screen.contains("…trust-api"),
        "{screen}"
    );
    let shown: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report"))
            .expect("the report is JSON");
    assert_eq!(
        (&shown["state"], &shown["verdict"]["outcome"]),
        (&serde_json::json!("finished"), &serde_json::json!("landed")),
        "{shown}"
    );
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(
        xml.contains(r#"failures="0" errors="0""#) && !xml.contains("unfinished"),
        "{xml}"
    );
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "q"), "EXIT=0");
}
