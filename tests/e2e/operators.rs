//! Two operators at once (issue 9 items 7 and 8): a deploy never claims another run's
//! revision or hook Jobs, never advises undoing a deploy that is still in progress, and reads a
//! lock's age from the record Secret's `metadata.creationTimestamp`.

use std::path::Path;

use crate::support::Sim;

/// A scenario whose pre-upgrade migrate hook takes `migrate`, so an upgrade stays pending.
fn slow_migrate(dir: &Path, migrate: &str, seed: &str) -> String {
    let path = dir.join("scenario.yaml");
    std::fs::write(
        &path,
        format!(
            "namespaces: [apps]\njobs:\n  - {{match: '*-migrate', after: {migrate}}}\n  {seed}\n"
        ),
    )
    .expect("write the scenario");
    path.to_str().expect("a UTF-8 path").to_string()
}

#[test]
fn a_previous_runs_failed_hook_job_is_not_shown_as_this_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let seed = "- {match: '*-seed', outcome: fail, after: 300ms, logs: ['OLD RUN: seed failed']}";
    let sim = Sim::start(&slow_migrate(dir.path(), "4s", seed));
    let first = sim.deploy(&["--timeout", "60s"]);
    assert_eq!(first.code, Some(1), "{}", first.describe());
    assert!(
        first.stdout.contains("OLD RUN: seed failed"),
        "the first run's seed hook failed with its log: {}",
        first.describe()
    );
    // The next upgrade stops at its slow pre-upgrade hook: its own seed hook never runs, and
    // the first run's failed demo-seed Job is still in the namespace all along.
    let run = sim.deploy(&["--timeout", "2s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    // What the first run left: demo-seed Failed with its log, demo-init Succeeded. Neither ran
    // in this one (the record after helm says "skipped", which is right).
    let leftovers: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| {
            (l.contains("hook      demo-seed") && l.ends_with(": Failed"))
                || (l.contains("hook      demo-init") && l.ends_with(": Succeeded"))
                || l.contains("log demo-seed")
        })
        .collect();
    assert!(
        leftovers.is_empty(),
        "the previous run's hook Jobs shown as this run's: {leftovers:#?}\n{}",
        run.describe()
    );
    assert!(!run.stdout.contains("OLD RUN"), "{}", run.describe());
    let hooks = run.report["hooks"].as_array().cloned().unwrap_or_default();
    let seed = hooks.iter().find(|h| h["name"] == "demo-seed");
    assert!(
        seed.is_none_or(|h| h["phase"] != "Failed"),
        "report hooks: {hooks:?}"
    );
    assert!(
        !run.report["verdict"]["evidence"]
            .to_string()
            .contains("hook demo-seed (post-install,post-upgrade) failed"),
        "{}",
        run.describe()
    );
}
