//! Masking must not lie: release values are masked as whole tokens only, never inside the names
//! the report judges, while a password the chart prints never reaches the report, the record
//! or the JUnit file (issue 22).

use std::path::Path;

use crate::support::{Sim, chart_copy};

/// A FLIP-shaped release: every object name shares the prefix `trust-release-flip-trust-` (from
/// `fullnameOverride`), the values file holds words that are parts of those names (`trust`,
/// `flip`, `release`, `agent`) and a password and a short token that the NOTES print. Every
/// workload name stays whole in the report, the record and the JUnit file; the secrets are
/// absent, masked in place; a word standing alone is masked.
#[test]
fn values_inside_workload_names_leave_them_whole_while_the_password_is_masked() {
    let sim = Sim::start("all-green");
    let chart = chart_copy(sim.home(), |path, text| {
        if path.ends_with("NOTES.txt") {
            text + "\nseeding {{ .Values.site.source }} for source_trust\n\
                    admin password: {{ .Values.auth.adminPassword }} api {{ .Values.auth.apiToken }}\n"
        } else {
            text
        }
    });
    let values = sim.home().join("values.yaml");
    std::fs::write(
        &values,
        "fullnameOverride: trust-release-flip-trust\n\
         site:\n  source: trust\n  tier: flip\n  stage: release\n  collector: agent\n\
         auth:\n  adminPassword: hunter2-in-values\n  apiToken: q7z\n",
    )
    .unwrap();
    let junit = sim.home().join("junit.xml");
    let record = sim.home().join("masking.ndjson");
    let prefix = "trust-release-flip-trust-";
    let live = sim.deploy_chart(
        &chart,
        "masking-report.json",
        &[
            "--timeout",
            "60s",
            "--init-toggle",
            "initJob.enabled",
            "--init-job",
            "trust-release-flip-trust-init",
            "-f",
            values.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
        ],
    );
    assert_eq!(live.code, Some(0), "{}", live.describe());
    // Not vacuous: the chart prints the secrets (helm's own record of the NOTES holds them);
    // the headless lines, like the files below, show them masked.
    let notes = sim.helm(&["get", "notes", "demo", "-n", "apps"]);
    assert!(
        String::from_utf8_lossy(&notes.stdout)
            .contains("admin password: hunter2-in-values api q7z"),
        "the chart shows the secrets: {notes:?}"
    );
    assert!(
        live.stdout.contains("admin password: *** api ***"),
        "{}",
        live.describe()
    );
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let report = live.report.to_string();
    let outputs = [
        ("the report", report.clone()),
        ("the record", read(&record)),
        ("the JUnit file", read(&junit)),
        ("the headless output", live.stdout.clone()),
    ];
    let names: Vec<String> = live.report["workloads"]
        .as_array()
        .expect("the report's workloads")
        .iter()
        .map(|w| w["name"].as_str().unwrap_or_default().to_string())
        .collect();
    for component in ["api", "web", "db", "agent"] {
        assert!(
            names.contains(&format!("{prefix}{component}")),
            "{component} judged under its whole name: {names:?}"
        );
    }
    for (what, text) in &outputs {
        for secret in ["hunter2-in-values", "q7z"] {
            assert!(!text.contains(secret), "{secret} in {what}:\n{text}");
        }
        for name in &names {
            assert!(
                text.contains(name.as_str()),
                "{name} whole in {what}:\n{text}"
            );
        }
        // A mask never stands inside a name: no `-***` / `***-` (the old `trust-release-***`).
        assert!(
            !text.contains("-***") && !text.contains("***-"),
            "a mask inside a name in {what}:\n{text}"
        );
    }
    let kept = read(&record);
    assert!(
        kept.contains("admin password: *** api ***"),
        "the secrets masked in place, the short token too: {kept}"
    );
    assert!(
        kept.contains("seeding *** for source_trust"),
        "a value standing alone is masked, inside a word it is not: {kept}"
    );
    assert!(
        kept.contains(&format!("Deployment/{prefix}api")),
        "a Kind/name reference stays whole: {kept}"
    );
}
