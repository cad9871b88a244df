//! A fleet told as its members' engines would fold it, for the fleet screen's tests: each
//! member's state is a deploy story's events applied through [`DeployState::apply`] into its
//! own shared state, and its lane is set as the drive sets it.

use std::sync::Arc;

use crate::engine::fleet::{Lane, Member, Target};
use crate::engine::state::PlanSummary;
use crate::ui::fixture::{Story, wall};

/// The EKS ARN a context may be: colons and a slash, longer than any column.
pub const EKS: &str = "arn:aws:eks:eu-west-2:123456789012:cluster/kch";

pub fn target(label: &str, context: &str) -> Target {
    Target {
        label: label.into(),
        context: context.into(),
        namespace: Some("apps".into()),
        values: vec![],
        set: vec![],
    }
}

/// A member whose engine folded `story`'s events (none: not started), in `lane`.
pub fn member(label: &str, context: &str, story: Option<Story>, lane: Lane) -> Arc<Member> {
    let plan = PlanSummary {
        context: Some(context.into()),
        ..Story::new().state.plan
    };
    let m = Member::new(target(label, context), plan);
    for (t, event) in story.iter().flat_map(|s| &s.events) {
        m.state.send_modify(|s| s.apply(event, *t, &wall(*t)));
    }
    m.lane.send_replace(lane);
    Arc::new(m)
}

/// Six targets, one in each place a target can be: landed, live with the init incomplete,
/// failed (a long label and an ARN), mid-rollout, never started, waiting for a slot.
pub fn fleet() -> Vec<Arc<Member>> {
    vec![
        member(
            "eu-prod",
            EKS,
            Some(Story::landed()),
            Lane::Ended { code: 0 },
        ),
        member(
            "us-prod",
            "gke_acme-prod_us-central1_main",
            Some(Story::init_incomplete()),
            Lane::Ended { code: 3 },
        ),
        member(
            "ap-southeast-2-production-blue-canary-cluster",
            "arn:aws:eks:ap-southeast-2:123456789012:cluster/production-blue-canary",
            Some(Story::failed()),
            Lane::Ended { code: 1 },
        ),
        member(
            "staging",
            "kind-staging",
            Some(Story::rollout()),
            Lane::Running,
        ),
        member(
            "dr-site",
            "dr-site",
            None,
            Lane::NotStarted {
                reason: "--stop-on-failure: a target failed (exit 1)".into(),
            },
        ),
        member("qa", "kind-qa", None, Lane::Waiting),
    ]
}

/// Each member's clock as the screen would have it: how long its lane has been Running.
pub fn clocks() -> Vec<Option<f64>> {
    vec![Some(75.5), Some(81.0), Some(338.6), Some(62.0), None, None]
}

/// Every member of `fleet` ended (the running one landed, the waiting one never started).
pub fn ended() -> Vec<Arc<Member>> {
    let mut members = fleet();
    members[3] = member(
        "staging",
        "kind-staging",
        Some(Story::landed()),
        Lane::Ended { code: 0 },
    );
    members[5].lane.send_replace(Lane::NotStarted {
        reason: "cancelled before it started".into(),
    });
    members
}
