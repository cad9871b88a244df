//! The `u` (stuck lock) and `R` (rollback) prompts: snapshots of both and of the rollback on
//! the timeline, the keys that open, answer and close them, and the guard on `R`.

use ratatui::crossterm::event::KeyCode;

use crate::engine::event::{Event, LockView, RollbackView, Step, StepOutcome};
use crate::engine::state::DeployState;
use crate::ui::app::UiState;
use crate::ui::deck::{Effect, Overlay};
use crate::ui::fixture::Story;
use crate::ui::recover::rollback_offer;
use crate::ui::testkit::{SIZES, assert_inert, press};

fn lock_view(last_deployed: Option<i64>, refusal: Option<&str>) -> LockView {
    let command = match last_deployed {
        Some(v) => format!("helm rollback demo {v} -n apps --kube-context prod-eu"),
        None => "kubectl delete secret sh.helm.release.v1.demo.v1 -n apps --context prod-eu".into(),
    };
    LockView {
        revision: 5,
        status: "pending-upgrade".into(),
        age: "2h ago".into(),
        description: Some("Upgrade \u{1b}[31mstarted\u{202e} by ci-runner-7".into()),
        last_deployed,
        command,
        refusal: refusal.map(str::to_string),
    }
}

/// Preflight stopped on the lock; the verdict is in.
fn locked(view: LockView) -> Story {
    let mut s = Story::preflight();
    s.send(Event::Release {
        revision_before: Some(5),
        deployed_before: view.last_deployed,
        revision: None,
        chart: None,
    });
    s.send(Event::Lock(view));
    s.at(0.9).send(Event::StepEnded {
        step: Step::Preflight,
        outcome: StepOutcome::Failed {
            reason: "release demo is locked by pending-upgrade revision 5".into(),
        },
    });
    let v = crate::engine::verdict::decide(&s.state);
    s.send(Event::Verdict(v));
    s
}

fn rolled_back(status: &str, revision: Option<i64>) -> Story {
    let mut s = Story::failed();
    s.state.verdict = None;
    s.at(340.0).send(Event::Rollback(RollbackView {
        from: 5,
        to: 4,
        revision,
        status: serde_json::from_value(serde_json::json!(status)).expect("a rollback status"),
        reason: None,
    }));
    let v = crate::engine::verdict::decide(&s.state);
    s.send(Event::Verdict(v));
    s
}

fn screens(name: &str, story: &Story, keys: &[KeyCode]) {
    for (w, h) in SIZES {
        let mut ui = UiState::new();
        story.render(&mut ui, w, h);
        for key in keys {
            press(&mut ui, &story.state, *key);
        }
        let screen = story.render(&mut ui, w, h);
        assert_inert(&screen);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn lock_prompt_shows_the_revision_its_age_author_and_command() {
    let story = locked(lock_view(Some(4), None));
    screens("lock_prompt", &story, &[KeyCode::Char('u')]);
    let screen = {
        let mut ui = UiState::new();
        press(&mut ui, &story.state, KeyCode::Char('u'));
        story.render(&mut ui, 160, 48)
    };
    for shown in [
        "revision 5 (pending-upgrade), written 2h ago",
        "ci-runner-7",
        "revision 4",
        "helm rollback demo 4 -n apps --kube-context prod-eu",
        "y: roll it back and deploy",
    ] {
        assert!(screen.contains(shown), "{shown}\n{screen}");
    }
}

#[test]
fn young_lock_prompt_says_why_it_is_refused_and_offers_no_y() {
    let story = locked(lock_view(
        Some(4),
        Some(
            "--recover-lock refused: revision 5 (pending-upgrade) is younger than --lock-min-age 300s",
        ),
    ));
    screens("lock_prompt_young", &story, &[KeyCode::Char('u')]);
    let mut ui = UiState::new();
    press(&mut ui, &story.state, KeyCode::Char('u'));
    let screen = story.render(&mut ui, 160, 48);
    assert!(
        screen.contains("--recover-lock refused") && !screen.contains("y: "),
        "{screen}"
    );
    assert_eq!(
        press(&mut ui, &story.state, KeyCode::Char('y')),
        Effect::None
    );
    assert_eq!(
        ui.overlay,
        Overlay::Unlock,
        "y does nothing on a refused lock"
    );
}

#[test]
fn pending_install_prompt_shows_the_delete_command_never_run() {
    let story = locked(lock_view(None, Some("no revision was ever deployed")));
    let mut ui = UiState::new();
    press(&mut ui, &story.state, KeyCode::Char('u'));
    let screen = story.render(&mut ui, 160, 48);
    assert!(
        screen.contains("kubectl delete secret sh.helm.release.v1.demo.v1")
            && screen.contains("never runs it")
            && screen.contains("resources stay"),
        "{screen}"
    );
    assert_eq!(
        press(&mut ui, &story.state, KeyCode::Char('y')),
        Effect::None
    );
}

#[test]
fn u_opens_the_lock_prompt_y_confirms_and_n_or_esc_close() {
    let story = locked(lock_view(Some(4), None));
    let state = &story.state;
    let mut ui = UiState::new();
    assert_eq!(press(&mut ui, state, KeyCode::Char('u')), Effect::None);
    assert_eq!(ui.overlay, Overlay::Unlock);
    assert_eq!(press(&mut ui, state, KeyCode::Char('y')), Effect::Unlock);
    assert_eq!(ui.overlay, Overlay::None);
    for close in [KeyCode::Char('n'), KeyCode::Esc] {
        press(&mut ui, state, KeyCode::Char('u'));
        assert_eq!(press(&mut ui, state, close), Effect::None);
        assert_eq!(ui.overlay, Overlay::None);
    }
    // Cleared and preflight went on: nothing to offer any more.
    let mut cleared = locked(lock_view(Some(4), None));
    cleared.state.steps.clear();
    cleared.send(Event::StepEnded {
        step: Step::Preflight,
        outcome: StepOutcome::Succeeded,
    });
    let mut ui = UiState::new();
    press(&mut ui, &cleared.state, KeyCode::Char('u'));
    assert_eq!(ui.overlay, Overlay::None);
    // No lock: `u` only says so.
    let failed = Story::failed();
    let mut ui = UiState::new();
    press(&mut ui, &failed.state, KeyCode::Char('u'));
    assert_eq!(ui.overlay, Overlay::None);
    assert!(ui.notice.is_some());
}

#[test]
fn r_opens_the_rollback_prompt_y_rolls_back_to_the_deployed_revision() {
    let story = Story::failed();
    let state = &story.state;
    let mut ui = UiState::new();
    press(&mut ui, state, KeyCode::Char('R'));
    assert_eq!(ui.overlay, Overlay::Rollback);
    let screen = story.render(&mut ui, 80, 24);
    assert!(screen.contains("helm rollback demo 4 -n apps"), "{screen}");
    assert_eq!(
        press(&mut ui, state, KeyCode::Char('y')),
        Effect::Rollback(4)
    );
    assert_eq!(ui.overlay, Overlay::None);
    press(&mut ui, state, KeyCode::Char('R'));
    assert_eq!(press(&mut ui, state, KeyCode::Esc), Effect::None);
    assert_eq!(ui.overlay, Overlay::None);
    // Before the verdict `R` opens nothing.
    let running = Story::rollout();
    let mut ui = UiState::new();
    press(&mut ui, &running.state, KeyCode::Char('R'));
    assert_eq!(ui.overlay, Overlay::None);
    assert!(ui.notice.is_some());
}

#[test]
fn rollback_prompt_snapshots() {
    screens("rollback_prompt", &Story::failed(), &[KeyCode::Char('R')]);
}

#[test]
fn rollback_timeline_shows_both_revisions_and_the_verdict_says_rolled_back() {
    let story = rolled_back("rolled-back", Some(6));
    screens("rollback_timeline", &story, &[]);
    let screen = story.render(&mut UiState::new(), 160, 48);
    assert!(
        screen.contains("revision 4 → 5 ↺ 6") && screen.contains("rollback 5 → 4 as revision 6"),
        "{screen}"
    );
    assert_eq!(story.state.verdict.as_ref().map(|v| v.code()), Some(1));
    assert!(screen.contains("rolled back to 4"), "{screen}");
}

fn failed_with(edit: impl Fn(&mut DeployState)) -> Option<i64> {
    let mut state = Story::failed().state;
    edit(&mut state);
    rollback_offer(&state)
}

#[test]
fn r_is_offered_only_after_a_failure_that_wrote_the_latest_revision() {
    assert_eq!(failed_with(|_| {}), Some(4));
    assert_eq!(
        failed_with(|s| s.verdict.as_mut().map_or((), |v| v.outcome =
            helmdeck_core::engine::verdict::Outcome::LiveInitIncomplete)),
        None,
        "never after exit 3"
    );
    assert_eq!(
        failed_with(|s| s.verdict = None),
        None,
        "never before the verdict"
    );
    assert_eq!(
        // Revision 5 was already the latest (a failed one) and this run wrote nothing.
        failed_with(|s| s.revision_before = s.revision),
        None,
        "nothing written (another operation was in progress)"
    );
    assert_eq!(failed_with(|s| s.revision = None), None, "nothing written");
    assert_eq!(
        failed_with(|s| {
            if let Some(rollout) = s.steps.get_mut(&Step::Rollout) {
                rollout.outcome = Some(StepOutcome::Cancelled);
            }
        }),
        None,
        "never after a cancel (--rollback-on-failure never rolls one back)"
    );
    assert_eq!(
        failed_with(|s| s.deployed_before = None),
        None,
        "nothing deployed before"
    );
    assert_eq!(
        failed_with(|s| s.rollback = rolled_back("running", None).state.rollback),
        None,
        "a rollback already started"
    );
}

#[test]
fn a_rollback_asked_for_after_the_verdict_reopens_it_until_decided_again() {
    let mut story = Story::failed();
    assert!(story.state.verdict.is_some());
    story.send(Event::Rollback(RollbackView {
        from: 5,
        to: 4,
        revision: None,
        status: helmdeck_core::engine::event::RollbackStatus::Running,
        reason: None,
    }));
    assert_eq!(
        story.state.verdict, None,
        "the banner gives way to the rollback"
    );
    assert_eq!(rollback_offer(&story.state), None);
    let mut ui = UiState::new();
    press(&mut ui, &story.state, KeyCode::Char('q'));
    assert_eq!(
        ui.overlay,
        Overlay::Confirm,
        "q while it runs asks before cancelling"
    );
}

#[test]
fn the_key_bar_offers_r_only_while_the_engine_waits_for_it() {
    let story = Story::failed();
    let keys = |waits: bool| {
        let mut ui = UiState::new();
        ui.rollback_waits = waits;
        let screen = story.render(&mut ui, 80, 24);
        screen.lines().last().unwrap_or_default().to_string()
    };
    assert!(keys(true).contains("R roll back"), "{}", keys(true));
    assert!(keys(true).contains("q quit (exit 1)"), "{}", keys(true));
    assert!(
        !keys(false).contains("R roll back"),
        "a replay answers nothing"
    );
    let rolled = rolled_back("rolled-back", Some(6));
    let mut ui = UiState::new();
    ui.rollback_waits = true;
    let screen = rolled.render(&mut ui, 80, 24);
    assert!(
        !screen
            .lines()
            .last()
            .unwrap_or_default()
            .contains("R roll back"),
        "never once a rollback ran"
    );
}

/// Preflight found the lock and waits for `u` (no verdict yet).
fn waiting_on(view: LockView) -> Story {
    let mut s = Story::preflight();
    s.send(Event::Release {
        revision_before: Some(5),
        deployed_before: view.last_deployed,
        revision: None,
        chart: None,
    });
    s.send(Event::Lock(view));
    s
}

#[test]
fn the_key_bar_offers_u_only_while_preflight_waits_for_it() {
    let keys = |story: &Story, waits: bool| {
        let mut ui = UiState::new();
        ui.unlock_waits = waits;
        let screen = story.render(&mut ui, 80, 24);
        screen.lines().last().unwrap_or_default().to_string()
    };
    let waiting = waiting_on(lock_view(Some(4), None));
    let bar = keys(&waiting, true);
    // First on the bar (each rendered line is quoted), so a narrow screen keeps it.
    assert!(bar.starts_with("\" u clear the lock · q cancel"), "{bar}");
    // Pressed, `u` opens the prompt it offers.
    let mut ui = UiState::new();
    press(&mut ui, &waiting.state, KeyCode::Char('u'));
    assert_eq!(ui.overlay, Overlay::Unlock);
    assert!(
        !keys(&waiting, false).contains("u clear"),
        "a replay answers nothing"
    );
    let refused = waiting_on(lock_view(Some(4), Some("younger than --lock-min-age 300s")));
    assert!(
        !keys(&refused, true).contains("u clear"),
        "a refused lock is not waited on"
    );
    let ended = locked(lock_view(Some(4), None));
    assert!(
        !keys(&ended, true).contains("u clear"),
        "not after the verdict"
    );
}
