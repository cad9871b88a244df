//! RBAC denies reading the release records (the simulator's `forbidden` fault: 403 on Secrets
//! in `apps`, as the API server answers it). `inspect`, `watch` and `deploy`'s preflight each
//! say what was denied (verb, resource, namespace, user) in one line, once, and end 1: never
//! "no records", never the client's raw `Status { … }` dump.

use std::time::Instant;

use crate::support::{Sim, finish, text};

/// A release with two revisions whose record Secrets the user may not read.
const DENIED: &str = "namespaces: [apps]
seed:
  releases:
    - name: demo
      namespace: apps
      revisions:
        - {version: 1, status: superseded, description: Install complete, age: 1h, chart: deckapp, chart_version: \"0.4.2\"}
        - {version: 2, status: deployed, description: Upgrade complete, age: 30m, chart: deckapp, chart_version: \"0.4.2\"}
faults:
  - {do: forbidden, resources: [secrets], verbs: [get, list, watch], namespace: apps, user: \"alice@example.com\"}
";

/// The one line that names the denial, as helmdeck says it.
const SAID: &str =
    "403 Forbidden: user \"alice@example.com\" may not list secrets in namespace apps";

/// Every line of `output` that names the denial names it once, whole; no raw dump anywhere.
fn said_once_per_line(output: &str) -> usize {
    assert!(
        !output.contains("Status {") && !output.contains("ApiError"),
        "the client's raw error: {output}"
    );
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| l.contains("alice@example.com"))
        .collect();
    for line in &lines {
        assert_eq!(
            line.matches("alice@example.com").count(),
            1,
            "said once: {line}"
        );
        assert!(
            line.contains(SAID),
            "verb, resource, namespace, user: {line}"
        );
    }
    lines.len()
}

#[test]
fn inspect_says_what_was_denied_never_no_records() {
    let sim = Sim::start_yaml(DENIED);
    let out = sim
        .helmdeck_command(&["inspect", "demo", "-n", "apps", "--headless"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(!all.contains("has no records"), "{all}");
    assert_eq!(said_once_per_line(&all), 1, "{all}");
    let headline = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(headline.contains(SAID), "the headline names it: {all}");
    let json = sim
        .helmdeck_command(&["inspect", "demo", "-n", "apps", "--json"])
        .output()
        .unwrap();
    let doc = crate::support::stdout_json(&json);
    assert!(
        doc["error"].as_str().is_some_and(|e| e.contains(SAID)),
        "{doc}"
    );
    assert!(
        !doc["warnings"].to_string().contains("alice@example.com"),
        "said once, as the error: {doc}"
    );
}

#[test]
fn watch_says_what_was_denied_once_and_ends_1() {
    let sim = Sim::start_yaml(DENIED);
    let report = sim.home().join("watch.json");
    let started = Instant::now();
    let out = sim
        .helmdeck_command(&[
            "watch",
            "demo",
            "-n",
            "apps",
            "--headless",
            "--timeout",
            "20s",
            "--report",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let run = finish(out, &report, started);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    said_once_per_line(&format!("{}\n{}", run.stdout, run.stderr));
    assert!(run.reason().contains(SAID), "{}", run.describe());
    assert!(
        run.report["verdict"]["next"].is_null(),
        "{}",
        run.describe()
    );
}

#[test]
fn deploy_preflight_says_what_was_denied_once_and_ends_1() {
    let sim = Sim::start_yaml(DENIED);
    let run = sim.deploy(&["--timeout", "20s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    said_once_per_line(&format!("{}\n{}", run.stdout, run.stderr));
    assert!(
        run.reason().starts_with("preflight failed") && run.reason().contains(SAID),
        "{}",
        run.describe()
    );
    assert!(
        !run.stdout.contains("helm upgrade"),
        "stopped before helm: {}",
        run.describe()
    );
}
