//! `--test`: `helm test REL` after a landed deploy, as the `test` step. helm runs the chart's
//! `test` hooks and records each one's phase; this step streams its output into the helm pane,
//! judges the tests from those phases, reads the logs of the Pod and Job hooks itself (never
//! `--logs`: helm 4.1.4 then asks for a log of every test hook and exits 1 on a ConfigMap one),
//! puts each test hook in the hooks pane and names the failing ones in its reason.

use crate::cluster::releases;
use crate::engine::event::{Event, HookView, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError, test_logs};
use crate::helm::hooks::{HookPhase, RunKind};
use crate::helm::process::Stream;
use crate::helm::status::ReleaseStatus;
use crate::text;

/// Log lines of a failing test kept in the step's reason.
const LOG_TAIL: usize = 3;

/// One test hook as helm printed it (`TEST SUITE:` / `Phase:`), or as this step judged it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestPod {
    pub name: String,
    /// The hook's kind from the record (`Pod`, `Job`, `ConfigMap`, ...); empty when only helm's
    /// output named it.
    pub kind: String,
    /// `Succeeded`, `Failed`, … ; empty when helm printed none.
    pub phase: String,
    pub logs: Vec<String>,
}

impl TestPod {
    /// `test pod NAME`, `test Job NAME`, `test hook ConfigMap/NAME`: only a Pod is a test pod.
    fn label(&self) -> String {
        test_logs::label(&self.kind, &self.name)
    }
}

/// The test suites and pod logs in `helm test --logs` output (stdout lines, already plain).
pub fn parse(lines: &[String]) -> Vec<TestPod> {
    let mut pods: Vec<TestPod> = Vec::new();
    let mut logs_of: Option<usize> = None;
    let find = |pods: &mut Vec<TestPod>, name: &str| -> usize {
        match pods.iter().position(|p| p.name == name) {
            Some(i) => i,
            None => {
                pods.push(TestPod {
                    name: name.to_string(),
                    ..Default::default()
                });
                pods.len() - 1
            }
        }
    };
    for line in lines {
        if let Some(name) = line.strip_prefix("TEST SUITE:") {
            find(&mut pods, name.trim());
            logs_of = None;
        } else if let Some(phase) = line.strip_prefix("Phase:")
            && logs_of.is_none()
        {
            // A log line may start with `Phase:` too: only a suite's header sets the phase.
            if let Some(last) = pods.last_mut() {
                last.phase = phase.trim().to_string();
            }
        } else if let Some(name) = line.strip_prefix("POD LOGS:") {
            logs_of = Some(find(&mut pods, name.trim()));
        } else if let Some(i) = logs_of
            && !line.trim().is_empty()
        {
            pods[i].logs.push(line.clone());
        }
    }
    pods
}

/// Whether a test hook's phase fails the tests: it failed, or helm left it unfinished. A
/// skipped one only follows an earlier failure (helm stops at the first).
fn fails(phase: &str) -> bool {
    matches!(phase, "Failed" | "Running" | "Unknown")
}

/// The step's failure reason: helm's error, then each failing test hook with its log tail.
pub fn failure(helm_error: &str, tests: &[TestPod]) -> String {
    let mut reason = helm_error.to_string();
    for test in tests.iter().filter(|t| t.phase != "Succeeded") {
        let phase = if test.phase.is_empty() {
            "no phase"
        } else {
            &test.phase
        };
        if phase == "skipped" {
            continue;
        }
        reason.push_str(&format!(" · {} {phase}", test.label()));
        let tail = &test.logs[test.logs.len().saturating_sub(LOG_TAIL)..];
        if !tail.is_empty() {
            reason.push_str(&format!(" (log: {})", tail.join(" | ")));
        }
    }
    reason
}

/// The tests' outcome from the phases helm recorded, with helm's exit as the fallback: any
/// test hook failed or unfinished fails; helm failing while every test with pods succeeded
/// does not (a note says so); helm failing with no such test to judge does.
pub fn judge(helm_ok: bool, helm_error: &str, tests: &[TestPod]) -> Result<Option<String>, String> {
    if tests.iter().any(|t| fails(&t.phase)) {
        return Err(failure(helm_error, tests));
    }
    if helm_ok {
        return Ok(None);
    }
    let with_pods: Vec<&TestPod> = tests
        .iter()
        .filter(|t| test_logs::has_pods(&t.kind))
        .collect();
    if !with_pods.is_empty() && with_pods.iter().all(|t| t.phase == "Succeeded") {
        return Ok(Some(format!(
            "helm test failed ({helm_error}) although every test hook with a pod Succeeded in \
             helm's record: judged from the record"
        )));
    }
    Err(failure(helm_error, tests))
}

/// The hooks pane after `helm test`: the record's hooks as the upgrade judged them (`run`), each
/// `test` hook with the phase helm recorded for it, else the phase helm printed. helm stops at
/// the first failing test, so one with neither was skipped (a pod left by an earlier run may
/// still print its old log).
pub fn test_views(record: &ReleaseStatus, run: RunKind, printed: &[TestPod]) -> Vec<HookView> {
    let mut views = super::upgrade::hook_views(record, run);
    for view in views
        .iter_mut()
        .filter(|v| v.events.iter().any(|e| e == "test"))
    {
        let recorded = record
            .hooks
            .iter()
            .find(|h| text::plain(&h.name) == view.name);
        let phase = match recorded {
            Some(h) if h.phase != HookPhase::NeverRan => h.phase,
            _ => printed
                .iter()
                .find(|p| p.name == view.name)
                .map(|p| HookPhase::from_helm(&p.phase))
                .filter(|p| *p != HookPhase::NeverRan)
                .unwrap_or(HookPhase::Skipped),
        };
        view.phase = phase;
        if let Some(h) = recorded {
            view.started_at = h.started_at.clone();
            view.completed_at = h.completed_at.clone();
        }
    }
    views
}

/// `revision_before` is preflight's: the upgrade judged the hooks with the same run kind.
pub async fn run(ctx: &Ctx, revision_before: Option<i64>) -> StepOutcome {
    let run = if revision_before.is_some() {
        RunKind::Upgrade
    } else {
        RunKind::Install
    };
    super::run(ctx, Step::Test, try_run(ctx, run)).await
}

/// The record helm updated after the tests; None (with a warning) when unreadable.
async fn latest_record(ctx: &Ctx) -> Option<ReleaseStatus> {
    let (client, namespace) = (&ctx.cluster.client, ctx.namespace());
    let latest = match releases::revisions(client, namespace, &ctx.plan.release).await {
        Ok(revisions) => revisions.into_iter().last()?,
        Err(e) => {
            ctx.emit.warn(
                Step::Test,
                format!("release records unreadable after helm test: {e:#}"),
            );
            return None;
        }
    };
    match super::upgrade::read_record(ctx, &latest).await {
        Ok(record) => Some(record),
        Err(e) => {
            ctx.emit.warn(Step::Test, format!("after helm test: {e}"));
            None
        }
    }
}

/// The test hooks judged: from the record (sent to the hooks pane) with their kinds, else as
/// helm printed them (kind unknown).
async fn judged_tests(ctx: &Ctx, run: RunKind, printed: &[TestPod]) -> Vec<TestPod> {
    let Some(record) = latest_record(ctx).await else {
        return printed.to_vec();
    };
    let views = test_views(&record, run, printed);
    let tests = views
        .iter()
        .filter(|v| v.events.iter().any(|e| e == "test"))
        .map(|v| TestPod {
            name: v.name.clone(),
            kind: text::plain(&v.kind),
            phase: v.phase.word().to_string(),
            logs: Vec::new(),
        })
        .collect();
    ctx.emit.send(Event::Hooks { hooks: views });
    tests
}

/// One note per test hook: a pod's or Job's phase and last log line; any other kind is said to
/// be no test pod, so a ConfigMap of test scripts is never counted as a passed test.
fn note(ctx: &Ctx, test: &TestPod) {
    let phase = if test.phase.is_empty() {
        "no phase"
    } else {
        &test.phase
    };
    let label = test.label();
    if !test_logs::has_pods(&test.kind) && !test.kind.is_empty() {
        let text = format!("{label}: {phase} (not a pod: created for the tests, no log)");
        return if fails(phase) {
            ctx.emit.warn(Step::Test, text)
        } else {
            ctx.emit.info(Step::Test, text)
        };
    }
    let tail = test
        .logs
        .last()
        .map_or(String::new(), |l| format!(" · {l}"));
    if test.phase == "Succeeded" {
        ctx.emit.info(Step::Test, format!("{label}: {phase}{tail}"));
    } else {
        ctx.emit.warn(Step::Test, format!("{label}: {phase}{tail}"));
    }
}

async fn try_run(ctx: &Ctx, run_kind: RunKind) -> Result<StepOutcome, StepError> {
    let step = Step::Test;
    let mut args = vec!["test".to_string(), ctx.plan.release.clone()];
    args.extend(ctx.scope_args());
    args.extend(["--timeout".into(), ctx.plan.helm_timeout()]);
    ctx.emit.info(step, format!("helm {}", args.join(" ")));
    let mut stdout = Vec::new();
    let keep_stdout = |stream: &Stream, line: &str| {
        if *stream == Stream::Stdout {
            stdout.push(text::plain(line));
        }
    };
    let exit = super::helm_run::stream_helm(ctx, args, keep_stdout)
        .await
        .map_err(StepError::HelmRun)?;
    if exit.cancelled {
        return Ok(StepOutcome::Cancelled);
    }
    let mut tests = judged_tests(ctx, run_kind, &parse(&stdout)).await;
    for test in &mut tests {
        // A skipped test never ran: a pod of its name is an earlier run's.
        if test_logs::has_pods(&test.kind) && test.phase != "skipped" {
            test.logs = test_logs::fetch(ctx, &test.kind, &test.name)
                .await
                .unwrap_or_default();
        }
        note(ctx, test);
    }
    let error = crate::helm::failure::in_helms_words(
        "helm test",
        &exit.stderr_tail,
        exit.code,
        exit.signal,
    );
    match judge(exit.success(), &error, &tests) {
        Ok(warning) => {
            if let Some(w) = warning {
                ctx.emit.warn(step, w);
            }
            let passed = tests
                .iter()
                .filter(|t| test_logs::has_pods(&t.kind) || t.kind.is_empty())
                .count();
            ctx.emit.info(step, format!("{passed} test pod(s) passed"));
            Ok(StepOutcome::Succeeded)
        }
        Err(reason) => Ok(StepOutcome::Failed { reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn suites_phases_and_logs_are_read_per_pod() {
        let out = lines(
            "NAME: demo\nSTATUS: deployed\nTEST SUITE:     demo-test-ok\nLast Started:   x\n\
             Phase:          Succeeded\nTEST SUITE:     demo-test-db\nPhase:          Failed\n\n\
             POD LOGS: demo-test-ok\nall good\n\nPOD LOGS: demo-test-db\nconnecting\n\
             Phase: not a phase line of a suite\nrefused\n",
        );
        let pods = parse(&out);
        assert_eq!(pods.len(), 2, "{pods:?}");
        assert_eq!(
            (pods[0].phase.as_str(), pods[0].logs.len()),
            ("Succeeded", 1)
        );
        assert_eq!(pods[1].phase, "Failed");
        assert_eq!(
            pods[1].logs,
            [
                "connecting",
                "Phase: not a phase line of a suite",
                "refused"
            ]
        );
    }

    #[test]
    fn test_pods_take_the_phase_helm_recorded_else_the_one_it_printed() {
        use crate::helm::status::HookRecord;
        let hook = |name: &str, events: &[&str], phase: HookPhase| HookRecord {
            name: name.into(),
            kind: if events == ["test"] { "Pod" } else { "Job" }.into(),
            events: events.iter().map(|e| e.to_string()).collect(),
            phase,
            started_at: Some("2026-12-01T10:00:00Z".into()),
            ..Default::default()
        };
        let record = ReleaseStatus {
            hooks: vec![
                hook("demo-migrate", &["pre-upgrade"], HookPhase::Succeeded),
                hook("demo-test-api", &["test"], HookPhase::Succeeded),
                hook("demo-test-db", &["test"], HookPhase::NeverRan),
                hook("demo-test-late", &["test"], HookPhase::NeverRan),
            ],
            ..Default::default()
        };
        let printed = [TestPod {
            name: "demo-test-db".into(),
            phase: "Failed".into(),
            ..TestPod::default()
        }];
        let views = test_views(&record, RunKind::Upgrade, &printed);
        let phase = |name: &str| views.iter().find(|v| v.name == name).map(|v| v.phase);
        assert_eq!(
            phase("demo-migrate"),
            Some(HookPhase::Succeeded),
            "untouched"
        );
        assert_eq!(phase("demo-test-api"), Some(HookPhase::Succeeded));
        assert_eq!(phase("demo-test-db"), Some(HookPhase::Failed), "as printed");
        assert_eq!(
            phase("demo-test-late"),
            Some(HookPhase::Skipped),
            "helm stopped before it"
        );
        assert_eq!(views.len(), 4);
    }

    fn test(name: &str, kind: &str, phase: &str, logs: &[&str]) -> TestPod {
        TestPod {
            name: name.into(),
            kind: kind.into(),
            phase: phase.into(),
            logs: logs.iter().map(|l| (*l).to_string()).collect(),
        }
    }

    #[test]
    fn the_failure_names_each_failing_pod_with_its_log_tail() {
        let pods = [
            test("ok", "Pod", "Succeeded", &["fine"]),
            test("db", "Pod", "Failed", &["l1", "l2", "l3", "l4", "l5"]),
            test("late", "Pod", "skipped", &[]),
        ];
        assert_eq!(
            failure("pod db failed", &pods),
            "pod db failed · test pod db Failed (log: l3 | l4 | l5)"
        );
        assert_eq!(failure("x", &pods[..1]), "x");
        let job = [test("migrate-check", "Job", "Failed", &["boom"])];
        assert_eq!(
            failure("x", &job),
            "x · test Job migrate-check Failed (log: boom)"
        );
    }

    #[test]
    fn tests_are_judged_from_the_recorded_phases_not_from_helms_exit() {
        let scripts = test("jk-tests", "ConfigMap", "Succeeded", &[]);
        let ui = test(
            "jk-ui-test",
            "Pod",
            "Succeeded",
            &["ok 1 Testing Jenkins UI"],
        );
        // helm 4.1.4's `--logs` exits 1 on a ConfigMap test hook although every test passed.
        let passed = [scripts.clone(), ui.clone()];
        assert_eq!(judge(true, "", &passed), Ok(None));
        let Ok(Some(note)) = judge(false, "unable to get pod logs for jk-tests", &passed) else {
            panic!("every test pod succeeded: the tests passed");
        };
        assert!(note.contains("judged from the record"), "{note}");
        // A failing pod fails whatever helm said, naming it with its log.
        let failed = [
            scripts.clone(),
            test("jk-ui-test", "Pod", "Failed", &["not ok 1"]),
        ];
        let Err(reason) = judge(true, "helm", &failed) else {
            panic!("a failed test pod fails the tests");
        };
        assert!(
            reason.contains("test pod jk-ui-test Failed (log: not ok 1)"),
            "{reason}"
        );
        assert!(!reason.contains("test pod jk-tests"), "{reason}");
        // helm failing with no test pod to judge (only a ConfigMap) is helm's failure.
        assert!(judge(false, "boom", &[scripts]).is_err());
        // A ConfigMap hook that failed (helm could not create it) fails, named as a hook.
        let Err(reason) = judge(
            false,
            "boom",
            &[test("jk-tests", "ConfigMap", "Failed", &[]), ui],
        ) else {
            panic!("a failed test hook fails the tests");
        };
        assert!(
            reason.contains("test hook ConfigMap/jk-tests Failed"),
            "{reason}"
        );
    }
}
