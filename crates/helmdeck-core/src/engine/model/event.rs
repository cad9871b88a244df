//! What the deploy steps report. Sources (helm, watchers, timers) only send events; one task
//! applies them to [`crate::engine::state::DeployState`]; the TUI and headless mode render.

use serde::{Deserialize, Serialize};

pub use crate::engine::model::reference;
use crate::engine::model::{Plan, Verdict};
use crate::helm::hooks::HookPhase;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    Preflight,
    /// Only with `--plan`/`--plan-only`; the steps every run shows are [`Step::ALL`].
    Plan,
    Upgrade,
    Rollout,
    Init,
    /// `--test`: `helm test` after a landed deploy. Not in [`Step::ALL`]: it runs only when
    /// asked, and the four-step timeline stays as it is otherwise.
    Test,
}

impl Step {
    pub const ALL: [Step; 4] = [Step::Preflight, Step::Upgrade, Step::Rollout, Step::Init];

    pub fn name(self) -> &'static str {
        match self {
            Step::Preflight => "preflight",
            Step::Plan => "plan",
            Step::Upgrade => "upgrade",
            Step::Rollout => "rollout",
            Step::Init => "init",
            Step::Test => "test",
        }
    }
}

/// helmdeck's rollback of this run's failed revision: which revision it left, which it went
/// back to, and how it ended. It never changes the verdict's code (the deploy failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollbackView {
    /// This run's failed revision.
    pub from: i64,
    /// The last deployed revision before it.
    pub to: i64,
    /// The revision `helm rollback` wrote, once read.
    pub revision: Option<i64>,
    pub status: RollbackStatus,
    /// Why it failed.
    pub reason: Option<String>,
}

/// A revision another operation wrote after this run's, found when the history was read again
/// at the verdict (or when a rollback was asked for): rolling back to the revision deployed
/// before this run would undo it, so no rollback is advised or offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct NewerRevision {
    /// This run's revision.
    pub ours: i64,
    /// The release's latest revision now.
    pub revision: i64,
    /// Its status (`deployed`, `pending-upgrade`, ...).
    pub status: String,
}

/// Where helmdeck's own `helm rollback` stands; the words are the report's and the record's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RollbackStatus {
    Running,
    /// Its rollout was tracked to ready.
    RolledBack,
    Failed,
}

impl std::fmt::Display for RollbackStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

impl RollbackStatus {
    /// The word the report and the screens show.
    pub fn word(self) -> &'static str {
        match self {
            RollbackStatus::Running => "running",
            RollbackStatus::RolledBack => "rolled-back",
            RollbackStatus::Failed => "failed",
        }
    }
}

/// The stuck lock preflight stopped on, as the TUI's `u` prompt shows it. The refusal and the
/// command are decided by the engine (the same guard as `--recover-lock`), so the screen only
/// shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockView {
    /// The pending revision and its status (`pending-upgrade`, ...).
    pub revision: i64,
    pub status: String,
    /// Its age as read at preflight (`12m ago`, `unknown age`).
    pub age: String,
    /// What its record says about the operation that wrote it (helm's `info.description`,
    /// `Preparing upgrade`), when readable.
    pub description: Option<String>,
    /// The last deployed revision, the rollback's target.
    pub last_deployed: Option<i64>,
    /// The exact command that clears it (`helm rollback ...`, or the record deletion helmdeck
    /// never runs).
    pub command: String,
    /// Why helmdeck will not clear it here (young lock, nothing deployed), or None.
    pub refusal: Option<String>,
}

/// A `pending-*` revision this run's own helm left as the release's latest (helm ended, by a
/// cancel or a kill, before it could finish: `helm rollback` handles no signal): the verdict
/// names it with the command that clears it, and the next deploy on this machine recognises it
/// from the record as its own, not another operator's deploy in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftLock {
    pub revision: i64,
    /// `pending-rollback`, `pending-upgrade`, `pending-install`.
    pub status: String,
    /// The revision's record Secret uid: a lock is matched by it, never by number alone.
    pub uid: String,
    /// The helm command that left it: `upgrade` or `rollback`.
    pub operation: String,
    /// That helm's pid and start stamp: a helm still alive under them is still at work.
    pub helm_pid: Option<u32>,
    pub helm_start: Option<String>,
    /// The revision the clearing rollback goes to: a rollback's own target (its pending
    /// revision copies it; the newest `deployed` one may be the failed upgrade it was undoing),
    /// else the newest deployed revision. None when nothing was ever deployed.
    pub to: Option<i64>,
    /// The exact command that clears it (`helm rollback …`, or the record deletion).
    pub fix: String,
}

/// A [`LeftLock`] found in one of this machine's records of earlier runs of the release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedLock {
    pub left: LeftLock,
    /// When that run started (the record header's RFC 3339 start).
    pub started: String,
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum StepOutcome {
    Succeeded,
    Failed {
        reason: String,
    },
    /// Did not need to run (init not configured, chart renders no init Job, `--only`).
    Skipped {
        reason: String,
    },
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// One workload of the release as the rollout step judges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadView {
    pub kind: String,
    /// Where it lives: from its object, else the release manifest, else the release namespace
    /// (charts with `namespaceOverride` place workloads outside `-n`).
    pub namespace: String,
    pub name: String,
    /// On the deny list (or annotated optional): reported, never gating.
    pub optional: bool,
    /// Why it is optional (`--optional demo-gpu-*`, `annotation helmdeck.io/optional`).
    pub optional_because: Option<String>,
    pub ready: bool,
    /// A terminal failure (ProgressDeadlineExceeded).
    pub failed: bool,
    /// kubectl's wording of where it stands.
    pub message: String,
    pub desired: i32,
    pub ready_replicas: i32,
    pub updated: i32,
    pub available: i32,
    pub generation: i64,
    pub created: Option<String>,
    /// Pod-level causes (`pod demo-web-x: CrashLoopBackOff (exit 1, 4 restarts)`).
    pub pod_causes: Vec<String>,
    /// Why it is not ready, as the verdict quotes it: the Warning events of its pods and
    /// controllers (deduplicated, capped) and its crashing container's last log lines. Gathered
    /// once the rollout wait ends for a gating workload that is not ready; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// Extra facts for the report (label missing, OnDelete, evidence stale).
    pub notes: Vec<String>,
}

/// Who a workload is, everywhere it is kept: (kind, namespace, name).
pub type WorkloadKey = (String, String, String);

/// Where a workload stands, in the one order every screen and line uses: ready first (an optional
/// workload that rolled out is done), then optional (it never gates, so it is never shown as a
/// failure), then failed, else still rolling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Ready,
    Optional,
    Failed,
    Rolling,
}

impl Standing {
    /// The glyph plain-text output shows (headless lines, inspect's text); the TUI draws its own.
    pub fn glyph(self) -> &'static str {
        match self {
            Standing::Ready => "✓",
            Standing::Optional => "░",
            Standing::Failed => "✗",
            Standing::Rolling => "◐",
        }
    }
}

impl WorkloadView {
    /// A rolled-out one-replica Deployment `web` for tests: each test changes what it is about.
    /// (Also for the renderers' tests in the `helmdeck` crate, through `test-support`.)
    #[cfg(any(test, feature = "test-support"))]
    pub fn ready_web(namespace: &str, message: &str) -> Self {
        WorkloadView {
            kind: "Deployment".into(),
            namespace: namespace.into(),
            name: "web".into(),
            optional: false,
            optional_because: None,
            ready: true,
            failed: false,
            message: message.into(),
            desired: 1,
            ready_replicas: 1,
            updated: 1,
            available: 1,
            generation: 1,
            created: None,
            pod_causes: vec![],
            evidence: vec![],
            notes: vec![],
        }
    }

    pub fn standing(&self) -> Standing {
        match (self.ready, self.optional, self.failed) {
            (true, _, _) => Standing::Ready,
            (_, true, _) => Standing::Optional,
            (_, _, true) => Standing::Failed,
            _ => Standing::Rolling,
        }
    }

    pub fn key(&self) -> WorkloadKey {
        (self.kind.clone(), self.namespace.clone(), self.name.clone())
    }

    /// How lines name it: `Kind/name` in the release namespace `home`, `Kind/namespace/name`
    /// outside it.
    pub fn reference(&self, home: &str) -> String {
        reference(&self.kind, &self.namespace, &self.name, home)
    }
}

/// One pod of a workload or Job, for drill-down and diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PodView {
    pub name: String,
    /// Its workload's namespace (or the Job's): logs are read there.
    pub namespace: String,
    /// `Deployment/demo-web`, `Job/demo-init`.
    pub owner: String,
    pub phase: String,
    pub ready: bool,
    pub restarts: i32,
    pub node: Option<String>,
    /// Belongs to the current revision (not an old ReplicaSet).
    pub current: bool,
    pub causes: Vec<String>,
    /// The app containers, in spec order.
    pub containers: Vec<String>,
    /// Every container with its state: the initContainers first, in the order they run, then
    /// the app containers. Empty in views made before initContainers were shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container_states: Vec<ContainerView>,
}

impl PodView {
    /// The containers whose logs can be read, in the order they run: initContainers first.
    pub fn log_containers(&self) -> Vec<&str> {
        if self.container_states.is_empty() {
            return self.containers.iter().map(String::as_str).collect();
        }
        self.container_states
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    }

    /// The container that failed the pod: the first, in the order they run (initContainers
    /// first), that ended non-zero or is backing off after doing so. None when the view does
    /// not say.
    pub fn failed_container(&self) -> Option<&str> {
        self.container_states
            .iter()
            .find(|c| {
                c.state.starts_with("terminated:")
                    || c.state.starts_with("waiting: CrashLoopBackOff")
            })
            .map(|c| c.name.as_str())
    }
}

/// One container of a pod as the drill-down lists it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContainerView {
    pub name: String,
    /// An initContainer (runs to completion before the app containers start).
    pub init: bool,
    /// `running`, `waiting: CrashLoopBackOff`, `terminated: Error (exit 1)`, `completed`, or
    /// `not started`.
    pub state: String,
    pub restarts: i32,
}

/// A failed Job's attempts as one cause: every pod it made (restartPolicy Never makes one per
/// failure) and every restart inside them (OnFailure restarts in the same pod) count, so a
/// Job with backoffLimit 6 is one line, not seven.
pub fn job_attempts(pods: usize, restarts: i64, last: &str) -> String {
    let attempts = i64::try_from(pods)
        .unwrap_or(i64::MAX)
        .saturating_add(restarts);
    let plural = |n: i64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{} ({}, {}), last: {last}",
        plural(attempts, "attempt"),
        plural(i64::try_from(pods).unwrap_or(i64::MAX), "pod"),
        plural(restarts, "restart")
    )
}

/// A Kubernetes Event about an object of the release.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KubeEventView {
    pub object: String,
    /// The namespace of the object it is about.
    pub namespace: String,
    pub kind: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
    pub last_seen: Option<String>,
}

/// A hook of the release as the record (or the live Job) shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookView {
    pub name: String,
    pub kind: String,
    pub events: Vec<String>,
    pub weight: i64,
    /// From the release record judged against this run, or from the live hook Job.
    pub phase: HookPhase,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    StepStarted {
        step: Step,
    },
    StepEnded {
        step: Step,
        outcome: StepOutcome,
    },
    /// A fact a step established (tool versions, cluster reachable, lock state, command run).
    Note {
        step: Step,
        level: Level,
        text: String,
    },
    /// The release and revision this deploy is about.
    Release {
        revision_before: Option<i64>,
        /// The newest revision whose status was `deployed` before this run (the rollback
        /// target); only preflight, which reads the history, sets it.
        deployed_before: Option<i64>,
        revision: Option<i64>,
        chart: Option<String>,
    },
    HelmLine {
        stderr: bool,
        text: String,
    },
    /// helmdeck's own rollback after this run's revision failed (`--rollback-on-failure`, `R`).
    Rollback(RollbackView),
    /// Preflight stopped on a stuck `pending-*` lock (what `u` offers to clear).
    Lock(LockView),
    /// Another operation wrote after this run's failed revision.
    NewerRevision(NewerRevision),
    /// A watch saw the release's records deleted (`helm uninstall`): no revision is left to
    /// roll back to, so the verdict advises none.
    Uninstalled,
    /// This run's helm left a `pending-*` revision as the release's latest.
    LeftLock(LeftLock),
    HelmExited {
        code: Option<i32>,
        signal: Option<i32>,
        cancelled: bool,
        stderr_tail: Vec<String>,
    },
    Hooks {
        hooks: Vec<HookView>,
    },
    Workload(WorkloadView),
    WorkloadGone {
        kind: String,
        namespace: String,
        name: String,
    },
    Pod(PodView),
    PodGone {
        namespace: String,
        name: String,
    },
    KubeEvent(KubeEventView),
    WatchDegraded {
        what: String,
        error: String,
    },
    WatchRecovered {
        what: String,
    },
    /// A line of a container log (the init Job's pods).
    Log {
        pod: String,
        container: String,
        text: String,
    },
    /// The init step created its Job: the report's init hook entry names it by uid.
    InitJob {
        name: String,
        uid: String,
        /// The Job's `helmdeck.io/run` label: the run that created it (this one, or the
        /// earlier run of this machine it attached to). A later run knows its own Jobs by it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<String>,
    },
    /// What the upgrade would change (`--plan`): the renderers only show it.
    Plan(Plan),
    /// The operator's answer to the plan (the TUI's `y`/`n`); headless never asks.
    PlanAnswer {
        approved: bool,
    },
    Verdict(Verdict),
}
