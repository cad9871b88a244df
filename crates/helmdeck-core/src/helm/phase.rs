//! The state of one hook: what a release record, a live hook Job or a judged run says of it.
//! A leaf of `helm`: the record's types (`status`) and the judging (`hooks`) both read it.

use std::fmt;

/// The state of one hook, wherever helmdeck reads it: a release record's `last_run.phase`, a
/// live hook Job, or a recorded hook judged against the run that wrote the record. One type for
/// the verdict, the report, both screens and inspect, so a misspelt state cannot pass silently.
///
/// The serde names are the words the JSON report, the inspect JSON and the screens show; they
/// must not change (scripts read them).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum HookPhase {
    Succeeded,
    Failed,
    /// Helm stores this when it starts the hook. Judged against a run: still `Running` in the
    /// final record, so helm died while waiting on this hook.
    Running,
    /// Helm sets this in memory right after storing `Running`; seen in a stored record, the
    /// hook was being created or waited on when the record was written (or helm died then).
    Unknown,
    /// `""` (or no `last_run` at all) in a record: the hook has not run in this revision.
    #[default]
    #[serde(rename = "never ran")]
    NeverRan,
    /// Judged against a run: part of it but never started (an earlier hook, the apply or the
    /// wait failed, or hooks were disabled). Never to be counted as succeeded.
    #[serde(rename = "skipped")]
    Skipped,
    /// Judged against a run: the hook has no event of it (a `test` hook, a rollback or delete
    /// hook, ...).
    #[serde(rename = "not in this run")]
    NotInThisRun,
}

impl HookPhase {
    pub const ALL: [HookPhase; 7] = [
        HookPhase::Succeeded,
        HookPhase::Failed,
        HookPhase::Running,
        HookPhase::Unknown,
        HookPhase::NeverRan,
        HookPhase::Skipped,
        HookPhase::NotInThisRun,
    ];

    /// Helm's `last_run.phase` string. Anything unrecognised counts as `Unknown`: we cannot
    /// tell what happened, which is exactly what Unknown says.
    pub fn from_helm(phase: &str) -> HookPhase {
        match phase {
            "" => HookPhase::NeverRan,
            "Succeeded" => HookPhase::Succeeded,
            "Failed" => HookPhase::Failed,
            "Running" => HookPhase::Running,
            _ => HookPhase::Unknown,
        }
    }

    /// Whether the hook ran to success.
    pub fn succeeded(self) -> bool {
        self == HookPhase::Succeeded
    }

    /// Whether the hook was started at all (skipped, never run or not part of the run: no).
    pub fn started(self) -> bool {
        !matches!(
            self,
            HookPhase::Skipped | HookPhase::NeverRan | HookPhase::NotInThisRun
        )
    }

    /// The word shown on screen and in the JSON (the same as the serde name).
    pub fn word(self) -> &'static str {
        match self {
            HookPhase::Succeeded => "Succeeded",
            HookPhase::Failed => "Failed",
            HookPhase::Running => "Running",
            HookPhase::Unknown => "Unknown",
            HookPhase::NeverRan => "never ran",
            HookPhase::Skipped => "skipped",
            HookPhase::NotInThisRun => "not in this run",
        }
    }
}

impl fmt::Display for HookPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}
