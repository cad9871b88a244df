//! `--test`: `helm test REL --logs` after a landed deploy, as the `test` step. helm runs the
//! chart's `test` hook pods and judges them; this step streams its output into the helm pane,
//! puts each test pod in the hooks pane with the phase helm recorded (its log tail in a note),
//! and names the failing ones in its reason.

use crate::cluster::releases;
use crate::engine::event::{Event, HookView, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError};
use crate::helm::hooks::{HookPhase, RunKind};
use crate::helm::process::Stream;
use crate::helm::status::ReleaseStatus;
use crate::text;

/// Log lines of a failing test kept in the step's reason.
const LOG_TAIL: usize = 3;

/// One test pod as `helm test --logs` printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestPod {
    pub name: String,
    /// `Succeeded`, `Failed`, … (helm's `Phase:` line); empty when helm printed none.
    pub phase: String,
    pub logs: Vec<String>,
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

/// The step's failure reason: helm's error, then each failing pod with its log tail.
pub fn failure(helm_error: &str, pods: &[TestPod]) -> String {
    let mut reason = helm_error.to_string();
    for pod in pods.iter().filter(|p| p.phase != "Succeeded") {
        let phase = if pod.phase.is_empty() {
            "no phase"
        } else {
            &pod.phase
        };
        reason.push_str(&format!(" · test pod {} {phase}", pod.name));
        let tail = &pod.logs[pod.logs.len().saturating_sub(LOG_TAIL)..];
        if !tail.is_empty() {
            reason.push_str(&format!(" (log: {})", tail.join(" | ")));
        }
    }
    reason
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

/// Sends the hooks with the test pods' phases, from the record helm updated after the tests.
/// An unreadable record only leaves the notes.
async fn send_test_hooks(ctx: &Ctx, run: RunKind, printed: &[TestPod]) {
    let (client, namespace) = (&ctx.cluster.client, ctx.namespace());
    let latest = match releases::revisions(client, namespace, &ctx.plan.release).await {
        Ok(revisions) => revisions.into_iter().last(),
        Err(e) => {
            ctx.emit.warn(
                Step::Test,
                format!("release records unreadable after helm test: {e:#}"),
            );
            return;
        }
    };
    let Some(latest) = latest else {
        return;
    };
    match super::upgrade::read_record(ctx, &latest).await {
        Ok(record) => ctx.emit.send(Event::Hooks {
            hooks: test_views(&record, run, printed),
        }),
        Err(e) => ctx.emit.warn(Step::Test, format!("after helm test: {e}")),
    }
}

async fn try_run(ctx: &Ctx, run_kind: RunKind) -> Result<StepOutcome, StepError> {
    let step = Step::Test;
    let mut args = vec!["test".to_string(), ctx.plan.release.clone()];
    args.extend(ctx.scope_args());
    args.extend(["--logs".into(), "--timeout".into(), ctx.plan.helm_timeout()]);
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
    let pods = parse(&stdout);
    send_test_hooks(ctx, run_kind, &pods).await;
    for pod in &pods {
        let phase = if pod.phase.is_empty() {
            "no phase"
        } else {
            &pod.phase
        };
        let tail = pod.logs.last().map_or(String::new(), |l| format!(" · {l}"));
        if pod.phase == "Succeeded" {
            ctx.emit
                .info(step, format!("test pod {}: {phase}{tail}", pod.name));
        } else {
            ctx.emit
                .warn(step, format!("test pod {}: {phase}{tail}", pod.name));
        }
    }
    if exit.success() {
        ctx.emit
            .info(step, format!("{} test pod(s) passed", pods.len()));
        return Ok(StepOutcome::Succeeded);
    }
    let error = crate::helm::failure::reason(&exit.stderr_tail)
        .map(|e| text::plain(&e))
        .unwrap_or_else(|| format!("helm test exited with {:?}", exit.code));
    Ok(StepOutcome::Failed {
        reason: failure(&error, &pods),
    })
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
            logs: vec![],
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

    #[test]
    fn the_failure_names_each_failing_pod_with_its_log_tail() {
        let pods = [
            TestPod {
                name: "ok".into(),
                phase: "Succeeded".into(),
                logs: vec!["fine".into()],
            },
            TestPod {
                name: "db".into(),
                phase: "Failed".into(),
                logs: (1..=5).map(|i| format!("l{i}")).collect(),
            },
        ];
        assert_eq!(
            failure("pod db failed", &pods),
            "pod db failed · test pod db Failed (log: l3 | l4 | l5)"
        );
        assert_eq!(failure("x", &pods[..1]), "x");
    }
}
