//! The workloads pane's NAME column with a chart whose names all share a long prefix (the
//! FLIP trust chart's `trust-release-flip-trust-`): the prefix is said once in the title and
//! the part that differs stays visible, at 80 and at 120 columns.

use crate::engine::event::{Event, Step};
use crate::ui::app::UiState;
use crate::ui::fixture::{Story, workload};
use crate::ui::panes::workloads::shared_prefix;

const PREFIX: &str = "trust-release-flip-trust-";

/// The FLIP-shaped release mid-rollout: trust-api crash-looping, the GPU client optional.
fn flip() -> Story {
    let mut story = Story::new();
    story.send(Event::StepStarted {
        step: Step::Rollout,
    });
    for (kind, name) in [
        ("Deployment", "xnat-web"),
        ("Deployment", "data-access-api"),
        ("Deployment", "imaging-api"),
        ("Deployment", "orthanc"),
        ("StatefulSet", "omop-db"),
        ("StatefulSet", "xnat-db"),
    ] {
        story.send(Event::Workload(workload(kind, &format!("{PREFIX}{name}"))));
    }
    let api = format!("{PREFIX}trust-api");
    story.send(Event::Workload(crate::engine::event::WorkloadView {
        ready: false,
        ready_replicas: 0,
        available: 0,
        message: format!(
            "Waiting for deployment \"{api}\" rollout to finish: 0 of 2 updated replicas are available..."
        ),
        pod_causes: vec![format!(
            "pod {api}-6c9f-x2x: CrashLoopBackOff (exit 1, 3 restarts)"
        )],
        ..workload("Deployment", &api)
    }));
    story.send(Event::Workload(crate::engine::event::WorkloadView {
        optional: true,
        optional_because: Some("--optional *-fl-client".into()),
        ready: false,
        ready_replicas: 0,
        available: 0,
        desired: 1,
        message:
            "Waiting for deployment rollout to finish: 0 of 1 updated replicas are available..."
                .into(),
        pod_causes: vec![format!("pod {PREFIX}fl-client-7d-q: Unschedulable")],
        ..workload("Deployment", &format!("{PREFIX}fl-client"))
    }));
    story
}

#[test]
fn flip_names_show_the_part_that_differs_at_80_and_120_columns() {
    let story = flip();
    for (w, h) in [(80, 24), (120, 36)] {
        let screen = story.render(&mut UiState::new(), w, h);
        assert!(
            screen.contains(&format!("· {PREFIX}…")),
            "the prefix once, in the title:\n{screen}"
        );
        for part in ["…trust-api", "…data-access-api", "…fl-client", "…xnat-web"] {
            assert!(screen.contains(part), "{part} at {w} columns:\n{screen}");
        }
        insta::assert_snapshot!(format!("flip_names_{w}x{h}"), screen);
    }
}

#[test]
fn the_prefix_is_elided_only_when_a_name_would_be_cut() {
    let long = [
        "trust-release-flip-trust-trust-api",
        "trust-release-flip-trust-omop-db",
    ];
    assert_eq!(shared_prefix(&long, 18), Some(PREFIX));
    // Everything fits: the names are left whole (the demo's `demo-` stays).
    assert_eq!(shared_prefix(&long, 40), None);
    assert_eq!(shared_prefix(&["demo-api", "demo-web"], 18), None);
    // A short prefix is not worth the `…`, even when a name is cut.
    assert_eq!(
        shared_prefix(&["demo-api", "demo-a-very-long-name-indeed"], 18),
        None
    );
    // The cut is after a `-`: `trust-api` and `trust-seed` share `trust-`, not `trust-s`.
    assert_eq!(
        shared_prefix(&["flip-trust-api-server", "flip-trust-seed-worker"], 10),
        Some("flip-trust-")
    );
    // One workload, no shared dash, or a name that is all prefix: nothing to elide.
    assert_eq!(
        shared_prefix(&["trust-release-flip-trust-trust-api"], 10),
        None
    );
    assert_eq!(
        shared_prefix(&["alphabetical-x", "alphanumeric-y"], 5),
        None
    );
    assert_eq!(shared_prefix(&["web-", "web-frontend-long"], 5), None);
}
