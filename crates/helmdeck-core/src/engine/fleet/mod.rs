//! One release deployed to many clusters at once. Each target (a kube context, its namespace,
//! values and label) runs the same engine as a single deploy, into its own [`Shared`] state,
//! with its own helm process, watches, report and record; the fleet only decides which start
//! when ([`Lane`]) and sums their verdicts ([`Summary`], [`worst`]). No terminal code here: the
//! fleet screen and the headless lines read the members.

use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::engine::ask::Answers;
use crate::engine::run::Shared;
use crate::engine::scrub::Scrub;
use crate::engine::state::{DeployState, PlanSummary};
use crate::exit;

pub mod drive;

#[cfg(test)]
mod tests;

/// Where one deploy of the fleet goes: `--target CONTEXT` or a `[[target]]` table (one type
/// from the file to the screen).
pub use crate::config::fleet::TargetSetting as Target;

/// Where a target is in the fleet's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// Not started yet: waiting for a slot (`--parallel`) or for the canary.
    Waiting,
    /// Its engine runs: its [`Member::state`] says which step.
    Running,
    /// Its run ended with this exit code (the verdict's, or 1 when it ended without one).
    Ended { code: i32 },
    /// Never started, and why (`the canary … failed`, `--stop-on-failure`, `cancelled`).
    NotStarted { reason: String },
}

impl Lane {
    /// The code this target adds to the fleet's exit: a target that never started did not
    /// land, so it fails closed; one still waiting or running has no code yet.
    pub fn code(&self) -> Option<i32> {
        match self {
            Lane::Ended { code } => Some(*code),
            Lane::NotStarted { .. } => Some(exit::FAILED),
            Lane::Waiting | Lane::Running => None,
        }
    }
}

/// What a target's own deploy screen needs once its run is prepared (connected): the log
/// streamer's client and namespace, the context the header names, the values to mask, and
/// where the screen's `y`/`u`/`R` answers go.
pub struct MemberScreen {
    pub client: kube::Client,
    pub namespace: String,
    pub context: String,
    pub scrub: Scrub,
    pub answers: Mutex<Answers>,
}

/// One target of the fleet as it runs: the one state its engine folds into (screens borrow
/// it), its lane, and its own cancel.
pub struct Member {
    pub target: Target,
    pub state: Arc<Shared>,
    pub lane: watch::Sender<Lane>,
    pub cancel: CancellationToken,
    /// Set once the target's run is prepared; a target that never connected has none.
    pub screen: OnceLock<MemberScreen>,
}

impl Member {
    /// A target not started yet, its state the plan it will run.
    pub fn new(target: Target, plan: PlanSummary) -> Member {
        Member {
            target,
            state: Arc::new(Shared::new(DeployState::new(plan))),
            lane: watch::Sender::new(Lane::Waiting),
            cancel: CancellationToken::new(),
            screen: OnceLock::new(),
        }
    }
}

/// The fleet's summary line: how many targets landed (0), are live with the init incomplete
/// (3), failed (1, and any other code), never started, and are still waiting or running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub landed: usize,
    pub init_incomplete: usize,
    pub changes_pending: usize,
    pub failed: usize,
    pub not_started: usize,
    pub running: usize,
}

impl Summary {
    pub fn of<'a>(lanes: impl IntoIterator<Item = &'a Lane>) -> Summary {
        let mut s = Summary::default();
        for lane in lanes {
            match lane {
                Lane::Waiting | Lane::Running => s.running += 1,
                Lane::NotStarted { .. } => s.not_started += 1,
                Lane::Ended { code: 0 } => s.landed += 1,
                Lane::Ended { code: 3 } => s.init_incomplete += 1,
                Lane::Ended { code: 4 } => s.changes_pending += 1,
                Lane::Ended { .. } => s.failed += 1,
            }
        }
        s
    }

    /// `3 landed · 1 live-init-incomplete · 1 failed · 1 not started`: the parts that are not
    /// zero, in that order (`running` while any is).
    pub fn line(&self) -> String {
        let parts = [
            (self.landed, "landed"),
            (self.init_incomplete, "live-init-incomplete"),
            (self.changes_pending, "changes pending"),
            (self.failed, "failed"),
            (self.not_started, "not started"),
            (self.running, "running"),
        ];
        let said: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        if said.is_empty() {
            "no targets".into()
        } else {
            said.join(" · ")
        }
    }
}

/// The fleet's exit code: the worst of its targets' (1 over 3 over 4 over 0); a target
/// without a code (the fleet ended before it did) fails closed, as does an empty fleet.
pub fn worst<'a>(lanes: impl IntoIterator<Item = &'a Lane>) -> i32 {
    let mut worst: Option<i32> = None;
    for lane in lanes {
        let code = lane.code().unwrap_or(exit::FAILED);
        worst = Some(match worst {
            None => code,
            Some(w) => rank_max(w, code),
        });
    }
    worst.unwrap_or(exit::FAILED)
}

/// 1 (and any code not 0, 3 or 4) over 3 over 4 over 0.
fn rank_max(a: i32, b: i32) -> i32 {
    fn rank(code: i32) -> u8 {
        match code {
            0 => 0,
            exit::CHANGES_PENDING => 1,
            3 => 2,
            _ => 3,
        }
    }
    if rank(b) > rank(a) { b } else { a }
}
