//! A `pending-*` revision this run's own helm left behind, and how the next deploy on this
//! machine tells it from another operator's deploy in progress.
//!
//! helm 4 handles SIGTERM during an upgrade (the revision ends `failed`), but `helm rollback`
//! handles no signal: a cancel while helmdeck's own rollback runs (or helm killed outright)
//! leaves the release `pending-rollback`. The run names that revision in its verdict with the
//! command that clears it, and keeps it in its record ([`LeftLock`]). The next deploy reads
//! those records ([`RecordedLock`], given by the caller: the engine reads no files) and, when
//! the lock is the one a run of ours left and the helm that left it is gone, says so and lets
//! `--recover-lock` (or the screen's `u`) clear it at once, whatever its age.

use std::collections::BTreeSet;

use crate::cluster::releases::{self, Revision};
use crate::engine::event::{Event, LeftLock, RecordedLock, Step};
use crate::engine::steps::Ctx;
use crate::helm::process::HelmExit;

/// The lock `exit`'s helm left: the release's latest revision when it is `pending-*` and its
/// record Secret was not among `before` (the uids listed before helm started), so this helm
/// wrote it. None when helm finished what it started, or the latest is someone else's.
/// `rolling_back_to`: the target of the `helm rollback` that left it, which the fix finishes
/// (the newest `deployed` revision may be the very one it was rolling back from).
pub fn left_by(
    ctx: &Ctx,
    after: &[Revision],
    before: &BTreeSet<String>,
    operation: &str,
    exit: &HelmExit,
    rolling_back_to: Option<i64>,
) -> Option<LeftLock> {
    let latest = after.last()?;
    if !latest.status.starts_with("pending-") || latest.uid.is_empty() {
        return None;
    }
    if before.contains(&latest.uid) {
        return None;
    }
    let held = releases::lock(
        after,
        &ctx.plan.release,
        ctx.namespace(),
        ctx.plan.context.as_deref(),
    )?;
    let (to, fix) = match rolling_back_to {
        Some(to) => (
            Some(to),
            crate::advice::helm_rollback(
                &ctx.plan.release,
                to,
                ctx.namespace(),
                ctx.plan.context.as_deref(),
            ),
        ),
        None => (held.last_deployed, held.fix),
    };
    Some(LeftLock {
        revision: latest.version,
        status: latest.status.clone(),
        uid: latest.uid.clone(),
        operation: operation.to_string(),
        helm_pid: exit.pid,
        helm_start: exit.start.clone(),
        to,
        fix,
    })
}

/// The lock as this machine's record of it says to clear it: the recorded rollback target and
/// command (a rollback left it: finish that rollback), else the lock as read.
pub fn as_recorded(held: &releases::Lock, own: Option<&RecordedLock>) -> releases::Lock {
    match own {
        Some(own) if own.left.to.is_some() => releases::Lock {
            pending: held.pending.clone(),
            last_deployed: own.left.to,
            fix: own.left.fix.clone(),
        },
        _ => held.clone(),
    }
}

/// Tells the lock: one warning (with the command that clears it) and the event the record
/// keeps for the next deploy.
pub fn announce(ctx: &Ctx, step: Step, left: LeftLock) {
    ctx.emit.warn(
        step,
        format!(
            "helm {} ended before finishing and left revision {} {}: the release is locked \
             until it is cleared; clear it with: {}",
            left.operation, left.revision, left.status, left.fix
        ),
    );
    ctx.emit.send(Event::LeftLock(left));
}

/// The record of ours that left the pending revision `pending` (matched by its Secret's uid and
/// number), unless the helm that left it is still alive (then it is still at work, as another
/// operator's deploy would be). `alive` is [`crate::helm::spawn::alive`] outside tests.
pub fn ours<'a>(
    recorded: &'a [RecordedLock],
    pending: &Revision,
    alive: impl Fn(u32, &str) -> bool,
) -> Option<&'a RecordedLock> {
    let found = recorded
        .iter()
        .find(|r| r.left.uid == pending.uid && r.left.revision == pending.version)?;
    match (found.left.helm_pid, found.left.helm_start.as_deref()) {
        (Some(pid), Some(start)) if !alive(pid, start) => Some(found),
        // A record that cannot tell whether its helm ended proves nothing.
        _ => None,
    }
}

/// The lock reason when the lock is our own leftover: what it is, that no deploy is in
/// progress, and both ways out (the flag, and the command itself).
pub fn reason(
    held: &releases::Lock,
    own: &RecordedLock,
    release: &str,
    now: jiff::Timestamp,
) -> String {
    let pending = &held.pending;
    format!(
        "release {release} is locked: revision {} is {} (written {}), left by this machine's own \
         helmdeck run of {} (its helm {} ended before finishing, and is no longer running): no \
         deploy is in progress; run this deploy again with --recover-lock to roll it back first, \
         or clear it with: {}",
        pending.version,
        pending.status,
        super::lock::age(pending, now),
        own.started,
        own.left.operation,
        held.fix
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending() -> Revision {
        Revision {
            version: 3,
            status: "pending-rollback".into(),
            uid: "uid-3".into(),
            created: Some("2026-12-01T09:59:58Z".into()),
            ..Default::default()
        }
    }

    fn recorded(uid: &str, version: i64, pid: Option<u32>) -> RecordedLock {
        RecordedLock {
            left: LeftLock {
                revision: version,
                status: "pending-rollback".into(),
                uid: uid.into(),
                operation: "rollback".into(),
                helm_pid: pid,
                helm_start: pid.map(|_| "boot:123".into()),
                to: Some(1),
                fix: "helm rollback demo 1 -n apps".into(),
            },
            started: "2026-12-01T09:59:00Z".into(),
        }
    }

    #[test]
    fn only_a_lock_our_record_names_by_uid_with_its_helm_gone_is_ours() {
        let dead = |_: u32, _: &str| false;
        let live = |_: u32, _: &str| true;
        let ours_ = [recorded("uid-3", 3, Some(42))];
        assert_eq!(ours(&ours_, &pending(), dead), Some(&ours_[0]));
        assert_eq!(
            ours(&ours_, &pending(), live),
            None,
            "its helm still runs: at work"
        );
        let other_uid = [recorded("uid-9", 3, Some(42))];
        assert_eq!(
            ours(&other_uid, &pending(), dead),
            None,
            "same number, another record Secret: another operator's"
        );
        let other_number = [recorded("uid-3", 4, Some(42))];
        assert_eq!(ours(&other_number, &pending(), dead), None);
        let unknown = [recorded("uid-3", 3, None)];
        assert_eq!(
            ours(&unknown, &pending(), dead),
            None,
            "no pid: cannot tell"
        );
        assert_eq!(ours(&[], &pending(), dead), None, "no record of ours");
    }

    #[test]
    fn our_lock_says_whose_it_is_and_offers_both_ways_out() {
        let held = releases::Lock {
            pending: pending(),
            last_deployed: Some(1),
            fix: "helm rollback demo 1 -n apps".into(),
        };
        let now = "2026-12-01T10:00:00Z".parse().expect("a timestamp");
        let text = reason(&held, &recorded("uid-3", 3, Some(42)), "demo", now);
        assert!(text.contains("2s ago"), "{text}");
        assert!(
            text.contains("own helmdeck run of 2026-12-01T09:59:00Z"),
            "{text}"
        );
        assert!(text.contains("with --recover-lock"), "{text}");
        assert!(
            text.ends_with("clear it with: helm rollback demo 1 -n apps"),
            "{text}"
        );
        assert!(!text.contains("another deploy in progress"), "{text}");
    }
}
