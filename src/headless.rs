//! Plain-line output for CI and agents: one line per transition, then a summary of every
//! problem seen and the verdict. All cluster text is already sanitized by the engine.

use std::collections::BTreeMap;
use std::io::Write;

use color_eyre::eyre::Result;
use tokio_util::sync::CancellationToken;

use crate::engine::event::{
    Event, HookView, KubeEventView, Level, RollbackView, StepOutcome, WorkloadKey, WorkloadView,
};
use crate::engine::run::{self, Prepared};
use crate::engine::scrub::Scrub;
use crate::engine::state::DeployState;
use crate::engine::verdict::Verdict;
use crate::helm::hooks::HookPhase;
use crate::helm::process::exit_words;
use crate::signals::Signals;

/// Remembers what was printed so only transitions print.
#[derive(Default)]
pub struct Headless {
    workloads: BTreeMap<WorkloadKey, (bool, bool, String)>,
    /// A hash of each Warning printed (object, reason, message): 8 bytes each rather than the
    /// strings, so thousands of pods' distinct warnings keep what is held small.
    warnings: std::collections::HashSet<u64>,
    hooks: BTreeMap<String, HookPhase>,
    /// The release's values, masked in what is printed as in the record: headless output is
    /// what CI keeps in its job log.
    scrub: Scrub,
}

fn stamp(state: &DeployState) -> String {
    format!("[{:>6.1}s]", state.now_secs)
}

impl Headless {
    /// Formats the lines an event produces (empty when it is not a transition). Only the events
    /// that repeat a known state (hooks, workloads, warnings) consult what was printed; the rest
    /// are formatted by free functions.
    pub fn lines(&mut self, event: &Event, state: &DeployState) -> Vec<String> {
        let t = stamp(state);
        let home = &state.plan.namespace;
        match event {
            Event::StepStarted { step } => vec![format!("{t} {:<9} started", step.name())],
            Event::StepEnded { step, outcome } => {
                vec![format!("{t} {:<9} {}", step.name(), outcome_words(outcome))]
            }
            Event::Note { step, level, text } => {
                vec![format!(
                    "{t} {:<9} {}{text}",
                    step.name(),
                    level_mark(*level)
                )]
            }
            Event::Rollback(r) => vec![rollback_line(&t, r)],
            Event::HelmLine { stderr, text } => {
                vec![format!(
                    "{t} helm {} {}",
                    if *stderr { "!" } else { "│" },
                    crate::text::plain(text)
                )]
            }
            Event::HelmExited {
                code,
                signal,
                cancelled,
                ..
            } => {
                let how = exit_words(*code, *signal);
                vec![format!(
                    "{t} helm exited ({how}{})",
                    if *cancelled { ", cancelled" } else { "" }
                )]
            }
            Event::Hooks { hooks } => self.hook_lines(&t, hooks),
            Event::Workload(w) => self.workload_line(&t, w, home).into_iter().collect(),
            Event::KubeEvent(e) if e.kind == "Warning" => {
                self.warning_line(&t, e, home).into_iter().collect()
            }
            Event::WatchDegraded { what, error } => {
                vec![format!("{t} watch     {what} failing (retrying): {error}")]
            }
            Event::WatchRecovered { what } => vec![format!("{t} watch     {what} re-synced")],
            Event::Log {
                pod,
                container,
                text,
            } => vec![format!("{t} log {pod}/{container} │ {text}")],
            Event::Plan(plan) => plan_lines(&t, plan, home),
            Event::Verdict(v) => verdict_lines(v),
            _ => vec![],
        }
    }

    /// One line per hook whose phase changed since the last list (the engine resends them all);
    /// hooks not in this run are never printed.
    fn hook_lines(&mut self, t: &str, hooks: &[HookView]) -> Vec<String> {
        hooks
            .iter()
            .filter(|h| h.phase != HookPhase::NotInThisRun)
            .filter(|h| self.hooks.insert(h.name.clone(), h.phase) != Some(h.phase))
            .map(|h| {
                format!(
                    "{t} hook      {} {} ({}, weight {}): {}",
                    h.kind,
                    h.name,
                    h.events.join(","),
                    h.weight,
                    h.phase
                )
            })
            .collect()
    }

    /// The workload's line when its readiness, failure or message changed (`None` otherwise: a
    /// resent unchanged workload prints nothing).
    fn workload_line(&mut self, t: &str, w: &WorkloadView, home: &str) -> Option<String> {
        let key = w.key();
        let now = (w.ready, w.failed, w.message.clone());
        if self.workloads.get(&key) == Some(&now) {
            return None;
        }
        self.workloads.insert(key, now);
        let mark = w.standing().glyph();
        let optional = if w.optional { " [optional]" } else { "" };
        let causes = if w.pod_causes.is_empty() || w.ready {
            String::new()
        } else {
            format!(" · {}", w.pod_causes.join("; "))
        };
        // During a roll the ready count alone misleads (old pods are ready too).
        let updated = if w.updated < w.desired && !w.ready {
            format!(", {}/{} updated", w.updated, w.desired)
        } else {
            String::new()
        };
        Some(format!(
            "{t} rollout   {mark} {}{optional} {}/{} ready{updated} · {}{causes}",
            w.reference(home),
            w.ready_replicas,
            w.desired,
            w.message
        ))
    }

    /// A Warning event's line, once per object, reason and message (the cluster repeats them).
    fn warning_line(&mut self, t: &str, e: &KubeEventView, home: &str) -> Option<String> {
        // An object outside the release namespace is named with its own.
        let object = match e.object.split_once('/') {
            Some((kind, name)) => crate::engine::event::reference(kind, &e.namespace, name, home),
            None => e.object.clone(),
        };
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::hash::DefaultHasher::new();
            (&object, &e.reason, &e.message).hash(&mut h);
            h.finish()
        };
        if !self.warnings.insert(key) {
            return None;
        }
        Some(format!(
            "{t} event     {object} {}: {}",
            e.reason, e.message
        ))
    }

    /// A printer that masks the release's values as the record does.
    pub fn masking(scrub: Scrub) -> Headless {
        Headless {
            scrub,
            ..Headless::default()
        }
    }

    /// The lines of `event` with the release's values masked: the event masked as the record
    /// masks it (names, kinds and namespaces whole), else, when that masked form no longer
    /// reads as an event, each line masked as text.
    pub fn masked_lines(&mut self, event: &Event, state: &DeployState) -> Vec<String> {
        // The plan's diff is the preview of the values' changes, asked for with --plan (its
        // Secret data is masked in the plan itself); the record keeps no diff to mask.
        if matches!(event, Event::Plan(_)) {
            return self.lines(event, state);
        }
        let mut value = serde_json::to_value(event).unwrap_or_default();
        self.scrub.value(&mut value);
        match serde_json::from_value::<Event>(value) {
            Ok(masked) => self.lines(&masked, state),
            Err(_) => {
                let lines = self.lines(event, state);
                lines.iter().map(|l| self.scrub.text(l)).collect()
            }
        }
    }

    pub fn print(&mut self, event: &Event, state: &DeployState) {
        let lines = self.masked_lines(event, state);
        if lines.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        for line in lines {
            // A closed stdout (piped into `head`) must not abort the deploy.
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
}

/// How a step ended, in the words of its line.
fn outcome_words(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Succeeded => "succeeded".to_string(),
        StepOutcome::Failed { reason } => format!("FAILED: {reason}"),
        StepOutcome::Skipped { reason } => format!("skipped: {reason}"),
        StepOutcome::Cancelled => "cancelled".to_string(),
    }
}

/// The prefix a note's level puts before its text (none for information).
fn level_mark(level: Level) -> &'static str {
    match level {
        Level::Info => "",
        Level::Warn => "warning: ",
        Level::Error => "error: ",
    }
}

/// helmdeck's own rollback: the revisions, the status, what it wrote and why.
fn rollback_line(t: &str, r: &RollbackView) -> String {
    let written = r
        .revision
        .map_or(String::new(), |v| format!(", wrote revision {v}"));
    let why = r
        .reason
        .as_deref()
        .map_or(String::new(), |w| format!(": {w}"));
    format!(
        "{t} rollback  revision {} -> {}: {}{written}{why}",
        r.from, r.to, r.status
    )
}

/// The closing summary: a blank line, every problem seen, the verdict and what to do next.
fn verdict_lines(v: &Verdict) -> Vec<String> {
    let mut out = vec![String::new()];
    if !v.evidence.is_empty() {
        out.push("problems:".into());
        out.extend(v.evidence.iter().map(|e| format!("  - {e}")));
    }
    out.push(format!(
        "verdict: {} (exit {}): {}",
        v.outcome.title(),
        v.code(),
        v.reason
    ));
    if let Some(next) = &v.next {
        out.push(format!("next: {next}"));
    }
    out
}

/// The plan as lines: one per object with its marker and tags, then its diff indented (Secret
/// values are masked in the plan itself).
pub fn plan_lines(t: &str, plan: &crate::engine::plan::Plan, home: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !plan.has_changes() {
        out.push(format!("{t} plan      no changes"));
    }
    for object in &plan.objects {
        let tags = object.tags();
        let tags = if tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", tags.join("; "))
        };
        out.push(format!(
            "{t} plan      {} {}{tags}",
            object.change.marker(),
            object.reference(home)
        ));
        out.extend(object.diff.lines().map(|l| format!("    {l}")));
    }
    out
}

/// Cancelled at the process's first SIGINT, SIGTERM or SIGHUP, which is said once on stderr.
/// One listener for the process: each `--follow` pass used to install its own and keep it (a
/// signal between two passes must still stop the watch), so a follow grew by a listener and
/// its task every revision (≈ 40 KB each, docs/benchmarks.md). A pass that starts after the
/// signal starts cancelled.
fn signalled(said: &'static str) -> Result<CancellationToken> {
    static SIGNALLED: std::sync::Mutex<Option<CancellationToken>> = std::sync::Mutex::new(None);
    let mut held = SIGNALLED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(token) = held.as_ref() {
        return Ok(token.clone());
    }
    let mut signals = Signals::install_with_hangup()?;
    let token = CancellationToken::new();
    let on_signal = token.clone();
    tokio::spawn(async move {
        signals.recv().await;
        // After a hang-up stderr may be gone: a failed write must not stop the cancel.
        let _ = writeln!(std::io::stderr(), "{said}");
        on_signal.cancel();
    });
    *held = Some(token.clone());
    Ok(token)
}

/// The deploy in plain lines. SIGINT, SIGTERM and SIGHUP cancel it (a CI job's runner or a
/// closed terminal sends the last): helm gets one SIGTERM, never SIGKILL, and is waited for,
/// so the release ends `failed`, not `pending-*`; the run ends at its verdict. A watch (which
/// runs no helm) just stops.
///
/// `tap` (the record) sees every event just after its lines are printed, so a record cut by a
/// kill never holds a line the run did not show; `lines` false prints nothing (`--events -`
/// owns standard output then).
pub async fn run(
    prepared: Prepared,
    cancel: CancellationToken,
    mut tap: impl FnMut(&Event, &DeployState) + Send + 'static,
    lines: bool,
) -> Result<DeployState> {
    let watching = prepared.plan.watch;
    // A watch runs no helm: stopping it touches nothing in the cluster.
    let said = if watching.is_some() {
        "helmdeck watch: stopping the watch (the cluster is left as it is)"
    } else {
        "helmdeck: cancelling (helm gets SIGTERM and is waited for)"
    };
    let signalled = signalled(said)?;
    // This pass is cancelled by a signal for as long as it runs; the forwarder ends with it.
    let pass_over = CancellationToken::new();
    let _pass_over = pass_over.clone().drop_guard();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = signalled.cancelled() => on_signal.cancel(),
            () = pass_over.cancelled() => {}
        }
    });
    let value_args = prepared.plan.value_args_with_extra();
    let mut printer = Headless::masking(Scrub::of_helm_args(&value_args));
    let stopped = cancel.clone();
    run::deploy(prepared, cancel, |event, state| {
        // `watch --follow` stopped while waiting for the next revision: this pass judged
        // nothing, its cancel is no verdict; the last verdict stands (the caller says so).
        let left_waiting = watching.is_some_and(|w| w.after.is_some())
            && state.revision.is_none()
            && stopped.is_cancelled();
        if lines && !left_waiting {
            printer.print(event, state);
        }
        tap(event, state);
    })
    .await
}

/// After a headless run on GitHub Actions (`GITHUB_ACTIONS=true`): [`github_actions`] from
/// `state`. Not after `--events -`, whose stdout carries the record alone.
pub fn on_github_actions(state: &DeployState) {
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        github_actions(state, std::env::var_os("GITHUB_STEP_SUMMARY").as_deref());
    }
}

/// On GitHub Actions: the annotations after the verdict lines, and the job summary appended to
/// the file the runner names (appending is the runner's protocol: other steps write there too).
/// A summary that cannot be written is said on stderr; it never changes the verdict's code.
pub fn github_actions(state: &DeployState, summary: Option<&std::ffi::OsStr>) {
    {
        let mut out = std::io::stdout().lock();
        for line in crate::gha::annotations(state) {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
    let Some(path) = summary.filter(|p| !p.is_empty()) else {
        return;
    };
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(crate::gha::summary(state).as_bytes()));
    if let Err(e) = appended {
        let _ = writeln!(
            std::io::stderr(),
            "helmdeck: appending the job summary to $GITHUB_STEP_SUMMARY: {e}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{HookView, KubeEventView, WorkloadView};
    use crate::engine::state::PlanSummary;

    fn workload(namespace: &str) -> WorkloadView {
        WorkloadView::ready_web(namespace, "done")
    }

    /// During a roll the line says how many are updated, so "2/2 ready" with one pod of the
    /// new revision is not read as done.
    #[test]
    fn a_rolling_workload_shows_updated_of_desired_beside_ready() {
        let state = DeployState::new(PlanSummary {
            namespace: "apps".into(),
            ..PlanSummary::default()
        });
        let rolling = WorkloadView {
            ready: false,
            desired: 2,
            ready_replicas: 2,
            updated: 1,
            message: "rolling".into(),
            ..workload("apps")
        };
        assert_eq!(
            Headless::default().lines(&Event::Workload(rolling), &state),
            ["[   0.0s] rollout   ◐ Deployment/web 2/2 ready, 1/2 updated · rolling"]
        );
    }

    /// Headless output is a CI job's log: a release value is masked there as in the record,
    /// while a workload whose name equals a masked value keeps its name (the event is masked as
    /// the record masks it, names whole).
    #[test]
    fn printed_lines_mask_the_release_values_but_never_a_name() {
        let state = DeployState::new(PlanSummary {
            namespace: "apps".into(),
            ..PlanSummary::default()
        });
        let mut h = Headless::masking(Scrub::of_helm_args(&[
            "--set".into(),
            "auth.adminPassword=Xn4t-Pw".into(),
            "--set".into(),
            "db.host=trust-web".into(),
        ]));
        let notes = Event::HelmLine {
            stderr: false,
            text: "XNAT (user admin, password Xn4t-Pw) on trust-web".into(),
        };
        assert_eq!(
            h.masked_lines(&notes, &state),
            ["[   0.0s] helm │ XNAT (user admin, password ***) on ***"]
        );
        let hook = HookView {
            name: "trust-web".into(),
            kind: "Job".into(),
            events: vec!["post-install".into()],
            weight: 0,
            phase: HookPhase::Succeeded,
            started_at: None,
            completed_at: None,
        };
        assert_eq!(
            h.masked_lines(&Event::Hooks { hooks: vec![hook] }, &state),
            ["[   0.0s] hook      Job trust-web (post-install, weight 0): Succeeded"]
        );
    }

    /// One order for every renderer: an optional workload never reads as a failure, and one that
    /// rolled out reads as done (the `[optional]` tag says the rest).
    #[test]
    fn an_optional_workload_is_never_shown_failed() {
        use crate::engine::event::Standing;
        let mut w = workload("apps");
        w.optional = true;
        assert_eq!(w.standing(), Standing::Ready);
        w.ready = false;
        w.failed = true;
        assert_eq!(
            (w.standing(), w.standing().glyph()),
            (Standing::Optional, "░")
        );
        w.optional = false;
        assert_eq!(
            (w.standing(), w.standing().glyph()),
            (Standing::Failed, "✗")
        );
        w.failed = false;
        assert_eq!(w.standing(), Standing::Rolling);
    }

    /// Lines name a workload (or an event's object) outside the release namespace with its
    /// namespace, and one of each name per namespace is printed.
    #[test]
    fn a_warning_prints_once_per_object_reason_and_message() {
        let state = DeployState::new(PlanSummary {
            namespace: "apps".into(),
            ..PlanSummary::default()
        });
        let warning = |object: &str, message: &str| {
            Event::KubeEvent(KubeEventView {
                object: object.into(),
                namespace: "apps".into(),
                kind: "Warning".into(),
                reason: "BackOff".into(),
                message: message.into(),
                count: 1,
                last_seen: None,
            })
        };
        let mut h = Headless::default();
        assert_eq!(h.lines(&warning("pod/web-1", "m"), &state).len(), 1);
        assert!(
            h.lines(&warning("pod/web-1", "m"), &state).is_empty(),
            "repeated"
        );
        assert_eq!(h.lines(&warning("pod/web-1", "other"), &state).len(), 1);
        assert_eq!(h.lines(&warning("pod/web-2", "m"), &state).len(), 1);
    }

    #[test]
    fn lines_name_the_namespace_outside_the_release_namespace() {
        let state = DeployState::new(PlanSummary {
            namespace: "apps".into(),
            ..PlanSummary::default()
        });
        let mut h = Headless::default();
        let home = h.lines(&Event::Workload(workload("apps")), &state);
        assert_eq!(
            home,
            ["[   0.0s] rollout   ✓ Deployment/web 1/1 ready · done"]
        );
        let other = h.lines(&Event::Workload(workload("monitoring")), &state);
        assert_eq!(
            other,
            ["[   0.0s] rollout   ✓ Deployment/monitoring/web 1/1 ready · done"]
        );
        let event = |namespace: &str| {
            Event::KubeEvent(KubeEventView {
                object: "pod/web-1".into(),
                namespace: namespace.into(),
                kind: "Warning".into(),
                reason: "BackOff".into(),
                message: "m".into(),
                count: 1,
                last_seen: None,
            })
        };
        assert_eq!(
            h.lines(&event("apps"), &state),
            ["[   0.0s] event     pod/web-1 BackOff: m"]
        );
        assert_eq!(
            h.lines(&event("monitoring"), &state),
            ["[   0.0s] event     pod/monitoring/web-1 BackOff: m"]
        );
    }

    /// A hook line names the hook's kind, so a ServiceAccount that helm records as Succeeded
    /// does not read like a Job that ran.
    #[test]
    fn hook_lines_name_the_kind() {
        let state = DeployState::new(PlanSummary::default());
        let hook = |kind: &str, name: &str| HookView {
            name: name.into(),
            kind: kind.into(),
            events: vec!["pre-install".into(), "pre-upgrade".into()],
            weight: -5,
            phase: HookPhase::Succeeded,
            started_at: None,
            completed_at: None,
        };
        let mut h = Headless::default();
        let lines = h.lines(
            &Event::Hooks {
                hooks: vec![
                    hook("ServiceAccount", "demo-sa"),
                    hook("Job", "demo-migrate"),
                ],
            },
            &state,
        );
        assert_eq!(
            lines,
            [
                "[   0.0s] hook      ServiceAccount demo-sa (pre-install,pre-upgrade, weight -5): Succeeded",
                "[   0.0s] hook      Job demo-migrate (pre-install,pre-upgrade, weight -5): Succeeded",
            ]
        );
    }
}
