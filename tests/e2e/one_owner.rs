//! One owner of the deploy state: the engine folds each event once, and the screen, the
//! headless lines and the record read that one state. Counted with the binary's
//! `HELMDECK_TEST_APPLIED` hook against the events the run's record holds.

use std::path::Path;

use crate::support::{Sim, chart, text, tool};
use crate::tui::{BANNER_TIMEOUT, Tmux, exit_file, sim_env, strip, wait_exit};

/// The events a record holds (its lines after the header).
fn events(record: &Path) -> u64 {
    let text = std::fs::read_to_string(record).expect("the record");
    text.lines().count().saturating_sub(1) as u64
}

fn applied(file: &Path) -> u64 {
    std::fs::read_to_string(file)
        .expect("the applied count the hook writes at exit")
        .trim()
        .parse()
        .expect("a count")
}

/// A value the record masks: the record masks at its edge, never by folding a masked copy.
const SECRET: &str = "password=s3cr3t-one-owner";

#[test]
fn headless_and_its_replay_fold_each_event_of_the_run_once() {
    let sim = Sim::start("all-green");
    let record = sim.home().join("run.ndjson");
    let count = sim.home().join("applied");
    let report = sim.home().join("report.json");
    let out = sim
        .deploy_chart_command(
            &chart(),
            &report,
            &["--set", SECRET, "--record", record.to_str().unwrap()],
        )
        .env("HELMDECK_TEST_APPLIED", &count)
        .output()
        .expect("run helmdeck");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let events = events(&record);
    assert!(events > 10, "a whole run: {events} events");
    assert_eq!(applied(&count), events, "one fold per event, headless");

    // The replay folds the record once too.
    let replayed = sim
        .helmdeck_command(&["replay", record.to_str().unwrap(), "--headless"])
        .env("HELMDECK_TEST_APPLIED", &count)
        .output()
        .expect("run helmdeck replay");
    assert_eq!(replayed.status.code(), Some(0), "{}", text(&replayed));
    assert_eq!(applied(&count), events, "one fold per event, replayed");
}

#[test]
fn the_screen_folds_each_event_of_the_run_once() {
    let sim = Sim::start("all-green");
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let record = work.path().join("run.ndjson");
    let count = work.path().join("applied");
    let command = format!(
        "{} HELMDECK_TEST_APPLIED={} {} deploy demo {} -n apps --helm {} --set {SECRET} \
         --record {}; echo EXIT=$? > {}",
        sim_env(&sim),
        count.display(),
        env!("CARGO_BIN_EXE_helmdeck"),
        chart().display(),
        tool("helm").display(),
        record.display(),
        exit.display()
    );
    let tmux = Tmux::start(120, 40, &command);
    tmux.wait_for("the verdict banner", BANNER_TIMEOUT, |s| {
        strip(s).contains("LANDED")
    });
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "q"), "EXIT=0");
    let events = events(&record);
    assert!(events > 10, "a whole run: {events} events");
    assert_eq!(applied(&count), events, "one fold per event, on the screen");
}
