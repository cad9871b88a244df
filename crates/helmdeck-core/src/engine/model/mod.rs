//! The deploy's plain data, importing nothing above it: the events steps send and the views
//! they carry ([`event`]), what the deploy was asked to do ([`PlanSummary`]), the plan's
//! object-by-object changes ([`plan`]) and the [`Verdict`]. The state folds these, the verdict
//! decides over them, records store them and every renderer reads them; none of those is
//! named here, so the data cannot come to depend on what judges or shows it.

pub mod event;
pub mod plan;

use serde::{Deserialize, Serialize};

use crate::cli::Only;
use crate::config::DeployPlan;

pub use plan::{Change, Plan, PlanObject};

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

/// The exit code is the outcome's ([`Verdict::code`]), never a second fact beside it; the
/// report (v2) and the record (schema 1) still carry it as `code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "VerdictRecord", try_from = "VerdictRecord")]
pub struct Verdict {
    pub outcome: Outcome,
    /// One sentence.
    pub reason: String,
    /// The facts behind it: blocking workloads with their causes, failing and skipped hooks.
    pub evidence: Vec<String>,
    /// What the operator should do next (a command), when there is something to do.
    pub next: Option<String>,
}

impl Verdict {
    pub fn new(
        outcome: Outcome,
        reason: impl Into<String>,
        evidence: Vec<String>,
        next: Option<String>,
    ) -> Verdict {
        Verdict {
            outcome,
            reason: reason.into(),
            evidence,
            next,
        }
    }

    /// The process's exit code: 0, 1, 3 or 4.
    pub fn code(&self) -> i32 {
        self.outcome.code()
    }
}

/// A verdict as records and reports write it, with its code.
#[derive(Serialize, Deserialize)]
struct VerdictRecord {
    code: i32,
    outcome: Outcome,
    reason: String,
    evidence: Vec<String>,
    next: Option<String>,
}

impl From<Verdict> for VerdictRecord {
    fn from(v: Verdict) -> Self {
        VerdictRecord {
            code: v.code(),
            outcome: v.outcome,
            reason: v.reason,
            evidence: v.evidence,
            next: v.next,
        }
    }
}

impl TryFrom<VerdictRecord> for Verdict {
    type Error = String;

    /// A code that is not its outcome's is refused: a record that says `landed` with exit 1
    /// is not evidence of either.
    fn try_from(r: VerdictRecord) -> Result<Self, String> {
        if r.code != r.outcome.code() {
            return Err(format!(
                "verdict code {} is not the code of outcome {:?} ({})",
                r.code,
                r.outcome,
                r.outcome.code()
            ));
        }
        Ok(Verdict::new(r.outcome, r.reason, r.evidence, r.next))
    }
}

/// What the deploy was asked to do, as the views show it; fixed for the run. A deploy derives
/// it from its [`DeployPlan`] ([`PlanSummary::of`]); inspect fills in what a record tells.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub release: String,
    /// Resolved: never empty for a deploy.
    pub namespace: String,
    pub chart: String,
    pub context: Option<String>,
    pub only: Option<Only>,
    pub init_job: Option<String>,
    pub timeout_secs: u64,
    pub dry_run: bool,
    /// `--plan` / `--plan-only`.
    pub plan: bool,
    pub plan_only: bool,
    /// What the `--only init` advice needs besides the above: the init toggle, `--helm` as
    /// given, and the helm arguments init renders with (never values or credentials).
    pub init_toggle: Option<String>,
    /// `--init-selector LABEL=VALUE`, carried by the `--only init` advice.
    #[serde(default)]
    pub init_selector: Option<String>,
    pub helm: Option<String>,
    pub advice_args: Vec<String>,
    /// `helmdeck watch`: someone else's deploy, followed with no chart and no helm, so no
    /// advice may need either.
    #[serde(default)]
    pub watch: bool,
}

impl PlanSummary {
    /// The plan as the views show it, in the namespace the deploy resolved.
    pub fn of(plan: &DeployPlan, namespace: &str) -> Self {
        PlanSummary {
            release: plan.release.clone(),
            namespace: namespace.to_string(),
            chart: plan.chart.clone(),
            context: plan.context.clone(),
            only: plan.only,
            init_job: plan.init_job.clone(),
            timeout_secs: plan.timeout.as_secs(),
            dry_run: plan.dry_run,
            plan: plan.plan,
            plan_only: plan.plan_only,
            init_toggle: plan.init_toggle.clone(),
            init_selector: plan.init_selector.as_ref().map(ToString::to_string),
            helm: plan.helm.as_ref().map(|h| h.display().to_string()),
            advice_args: plan.advice_extra(),
            watch: plan.watch.is_some(),
        }
    }
}

/// `Kind/name` when `namespace` is `home` (or unknown), else `Kind/namespace/name`: names never
/// hold a `/`, so the three-part form cannot be mistaken for a name.
pub fn reference(kind: &str, namespace: &str, name: &str, home: &str) -> String {
    if namespace.is_empty() || namespace == home {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_written_with_its_code_and_read_back_only_when_they_agree() {
        let v = Verdict::new(Outcome::LiveInitIncomplete, "init failed", vec![], None);
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["code"], 3, "report v2 and record schema 1 keep `code`");
        assert_eq!(serde_json::from_value::<Verdict>(json).unwrap(), v);
        let lying = serde_json::json!({"code": 0, "outcome": "failed", "reason": "r",
                                       "evidence": [], "next": null});
        let refused = serde_json::from_value::<Verdict>(lying).unwrap_err();
        assert!(refused.to_string().contains("verdict code 0"), "{refused}");
    }
}
