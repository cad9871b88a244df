//! helmdeck's own rollbacks: clearing an old stuck lock before the deploy (`--recover-lock`)
//! and going back to the last deployed revision after this run's revision failed
//! (`--rollback-on-failure`). Both run `helm rollback REL N` with its output streamed (SIGTERM
//! on cancel, as the upgrade); the guards that decide whether one may run are pure functions.

use std::collections::BTreeSet;
use std::time::Duration;

use jiff::Timestamp;

use crate::cluster::releases::{self, Lock, Revision};
use crate::engine::event::{Event, RecordedLock, RollbackView, Step, StepOutcome};
use crate::engine::model::event::{NewerRevision, RollbackStatus};
use crate::engine::state::DeployState;
use crate::engine::steps::{Ctx, StepError, lock};
use crate::text;

/// Why `--recover-lock` must not clear this lock, or `None` when it may roll it back.
/// `own`: the lock is one this machine's own earlier run left, its helm gone (see
/// [`super::left_lock::ours`]): no deploy is at work, so its age does not matter.
pub fn unlock_refusal(
    held: &Lock,
    min_age: Duration,
    force: bool,
    own: bool,
    now: Timestamp,
) -> Option<String> {
    let pending = &held.pending;
    if held.last_deployed.is_none() {
        return Some(format!(
            "--recover-lock: revision {} is {} and no revision was ever deployed, so there is \
             nothing to roll back to; helmdeck never deletes records. To unblock the release, \
             delete the stuck record yourself (the release's resources stay, and the next deploy \
             installs over them): {}",
            pending.version, pending.status, held.fix
        ));
    }
    if !force && !own && lock::is_young(pending, min_age, now) {
        return Some(format!(
            "--recover-lock refused: revision {} ({}) is younger than --lock-min-age {}s or of \
             unknown age, so another deploy may still be at work; wait, or add --force to roll \
             it back anyway",
            pending.version,
            pending.status,
            min_age.as_secs()
        ));
    }
    None
}

/// The revision `--rollback-on-failure` goes back to: only when this run wrote `ours`, it is
/// still the release's latest (another operator's newer revision is never undone), and a
/// deployed revision exists before it.
pub fn target(ours: Option<i64>, revisions: &[Revision]) -> Result<i64, String> {
    let ours = ours.ok_or("this run wrote no revision: nothing to roll back")?;
    let latest = revisions.last().map(|r| r.version);
    if latest != Some(ours) {
        return Err(format!(
            "revision {ours} is no longer the release's latest ({}): another operation wrote \
             after it, not rolled back",
            latest.map_or("none".to_string(), |v| v.to_string())
        ));
    }
    // A revision that was deployed is `deployed` still (the upgrade failed) or `superseded`
    // (the upgrade landed and its rollout failed); a `failed` one never was.
    revisions
        .iter()
        .rev()
        .find(|r| r.version < ours && matches!(r.status.as_str(), "deployed" | "superseded"))
        .map(|r| r.version)
        .ok_or_else(|| {
            format!("no deployed revision before revision {ours}: nothing to roll back to")
        })
}

/// The revision another operation wrote after `ours` (this run's), if the history's latest is
/// newer: a rollback to the revision deployed before this run would undo it.
pub fn newer(ours: Option<i64>, revisions: &[Revision]) -> Option<NewerRevision> {
    let ours = ours?;
    let latest = revisions.last().filter(|r| r.version > ours)?;
    Some(NewerRevision {
        ours,
        revision: latest.version,
        status: text::plain(&latest.status),
    })
}

/// Says (once, as an event and a warning) that another operation wrote after this run's
/// revision, so the verdict advises no rollback over it and `R` offers none.
fn tell_newer(ctx: &Ctx, newer: NewerRevision) {
    ctx.emit.warn(
        Step::Rollout,
        format!(
            "revision {} ({}) was written after this run's revision {} by another operation: \
             no rollback is advised over it",
            newer.revision, newer.status, newer.ours
        ),
    );
    ctx.emit.send(Event::NewerRevision(newer));
}

/// At the verdict of a failed upgrade or rollout that nothing rolled back: reads the history
/// again, so the advice is decided from the release as it is now (another operator may have
/// upgraded while this run waited). An unreadable history changes nothing (the rollback that
/// would follow re-reads it anyway).
pub async fn check_newer(ctx: &Ctx, ours: Option<i64>) {
    if ours.is_none() {
        return;
    }
    if let Ok(revisions) =
        releases::revisions(&ctx.cluster.client, ctx.namespace(), &ctx.plan.release).await
        && let Some(n) = newer(ours, &revisions)
    {
        tell_newer(ctx, n);
    }
}

/// The revision the screen's `R` may roll back to after the verdict, or None. The same cases
/// as `--rollback-on-failure`: this run's upgrade or rollout failed (exit 1; never a cancel,
/// never exit 3, never a failed `--test`, never `--only`), it wrote the release's latest
/// revision (never after "another operation is in progress", which wrote nothing), a revision
/// was deployed before it, no rollback ran yet, and no newer revision of another operation was
/// seen. [`target`] still re-reads the history before anything is rolled back.
pub fn offer(state: &DeployState) -> Option<i64> {
    if state.verdict.as_ref()?.code() != 1
        || state.rollback.is_some()
        || state.plan.only.is_some()
        || state.newer.is_some()
    {
        return None;
    }
    let failed = [Step::Upgrade, Step::Rollout]
        .into_iter()
        .any(|s| matches!(state.outcome(s), Some(StepOutcome::Failed { .. })));
    if !failed {
        return None;
    }
    let ours = state.revision?;
    if state.revision_before == Some(ours) {
        return None;
    }
    state.deployed_before.filter(|to| *to < ours)
}

fn rollback_args(ctx: &Ctx, to: i64) -> Vec<String> {
    let mut args = vec![
        "rollback".to_string(),
        ctx.plan.release.clone(),
        to.to_string(),
    ];
    args.extend(ctx.scope_args());
    args.extend(["--timeout".into(), ctx.plan.helm_timeout()]);
    args
}

/// Runs `helm rollback REL to`, its lines streamed into the helm pane; the revision it wrote.
///
/// `helm rollback` handles no signal: a cancel (our one SIGTERM, helm waited for as always)
/// ends it where it stands, which leaves its revision `pending-rollback`. The records are then
/// read again and such a lock is told (see [`super::left_lock`]).
async fn helm_rollback(ctx: &Ctx, step: Step, to: i64) -> Result<i64, String> {
    let args = rollback_args(ctx, to);
    let (client, namespace, release) = (&ctx.cluster.client, ctx.namespace(), &ctx.plan.release);
    // Listed before helm starts: afterwards, only a record Secret not among these is its own.
    let before: BTreeSet<String> = releases::revisions(client, namespace, release)
        .await
        .map_err(|e| format!("listing the release records before the rollback: {e:#}"))?
        .into_iter()
        .map(|r| r.uid)
        .collect();
    ctx.emit.info(step, format!("helm {}", args.join(" ")));
    let exit = super::helm_run::stream_helm(ctx, args, |_, _| {})
        .await
        .map_err(|e| format!("could not run helm rollback: {e}"))?;
    let after = releases::revisions(client, namespace, release)
        .await
        .map_err(|e| format!("listing the release records after the rollback: {e:#}"));
    let left = after.as_ref().ok().and_then(|after| {
        super::left_lock::left_by(ctx, after, &before, "rollback", &exit, Some(to))
    });
    // The verdict names the lock (and prints its fix); the error says only how helm ended.
    if let Some(left) = left {
        super::left_lock::announce(ctx, step, left);
    }
    if exit.cancelled {
        return Err("cancelled".into());
    }
    if !exit.success() {
        return Err(crate::helm::failure::in_helms_words(
            "helm rollback",
            &exit.stderr_tail,
            exit.code,
            exit.signal,
        ));
    }
    after?
        .last()
        .map(|r| r.version)
        .ok_or_else(|| "no release record after the rollback".to_string())
}

/// Preflight with `--recover-lock`: re-reads the lock (another operator may have cleared it),
/// rolls it back, and returns the release's latest revision for the deploy that follows.
///
/// `own`: this machine's record of the lock, when one of its earlier runs left it (its helm
/// gone): it is cleared whatever its age, to the target that record names.
pub async fn unlock(
    ctx: &Ctx,
    held: &Lock,
    own: Option<&RecordedLock>,
) -> Result<Option<i64>, StepError> {
    let step = Step::Preflight;
    let held = &super::left_lock::as_recorded(held, own);
    if let Some(refusal) = unlock_refusal(
        held,
        ctx.plan.lock_min_age,
        ctx.plan.force,
        own.is_some(),
        Timestamp::now(),
    ) {
        return Err(StepError::Locked(refusal));
    }
    let (client, namespace, release) = (&ctx.cluster.client, ctx.namespace(), &ctx.plan.release);
    let again = releases::revisions(client, namespace, release).await?;
    let still = releases::lock(&again, release, namespace, ctx.plan.context.as_deref())
        .map(|still| super::left_lock::as_recorded(&still, own));
    let Some(still) = still else {
        ctx.emit.info(
            step,
            "the lock was cleared meanwhile (another operator): deploying without a rollback",
        );
        return Ok(again.last().map(|r| r.version));
    };
    if still.pending.uid != held.pending.uid || still.last_deployed != held.last_deployed {
        return Err(StepError::Locked(format!(
            "the lock changed while it was checked (now revision {} {}): run the deploy again",
            still.pending.version, still.pending.status
        )));
    }
    let to = still.last_deployed.unwrap_or_default();
    ctx.emit.warn(
        step,
        format!(
            "--recover-lock: rolling back pending revision {} ({}) to revision {to}",
            still.pending.version, still.pending.status
        ),
    );
    let written = helm_rollback(ctx, step, to)
        .await
        .map_err(|e| StepError::Locked(format!("--recover-lock: helm rollback failed: {e}")))?;
    ctx.emit.info(
        step,
        format!(
            "lock cleared: revision {written} rolled back to {to}; carrying on with the deploy"
        ),
    );
    ctx.emit.send(Event::Release {
        revision_before: Some(written),
        deployed_before: Some(written),
        revision: None,
        chart: None,
    });
    Ok(Some(written))
}

/// `--rollback-on-failure` after this run's upgrade or rollout failed (never after exit 3: the
/// caller only calls it on those two failures), or the screen's `R` after that verdict.
/// Tracks the rolled-back revision's rollout with the same deny list; the step outcomes stay
/// as they were, so the verdict stays 1. `asked_by` names who asked, in the notes.
pub async fn after_failure(ctx: &Ctx, ours: Option<i64>, asked_by: &str) {
    let step = Step::Rollout;
    let revisions =
        match releases::revisions(&ctx.cluster.client, ctx.namespace(), &ctx.plan.release).await {
            Ok(r) => r,
            Err(e) => {
                ctx.emit.warn(
                    step,
                    format!("{asked_by}: history unreadable, not rolled back: {e:#}"),
                );
                return;
            }
        };
    let to = match target(ours, &revisions) {
        Ok(to) => to,
        Err(why) => {
            ctx.emit
                .warn(step, format!("{asked_by}: not rolled back: {why}"));
            if let Some(n) = newer(ours, &revisions) {
                tell_newer(ctx, n);
            }
            return;
        }
    };
    let from = ours.unwrap_or_default();
    let mut view = RollbackView {
        from,
        to,
        revision: None,
        status: RollbackStatus::Running,
        reason: None,
    };
    ctx.emit.send(Event::Rollback(view.clone()));
    ctx.emit.warn(
        step,
        format!("{asked_by}: revision {from} failed: rolling back to revision {to}"),
    );
    match helm_rollback(ctx, step, to).await {
        Err(e) => {
            view.status = RollbackStatus::Failed;
            view.reason = Some(e);
        }
        Ok(written) => {
            view.revision = Some(written);
            ctx.emit.info(
                step,
                format!("revision {written} written (rollback to {to}): tracking its rollout"),
            );
            match super::rollout::try_run(ctx).await {
                Ok(StepOutcome::Succeeded) => view.status = RollbackStatus::RolledBack,
                Ok(StepOutcome::Failed { reason }) => {
                    view.status = RollbackStatus::Failed;
                    view.reason = Some(format!("revision {written} did not roll out: {reason}"));
                }
                Ok(other) => {
                    view.status = RollbackStatus::Failed;
                    view.reason = Some(format!("revision {written}'s rollout: {other:?}"));
                }
                Err(e) => {
                    view.status = RollbackStatus::Failed;
                    view.reason = Some(format!("revision {written}'s rollout: {e}"));
                }
            }
        }
    }
    ctx.emit.send(Event::Rollback(view));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(version: i64, status: &str) -> Revision {
        Revision {
            version,
            status: status.into(),
            uid: format!("u{version}"),
            created: Some("2026-12-01T09:00:00Z".into()),
            ..Default::default()
        }
    }

    fn now() -> Timestamp {
        "2026-12-01T10:00:00Z".parse().expect("a timestamp")
    }

    fn held(pending: Revision, last_deployed: Option<i64>) -> Lock {
        Lock {
            fix: "kubectl delete secret sh.helm.release.v1.demo.v1 -n apps".into(),
            pending,
            last_deployed,
        }
    }

    #[test]
    fn rollback_goes_to_the_last_deployed_revision_before_this_runs() {
        let history = [rev(1, "superseded"), rev(2, "deployed"), rev(3, "failed")];
        assert_eq!(target(Some(3), &history), Ok(2));
        let history = [rev(1, "superseded"), rev(2, "failed")];
        assert_eq!(target(Some(2), &history), Ok(1));
        let history = [rev(1, "deployed"), rev(2, "failed"), rev(3, "failed")];
        assert_eq!(
            target(Some(3), &history),
            Ok(1),
            "never to a failed revision"
        );
    }

    #[test]
    fn no_rollback_without_a_written_latest_revision_or_a_deployed_one_before_it() {
        let history = [
            rev(1, "deployed"),
            rev(2, "failed"),
            rev(3, "pending-upgrade"),
        ];
        assert!(
            target(None, &history)
                .unwrap_err()
                .contains("wrote no revision")
        );
        assert!(
            target(Some(2), &history)
                .unwrap_err()
                .contains("no longer the release's latest (3)")
        );
        let first = [rev(1, "failed")];
        assert!(
            target(Some(1), &first)
                .unwrap_err()
                .contains("no deployed revision")
        );
    }

    #[test]
    fn r_is_offered_after_a_failed_rollout_of_ours_never_with_only() {
        use crate::engine::verdict::{Outcome, Verdict};
        let mut state = DeployState {
            plan: crate::engine::state::PlanSummary {
                release: "demo".into(),
                namespace: "apps".into(),
                ..Default::default()
            },
            revision_before: Some(4),
            deployed_before: Some(4),
            revision: Some(5),
            ..Default::default()
        };
        state.apply(
            &Event::StepEnded {
                step: Step::Rollout,
                outcome: StepOutcome::Failed {
                    reason: "timed out".into(),
                },
            },
            1.0,
            "t",
        );
        state.verdict = Some(Verdict {
            outcome: Outcome::Failed,
            reason: "rollout failed: timed out".into(),
            evidence: vec![],
            next: None,
        });
        assert_eq!(offer(&state), Some(4));
        // Another operation wrote revision 6 after ours: no R over it, and the verdict decided
        // again advises the history, never a rollback.
        let mut overtaken = state.clone();
        let history = [
            rev(4, "superseded"),
            rev(5, "superseded"),
            rev(6, "deployed"),
        ];
        let n = newer(Some(5), &history).expect("revision 6 is newer");
        assert_eq!((n.ours, n.revision, n.status.as_str()), (5, 6, "deployed"));
        for step in [Step::Preflight, Step::Upgrade] {
            let ended = Event::StepEnded {
                step,
                outcome: StepOutcome::Succeeded,
            };
            overtaken.apply(&ended, 0.5, "t");
        }
        overtaken.apply(&Event::NewerRevision(n), 2.0, "t");
        assert_eq!(offer(&overtaken), None);
        let again = crate::engine::verdict::decide(&overtaken);
        assert_eq!(again.next.as_deref(), Some("helm history demo -n apps"));
        assert!(
            again
                .evidence
                .iter()
                .any(|e| e.starts_with("revision 6 (deployed) was written after this run's")),
            "{again:?}"
        );
        assert_eq!(newer(Some(6), &history), None, "ours is the latest");
        assert_eq!(newer(None, &history), None, "this run wrote nothing");
        for only in [crate::cli::Only::Rollout, crate::cli::Only::Init] {
            state.plan.only = Some(only);
            assert_eq!(offer(&state), None, "{only:?}: this run wrote nothing");
        }
    }

    #[test]
    fn recover_lock_refuses_a_young_lock_unless_forced_and_never_deletes() {
        let ten_minutes = Duration::from_secs(600);
        let young = Revision {
            created: Some("2026-12-01T09:59:00Z".into()),
            ..rev(3, "pending-upgrade")
        };
        let refusal = unlock_refusal(
            &held(young.clone(), Some(2)),
            ten_minutes,
            false,
            false,
            now(),
        );
        assert!(refusal.expect("refused").contains("add --force"));
        assert_eq!(
            unlock_refusal(
                &held(young.clone(), Some(2)),
                ten_minutes,
                true,
                false,
                now()
            ),
            None
        );
        assert_eq!(
            unlock_refusal(&held(young, Some(2)), ten_minutes, false, true, now()),
            None,
            "a lock our own run left, its helm gone, needs no --force"
        );
        let old = rev(3, "pending-upgrade");
        assert_eq!(
            unlock_refusal(&held(old, Some(2)), ten_minutes, false, false, now()),
            None
        );
        let install = rev(1, "pending-install");
        let text =
            unlock_refusal(&held(install, None), ten_minutes, true, true, now()).expect("refused");
        assert!(
            text.contains("resources stay")
                && text.ends_with("kubectl delete secret sh.helm.release.v1.demo.v1 -n apps"),
            "{text}"
        );
    }
}
