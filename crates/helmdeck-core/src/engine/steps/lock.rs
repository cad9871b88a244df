//! Another operator on the same release: how old its pending revision is, whether helmdeck may
//! advise clearing it, and how a deploy that helm refused because of it is told to wait.
//!
//! The rules (docs/two-operators.md): a lock's age is its record Secret's
//! `metadata.creationTimestamp`; a lock younger than `--lock-min-age`, or of unknown age, is
//! another deploy in progress and is never advised away; an older one keeps the recovery
//! command. A deploy that helm refused because another operation got there first wrote
//! nothing, so it is told to wait, never to roll back.

use std::time::Duration;

use jiff::Timestamp;

use crate::cluster::releases::{Lock, Revision};
use crate::time::{self, AgeStyle};

/// What helm says when another operation on the release got there first: it found a pending
/// revision, or the revision number it was about to write was taken while it ran (two upgrades
/// that read the same history; the API server lets only one create the record).
const REFUSALS: [&str; 2] = [
    "another operation (install/upgrade/rollback) is in progress",
    "release: already exists",
];

/// helm's `Error:` line when it refused the deploy because of another operation.
pub fn refusal(stderr_tail: &[String]) -> Option<&str> {
    stderr_tail
        .iter()
        .rev()
        .find(|l| l.starts_with("Error:") && REFUSALS.iter().any(|r| l.contains(r)))
        .map(String::as_str)
}

pub fn age(revision: &Revision, now: Timestamp) -> String {
    match revision.age_secs(now) {
        Some(secs) => format!("{} ago", time::age(secs, AgeStyle::Short)),
        None => "unknown age".into(),
    }
}

/// `another deploy in progress since T (upgrade of revision 3, pending-upgrade, 5s ago)`.
fn in_progress(revision: &Revision, now: Timestamp) -> String {
    format!(
        "another deploy in progress since {} ({} of revision {}, {}, {})",
        revision.created.as_deref().unwrap_or("an unknown time"),
        revision.operation(),
        revision.version,
        revision.status,
        age(revision, now)
    )
}

/// Whether a pending revision may be another deploy still at work: younger than `min_age`, or
/// of an age that cannot be read (clearing a live deploy's lock would undo it).
pub fn is_young(revision: &Revision, min_age: Duration, now: Timestamp) -> bool {
    match revision.age_secs(now) {
        Some(secs) => u64::try_from(secs).map_or(true, |s| s < min_age.as_secs()),
        None => true,
    }
}

/// Why the release is locked, and what to do about it. `attaching`: `--only rollout`, which
/// watches whatever rollout is under way and so expects another deploy.
pub fn reason(
    lock: &Lock,
    release: &str,
    min_age: Duration,
    now: Timestamp,
    attaching: bool,
) -> String {
    let pending = &lock.pending;
    if is_young(pending, min_age, now) {
        let then = if attaching {
            "attaching to its rollout"
        } else {
            "wait for it to finish, then run this deploy again"
        };
        return format!("{}: {then}", in_progress(pending, now));
    }
    let deployed = match lock.last_deployed {
        Some(v) => format!("last deployed revision {v}"),
        None => "no deployed revision to roll back to".into(),
    };
    format!(
        "release {release} is locked: revision {} is {} (written {}); {deployed}; clear it with: {}",
        pending.version,
        pending.status,
        age(pending, now),
        lock.fix
    )
}

/// Why helm refused this deploy: `other` is the release's newest revision after helm exited
/// (the other operation's, when it wrote one).
pub fn refused_reason(helm_error: &str, other: Option<&Revision>, now: Timestamp) -> String {
    let refused = format!("helm refused this one ({helm_error}); this run wrote no revision");
    match other {
        Some(r) if r.status.starts_with("pending-") => format!(
            "{}: {refused}: wait for it to finish, then run this deploy again",
            in_progress(r, now)
        ),
        Some(r) => format!(
            "another deploy ran at the same time ({} of revision {}, now {}, since {}): {refused}: run this deploy again if it is still needed",
            r.operation(),
            r.version,
            r.status,
            r.created.as_deref().unwrap_or("an unknown time"),
        ),
        None => format!(
            "another deploy ran at the same time: {refused}: wait for it to finish, then run this deploy again"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-12-01T10:00:00Z".parse().expect("a timestamp")
    }

    fn pending(version: i64, status: &str, created: Option<&str>) -> Revision {
        Revision {
            version,
            status: status.into(),
            // helm 4 copies the previous revision's label: never the age of this one.
            written_at: Some(0),
            secret_name: format!("sh.helm.release.v1.demo.v{version}"),
            uid: format!("uid-{version}"),
            created: created.map(String::from),
        }
    }

    fn lock(revision: Revision, last_deployed: Option<i64>) -> Lock {
        Lock {
            fix: match last_deployed {
                Some(v) => format!("helm rollback demo {v} -n apps"),
                None => format!("kubectl delete secret {} -n apps", revision.secret_name),
            },
            pending: revision,
            last_deployed,
        }
    }

    const TEN_MINUTES: Duration = Duration::from_secs(600);

    #[test]
    fn a_young_lock_is_another_deploy_in_progress_and_never_advised_away() {
        let young = pending(3, "pending-upgrade", Some("2026-12-01T09:59:58Z"));
        let text = reason(&lock(young, Some(2)), "demo", TEN_MINUTES, now(), false);
        assert_eq!(
            text,
            "another deploy in progress since 2026-12-01T09:59:58Z (upgrade of revision 3, \
             pending-upgrade, 2s ago): wait for it to finish, then run this deploy again"
        );
        let attaching = reason(
            &lock(
                pending(3, "pending-upgrade", Some("2026-12-01T09:59:58Z")),
                Some(2),
            ),
            "demo",
            TEN_MINUTES,
            now(),
            true,
        );
        assert!(
            attaching.ends_with("2s ago): attaching to its rollout"),
            "{attaching}"
        );
        let install = pending(1, "pending-install", Some("2026-12-01T09:55:00Z"));
        let text = reason(&lock(install, None), "demo", TEN_MINUTES, now(), false);
        assert!(text.contains("(install of revision 1, pending-install, 5m ago)"));
        assert!(
            !text.contains("delete") && !text.contains("rollback"),
            "{text}"
        );
    }

    #[test]
    fn an_old_lock_keeps_the_recovery_command_with_the_records_age() {
        let old = pending(3, "pending-upgrade", Some("2026-12-01T09:40:00Z"));
        assert_eq!(
            reason(
                &lock(old.clone(), Some(2)),
                "demo",
                TEN_MINUTES,
                now(),
                false
            ),
            "release demo is locked: revision 3 is pending-upgrade (written 20m ago); last \
             deployed revision 2; clear it with: helm rollback demo 2 -n apps"
        );
        let just_old = pending(3, "pending-upgrade", Some("2026-12-01T09:50:00Z"));
        assert!(
            !is_young(&just_old, TEN_MINUTES, now()),
            "exactly the minimum age is old"
        );
        let text = reason(
            &lock(old, None),
            "demo",
            Duration::from_secs(1),
            now(),
            false,
        );
        assert!(
            text.ends_with(
                "clear it with: kubectl delete secret sh.helm.release.v1.demo.v3 -n apps"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_lock_of_unknown_or_future_age_counts_as_young() {
        let unknown = pending(3, "pending-upgrade", None);
        assert!(is_young(&unknown, Duration::ZERO, now()));
        let text = reason(&lock(unknown, Some(2)), "demo", TEN_MINUTES, now(), false);
        assert!(
            text.starts_with("another deploy in progress since an unknown time (upgrade of revision 3, pending-upgrade, unknown age)"),
            "{text}"
        );
        let skewed = pending(3, "pending-rollback", Some("2026-12-01T10:00:30Z"));
        assert!(is_young(&skewed, Duration::ZERO, now()));
        assert!(
            reason(&lock(skewed, Some(2)), "demo", TEN_MINUTES, now(), false)
                .contains("(rollback of revision 3")
        );
    }

    #[test]
    fn helm_refusals_because_of_another_operation_are_recognised() {
        let tail = |l: &str| vec!["level=WARN msg=x".to_string(), l.to_string()];
        for line in [
            "Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress",
            "Error: UPGRADE FAILED: release: already exists",
            "Error: release: already exists",
        ] {
            assert_eq!(refusal(&tail(line)), Some(line));
        }
        assert_eq!(
            refusal(&tail("Error: UPGRADE FAILED: post-upgrade hooks failed")),
            None
        );
        assert_eq!(
            refusal(&["another operation (install/upgrade/rollback) is in progress".into()]),
            None,
            "only helm's Error: line"
        );
    }

    #[test]
    fn a_refused_deploy_names_the_other_operation_and_waits() {
        let error = "Error: UPGRADE FAILED: release: already exists";
        let other = pending(2, "pending-upgrade", Some("2026-12-01T09:59:59Z"));
        assert_eq!(
            refused_reason(error, Some(&other), now()),
            "another deploy in progress since 2026-12-01T09:59:59Z (upgrade of revision 2, \
             pending-upgrade, 1s ago): helm refused this one (Error: UPGRADE FAILED: release: \
             already exists); this run wrote no revision: wait for it to finish, then run this \
             deploy again"
        );
        let finished = Revision {
            status: "deployed".into(),
            ..other
        };
        let text = refused_reason(error, Some(&finished), now());
        assert!(
            text.starts_with("another deploy ran at the same time (upgrade of revision 2, now deployed, since 2026-12-01T09:59:59Z)"),
            "{text}"
        );
        for text in [text, refused_reason(error, None, now())] {
            assert!(text.contains("this run wrote no revision"), "{text}");
            assert!(!text.contains("rollback"), "{text}");
        }
    }
}
