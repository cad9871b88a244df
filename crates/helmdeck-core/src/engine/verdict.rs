//! The verdict: one exit code that means one thing. A pure function of the state.
//!
//! - 0 `landed`: every step that ran succeeded and every gating workload is ready;
//! - 1 `failed`: helm, preflight or the rollout failed, was cancelled, or evidence is missing;
//! - 3 `live-init-incomplete`: the release is live and rolled out, only the init step failed;
//! - 0 `dry-run`: a dry run that went through; nothing was written, so nothing "landed".
//!
//! Fail closed: a step that never reported its end, or a "succeeded" rollout that the
//! workload evidence contradicts, is a failure, never a quiet pass.

use serde::{Deserialize, Serialize};

use crate::engine::event::{Step, StepOutcome};
use crate::engine::state::DeployState;
use crate::helm::hooks::HookPhase;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Landed,
    Failed,
    LiveInitIncomplete,
    DryRun,
    /// `--plan-only`: nothing would change.
    NoChanges,
    /// `--plan-only`: the upgrade would change something (exit 4, only here).
    ChangesPending,
}

impl Outcome {
    pub fn code(self) -> i32 {
        match self {
            Outcome::Landed | Outcome::DryRun | Outcome::NoChanges => 0,
            Outcome::Failed => 1,
            Outcome::LiveInitIncomplete => 3,
            Outcome::ChangesPending => crate::exit::CHANGES_PENDING,
        }
    }

    /// The banner word.
    pub fn title(self) -> &'static str {
        match self {
            Outcome::Landed => "LANDED",
            Outcome::Failed => "FAILED",
            Outcome::LiveInitIncomplete => "LIVE — INIT INCOMPLETE",
            Outcome::DryRun => "DRY RUN",
            Outcome::NoChanges => "NO CHANGES",
            Outcome::ChangesPending => "CHANGES PENDING",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub code: i32,
    pub outcome: Outcome,
    /// One sentence.
    pub reason: String,
    /// The facts behind it: blocking workloads with their causes, failing and skipped hooks.
    pub evidence: Vec<String>,
    /// What the operator should do next (a command), when there is something to do.
    pub next: Option<String>,
}

fn verdict(
    outcome: Outcome,
    reason: impl Into<String>,
    evidence: Vec<String>,
    next: Option<String>,
) -> Verdict {
    Verdict {
        code: outcome.code(),
        outcome,
        reason: reason.into(),
        evidence,
        next,
    }
}

/// The steps that must end well for the release to count as live.
const LIVE_STEPS: [Step; 3] = [Step::Preflight, Step::Upgrade, Step::Rollout];

pub fn decide(state: &DeployState) -> Verdict {
    let mut verdict = judge(state);
    if verdict.code == 1
        && let Some(rollback) = &state.rollback
    {
        // The deploy failed either way: the rollback only says where the release stands now.
        match rollback.status.as_str() {
            "rolled-back" => verdict
                .reason
                .push_str(&format!("; rolled back to {}", rollback.to)),
            _ => verdict.reason.push_str(&format!(
                "; rollback failed too: {}",
                rollback.reason.as_deref().unwrap_or("it did not finish")
            )),
        }
    }
    verdict
}

fn judge(state: &DeployState) -> Verdict {
    let mut evidence = evidence(state);
    if let Some(planned) = plan_verdict(state, &evidence) {
        return planned;
    }
    for step in LIVE_STEPS {
        match state.outcome(step) {
            Some(StepOutcome::Succeeded) | Some(StepOutcome::Skipped { .. }) => {}
            Some(StepOutcome::Failed { reason }) => {
                let next = next_after_failure(state, step, &mut evidence);
                return verdict(
                    Outcome::Failed,
                    format!("{} failed: {reason}", step.name()),
                    evidence,
                    next,
                );
            }
            Some(StepOutcome::Cancelled) => {
                let next = next_after_failure(state, step, &mut evidence);
                return verdict(Outcome::Failed, "cancelled", evidence, next);
            }
            None => {
                return verdict(
                    Outcome::Failed,
                    format!(
                        "{} did not report an outcome (evidence missing)",
                        step.name()
                    ),
                    evidence,
                    None,
                );
            }
        }
    }
    if let Some(contradiction) = rollout_contradiction(state) {
        return verdict(Outcome::Failed, contradiction, evidence, None);
    }
    match state.outcome(Step::Init) {
        Some(StepOutcome::Succeeded) | Some(StepOutcome::Skipped { .. }) => {
            // `--test` ran after a landed deploy: a failing or unfinished test turns it to 1.
            match state.outcome(Step::Test) {
                Some(StepOutcome::Failed { reason }) => {
                    return verdict(
                        Outcome::Failed,
                        format!("test failed: {reason}"),
                        evidence,
                        None,
                    );
                }
                Some(StepOutcome::Cancelled) => {
                    return verdict(Outcome::Failed, "cancelled during test", evidence, None);
                }
                None if state.steps.contains_key(&Step::Test) => {
                    return verdict(
                        Outcome::Failed,
                        "test did not report an outcome (evidence missing)",
                        evidence,
                        None,
                    );
                }
                _ => {}
            }
            if state.plan.dry_run {
                return verdict(Outcome::DryRun, "nothing was written", evidence, None);
            }
            let optional_waiting = state.optional().filter(|w| !w.ready).count();
            let mut reason = String::from("every step succeeded");
            if state.outcome(Step::Rollout) == Some(&StepOutcome::Succeeded) {
                let gating = state.gating().count();
                reason = format!("{gating}/{gating} gating workloads ready");
                if optional_waiting > 0 {
                    reason.push_str(&format!(", {optional_waiting} optional not ready"));
                }
            }
            if let Some(init) = init_words(state) {
                reason.push_str(&format!("; {init}"));
            }
            let old = on_delete_old(state);
            if old > 0 {
                reason.push_str(&format!(
                    "; {old} {} still on the old revision until deleted",
                    pods_word(old)
                ));
            }
            verdict(Outcome::Landed, reason, evidence, None)
        }
        Some(StepOutcome::Failed { reason }) => verdict(
            Outcome::LiveInitIncomplete,
            format!("release rolled out; init did not finish: {reason}"),
            evidence,
            Some(only_init_command(state)),
        ),
        Some(StepOutcome::Cancelled) => verdict(
            Outcome::LiveInitIncomplete,
            "cancelled during init",
            evidence,
            Some(only_init_command(state)),
        ),
        None => verdict(
            Outcome::Failed,
            "init did not report an outcome (evidence missing)",
            evidence,
            None,
        ),
    }
}

/// The plan step's say, before any other step's: a declined or failed plan (nothing written),
/// or `--plan-only`'s answer. None when the plan (if any) lets the deploy go on.
fn plan_verdict(state: &DeployState, evidence: &[String]) -> Option<Verdict> {
    if !state.plan.plan && !state.plan.plan_only {
        return None;
    }
    let failed = |reason: String| Some(verdict(Outcome::Failed, reason, evidence.to_vec(), None));
    match state.outcome(Step::Preflight) {
        Some(StepOutcome::Succeeded) => {}
        // Preflight's own failure is judged with the other live steps.
        _ => return None,
    }
    if state.plan_declined {
        return failed("cancelled: plan declined".into());
    }
    match state.outcome(Step::Plan) {
        Some(StepOutcome::Succeeded) => {}
        Some(StepOutcome::Failed { reason }) => return failed(format!("plan failed: {reason}")),
        Some(StepOutcome::Cancelled) => return failed("cancelled".into()),
        Some(StepOutcome::Skipped { .. }) => return None,
        None => return failed("plan did not report an outcome (evidence missing)".into()),
    }
    if !state.plan.plan_only {
        return None;
    }
    let Some(changes) = &state.changes else {
        return failed("plan succeeded without a plan (evidence missing)".into());
    };
    let mut evidence = evidence.to_vec();
    evidence.extend(changes.refused().map(|o| {
        format!(
            "{}: helm will be refused: {}",
            o.reference(&state.plan.namespace),
            o.refused.as_deref().unwrap_or_default()
        )
    }));
    Some(if changes.has_changes() {
        verdict(
            Outcome::ChangesPending,
            format!("changes pending: {}", changes.summary()),
            evidence,
            None,
        )
    } else {
        verdict(
            Outcome::NoChanges,
            format!("no changes: {} unchanged", changes.unchanged),
            evidence,
            None,
        )
    })
}

/// How the init step went, for a landed verdict: `init Job demo-init succeeded in 12 s`, or
/// why it did not run. None when init is not configured (nothing ran).
fn init_words(state: &DeployState) -> Option<String> {
    let job = state.plan.init_job.as_deref()?;
    match state.outcome(Step::Init)? {
        StepOutcome::Succeeded => {
            let took = state
                .steps
                .get(&Step::Init)
                .and_then(|s| Some(s.ended_secs? - s.started_secs?));
            Some(match took {
                Some(secs) => format!("init Job {job} succeeded in {}", seconds_words(secs)),
                None => format!("init Job {job} succeeded"),
            })
        }
        StepOutcome::Skipped { reason } => Some(format!("init skipped: {reason}")),
        StepOutcome::Failed { .. } | StepOutcome::Cancelled => None,
    }
}

/// `12 s`, or `0.4 s` under ten seconds, where a tenth still tells something.
fn seconds_words(secs: f64) -> String {
    if secs < 10.0 {
        format!("{:.1} s", secs.max(0.0))
    } else {
        format!("{secs:.0} s")
    }
}

fn pods_word(n: i32) -> &'static str {
    if n == 1 { "pod" } else { "pods" }
}

/// OnDelete workloads this run changed whose pods keep the old revision: (reference, count).
/// None on a first install (there is no old revision to keep).
fn on_delete_behind(state: &DeployState) -> Vec<(String, i32)> {
    if state.revision_before.is_none() || state.plan.dry_run {
        return Vec::new();
    }
    state
        .workloads
        .values()
        .filter(|w| {
            w.notes
                .iter()
                .any(|n| n == crate::rollout::readiness::ON_DELETE_NOTE)
        })
        .map(|w| {
            (
                w.reference(&state.plan.namespace),
                w.desired.saturating_sub(w.updated).max(0),
            )
        })
        .filter(|(_, old)| *old > 0)
        .collect()
}

fn on_delete_old(state: &DeployState) -> i32 {
    on_delete_behind(state).iter().map(|(_, n)| n).sum()
}

/// The cause of a failed Job (a hook's or the init Job): its pods with their causes (exit
/// codes, reasons), then the last lines each container logged.
fn job_cause(state: &DeployState, label: &str, job: &str) -> Vec<String> {
    let owner = format!("Job/{job}");
    let mut out = Vec::new();
    let mut pods: Vec<&str> = Vec::new();
    for p in state.pods.values().filter(|p| p.owner == owner) {
        pods.push(&p.name);
        let causes = if p.causes.is_empty() {
            p.phase.clone()
        } else {
            p.causes.join("; ")
        };
        out.push(format!("{label}: pod {}: {causes}", p.name));
    }
    // A pod deleted since (a hook's delete policy) still left its log behind.
    let prefix = format!("{job}-");
    for (key, lines) in &state.logs {
        let Some((pod, _)) = key.split_once('/') else {
            continue;
        };
        let ours = pods.contains(&pod)
            || (pod.starts_with(&prefix)
                && !state
                    .pods
                    .values()
                    .any(|p| p.name == pod && p.owner != owner));
        if !ours {
            continue;
        }
        let skip = lines.len().saturating_sub(JOB_LOG_LINES);
        for line in lines.iter().skip(skip) {
            out.push(format!("{label}: log {key}: {line}"));
        }
    }
    out
}

/// Log lines of a failed Job's container kept in the evidence.
const JOB_LOG_LINES: usize = 20;

/// A rollout that claims success must agree with the workloads it saw.
fn rollout_contradiction(state: &DeployState) -> Option<String> {
    if state.outcome(Step::Rollout) != Some(&StepOutcome::Succeeded) {
        return None;
    }
    if state.gating().next().is_none() {
        return Some("rollout reported success but no gating workload was seen".into());
    }
    let not_ready: Vec<String> = state
        .gating()
        .filter(|w| !w.ready)
        .map(|w| w.reference(&state.plan.namespace))
        .collect();
    if !not_ready.is_empty() {
        return Some(format!(
            "rollout reported success but {} not ready",
            not_ready.join(", ")
        ));
    }
    None
}

fn evidence(state: &DeployState) -> Vec<String> {
    let mut out = Vec::new();
    if matches!(
        state.outcome(Step::Upgrade),
        Some(StepOutcome::Failed { .. })
    ) {
        // The reason keeps at most a few of helm's lines; the evidence keeps its error whole.
        let lines = crate::helm::failure::error_lines(&state.helm.stderr_tail);
        if lines.len() > 1 {
            out.extend(lines.into_iter().map(|l| format!("helm: {l}")));
        }
    }
    for w in state.gating().filter(|w| !w.ready) {
        let mut line = format!(
            "{} not ready: {}",
            w.reference(&state.plan.namespace),
            w.message
        );
        for cause in &w.pod_causes {
            line.push_str(&format!("; {cause}"));
        }
        out.push(line);
    }
    for h in &state.hooks {
        // Every phase named, so a new one has to be placed here on purpose.
        match h.phase {
            HookPhase::Failed => {
                out.push(format!("hook {} ({}) failed", h.name, h.events.join(",")));
                out.extend(job_cause(state, &format!("hook {}", h.name), &h.name));
            }
            HookPhase::Skipped => out.push(format!(
                "hook {} ({}) skipped: never ran",
                h.name,
                h.events.join(",")
            )),
            HookPhase::Running | HookPhase::Unknown => {
                out.push(format!("hook {} left {}", h.name, h.phase))
            }
            HookPhase::Succeeded | HookPhase::NeverRan | HookPhase::NotInThisRun => {}
        }
    }
    if let (Some(job), Some(StepOutcome::Failed { .. })) =
        (state.plan.init_job.as_deref(), state.outcome(Step::Init))
    {
        out.push(format!("init Job {job} failed"));
        out.extend(job_cause(state, &format!("init Job {job}"), job));
    }
    for (reference, old) in on_delete_behind(state) {
        out.push(format!(
            "{reference}: {old} {} still on the old revision until deleted (OnDelete)",
            pods_word(old)
        ));
    }
    for w in state.optional().filter(|w| !w.ready) {
        let mut line = format!(
            "optional {} not ready (not gating): {}",
            w.reference(&state.plan.namespace),
            w.message
        );
        for cause in &w.pod_causes {
            line.push_str(&format!("; {cause}"));
        }
        out.push(line);
    }
    for (what, error) in &state.degraded {
        out.push(format!("watch of {what} failing: {error}"));
    }
    out
}

/// The next step once the init step did not finish: re-run it, or (a watch, which has no chart
/// to re-run it with) read the Job's log.
fn only_init_command(state: &DeployState) -> String {
    if state.plan.watch {
        return crate::engine::advice::watched_init(&state.plan);
    }
    crate::engine::advice::only_init(&state.plan)
}

/// A rollback is advised once this run wrote a revision over an existing release (or its
/// rollout failed), and only to the last revision that was `deployed` before the run: rolling
/// back to a failed one would redo the failure. Without one, the evidence says so instead.
fn next_after_failure(
    state: &DeployState,
    step: Step,
    evidence: &mut Vec<String>,
) -> Option<String> {
    match step {
        Step::Preflight | Step::Plan => None,
        // helmdeck's rollback already ran (or failed after writing): another one would undo
        // nothing or pile a revision on one that is pending; the history shows where it stands.
        Step::Upgrade | Step::Rollout if state.rollback.is_some() => {
            let plan = &state.plan;
            Some(crate::advice::helm_history(
                &plan.release,
                &plan.namespace,
                plan.context.as_deref(),
            ))
        }
        Step::Upgrade | Step::Rollout => {
            let wrote = state
                .revision
                .is_some_and(|r| Some(r) != state.revision_before);
            state.revision_before?;
            if !wrote && step != Step::Rollout {
                return None;
            }
            let plan = &state.plan;
            let Some(rev) = state.deployed_before else {
                evidence.push(format!(
                    "no deployed revision of {} to roll back to (see {})",
                    plan.release,
                    crate::advice::helm_history(
                        &plan.release,
                        &plan.namespace,
                        plan.context.as_deref()
                    )
                ));
                return None;
            };
            Some(crate::advice::helm_rollback(
                &plan.release,
                rev,
                &plan.namespace,
                plan.context.as_deref(),
            ))
        }
        Step::Init => Some(only_init_command(state)),
        Step::Test => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{Event, HookView, PodView, WorkloadView};
    use crate::engine::state::PlanSummary;

    fn workload(name: &str, optional: bool, ready: bool) -> WorkloadView {
        WorkloadView {
            kind: "Deployment".into(),
            namespace: "apps".into(),
            name: name.into(),
            optional,
            optional_because: optional.then(|| "--optional".into()),
            ready,
            failed: false,
            message: if ready {
                "successfully rolled out".into()
            } else {
                "1 of 2 updated replicas are available".into()
            },
            desired: 2,
            ready_replicas: 1,
            updated: 2,
            available: 1,
            generation: 1,
            created: None,
            pod_causes: if ready {
                vec![]
            } else {
                vec!["pod x: CrashLoopBackOff (exit 1)".into()]
            },
            notes: vec![],
        }
    }

    fn state(outcomes: &[(Step, StepOutcome)], workloads: &[WorkloadView]) -> DeployState {
        let mut s = DeployState::new(PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: "./chart".into(),
            ..Default::default()
        });
        s.revision_before = Some(4);
        s.deployed_before = Some(4);
        for w in workloads {
            s.apply(&Event::Workload(w.clone()), 0.0, "t");
        }
        for (step, outcome) in outcomes {
            s.apply(
                &Event::StepEnded {
                    step: *step,
                    outcome: outcome.clone(),
                },
                1.0,
                "t",
            );
        }
        s
    }

    fn ok() -> StepOutcome {
        StepOutcome::Succeeded
    }
    fn failed(r: &str) -> StepOutcome {
        StepOutcome::Failed { reason: r.into() }
    }
    fn skipped() -> StepOutcome {
        StepOutcome::Skipped {
            reason: "not configured".into(),
        }
    }

    use Step::*;

    #[test]
    fn banner_words_and_codes() {
        assert_eq!(
            (Outcome::Landed.title(), Outcome::Landed.code()),
            ("LANDED", 0)
        );
        assert_eq!(
            (Outcome::Failed.title(), Outcome::Failed.code()),
            ("FAILED", 1)
        );
        assert_eq!(
            (
                Outcome::LiveInitIncomplete.title(),
                Outcome::LiveInitIncomplete.code()
            ),
            ("LIVE — INIT INCOMPLETE", 3)
        );
    }

    #[test]
    fn all_steps_succeeded_is_landed() {
        let s = state(
            &[
                (Preflight, ok()),
                (Upgrade, ok()),
                (Rollout, ok()),
                (Init, ok()),
            ],
            &[workload("web", false, true)],
        );
        let v = decide(&s);
        assert_eq!((v.code, v.outcome), (0, Outcome::Landed));
        assert_eq!(v.reason, "1/1 gating workloads ready");
        assert!(v.next.is_none());
    }

    #[test]
    fn optional_not_ready_does_not_gate_but_is_reported() {
        let s = state(
            &[
                (Preflight, ok()),
                (Upgrade, ok()),
                (Rollout, ok()),
                (Init, skipped()),
            ],
            &[workload("web", false, true), workload("gpu", true, false)],
        );
        let v = decide(&s);
        assert_eq!(v.code, 0);
        assert!(v.reason.contains("1 optional not ready"), "{}", v.reason);
        assert!(
            v.evidence
                .iter()
                .any(|e| e.starts_with("optional Deployment/gpu not ready")),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn each_failing_live_step_is_exit_1() {
        for step in [Preflight, Upgrade, Rollout] {
            let outcomes: Vec<(Step, StepOutcome)> = [Preflight, Upgrade, Rollout, Init]
                .iter()
                .map(|s| (*s, if *s == step { failed("boom") } else { ok() }))
                .collect();
            let v = decide(&state(&outcomes, &[workload("web", false, true)]));
            assert_eq!(v.code, 1, "{step:?}");
            assert!(
                v.reason.starts_with(step.name()) && v.reason.ends_with("boom"),
                "{}",
                v.reason
            );
        }
    }

    #[test]
    fn init_failure_after_a_good_rollout_is_exit_3_with_the_rerun_command() {
        let mut s = state(
            &[
                (Preflight, ok()),
                (Upgrade, ok()),
                (Rollout, ok()),
                (Init, failed("Job demo-init failed")),
            ],
            &[workload("web", false, true)],
        );
        s.plan.init_toggle = Some("initJob.enabled".into());
        s.plan.init_job = Some("demo-init".into());
        s.plan.timeout_secs = 600;
        let v = decide(&s);
        assert_eq!((v.code, v.outcome), (3, Outcome::LiveInitIncomplete));
        // Runnable as printed: every init setting, no value (advice.rs has the whole rule).
        assert_eq!(
            v.next.as_deref(),
            Some(
                "helmdeck deploy demo ./chart -n apps --init-toggle initJob.enabled \
                 --init-job demo-init --timeout 600s --only init"
            )
        );
    }

    #[test]
    fn a_rollback_is_told_after_the_failure_and_never_changes_the_code() {
        let view = |status: &str, reason: Option<&str>| crate::engine::event::RollbackView {
            from: 3,
            to: 2,
            revision: Some(4),
            status: status.into(),
            reason: reason.map(String::from),
        };
        let failed_rollout = [
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, failed("boom")),
        ];
        let mut s = state(&failed_rollout, &[workload("web", false, true)]);
        s.rollback = Some(view("rolled-back", None));
        let v = decide(&s);
        assert_eq!(
            (v.code, v.reason.as_str()),
            (1, "rollout failed: boom; rolled back to 2")
        );
        s.rollback = Some(view("failed", Some("revision 4 did not roll out: x")));
        assert_eq!(
            decide(&s).reason,
            "rollout failed: boom; rollback failed too: revision 4 did not roll out: x"
        );
        // A verdict that is not 1 is never rewritten (the rollback only follows a failure).
        let mut landed = state(&all_ok(), &[workload("web", false, true)]);
        landed.rollback = Some(view("rolled-back", None));
        assert!(!decide(&landed).reason.contains("rolled back"));
    }

    #[test]
    fn after_a_rollback_the_next_step_is_the_history_never_another_rollback() {
        let failed_rollout = [
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, failed("boom")),
        ];
        let mut s = state(&failed_rollout, &[workload("web", false, false)]);
        s.revision = Some(5);
        s.plan.context = Some("prod eu".into());
        assert_eq!(
            decide(&s).next.as_deref(),
            Some("helm rollback demo 4 -n apps --kube-context 'prod eu'"),
            "before a rollback, the rollback is the advice"
        );
        for status in ["rolled-back", "failed"] {
            s.rollback = Some(crate::engine::event::RollbackView {
                from: 5,
                to: 4,
                revision: Some(6),
                status: status.into(),
                reason: None,
            });
            let v = decide(&s);
            assert_eq!(
                v.next.as_deref(),
                Some("helm history demo -n apps --kube-context 'prod eu'"),
                "{status}"
            );
        }
    }

    #[test]
    fn cancel_is_1_except_during_init_where_it_is_3() {
        let v = decide(&state(
            &[(Preflight, ok()), (Upgrade, StepOutcome::Cancelled)],
            &[],
        ));
        assert_eq!((v.code, v.reason.as_str()), (1, "cancelled"));
        let v = decide(&state(
            &[
                (Preflight, ok()),
                (Upgrade, ok()),
                (Rollout, ok()),
                (Init, StepOutcome::Cancelled),
            ],
            &[workload("w", false, true)],
        ));
        assert_eq!((v.code, v.reason.as_str()), (3, "cancelled during init"));
    }

    #[test]
    fn a_step_without_an_outcome_fails_closed() {
        for missing in [Preflight, Upgrade, Rollout, Init] {
            let outcomes: Vec<(Step, StepOutcome)> = [Preflight, Upgrade, Rollout, Init]
                .iter()
                .filter(|s| **s != missing)
                .map(|s| (*s, ok()))
                .collect();
            let v = decide(&state(&outcomes, &[workload("web", false, true)]));
            assert_eq!(v.code, 1, "missing {missing:?}");
            assert!(v.reason.contains("evidence missing"), "{}", v.reason);
        }
    }

    #[test]
    fn a_rollout_success_contradicted_by_the_workloads_fails_closed() {
        let all_ok = [
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, ok()),
        ];
        let v = decide(&state(&all_ok, &[workload("web", false, false)]));
        assert_eq!(v.code, 1);
        assert!(
            v.reason.contains("Deployment/web not ready"),
            "{}",
            v.reason
        );
        let v = decide(&state(&all_ok, &[workload("gpu", true, true)]));
        assert_eq!(v.code, 1, "only optional workloads: nothing gated");
        assert!(v.reason.contains("no gating workload"), "{}", v.reason);
    }

    fn all_ok() -> [(Step, StepOutcome); 4] {
        [
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, ok()),
        ]
    }

    #[test]
    fn a_dry_run_is_its_own_outcome_never_landed() {
        let mut s = state(&all_ok(), &[workload("web", false, true)]);
        s.plan.dry_run = true;
        let v = decide(&s);
        assert_eq!((v.code, v.outcome), (0, Outcome::DryRun));
        assert_eq!(
            (v.outcome.title(), v.reason.as_str()),
            ("DRY RUN", "nothing was written")
        );
    }

    #[test]
    fn the_landed_reason_names_the_init_job_and_its_time() {
        let mut s = state(&all_ok(), &[workload("web", false, true)]);
        s.plan.init_job = Some("demo-init".into());
        s.apply(&Event::StepStarted { step: Init }, 20.0, "t");
        s.apply(
            &Event::StepEnded {
                step: Init,
                outcome: ok(),
            },
            32.2,
            "t",
        );
        assert_eq!(
            decide(&s).reason,
            "1/1 gating workloads ready; init Job demo-init succeeded in 12 s"
        );
        let mut s = state(
            &[
                (Preflight, ok()),
                (Upgrade, ok()),
                (Rollout, ok()),
                (Init, skipped()),
            ],
            &[workload("web", false, true)],
        );
        s.plan.init_job = Some("demo-init".into());
        assert_eq!(
            decide(&s).reason,
            "1/1 gating workloads ready; init skipped: not configured"
        );
    }

    #[test]
    fn on_delete_pods_left_on_the_old_revision_are_said_after_an_upgrade_only() {
        let mut sts = workload("db", false, true);
        sts.kind = "StatefulSet".into();
        sts.updated = 0;
        sts.notes = vec![crate::rollout::readiness::ON_DELETE_NOTE.into()];
        let upgraded = state(&all_ok(), &[sts.clone()]);
        let v = decide(&upgraded);
        assert_eq!(v.code, 0);
        assert_eq!(
            v.reason,
            "1/1 gating workloads ready; 2 pods still on the old revision until deleted"
        );
        assert!(
            v.evidence.contains(
                &"StatefulSet/db: 2 pods still on the old revision until deleted (OnDelete)".into()
            ),
            "{:?}",
            v.evidence
        );
        let mut first = state(&all_ok(), &[sts]);
        first.revision_before = None;
        let v = decide(&first);
        assert_eq!(v.reason, "1/1 gating workloads ready");
        assert!(v.evidence.is_empty(), "{:?}", v.evidence);
    }

    #[test]
    fn durations_keep_a_tenth_only_under_ten_seconds() {
        assert_eq!(seconds_words(9.94), "9.9 s");
        assert_eq!(seconds_words(10.0), "10 s");
        assert_eq!(seconds_words(-1.0), "0.0 s");
    }

    #[test]
    fn an_on_delete_workload_whose_pods_all_moved_gets_no_note() {
        let mut sts = workload("db", false, true);
        sts.kind = "StatefulSet".into();
        sts.notes = vec![crate::rollout::readiness::ON_DELETE_NOTE.into()];
        let v = decide(&state(&all_ok(), &[sts]));
        assert_eq!(v.reason, "1/1 gating workloads ready");
        assert!(v.evidence.is_empty(), "{:?}", v.evidence);
    }

    /// A failed Job's evidence holds its own pods' logs, also of a pod deleted since (its
    /// name starts with the Job's), never another Job's whose name merely shares the prefix.
    #[test]
    fn a_failed_jobs_cause_holds_its_own_logs_only() {
        let mut s = state(&[], &[]);
        let pod = |name: &str, owner: &str| PodView {
            name: name.into(),
            namespace: "apps".into(),
            owner: owner.into(),
            phase: "Failed".into(),
            ready: false,
            restarts: 0,
            node: None,
            current: true,
            causes: vec!["Failed: Error (exit 1)".into()],
            containers: vec!["c".into()],
        };
        for p in [
            pod("demo-seed-abc", "Job/demo-seed"),
            pod("demo-seed-extra-xyz", "Job/demo-seed-extra"),
        ] {
            s.pods.insert(("apps".into(), p.name.clone()), p);
        }
        for (key, line) in [
            ("demo-seed-abc/c", "listed pod"),
            ("demo-seed-gone/c", "deleted pod"),
            ("demo-seed-extra-xyz/c", "another job"),
            ("other-1/c", "unrelated"),
        ] {
            s.logs.insert(key.into(), [line.to_string()].into());
        }
        let got = job_cause(&s, "hook demo-seed", "demo-seed");
        assert_eq!(
            got,
            [
                "hook demo-seed: pod demo-seed-abc: Failed: Error (exit 1)",
                "hook demo-seed: log demo-seed-abc/c: listed pod",
                "hook demo-seed: log demo-seed-gone/c: deleted pod",
            ]
        );
    }

    #[test]
    fn skipped_steps_count_as_done_for_only_modes() {
        let v = decide(&state(
            &[
                (Preflight, ok()),
                (Upgrade, skipped()),
                (Rollout, skipped()),
                (Init, ok()),
            ],
            &[],
        ));
        assert_eq!(v.code, 0);
        assert_eq!(v.reason, "every step succeeded");
    }

    #[test]
    fn evidence_names_blockers_failed_and_skipped_hooks() {
        let mut s = state(
            &[(Preflight, ok()), (Upgrade, failed("helm exited 1"))],
            &[workload("web", false, false)],
        );
        let hook = |name: &str, phase: HookPhase| HookView {
            name: name.into(),
            kind: "Job".into(),
            events: vec!["post-upgrade".into()],
            weight: 0,
            phase,
            started_at: None,
            completed_at: None,
        };
        s.apply(
            &Event::Hooks {
                hooks: vec![
                    hook("init", HookPhase::Succeeded),
                    hook("seed", HookPhase::Failed),
                    hook("later", HookPhase::Skipped),
                    hook("stuck", HookPhase::Running),
                ],
            },
            2.0,
            "t",
        );
        let v = decide(&s);
        assert_eq!(v.code, 1);
        assert!(
            v.evidence
                .contains(&"hook seed (post-upgrade) failed".to_string()),
            "{:?}",
            v.evidence
        );
        assert!(
            v.evidence
                .contains(&"hook later (post-upgrade) skipped: never ran".to_string()),
            "{:?}",
            v.evidence
        );
        assert!(
            v.evidence.contains(&"hook stuck left Running".to_string()),
            "{:?}",
            v.evidence
        );
        assert!(
            !v.evidence.iter().any(|e| e.contains("hook init")),
            "succeeded hooks are not problems"
        );
        assert!(
            v.evidence
                .iter()
                .any(|e| e.contains("Deployment/web not ready") && e.contains("CrashLoopBackOff"))
        );
    }

    #[test]
    fn rollback_is_suggested_after_a_failed_upgrade_only_when_it_wrote_a_revision() {
        let mut s = state(&[(Preflight, ok()), (Upgrade, failed("render error"))], &[]);
        s.revision = Some(4);
        assert_eq!(
            decide(&s).next,
            None,
            "nothing new was written: nothing to roll back"
        );
        s.revision = None;
        assert_eq!(decide(&s).next, None, "no record read: no suggestion");
        s.revision = Some(5);
        assert_eq!(
            decide(&s).next.as_deref(),
            Some("helm rollback demo 4 -n apps")
        );
        s.plan.context = Some("prod".into());
        assert_eq!(
            decide(&s).next.as_deref(),
            Some("helm rollback demo 4 -n apps --kube-context prod")
        );
        s.revision_before = None;
        assert_eq!(
            decide(&s).next,
            None,
            "a first install has nothing to roll back to"
        );
    }

    #[test]
    fn rollback_is_suggested_after_a_failed_rollout() {
        let mut s = state(
            &[
                (Preflight, ok()),
                (Upgrade, ok()),
                (Rollout, failed("timed out")),
            ],
            &[workload("web", false, false)],
        );
        s.revision = Some(5);
        let v = decide(&s);
        assert_eq!(v.next.as_deref(), Some("helm rollback demo 4 -n apps"));
    }

    #[test]
    fn rollback_names_the_last_deployed_revision_never_a_failed_one() {
        // Revisions 3 (deployed) and 4 (failed, an earlier run) before this run wrote 5.
        let mut s = state(&[(Preflight, ok()), (Upgrade, failed("timed out"))], &[]);
        s.deployed_before = Some(3);
        s.revision = Some(5);
        let v = decide(&s);
        assert_eq!(v.next.as_deref(), Some("helm rollback demo 3 -n apps"));
        assert!(
            !v.evidence
                .iter()
                .any(|e| e.contains("no deployed revision"))
        );
        // Nothing deployed before (an install that failed, then this upgrade): no command.
        s.deployed_before = None;
        s.plan.context = Some("prod".into());
        let v = decide(&s);
        assert_eq!(v.next, None);
        assert!(
            v.evidence.contains(
                &"no deployed revision of demo to roll back to (see helm history demo -n apps \
                  --kube-context prod)"
                    .to_string()
            ),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn a_multi_line_helm_error_is_whole_in_the_evidence() {
        let reason = "Error: UPGRADE FAILED: 2 errors occurred: * a * b";
        let mut s = state(&[(Preflight, ok()), (Upgrade, failed(reason))], &[]);
        s.helm.stderr_tail = vec![
            "a warning first".into(),
            "Error: UPGRADE FAILED: 2 errors occurred:".into(),
            "\t* a".into(),
            "\t* b".into(),
        ];
        let v = decide(&s);
        assert_eq!(v.reason, format!("upgrade failed: {reason}"));
        assert_eq!(
            v.evidence[..3],
            [
                "helm: Error: UPGRADE FAILED: 2 errors occurred:",
                "helm: * a",
                "helm: * b"
            ]
        );
        // A one-line error is the reason already; the evidence does not repeat it.
        s.helm.stderr_tail = vec!["Error: UPGRADE FAILED: timed out".into()];
        assert!(!decide(&s).evidence.iter().any(|e| e.starts_with("helm: ")));
    }

    #[test]
    fn a_blocker_outside_the_release_namespace_is_named_with_its_own() {
        let elsewhere = WorkloadView {
            namespace: "monitoring".into(),
            ..workload("exporter", false, false)
        };
        let v = decide(&state(
            &[
                (Step::Preflight, StepOutcome::Succeeded),
                (Step::Upgrade, StepOutcome::Succeeded),
                (Step::Rollout, StepOutcome::Succeeded),
            ],
            &[workload("web", false, true), elsewhere],
        ));
        assert_eq!(v.code, 1);
        assert!(
            v.reason
                .contains("Deployment/monitoring/exporter not ready"),
            "{}",
            v.reason
        );
        assert!(
            v.evidence[0].starts_with("Deployment/monitoring/exporter not ready: "),
            "{:?}",
            v.evidence
        );
    }
}

#[cfg(test)]
mod plan_tests {
    //! `--plan` / `--plan-only`: the plan step's say comes before every other step's.
    use super::*;
    use crate::engine::event::Event;
    use crate::engine::plan::{self, Plan};
    use crate::engine::state::PlanSummary;

    fn planned(
        plan_only: bool,
        outcomes: &[(Step, StepOutcome)],
        changes: Option<Plan>,
    ) -> DeployState {
        let mut s = DeployState::new(PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            plan: true,
            plan_only,
            ..Default::default()
        });
        if let Some(p) = changes {
            s.apply(&Event::Plan(p), 0.5, "t");
        }
        for (step, outcome) in outcomes {
            s.apply(
                &Event::StepEnded {
                    step: *step,
                    outcome: outcome.clone(),
                },
                1.0,
                "t",
            );
        }
        s
    }

    fn some_change() -> Plan {
        let new = plan::parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "apps",
            "t",
        )
        .expect("valid");
        plan::compare(Some(&Default::default()), &new, &Default::default())
    }

    fn skipped() -> StepOutcome {
        StepOutcome::Skipped {
            reason: "--plan-only: nothing written".into(),
        }
    }

    fn plan_only_run(changes: Plan) -> DeployState {
        use Step::*;
        planned(
            true,
            &[
                (Preflight, StepOutcome::Succeeded),
                (Plan, StepOutcome::Succeeded),
                (Upgrade, skipped()),
                (Rollout, skipped()),
                (Init, skipped()),
            ],
            Some(changes),
        )
    }

    #[test]
    fn plan_only_is_4_with_changes_and_0_without() {
        let v = decide(&plan_only_run(some_change()));
        assert_eq!((v.code, v.outcome), (4, Outcome::ChangesPending), "{v:?}");
        assert!(v.reason.starts_with("changes pending: 1 added"), "{v:?}");
        let v = decide(&plan_only_run(Plan::default()));
        assert_eq!((v.code, v.outcome), (0, Outcome::NoChanges), "{v:?}");
    }

    #[test]
    fn a_declined_plan_is_1_cancelled_plan_declined() {
        let mut s = planned(
            false,
            &[(Step::Preflight, StepOutcome::Succeeded)],
            Some(some_change()),
        );
        s.apply(&Event::PlanAnswer { approved: false }, 2.0, "t");
        s.apply(
            &Event::StepEnded {
                step: Step::Plan,
                outcome: StepOutcome::Skipped {
                    reason: "plan declined: nothing written".into(),
                },
            },
            2.0,
            "t",
        );
        let v = decide(&s);
        assert_eq!(
            (v.code, v.reason.as_str()),
            (1, "cancelled: plan declined"),
            "{v:?}"
        );
        assert_eq!(v.next, None, "nothing was written: nothing to roll back");
    }

    #[test]
    fn a_failed_plan_is_1_and_an_approved_one_leaves_the_verdict_to_the_deploy() {
        let s = planned(
            false,
            &[
                (Step::Preflight, StepOutcome::Succeeded),
                (
                    Step::Plan,
                    StepOutcome::Failed {
                        reason: "helm's dry run failed: boom".into(),
                    },
                ),
            ],
            None,
        );
        let v = decide(&s);
        assert_eq!(
            (v.code, v.reason.as_str()),
            (1, "plan failed: helm's dry run failed: boom")
        );
        let mut s = planned(
            false,
            &[
                (Step::Preflight, StepOutcome::Succeeded),
                (Step::Plan, StepOutcome::Succeeded),
            ],
            Some(some_change()),
        );
        s.apply(&Event::PlanAnswer { approved: true }, 2.0, "t");
        // The upgrade never reported: the deploy's own fail-closed rule speaks, not the plan.
        let v = decide(&s);
        assert_eq!(v.code, 1);
        assert!(v.reason.starts_with("upgrade did not report"), "{v:?}");
    }

    #[test]
    fn a_plan_that_never_ended_fails_closed() {
        let s = planned(false, &[(Step::Preflight, StepOutcome::Succeeded)], None);
        let v = decide(&s);
        assert_eq!(v.code, 1);
        assert!(v.reason.contains("plan did not report"), "{v:?}");
    }
}
