//! What `helmdeck inspect` collects about a release: the facts every view renders (plain text,
//! JSON, and the TUI). Every string that came from the cluster is already sanitized
//! (`crate::text::plain`); nothing here holds release values (`config`) or Secret data.

use crate::helm::status::HistoryEntry;
use serde::Serialize;

use crate::engine::event::{KubeEventView, PodView, WorkloadView};
use crate::helm::status::HookRecord;

/// The post-mortem of one release, as of the moment it was read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inspection {
    pub release: String,
    pub namespace: String,
    /// `--revision`, when given.
    pub requested: Option<i64>,
    /// The revision inspected: the requested one, else the newest stored. `None` when the
    /// release has no records at all.
    pub revision: Option<i64>,
    /// Why the inspected revision cannot be shown (unreadable record, no such revision, no
    /// records, records not listable). `None` exactly when `info` is set.
    pub error: Option<String>,
    /// Every stored record, oldest first; unreadable ones carry their error.
    pub history: Vec<HistoryRow>,
    /// Set when the newest revision is `pending-*`: an operation holds the release lock.
    pub lock: Option<LockState>,
    /// The inspected revision, decoded.
    pub info: Option<RevisionInfo>,
    /// The inspected revision's hooks, in helm's execution order for its operation.
    pub hooks: Vec<InspectedHook>,
    /// The init Job of the newest run (or `--init-job`), when there is one to speak of.
    pub init_job: Option<InitJobView>,
    /// The release's live workloads, judged as the deploy step judges them.
    pub workloads: Vec<WorkloadView>,
    /// Pods of those workloads (current and old), for the drill-down.
    pub pods: Vec<PodView>,
    /// Events about those workloads, their ReplicaSets and pods.
    pub events: Vec<KubeEventView>,
    /// The inspected revision's manifest with every Secret's values replaced by `***`; only
    /// with `--show-manifest`.
    pub manifest: Option<String>,
    /// Evidence that could not be read (a list that failed, logs that could not be fetched...).
    pub warnings: Vec<String>,
}

impl Inspection {
    /// 0 when the inspected revision decoded; 1 when it cannot be read (or there is none).
    pub fn exit_code(&self) -> i32 {
        if self.info.is_some() { 0 } else { 1 }
    }

    /// `--revision N` named a revision the release does not store. Then nothing live is read:
    /// the live workloads belong to whatever revision is deployed, not to N, and listing them
    /// (or saying none were found) would read as N's.
    pub fn revision_absent(&self) -> bool {
        self.requested
            .is_some_and(|n| !self.history.iter().any(|r| r.revision == n))
    }
}

/// Which storage driver holds a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    Secret,
    #[serde(rename = "configmap")]
    ConfigMap,
}

impl Storage {
    /// The kubectl resource name (`kubectl delete secret …`).
    pub fn kubectl_name(self) -> &'static str {
        match self {
            Storage::Secret => "secret",
            Storage::ConfigMap => "configmap",
        }
    }
}

/// One stored revision: the columns of `helm history` (helm's own [`HistoryEntry`], read
/// through `Deref`), plus where it is stored and, when the record cannot be read, why (then
/// `status` comes from the storage object's labels and the other columns are empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryRow {
    #[serde(flatten)]
    pub entry: HistoryEntry,
    pub storage: Storage,
    /// The Secret or ConfigMap holding the record.
    pub object: String,
    /// Unix seconds of the object's last write (labels `modifiedAt`, else `createdAt`).
    pub written_at: Option<i64>,
    pub error: Option<String>,
}

impl std::ops::Deref for HistoryRow {
    type Target = HistoryEntry;

    fn deref(&self) -> &HistoryEntry {
        &self.entry
    }
}

impl std::ops::DerefMut for HistoryRow {
    fn deref_mut(&mut self) -> &mut HistoryEntry {
        &mut self.entry
    }
}

impl HistoryRow {
    /// ` (label status failed)` for an unreadable record whose storage labels name a status
    /// (empty when they name none): the only status such a row has.
    pub fn label_status(&self) -> String {
        if self.status.is_empty() {
            String::new()
        } else {
            format!(" (label status {})", self.status)
        }
    }
}

/// A `pending-*` newest revision: helm refuses every other operation until it is cleared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockState {
    pub revision: i64,
    /// `pending-install`, `pending-upgrade` or `pending-rollback`.
    pub status: String,
    /// When the pending operation started (the record's `last_deployed`, else its creation).
    pub since: Option<String>,
    pub age_seconds: Option<i64>,
    /// The newest deployed (or superseded) revision to roll back to.
    pub last_deployed: Option<i64>,
    /// The command that clears the lock (never run by helmdeck).
    pub command: String,
    /// One sentence for the operator.
    pub note: String,
}

/// The operation that wrote a revision, which decides the hook events that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Install,
    Upgrade,
    Rollback,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::Install => "install",
            Operation::Upgrade => "upgrade",
            Operation::Rollback => "rollback",
        }
    }

    /// The hook events of this operation: (before the apply, after it).
    pub fn events(self) -> (&'static str, &'static str) {
        match self {
            Operation::Install => ("pre-install", "post-install"),
            Operation::Upgrade => ("pre-upgrade", "post-upgrade"),
            Operation::Rollback => ("pre-rollback", "post-rollback"),
        }
    }
}

/// The inspected revision's own facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevisionInfo {
    pub revision: i64,
    pub status: String,
    pub description: String,
    /// `<name>-<version>` or `MISSING`.
    pub chart: String,
    pub app_version: String,
    pub first_deployed: Option<String>,
    pub last_deployed: Option<String>,
    pub operation: Operation,
    pub storage: Storage,
    pub object: String,
}

/// One hook of the inspected revision, with the live evidence of a hook that did not succeed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectedHook {
    /// The record's hook (its manifest is never kept: it may hold rendered values).
    pub record: HookRecord,
    /// Has an event of the revision's operation (else it belongs to test, delete, ... runs).
    pub in_this_run: bool,
    /// For a Failed, Running or Unknown Job or Pod hook: what the cluster still holds.
    pub live: Option<HookEvidence>,
}

/// The live hook object (a Job or a Pod) and its pods, logs and events.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HookEvidence {
    pub kind: String,
    pub name: String,
    /// False when the object no longer exists (deleted by a delete policy or a later run).
    pub found: bool,
    pub created: Option<String>,
    /// The Job's state (`Failed: BackoffLimitExceeded: …`, `Complete`, `Running`), or the
    /// hook Pod's phase.
    pub status: Option<String>,
    pub active: i32,
    pub succeeded: i32,
    pub failed: i32,
    pub pods: Vec<HookPod>,
    /// Events about the object and its pods, oldest first.
    pub events: Vec<KubeEventView>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HookPod {
    pub name: String,
    pub phase: String,
    pub node: Option<String>,
    pub created: Option<String>,
    /// Why it is not ready or failed (`Failed: Error (exit 1)`), as the deploy step words it.
    pub causes: Vec<String>,
    pub containers: Vec<ContainerEvidence>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContainerEvidence {
    pub name: String,
    pub init: bool,
    pub restarts: i32,
    /// `running`, `waiting: <reason>`, `terminated`, or `unknown`.
    pub state: String,
    /// `state.terminated`.
    pub terminated: Option<Termination>,
    /// `lastState.terminated` (the run before a restart).
    pub last_terminated: Option<Termination>,
    /// The last lines of the container's log (at most [`crate::inspect::evidence::LOG_TAIL`]).
    pub log: Vec<String>,
    /// The log is of the previous run (the current one had none).
    pub log_previous: bool,
    pub log_error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Termination {
    pub exit_code: i32,
    pub signal: Option<i32>,
    pub reason: Option<String>,
    /// The container's termination message (`terminationMessagePath`).
    pub message: Option<String>,
    pub finished_at: Option<String>,
}

/// The init Job as inspect shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InitJobView {
    pub name: String,
    /// The `helmdeck.io/run` label of the Job (none for a helm hook's Job).
    pub run: Option<String>,
    /// The live Job, its pods (containers, initContainers first, with log tails) and events.
    pub live: Option<HookEvidence>,
    /// The container that failed the newest pod, e.g. the initContainer `configure-xnat-web`.
    pub failed_container: Option<String>,
    /// Why there is no live Job to show (deleted after it succeeded, ...).
    pub note: Option<String>,
}
