//! `--test`: `helm test REL --logs` after a landed deploy, as the `test` step. helm runs the
//! chart's `test` hook pods and judges them; this step streams its output into the helm pane,
//! reports each test pod's phase and log tail, and names the failing ones in its reason.

use std::sync::{Arc, Mutex};

use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError};
use crate::helm::process::{self, HelmRun, Stream};
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

pub async fn run(ctx: &Ctx) -> StepOutcome {
    super::run(ctx, Step::Test, try_run(ctx)).await
}

async fn try_run(ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let step = Step::Test;
    let mut args = vec!["test".to_string(), ctx.plan.release.clone()];
    args.extend(ctx.scope_args());
    args.extend(["--logs".into(), "--timeout".into(), ctx.plan.helm_timeout()]);
    ctx.emit.info(step, format!("helm {}", args.join(" ")));
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let (sender, kept) = (ctx.emit.clone(), Arc::clone(&stdout));
    let on_line = move |stream: Stream, line: String| {
        let line = text::sanitize_line(&line, text::Keep::Colours);
        if stream == Stream::Stdout
            && let Ok(mut kept) = kept.lock()
        {
            kept.push(text::plain(&line));
        }
        sender.send(Event::HelmLine {
            stderr: stream == Stream::Stderr,
            text: line,
        });
    };
    let run = HelmRun {
        bin: ctx.helm.clone(),
        args,
        env: ctx.helm_env.clone(),
    };
    let exit = process::run(run, on_line, ctx.cancel.clone())
        .await
        .map_err(StepError::HelmRun)?;
    if exit.cancelled {
        return Ok(StepOutcome::Cancelled);
    }
    let lines = stdout.lock().map(|l| l.clone()).unwrap_or_default();
    let pods = parse(&lines);
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
