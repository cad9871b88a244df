//! `--plan` / `--plan-only`: the plan step's say comes before every other step's.
use super::*;
use crate::engine::event::Event;
use crate::engine::plan::{self, Plan};
use crate::engine::state::PlanSummary;

fn planned(
    plan_only: bool,
    outcomes: &[(Step, StepOutcome)],
    changes: Option<Plan>,
) -> DeployState {
    let mut s = DeployState::new(PlanSummary {
        release: "demo".into(),
        namespace: "apps".into(),
        plan: true,
        plan_only,
        ..Default::default()
    });
    if let Some(p) = changes {
        s.apply(&Event::Plan(p), 0.5, "t");
    }
    for (step, outcome) in outcomes {
        s.apply(
            &Event::StepEnded {
                step: *step,
                outcome: outcome.clone(),
            },
            1.0,
            "t",
        );
    }
    s
}

fn some_change() -> Plan {
    let new = plan::parse(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        "apps",
        "t",
    )
    .expect("valid");
    plan::compare(Some(&Default::default()), &new, &Default::default())
}

fn skipped() -> StepOutcome {
    StepOutcome::Skipped {
        reason: "--plan-only: nothing written".into(),
    }
}

fn plan_only_run(changes: Plan) -> DeployState {
    use Step::*;
    planned(
        true,
        &[
            (Preflight, StepOutcome::Succeeded),
            (Plan, StepOutcome::Succeeded),
            (Upgrade, skipped()),
            (Rollout, skipped()),
            (Init, skipped()),
        ],
        Some(changes),
    )
}

#[test]
fn plan_only_is_4_with_changes_and_0_without() {
    let v = decide(&plan_only_run(some_change()));
    assert_eq!((v.code(), v.outcome), (4, Outcome::ChangesPending), "{v:?}");
    assert!(v.reason.starts_with("changes pending: 1 added"), "{v:?}");
    let v = decide(&plan_only_run(Plan::default()));
    assert_eq!((v.code(), v.outcome), (0, Outcome::NoChanges), "{v:?}");
}

#[test]
fn a_declined_plan_is_1_cancelled_plan_declined() {
    let mut s = planned(
        false,
        &[(Step::Preflight, StepOutcome::Succeeded)],
        Some(some_change()),
    );
    s.apply(&Event::PlanAnswer { approved: false }, 2.0, "t");
    s.apply(
        &Event::StepEnded {
            step: Step::Plan,
            outcome: StepOutcome::Skipped {
                reason: "plan declined: nothing written".into(),
            },
        },
        2.0,
        "t",
    );
    let v = decide(&s);
    assert_eq!(
        (v.code(), v.reason.as_str()),
        (1, "cancelled: plan declined"),
        "{v:?}"
    );
    assert_eq!(v.next, None, "nothing was written: nothing to roll back");
}

#[test]
fn a_failed_plan_is_1_and_an_approved_one_leaves_the_verdict_to_the_deploy() {
    let s = planned(
        false,
        &[
            (Step::Preflight, StepOutcome::Succeeded),
            (
                Step::Plan,
                StepOutcome::Failed {
                    reason: "helm's dry run failed: boom".into(),
                },
            ),
        ],
        None,
    );
    let v = decide(&s);
    assert_eq!(
        (v.code(), v.reason.as_str()),
        (1, "plan failed: helm's dry run failed: boom")
    );
    let mut s = planned(
        false,
        &[
            (Step::Preflight, StepOutcome::Succeeded),
            (Step::Plan, StepOutcome::Succeeded),
        ],
        Some(some_change()),
    );
    s.apply(&Event::PlanAnswer { approved: true }, 2.0, "t");
    // The upgrade never reported: the deploy's own fail-closed rule speaks, not the plan.
    let v = decide(&s);
    assert_eq!(v.code(), 1);
    assert!(v.reason.starts_with("upgrade did not report"), "{v:?}");
}

#[test]
fn a_plan_that_never_ended_fails_closed() {
    let s = planned(false, &[(Step::Preflight, StepOutcome::Succeeded)], None);
    let v = decide(&s);
    assert_eq!(v.code(), 1);
    assert!(v.reason.contains("plan did not report"), "{v:?}");
}
