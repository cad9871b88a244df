//! The two ways out the deploy screen offers after a stop: `u` on a stuck lock (preflight
//! stopped on a `pending-*` revision) and `R` after a failed verdict (helmdeck's rollback of
//! this run's revision). Each opens a confirmation; the guards deciding whether it may be
//! offered are pure so they can be tested without a screen.

use crate::engine::event::{Step, StepOutcome};
use crate::engine::state::DeployState;

/// The revision `R` may roll back to, or None when the rollback must not be offered: the
/// engine's own guard, the one it checks before it waits for the answer.
pub fn rollback_offer(state: &DeployState) -> Option<i64> {
    crate::engine::steps::rollback::offer(state)
}

/// The stuck lock `u` opens, once preflight found one; gone once the lock was cleared and
/// preflight went on.
pub fn lock_offer(state: &DeployState) -> bool {
    state.lock.is_some()
        && state.rollback.is_none()
        && state.outcome(Step::Preflight) != Some(&StepOutcome::Succeeded)
}

/// `y` on the lock prompt may run the recovery: the engine found no reason to refuse it.
pub fn may_unlock(state: &DeployState) -> bool {
    state.lock.as_ref().is_some_and(|l| l.refusal.is_none())
}

/// The exact rollback command `R` offers.
pub fn rollback_command(state: &DeployState, to: i64) -> String {
    crate::engine::advice::rollback(&state.plan, to)
}
