use super::*;

fn ended(code: i32) -> Lane {
    Lane::Ended { code }
}

#[test]
fn the_fleet_exits_with_its_worst_verdict_one_over_three_over_four_over_zero() {
    assert_eq!(worst(&[ended(0), ended(3), ended(1)]), 1);
    assert_eq!(worst(&[ended(0), ended(3), ended(4)]), 3);
    assert_eq!(worst(&[ended(4), ended(0)]), 4);
    assert_eq!(worst(&[ended(0), ended(0)]), 0);
    assert_eq!(
        worst(&[ended(3), ended(7)]),
        7,
        "an unknown code is a failure"
    );
}

#[test]
fn a_target_that_never_started_or_never_ended_fails_the_fleet_closed() {
    let not_started = Lane::NotStarted {
        reason: "the canary failed".into(),
    };
    assert_eq!(worst(&[ended(0), not_started]), 1);
    assert_eq!(worst(&[ended(0), Lane::Running]), 1);
    assert_eq!(worst(&[ended(0), Lane::Waiting]), 1);
    assert_eq!(worst(&[]), 1, "an empty fleet landed nowhere");
}

#[test]
fn the_summary_line_counts_each_outcome_in_order() {
    let lanes = [
        ended(0),
        ended(0),
        ended(3),
        ended(1),
        ended(0),
        Lane::NotStarted {
            reason: "--stop-on-failure".into(),
        },
    ];
    let s = Summary::of(&lanes);
    assert_eq!(
        s.line(),
        "3 landed · 1 live-init-incomplete · 1 failed · 1 not started"
    );
    assert_eq!(
        Summary::of(&[Lane::Running, Lane::Waiting]).line(),
        "2 running"
    );
    assert_eq!(Summary::of(&[]).line(), "no targets");
}

mod drive {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    use super::super::drive::{Options, drive};
    use super::super::{Lane, Member, Target};
    use crate::engine::state::PlanSummary;

    fn fleet(labels: &[&str]) -> Vec<Arc<Member>> {
        labels
            .iter()
            .map(|l| {
                let target = Target {
                    label: l.to_string(),
                    context: format!("ctx-{l}"),
                    namespace: None,
                    values: vec![],
                    set: vec![],
                };
                Arc::new(Member::new(target, PlanSummary::default()))
            })
            .collect()
    }

    fn options(parallel: usize) -> Options {
        Options {
            parallel,
            canary: None,
            stop_on_failure: false,
        }
    }

    /// Each target's code is the number in its label; a start sleeps a while so overlaps show.
    fn code_of(m: &Member) -> i32 {
        m.target
            .label
            .trim_start_matches(char::is_alphabetic)
            .parse()
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn every_target_runs_and_ends_with_its_own_code() {
        let members = fleet(&["a0", "b3", "c1"]);
        let codes = drive(
            &members,
            options(8),
            CancellationToken::new(),
            |m| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                code_of(&m)
            },
        )
        .await;
        assert_eq!(codes, vec![0, 3, 1]);
        assert_eq!(*members[1].lane.borrow(), Lane::Ended { code: 3 });
        assert_eq!(
            super::super::worst(
                members
                    .iter()
                    .map(|m| m.lane.borrow().clone())
                    .collect::<Vec<_>>()
                    .iter()
            ),
            1
        );
    }

    #[tokio::test]
    async fn no_more_than_parallel_targets_run_at_once() {
        let members = fleet(&["a0", "b0", "c0", "d0", "e0"]);
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let codes = drive(&members, options(2), CancellationToken::new(), |m| {
            let (now, most) = (now.clone(), most.clone());
            async move {
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(n, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                code_of(&m)
            }
        })
        .await;
        assert_eq!(codes, vec![0; 5]);
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_failing_canary_starts_no_other_target() {
        let members = fleet(&["a0", "canary1", "c0"]);
        let started = Arc::new(AtomicUsize::new(0));
        let mut opts = options(8);
        opts.canary = Some(1);
        let codes = drive(&members, opts, CancellationToken::new(), |m| {
            let started = started.clone();
            async move {
                started.fetch_add(1, Ordering::SeqCst);
                code_of(&m)
            }
        })
        .await;
        assert_eq!(started.load(Ordering::SeqCst), 1, "only the canary ran");
        assert_eq!(codes, vec![1, 1, 1]);
        match &*members[0].lane.borrow() {
            Lane::NotStarted { reason } => assert!(reason.contains("canary1"), "{reason}"),
            other => panic!("not started expected: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_landing_canary_runs_first_and_alone_then_the_rest() {
        let members = fleet(&["a0", "canary0", "c3"]);
        let order = Arc::new(std::sync::Mutex::new(vec![]));
        let mut opts = options(8);
        opts.canary = Some(1);
        let codes = drive(&members, opts, CancellationToken::new(), |m| {
            let order = order.clone();
            async move {
                order.lock().unwrap().push(m.target.label.clone());
                tokio::time::sleep(Duration::from_millis(20)).await;
                code_of(&m)
            }
        })
        .await;
        assert_eq!(codes, vec![0, 0, 3]);
        assert_eq!(order.lock().unwrap()[0], "canary0");
    }

    #[tokio::test]
    async fn stop_on_failure_starts_no_new_target_after_a_failure() {
        let members = fleet(&["a1", "b0", "c0"]);
        let mut opts = options(1);
        opts.stop_on_failure = true;
        let codes = drive(&members, opts, CancellationToken::new(), |m| async move {
            code_of(&m)
        })
        .await;
        assert_eq!(codes, vec![1, 1, 1]);
        assert!(
            matches!(&*members[2].lane.borrow(), Lane::NotStarted { reason } if reason.contains("--stop-on-failure"))
        );
        // Without the flag the rest still run.
        let members = fleet(&["a1", "b0", "c0"]);
        let codes = drive(
            &members,
            options(1),
            CancellationToken::new(),
            |m| async move { code_of(&m) },
        )
        .await;
        assert_eq!(codes, vec![1, 0, 0]);
    }

    #[tokio::test]
    async fn the_fleets_cancel_reaches_every_running_target_and_starts_no_new_one() {
        let members = fleet(&["a0", "b0", "c0"]);
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            trigger.cancel();
        });
        let codes = drive(&members, options(2), cancel, |m| async move {
            m.cancel.cancelled().await;
            1
        })
        .await;
        assert_eq!(codes, vec![1, 1, 1]);
        assert!(members[0].cancel.is_cancelled() && members[1].cancel.is_cancelled());
        assert!(matches!(
            &*members[2].lane.borrow(),
            Lane::NotStarted { .. }
        ));
    }
}
