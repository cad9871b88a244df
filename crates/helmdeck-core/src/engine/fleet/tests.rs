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
