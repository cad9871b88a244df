//! The deploy as the views see it. [`DeployState::apply`] is the only place it changes.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::engine::event::{
    Event, HookView, KubeEventView, LeftLock, Level, LockView, PodView, RollbackView, Step,
    StepOutcome, WorkloadKey, WorkloadView,
};
pub use crate::engine::model::PlanSummary;
use crate::engine::model::Verdict;
use crate::engine::model::event::{NewerRevision, RollbackStatus};

/// Helm output lines kept for the screen and the report.
const HELM_LINES_KEPT: usize = 5_000;
/// Log lines kept per container: by the state, and by the screen for the container it follows.
pub const LOG_LINES_KEPT: usize = 2_000;
const EVENTS_KEPT: usize = 500;

/// Every [`DeployState::apply`] in this process. Always counted (one relaxed add per event is
/// nothing beside the fold itself) rather than behind a test feature: the end-to-end tests
/// read it from the very binary a user runs, through `HELMDECK_TEST_APPLIED`.
static APPLIED: AtomicU64 = AtomicU64::new(0);

/// How many events this process folded into a deploy state: one per event when the state has
/// one owner (the tests' check that nothing folds a second copy).
#[doc(hidden)]
pub fn applied() -> u64 {
    APPLIED.load(Ordering::Relaxed)
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StepState {
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    /// Seconds since the deploy started.
    pub started_secs: Option<f64>,
    pub ended_secs: Option<f64>,
    pub outcome: Option<StepOutcome>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NoteLine {
    pub step: Step,
    pub level: Level,
    pub text: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HelmState {
    pub lines: VecDeque<(bool, String)>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub cancelled: bool,
    pub exited: bool,
    pub stderr_tail: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct DeployState {
    pub plan: PlanSummary,
    pub steps: BTreeMap<Step, StepState>,
    pub notes: Vec<NoteLine>,
    pub revision_before: Option<i64>,
    /// The newest revision that was `deployed` before this run (never a failed one).
    pub deployed_before: Option<i64>,
    pub revision: Option<i64>,
    pub chart_version: Option<String>,
    pub helm: HelmState,
    pub hooks: Vec<HookView>,
    /// By (kind, namespace, name).
    pub workloads: BTreeMap<WorkloadKey, WorkloadView>,
    /// By (namespace, name).
    pub pods: BTreeMap<(String, String), PodView>,
    pub events: VecDeque<KubeEventView>,
    pub logs: BTreeMap<String, VecDeque<String>>,
    /// Watches currently failing, by what they watch.
    pub degraded: BTreeMap<String, String>,
    pub verdict: Option<Verdict>,
    /// The uid of the Job the init step created (none before it did, or when it never ran).
    pub init_uid: Option<String>,
    /// That Job's run label (`helmdeck.io/run`), when the event said it.
    pub init_run: Option<String>,
    /// What the upgrade would change, once the plan step rendered it.
    pub changes: Option<crate::engine::plan::Plan>,
    /// The operator said `n` to the plan: nothing was written.
    pub plan_declined: bool,
    /// Seconds since start, as of the last event (the clock the state was last told).
    pub now_secs: f64,
    /// helmdeck's rollback of this run's failed revision, once started.
    pub rollback: Option<RollbackView>,
    /// The stuck lock preflight stopped on.
    pub lock: Option<LockView>,
    /// A revision another operation wrote after this run's failed one (no rollback over it).
    pub newer: Option<NewerRevision>,
    /// A watch saw the release uninstalled: its records are gone.
    pub uninstalled: bool,
    /// A `pending-*` revision this run's helm left as the release's latest.
    pub left_lock: Option<LeftLock>,
}

impl DeployState {
    pub fn new(plan: PlanSummary) -> Self {
        DeployState {
            plan,
            ..Default::default()
        }
    }

    /// The wall time this state stamped on `event` when it is a step transition (what the
    /// report shows): a mirror or a record replays it exactly instead of recomputing it.
    pub fn stamped_wall(&self, event: &Event) -> Option<String> {
        match event {
            Event::StepStarted { step } => self.steps.get(step).and_then(|s| s.started_at.clone()),
            Event::StepEnded { step, .. } => self.steps.get(step).and_then(|s| s.ended_at.clone()),
            _ => None,
        }
    }

    /// Applies one event. `at_secs` is the time since the deploy started; `wall` the RFC 3339 time.
    pub fn apply(&mut self, event: &Event, at_secs: f64, wall: &str) {
        APPLIED.fetch_add(1, Ordering::Relaxed);
        self.now_secs = at_secs;
        match event {
            Event::StepStarted { step } => {
                let s = self.steps.entry(*step).or_default();
                s.started_at = Some(wall.to_string());
                s.started_secs = Some(at_secs);
            }
            Event::StepEnded { step, outcome } => {
                let s = self.steps.entry(*step).or_default();
                s.ended_at = Some(wall.to_string());
                s.ended_secs = Some(at_secs);
                s.outcome = Some(outcome.clone());
            }
            Event::Rollback(view) => {
                // A rollback asked for after the verdict (the screen's `R`) reopens the deploy:
                // the verdict is decided again once it ends.
                if view.status == RollbackStatus::Running {
                    self.verdict = None;
                }
                self.rollback = Some(view.clone());
            }
            Event::Lock(view) => self.lock = Some(view.clone()),
            Event::NewerRevision(newer) => self.newer = Some(newer.clone()),
            Event::Uninstalled => self.uninstalled = true,
            Event::LeftLock(left) => self.left_lock = Some(left.clone()),
            Event::Note { step, level, text } => self.notes.push(NoteLine {
                step: *step,
                level: *level,
                text: text.clone(),
            }),
            Event::Release { .. } => self.apply_release(event),
            Event::HelmLine { stderr, text } => {
                if self.helm.lines.len() >= HELM_LINES_KEPT {
                    self.helm.lines.pop_front();
                }
                self.helm.lines.push_back((*stderr, text.clone()));
            }
            Event::HelmExited {
                code,
                signal,
                cancelled,
                stderr_tail,
            } => {
                self.helm.exited = true;
                self.helm.exit_code = *code;
                self.helm.signal = *signal;
                self.helm.cancelled = *cancelled;
                self.helm.stderr_tail = stderr_tail.clone();
            }
            Event::Hooks { hooks } => self.hooks = hooks.clone(),
            Event::Plan(plan) => self.changes = Some(plan.clone()),
            Event::PlanAnswer { approved } => self.plan_declined = !approved,
            Event::Workload(w) => {
                self.workloads.insert(w.key(), w.clone());
            }
            Event::WorkloadGone {
                kind,
                namespace,
                name,
            } => {
                self.workloads
                    .remove(&(kind.clone(), namespace.clone(), name.clone()));
            }
            Event::Pod(p) => {
                self.pods
                    .insert((p.namespace.clone(), p.name.clone()), p.clone());
            }
            Event::PodGone { namespace, name } => {
                self.pods.remove(&(namespace.clone(), name.clone()));
            }
            Event::KubeEvent(e) => self.apply_kube_event(e),
            Event::WatchDegraded { what, error } => {
                self.degraded.insert(what.clone(), error.clone());
            }
            Event::WatchRecovered { what } => {
                self.degraded.remove(what);
            }
            Event::Log {
                pod,
                container,
                text,
            } => {
                let lines = self.logs.entry(format!("{pod}/{container}")).or_default();
                if lines.len() >= LOG_LINES_KEPT {
                    lines.pop_front();
                }
                lines.push_back(text.clone());
            }
            Event::InitJob { uid, run, .. } => {
                self.init_uid = Some(uid.clone());
                self.init_run = run.clone();
            }
            Event::Verdict(v) => self.verdict = Some(v.clone()),
        }
    }

    /// What the release record said: each field only when this event knows it, so a later
    /// event that does not know the chart keeps the one an earlier event said.
    fn apply_release(&mut self, event: &Event) {
        let Event::Release {
            revision_before,
            deployed_before,
            revision,
            chart,
        } = event
        else {
            return;
        };
        if revision_before.is_some() {
            self.revision_before = *revision_before;
        }
        if deployed_before.is_some() {
            self.deployed_before = *deployed_before;
        }
        if revision.is_some() {
            self.revision = *revision;
        }
        if chart.is_some() {
            self.chart_version = chart.clone();
        }
    }

    /// A Kubernetes event seen again (the same object, reason and message: its count grew)
    /// replaces the one kept; a new one is kept, the oldest dropped past [`EVENTS_KEPT`].
    fn apply_kube_event(&mut self, e: &KubeEventView) {
        if let Some(existing) = self.events.iter_mut().find(|x| {
            x.object == e.object
                && x.namespace == e.namespace
                && x.reason == e.reason
                && x.message == e.message
        }) {
            *existing = e.clone();
        } else {
            if self.events.len() >= EVENTS_KEPT {
                self.events.pop_front();
            }
            self.events.push_back(e.clone());
        }
    }

    pub fn outcome(&self, step: Step) -> Option<&StepOutcome> {
        self.steps.get(&step).and_then(|s| s.outcome.as_ref())
    }

    /// Whether the workloads live in more than one namespace (then the views name each one's).
    pub fn many_namespaces(&self) -> bool {
        let mut namespaces = self.workloads.values().map(|w| w.namespace.as_str());
        namespaces
            .next()
            .is_some_and(|first| namespaces.any(|n| n != first))
    }

    /// Gating (not optional) workloads, by kind then namespace and name.
    pub fn gating(&self) -> impl Iterator<Item = &WorkloadView> {
        self.workloads.values().filter(|w| !w.optional)
    }

    pub fn optional(&self) -> impl Iterator<Item = &WorkloadView> {
        self.workloads.values().filter(|w| w.optional)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_keeps_one_entry_per_workload_and_caps_helm_lines() {
        let mut s = DeployState::default();
        let w = WorkloadView {
            kind: "Deployment".into(),
            namespace: "apps".into(),
            name: "web".into(),
            optional: false,
            optional_because: None,
            ready: false,
            failed: false,
            message: "waiting".into(),
            desired: 2,
            ready_replicas: 0,
            updated: 0,
            available: 0,
            generation: 1,
            created: None,
            pod_causes: vec![],
            evidence: vec![],
            notes: vec![],
        };
        s.apply(&Event::Workload(w.clone()), 1.0, "t");
        s.apply(
            &Event::Workload(WorkloadView { ready: true, ..w }),
            2.0,
            "t",
        );
        assert_eq!(s.workloads.len(), 1);
        assert!(s.gating().all(|w| w.ready));
        for i in 0..(HELM_LINES_KEPT + 5) {
            s.apply(
                &Event::HelmLine {
                    stderr: false,
                    text: i.to_string(),
                },
                3.0,
                "t",
            );
        }
        assert_eq!(s.helm.lines.len(), HELM_LINES_KEPT);
        assert_eq!(s.helm.lines.front().unwrap().1, "5");
    }

    #[test]
    fn a_workload_is_its_kind_namespace_and_name() {
        let mut s = DeployState::default();
        let w = |namespace: &str| WorkloadView::ready_web(namespace, "m");
        s.apply(&Event::Workload(w("apps")), 1.0, "t");
        assert!(!s.many_namespaces());
        s.apply(&Event::Workload(w("monitoring")), 1.0, "t");
        assert_eq!(s.workloads.len(), 2, "one name, two namespaces");
        assert!(s.many_namespaces());
        s.apply(
            &Event::WorkloadGone {
                kind: "Deployment".into(),
                namespace: "monitoring".into(),
                name: "web".into(),
            },
            2.0,
            "t",
        );
        let left: Vec<&str> = s.workloads.values().map(|w| w.namespace.as_str()).collect();
        assert_eq!(left, ["apps"]);
        let pod = |namespace: &str| PodView {
            name: "web-0".into(),
            namespace: namespace.into(),
            owner: "Deployment/web".into(),
            phase: "Running".into(),
            ready: true,
            restarts: 0,
            node: None,
            current: true,
            causes: vec![],
            containers: vec![],
            container_states: Vec::new(),
        };
        s.apply(&Event::Pod(pod("apps")), 3.0, "t");
        s.apply(&Event::Pod(pod("monitoring")), 3.0, "t");
        assert_eq!(s.pods.len(), 2);
        s.apply(
            &Event::PodGone {
                namespace: "apps".into(),
                name: "web-0".into(),
            },
            4.0,
            "t",
        );
        assert_eq!(
            s.pods.keys().collect::<Vec<_>>(),
            [&("monitoring".to_string(), "web-0".to_string())]
        );
    }
}
