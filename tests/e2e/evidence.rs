//! Issue 23, advice and evidence that do not mislead: the preflight timeout budget reads the
//! values helm really gets (those after `--` too, in the upgrade's order).

use crate::support::Sim;

/// `--set db.replicas=1 -- --set db.replicas=6`: helm upgrades with 6 (the later `--set`
/// wins), so the budget is 6 waves of StatefulSet/demo-db (60s), not 1 (10s) or the chart's 2
/// (20s): `--timeout 30s` is warned about.
#[test]
fn the_timeout_budget_reads_the_values_after_the_double_dash_in_the_upgrades_order() {
    let sim = Sim::start("slow");
    let run = sim.deploy(&[
        "--timeout",
        "30s",
        "--dry-run",
        "--set",
        "db.replicas=1",
        "--",
        "--set",
        "db.replicas=6",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stdout.contains(
            "warning: --timeout 30s is shorter than StatefulSet/demo-db may legitimately take \
             to roll out (StatefulSet/demo-db: 6 replicas ÷ surge 1 = 6 waves × (5s delay + 5s \
             period) = 60s); raise --timeout to at least 60s"
        ),
        "{}",
        run.describe()
    );
    // The upgrade the dry run prints gets both, the later last.
    assert!(
        run.stdout
            .contains("--set db.replicas=*** --timeout 30s --set db.replicas=***"),
        "{}",
        run.describe()
    );
}

/// `--test` with a failing test pod that runs first (helm stops there): the other test is
/// said to be skipped everywhere (never "no phase"), and the JUnit file fails the `test` step
/// and the failing test pod (with its log line), and skips the skipped one, so a CI reporter
/// shows which test failed.
#[test]
fn a_failing_helm_test_fails_its_step_and_pod_in_junit_and_the_other_is_skipped() {
    let sim = Sim::start_yaml(crate::recover::TESTED);
    let dir = tempfile::tempdir().expect("a temp dir");
    let chart = crate::support::chart_copy(dir.path(), |_, text| text);
    std::fs::write(
        chart.join("templates/tests.yaml"),
        crate::recover::TEST_PODS,
    )
    .expect("write the tests");
    let junit = sim.home().join("junit.xml");
    let run = sim.deploy_chart(
        &chart,
        "tested.json",
        &[
            "--timeout",
            "60s",
            "--test",
            "--set",
            "failTest=true",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stdout.contains("test pod demo-test-ok: skipped"),
        "{}",
        run.describe()
    );
    assert!(!run.stdout.contains("no phase"), "{}", run.describe());
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(!xml.contains("no phase"), "{xml}");
    // The step: a failure with helm's error.
    let case = |name: &str| -> String {
        let open = format!("<testcase name=\"{name}\"");
        let at = xml
            .find(&open)
            .unwrap_or_else(|| panic!("no case {name}:\n{xml}"));
        // Up to the next case (or the suite's end).
        let rest = &xml[at..];
        let end = rest[1..]
            .find("<testcase")
            .map(|e| e + 1)
            .or_else(|| rest.find("</testsuite>"))
            .unwrap_or(rest.len());
        rest[..end].to_string()
    };
    let step = case("test");
    assert!(
        step.contains("classname=\"helmdeck.demo.steps\"")
            && step
                .contains("<failure message=\"Error: resource Pod/apps/demo-test-fail not ready"),
        "{step}\n{xml}"
    );
    let failed = case("Pod/demo-test-fail");
    assert!(
        failed.contains("classname=\"helmdeck.demo.tests\"")
            && failed.contains("<failure")
            && failed.contains("Failed")
            && failed.contains("GET /healthz: 503 Service Unavailable"),
        "{failed}\n{xml}"
    );
    let skipped = case("Pod/demo-test-ok");
    assert!(
        skipped.contains("<skipped message=\"skipped:"),
        "{skipped}\n{xml}"
    );
    assert!(
        xml.contains(r#"<testsuites name="helmdeck" tests="14" failures="3""#),
        "the step, the pod and the verdict fail; 14 cases:\n{xml}"
    );
}

/// The value a render failure quotes (`fail` with `.Values.password`).
const QUOTED: &str = "Zq9-hunter22";

/// A copy of the demo chart whose web template fails, quoting `.Values.password`.
fn chart_quoting_the_password(dir: &std::path::Path) -> std::path::PathBuf {
    crate::support::chart_copy(dir, |path, text| {
        if path.ends_with("web.yaml") {
            text + "{{- if .Values.password }}\n\
                    {{ fail (printf \"password %s is too weak\" .Values.password) }}\n\
                    {{- end }}\n"
        } else {
            text
        }
    })
}

/// A render failure quoting a `--set` value: headless, the value is masked on every line
/// (helm's streamed lines included: a CI log); under a terminal, only helm's own streamed lines
/// in the helm pane show it, while the banner's verdict, the steps and notes, and the verdict
/// left in the scrollback mask it as the report does.
#[test]
fn a_render_failure_quoting_a_value_shows_it_only_in_helms_own_lines() {
    use crate::tui::{Tmux, exit_file, sim_env, strip, wait_exit};
    let sim = Sim::start("all-green");
    let dir = tempfile::tempdir().expect("a temp dir");
    let chart = chart_quoting_the_password(dir.path());
    let set = format!("password={QUOTED}");
    let headless = sim.deploy_chart(&chart, "quoted.json", &["--set", &set]);
    assert_eq!(headless.code, Some(1), "{}", headless.describe());
    assert!(
        headless
            .stdout
            .contains("verdict: FAILED (exit 1): upgrade failed: Error: execution error")
            && headless.stdout.contains("password *** is too weak"),
        "{}",
        headless.describe()
    );
    assert!(
        !headless.stdout.contains(QUOTED) && !headless.stderr.contains(QUOTED),
        "{}",
        headless.describe()
    );
    assert!(!headless.report.to_string().contains(QUOTED));

    let exit = exit_file(dir.path());
    let command = format!(
        "{} {} deploy demo {} -n apps --helm {} --set {set}; echo EXIT=$? > {}",
        sim_env(&sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        chart.display(),
        crate::support::tool("helm").display(),
        exit.display()
    );
    let tmux = Tmux::start(160, 48, &command);
    let screen = tmux.wait_for("the failed verdict", crate::tui::BANNER_TIMEOUT, |s| {
        strip(s).contains("verdict FAILED (exit 1)")
    });
    let screen = strip(&screen);
    // Not vacuous: helm's own line quotes it, in the helm pane.
    let helm_lines: Vec<&str> = screen.lines().filter(|l| l.contains(QUOTED)).collect();
    assert!(
        !helm_lines.is_empty(),
        "helm's line shows the value:\n{screen}"
    );
    for line in screen.lines() {
        if line.contains(QUOTED) {
            // In the helm pane, helm's own lines stand bare; helmdeck's notes start with `·`.
            let bare = line.trim_start_matches(['│', ' ']);
            assert!(
                bare.starts_with("Error: execution error"),
                "only helm's own streamed line shows the value, not:\n{line}\n{screen}"
            );
        }
    }
    assert!(
        screen.contains("password *** is too weak"),
        "the banner masks it:\n{screen}"
    );
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "q"), "EXIT=1");
    let after = strip(&tmux.capture());
    assert!(
        after.contains("verdict: FAILED (exit 1): upgrade failed:")
            && after.contains("password *** is too weak")
            && !after.contains(QUOTED),
        "the verdict left in the scrollback masks it:\n{after}"
    );
}

/// Another operator upgrades (`helm upgrade --reuse-values`: revision 3, the same broken web)
/// while this run's revision 2 waits on its rollout. `--rollback-on-failure` rightly leaves
/// their revision alone, and the verdict's `next:` is decided from the history as it is now:
/// `helm history` (it runs as printed), never `helm rollback demo 1`, which would undo it.
#[test]
fn after_another_operators_upgrade_next_never_rolls_back_over_it() {
    use std::time::Duration;
    let sim = Sim::start_yaml(crate::recover::WEB_BREAKS_ON_UPGRADE);
    let first = sim.install_demo(&["--timeout", "60s"]);
    assert!(first.status.success(), "{}", crate::support::text(&first));
    let report = sim.home().join("overtaken.json");
    let started = std::time::Instant::now();
    let child = sim
        .deploy_command(
            &report,
            &[
                "--timeout",
                "20s",
                "--set",
                "image.tag=1.4.3",
                "--rollback-on-failure",
            ],
        )
        .spawn()
        .expect("spawn helmdeck");
    // Revision 2 deployed (revision 1 superseded): helmdeck waits on its rollout.
    sim.wait_for(
        "helmdeck's revision 2 deployed",
        Duration::from_secs(60),
        |s| {
            s.get("/api/v1/namespaces/apps/secrets?labelSelector=owner%3Dhelm")
                .contains("superseded")
        },
    );
    let theirs = sim.install_demo(&["--reuse-values", "--timeout", "60s"]);
    assert!(theirs.status.success(), "{}", crate::support::text(&theirs));
    let run = crate::support::finish(
        child.wait_with_output().expect("helmdeck ends"),
        &report,
        started,
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let history = sim.helm_history();
    let last = history
        .as_array()
        .and_then(|h| h.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&last["revision"], &last["status"]),
        (&serde_json::json!(3), &serde_json::json!("deployed")),
        "their revision stands: {history}"
    );
    let next = run.report["verdict"]["next"].as_str().unwrap_or_default();
    assert_eq!(next, "helm history demo -n apps", "{}", run.describe());
    assert!(
        run.stdout.contains("next: helm history demo -n apps")
            && !run.stdout.contains("helm rollback demo"),
        "{}",
        run.describe()
    );
    assert!(
        run.evidence_has("revision 3 (deployed) was written after this run's revision 2"),
        "{}",
        run.describe()
    );
    let ran = sim.run_printed(next);
    assert!(ran.status.success(), "{}", crate::support::text(&ran));
}

/// At the screen: the failed verdict offers `R` (`next: helm rollback demo 1`); another
/// operator then upgrades (revision 3). `R`, `y`: the history is read again, nothing is rolled
/// back, and the verdict decided again says `next: helm history demo -n apps`.
#[test]
fn r_after_another_operators_upgrade_rolls_nothing_back_and_next_says_history() {
    use crate::tui::{BANNER_TIMEOUT, STEP_TIMEOUT, Tmux, exit_file, sim_env, strip, wait_exit};
    let sim = Sim::start_yaml(crate::recover::WEB_BREAKS_ON_UPGRADE);
    let first = sim.install_demo(&["--timeout", "60s"]);
    assert!(first.status.success(), "{}", crate::support::text(&first));
    let work = tempfile::tempdir().expect("a temporary directory");
    let exit = exit_file(work.path());
    let command = format!(
        "{} {} deploy demo {} -n apps --helm {} --timeout 8s --set image.tag=1.4.3; \
         echo EXIT=$? > {}",
        sim_env(&sim),
        env!("CARGO_BIN_EXE_helmdeck"),
        crate::support::chart().display(),
        crate::support::tool("helm").display(),
        exit.display()
    );
    let tmux = Tmux::start(120, 40, &command);
    tmux.wait_for("the failed verdict offering R", BANNER_TIMEOUT, |s| {
        let s = strip(s);
        s.contains("verdict FAILED (exit 1)") && s.contains("next: helm rollback demo 1 -n apps")
    });
    let theirs = sim.install_demo(&["--reuse-values", "--timeout", "60s"]);
    assert!(theirs.status.success(), "{}", crate::support::text(&theirs));
    tmux.keys(&["R"]);
    tmux.wait_for("the rollback prompt", STEP_TIMEOUT, |s| {
        strip(s).contains("Roll revision 2 back to revision 1?")
    });
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("the verdict decided again", BANNER_TIMEOUT, |s| {
        strip(s).contains("next: helm history demo -n apps")
    });
    let plain = strip(&screen);
    assert!(!plain.contains("next: helm rollback"), "{plain}");
    assert!(
        plain.contains("no longer the release's latest (3)"),
        "the refusal is said:\n{plain}"
    );
    tmux.keys(&["q"]);
    assert_eq!(wait_exit(&tmux, &exit, "R, y, then q"), "EXIT=1");
    let history = sim.helm_history();
    let last = history
        .as_array()
        .and_then(|h| h.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&last["revision"], &last["status"]),
        (&serde_json::json!(3), &serde_json::json!("deployed")),
        "their revision stands: {history}"
    );
}
