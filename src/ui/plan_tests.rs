//! The plan pane (`--plan`): snapshots of the list and of one object's diff, and the keys that
//! answer it (`y` approves once, `n` declines, Enter/Esc open and close a diff).

use ratatui::crossterm::event::KeyCode;

use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::plan;
use crate::engine::state::DeployState;
use crate::ui::app::UiState;
use crate::ui::deck::Effect;
use crate::ui::fixture::Story;
use crate::ui::testkit::{SIZES, assert_inert, press};

const OLD: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: demo-web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: 'registry.example/web:1.0'}]}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: demo-db}
spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}}
  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-legacy}
data: {mode: legacy}
---
apiVersion: v1
kind: Secret
metadata: {name: demo-creds}
stringData: {password: plan-s3cr3t-one}
";

/// Preflight done, the plan on screen, the engine waiting for the answer.
fn planned(plan_only: bool) -> Story {
    let mut s = Story::new();
    s.state.plan.plan = true;
    s.state.plan.plan_only = plan_only;
    s.at(0.0).send(Event::StepStarted {
        step: Step::Preflight,
    });
    s.at(0.5).send(Event::StepEnded {
        step: Step::Preflight,
        outcome: StepOutcome::Succeeded,
    });
    s.send(Event::StepStarted { step: Step::Plan });
    let new = OLD
        .replace("web:1.0", "web:2.0")
        .replace("storage: 1Gi", "storage: 5Gi")
        .replace(
            "name: demo-legacy}\ndata: {mode: legacy}",
            "name: demo-extra}\ndata: {mode: extra}",
        )
        .replace("plan-s3cr3t-one", "plan-s3cr3t-two");
    let old = plan::parse(OLD, "apps", "old").expect("valid");
    let new = plan::parse(&new, "apps", "new").expect("valid");
    let live = old.clone();
    s.at(1.2)
        .send(Event::Plan(plan::compare(Some(&old), &new, &live)));
    if plan_only {
        s.send(Event::StepEnded {
            step: Step::Plan,
            outcome: StepOutcome::Succeeded,
        });
        for step in [Step::Upgrade, Step::Rollout, Step::Init] {
            s.send(Event::StepStarted { step });
            s.send(Event::StepEnded {
                step,
                outcome: StepOutcome::Skipped {
                    reason: "--plan-only: nothing written".into(),
                },
            });
        }
        let verdict = crate::engine::verdict::decide(&s.state);
        s.send(Event::Verdict(verdict));
    }
    s
}

fn screens(name: &str, story: &Story, setup: impl Fn(&mut UiState, &DeployState)) {
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        story.render(&mut ui, w, h);
        setup(&mut ui, &story.state);
        let screen = story.render(&mut ui, w, h);
        assert!(!screen.contains("s3cr3t"), "{screen}");
        assert_inert(&screen);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn plan_pane_lists_objects_with_markers_and_tags() {
    screens("plan_pane", &planned(false), |_, _| {});
}

#[test]
fn plan_object_diff_is_shown_on_enter() {
    // The list is in kind order: ConfigMap extra, ConfigMap legacy, Deployment web, ...
    screens("plan_diff", &planned(false), |ui, state| {
        press(ui, state, KeyCode::Down);
        press(ui, state, KeyCode::Down);
        press(ui, state, KeyCode::Enter);
    });
}

#[test]
fn plan_only_verdict_shows_the_plan_with_changes_pending() {
    screens("plan_only", &planned(true), |_, _| {});
}

#[test]
fn y_approves_once_and_n_declines() {
    let story = planned(false);
    let state = &story.state;
    let mut ui = UiState::new();
    assert_eq!(
        press(&mut ui, state, KeyCode::Char('y')),
        Effect::ApprovePlan
    );
    // A second key is not a second answer.
    assert_eq!(press(&mut ui, state, KeyCode::Char('n')), Effect::None);
    let mut ui = UiState::new();
    assert_eq!(
        press(&mut ui, state, KeyCode::Char('n')),
        Effect::DeclinePlan
    );
}

#[test]
fn enter_opens_the_diff_and_esc_goes_back_to_the_list() {
    let story = planned(false);
    let state = &story.state;
    let mut ui = UiState::new();
    press(&mut ui, state, KeyCode::Down);
    assert_eq!(ui.plan.list.index, 1);
    press(&mut ui, state, KeyCode::Enter);
    assert!(ui.plan.diff.is_some());
    assert!(
        ui.detail.is_none(),
        "Enter on the plan is not the workload drill-down"
    );
    // As a 3-row pane leaves it (the frame sets the height).
    if let Some(d) = ui.plan.diff.as_mut() {
        d.height = 3;
    }
    press(&mut ui, state, KeyCode::Down);
    assert_eq!(
        ui.plan.diff.as_ref().map(|d| d.top),
        Some(1),
        "↓ scrolls the diff"
    );
    assert_eq!(ui.plan.list.index, 1, "and does not move the list");
    press(&mut ui, state, KeyCode::Esc);
    assert!(ui.plan.diff.is_none());
}

#[test]
fn plan_only_never_takes_an_answer() {
    let story = planned(true);
    let mut ui = UiState::new();
    assert_eq!(
        press(&mut ui, &story.state, KeyCode::Char('y')),
        Effect::None
    );
    assert_eq!(
        press(&mut ui, &story.state, KeyCode::Char('q')),
        Effect::Quit
    );
}

#[test]
fn after_the_answer_the_deploy_screen_returns() {
    let mut story = planned(false);
    story.send(Event::PlanAnswer { approved: true });
    story.send(Event::StepEnded {
        step: Step::Plan,
        outcome: StepOutcome::Succeeded,
    });
    assert!(!crate::ui::plan::showing(&story.state));
    let screen = story.render(&mut UiState::new(), 80, 24);
    assert!(screen.contains("Workloads"), "{screen}");
}

/// Issue 23 item 6: a plan object's note (a CRD from `crds/`, a custom resource the server
/// cannot check) is drawn as a tag of its row, as headless prints it.
#[test]
fn a_note_is_drawn_as_a_tag_of_its_object() {
    let mut s = Story::new();
    s.state.plan.plan = true;
    s.at(0.0).send(Event::StepStarted { step: Step::Plan });
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.deck.example.test}\n";
    let new = plan::parse(crd, "apps", "new").expect("valid");
    let mut planned = plan::compare(None, &new, &Default::default());
    planned.objects[0].note = Some("from crds/: helm creates it before the templates".into());
    s.send(Event::Plan(planned));
    let mut ui = UiState::new();
    let screen = s.render(&mut ui, 200, 40);
    assert!(
        screen.contains("CustomResourceDefinition/widgets.deck.example.test")
            && screen.contains("from crds/: helm creates it before the templates"),
        "{screen}"
    );
}
