//! The verdict: one exit code that means one thing. A pure function of the state.
//!
//! - 0 `landed`: every step that ran succeeded and every gating workload is ready;
//! - 1 `failed`: helm, preflight or the rollout failed, was cancelled, or evidence is missing;
//! - 3 `live-init-incomplete`: the release is live and rolled out, only the init step failed;
//! - 0 `dry-run`: a dry run that went through; nothing was written, so nothing "landed".
//!
//! Fail closed: a step that never reported its end, or a "succeeded" rollout that the
//! workload evidence contradicts, is a failure, never a quiet pass.

use crate::engine::event::{Step, StepOutcome};
use crate::engine::model::event::RollbackStatus;
pub use crate::engine::model::{Outcome, Verdict};
use crate::engine::state::DeployState;
use crate::helm::hooks::HookPhase;

fn verdict(
    outcome: Outcome,
    reason: impl Into<String>,
    evidence: Vec<String>,
    next: Option<String>,
) -> Verdict {
    Verdict::new(outcome, reason, evidence, next)
}

/// The steps that must end well for the release to count as live.
const LIVE_STEPS: [Step; 3] = [Step::Preflight, Step::Upgrade, Step::Rollout];

pub fn decide(state: &DeployState) -> Verdict {
    let mut verdict = judge(state);
    if verdict.code() == 1
        && let Some(rollback) = &state.rollback
    {
        // The deploy failed either way: the rollback only says where the release stands now.
        match rollback.status {
            RollbackStatus::RolledBack => verdict
                .reason
                .push_str(&format!("; rolled back to {}", rollback.to)),
            _ => verdict.reason.push_str(&format!(
                "; rollback failed too: {}",
                rollback.reason.as_deref().unwrap_or("it did not finish")
            )),
        }
    }
    if let Some(left) = &state.left_lock {
        // helm stopped half-way and the release is locked by it: whatever else the next step
        // would be, clearing that lock comes first, and it is the one command printed.
        verdict.reason.push_str(&format!(
            "; helm {} left revision {} {}",
            left.operation, left.revision, left.status
        ));
        verdict.next = Some(left.fix.clone());
    }
    verdict
}

fn judge(state: &DeployState) -> Verdict {
    let mut evidence = evidence(state);
    if let Some(planned) = plan_verdict(state, &evidence) {
        return planned;
    }
    if let Some(failed) = live_step_failure(state, &mut evidence) {
        return failed;
    }
    if let Some(contradiction) = rollout_contradiction(state) {
        return verdict(Outcome::Failed, contradiction, evidence, None);
    }
    match state.outcome(Step::Init) {
        Some(StepOutcome::Succeeded) | Some(StepOutcome::Skipped { .. }) => landed(state, evidence),
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

/// The first step the release needs to be live (preflight, upgrade, rollout) that did not end
/// well, as the verdict; a step that never reported its end fails closed.
fn live_step_failure(state: &DeployState, evidence: &mut Vec<String>) -> Option<Verdict> {
    for step in LIVE_STEPS {
        let (reason, next) = match state.outcome(step) {
            Some(StepOutcome::Succeeded) | Some(StepOutcome::Skipped { .. }) => continue,
            Some(StepOutcome::Failed { reason }) => (
                format!("{} failed: {reason}", step.name()),
                next_after_failure(state, step, evidence),
            ),
            Some(StepOutcome::Cancelled) => (
                "cancelled".to_string(),
                next_after_failure(state, step, evidence),
            ),
            None => (
                format!(
                    "{} did not report an outcome (evidence missing)",
                    step.name()
                ),
                None,
            ),
        };
        return Some(verdict(
            Outcome::Failed,
            reason,
            std::mem::take(evidence),
            next,
        ));
    }
    None
}

/// `--test` ran after a landed deploy: a failing or unfinished test turns it to 1.
fn test_failure(state: &DeployState) -> Option<String> {
    match state.outcome(Step::Test) {
        Some(StepOutcome::Failed { reason }) => Some(format!("test failed: {reason}")),
        Some(StepOutcome::Cancelled) => Some("cancelled during test".into()),
        None if state.steps.contains_key(&Step::Test) => {
            Some("test did not report an outcome (evidence missing)".into())
        }
        _ => None,
    }
}

/// The release is live and its init ended well: landed (or a dry run, which wrote nothing),
/// unless `--test` says otherwise; the reason counts what the operator may want to know.
fn landed(state: &DeployState, evidence: Vec<String>) -> Verdict {
    if let Some(reason) = test_failure(state) {
        return verdict(Outcome::Failed, reason, evidence, None);
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

/// The cause of a failed Job (a hook's or the init Job): ONE line counting its attempts (every
/// pod it made, every restart in them) with the last pod's cause, then the last lines that pod
/// logged (and what pods deleted since left behind). A pod view carries no creation time, so
/// "last" is a pod still running if one is, else the one restarted most.
fn job_cause(state: &DeployState, label: &str, job: &str) -> Vec<String> {
    let owner = format!("Job/{job}");
    let mut out = Vec::new();
    let mine: Vec<&crate::engine::event::PodView> =
        state.pods.values().filter(|p| p.owner == owner).collect();
    let pods: Vec<&str> = mine.iter().map(|p| p.name.as_str()).collect();
    let last = mine.iter().max_by_key(|p| {
        (
            !matches!(p.phase.as_str(), "Failed" | "Succeeded"),
            p.restarts,
        )
    });
    if let Some(last) = last {
        let causes = if last.causes.is_empty() {
            last.phase.clone()
        } else {
            last.causes.join("; ")
        };
        let restarts: i64 = mine.iter().map(|p| i64::from(p.restarts)).sum();
        let words = crate::engine::event::job_attempts(
            mine.len(),
            restarts,
            &format!("pod {}: {causes}", last.name),
        );
        out.push(format!("{label}: {words}"));
    }
    // A pod deleted since (a hook's delete policy) still left its log behind; of the pods
    // still listed, only the last one's log is kept (earlier attempts said the same), and of
    // its containers the one that failed (an initContainer, when that is what failed).
    let prefix = format!("{job}-");
    let failed = last.and_then(|l| l.failed_container());
    let mut keys: Vec<&String> = state.logs.keys().collect();
    // The last pod's containers in the order they ran: initContainers first.
    let order = |key: &str| {
        last.and_then(|l| {
            let (pod, container) = key.split_once('/')?;
            (pod == l.name).then(|| l.log_containers().iter().position(|c| *c == container))?
        })
    };
    keys.sort_by_key(|k| (order(k).unwrap_or(usize::MAX), k.as_str()));
    for key in keys {
        let lines = &state.logs[key];
        let Some((pod, container)) = key.split_once('/') else {
            continue;
        };
        let is_last = last.is_some_and(|l| l.name == pod);
        if is_last && failed.is_some_and(|f| f != container) {
            continue;
        }
        let ours = is_last
            || (!pods.contains(&pod)
                && pod.starts_with(&prefix)
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
        // Why, under the workload's name: its crashing container's log, its Warning events.
        let shown = w.reference(&state.plan.namespace);
        out.extend(w.evidence.iter().map(|e| format!("{shown}: {e}")));
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
        // The release was uninstalled under a watch: no record is left, so no rollback (or
        // history) command can run.
        Step::Upgrade | Step::Rollout if state.uninstalled => None,
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
        // Another operation wrote after this run's revision: a rollback would undo theirs.
        Step::Upgrade | Step::Rollout if state.newer.is_some() => {
            let plan = &state.plan;
            let history = crate::advice::helm_history(
                &plan.release,
                &plan.namespace,
                plan.context.as_deref(),
            );
            if let Some(n) = &state.newer {
                evidence.push(format!(
                    "revision {} ({}) was written after this run's revision {} by another \
                     operation: not rolled back over it (see {history})",
                    n.revision, n.status, n.ours
                ));
            }
            Some(history)
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
mod tests;

#[cfg(test)]
mod plan_tests;
