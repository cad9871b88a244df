//! The fleet screen: the list as insta snapshots at 80x24 and 160x48, hostile names kept
//! inert, and the keys (open, back, the prompt, a target's own cancel) down to the tokens they
//! cancel and the answers they send.

use std::sync::Arc;
use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio_util::sync::CancellationToken;

use crate::engine::ask::{Asks, Question};
use crate::engine::fleet::{Lane, Member, MemberScreen};
use crate::engine::scrub::Scrub;
use crate::ui::deck::{Effect, Overlay};
use crate::ui::fixture::Story;
use crate::ui::fleet::fixture::{self, clocks, ended, fleet, member};
use crate::ui::fleet::list::{self, FleetFrame};
use crate::ui::fleet::live::{FleetScreen, unattended};
use crate::ui::fleet::state::{FleetEffect, FleetUi};
use crate::ui::layout;
use crate::ui::testkit::{Keys, SIZES, assert_inert, press};
use crate::ui::theme::Theme;
use crate::ui::tui::TuiEvent;

impl Keys for FleetUi {
    type Data = Vec<Arc<Member>>;
    type Effect = FleetEffect;
    fn key(&mut self, key: KeyEvent, members: &Vec<Arc<Member>>) -> FleetEffect {
        self.on_key(key, members)
    }
}

fn render(members: &[Arc<Member>], ui: &FleetUi, (w, h): (u16, u16)) -> String {
    let clocks = clocks();
    let ctx = FleetFrame {
        members,
        clocks: &clocks[..members.len().min(clocks.len())],
        theme: Theme::coloured(),
        title: Some("deck rollout"),
        elapsed: 341.0,
    };
    layout::render_to_string(w, h, |f| list::draw(f, &ctx, ui))
}

#[test]
fn the_list_at_both_sizes() {
    let members = fleet();
    for size in SIZES {
        let mut ui = FleetUi::new(members.len());
        ui.selected = 3;
        insta::assert_snapshot!(
            format!("fleet_list_{}x{}", size.0, size.1),
            render(&members, &ui, size)
        );
    }
}

#[test]
fn the_prompt_and_the_ended_fleet() {
    let members = fleet();
    let mut ui = FleetUi::new(members.len());
    press(&mut ui, &members, KeyCode::Char('q'));
    insta::assert_snapshot!("fleet_prompt_80x24", render(&members, &ui, (80, 24)));
    let members = ended();
    let ui = FleetUi::new(members.len());
    insta::assert_snapshot!("fleet_ended_80x24", render(&members, &ui, (80, 24)));
}

/// Labels and contexts come from a kubeconfig and a settings file: an OSC title sequence in
/// one is drawn as inert text, on the list and on the target's own screen.
#[tokio::test]
async fn an_escape_sequence_in_a_label_is_drawn_inert() {
    let hostile = "\u{1b}]0;pwn\u{7}site";
    let members = vec![
        member(
            hostile,
            "ctx\u{1b}[2Jwipe",
            Some(Story::landed()),
            Lane::Ended { code: 0 },
        ),
        member("plain", "kind-plain", None, Lane::Waiting),
    ];
    for size in SIZES {
        let screen = render(&members, &FleetUi::new(2), size);
        assert_inert(&screen);
        // The whole sequence goes, not only its control bytes (the terminal would have
        // taken `]0;pwn` as the window title, and `[2J` as a clear).
        assert!(
            screen.contains("site") && screen.contains("ctxwipe"),
            "{screen}"
        );
        assert!(
            !screen.contains("pwn") && !screen.contains("[2J"),
            "{screen}"
        );
    }
    let mut screen = FleetScreen::new(members, CancellationToken::new(), None, pending_drive());
    key(&mut screen, KeyCode::Enter);
    // Any key clears the notice that it is not connected.
    key(&mut screen, KeyCode::Tab);
    let drawn = layout::render_to_string(160, 48, |f| crate::ui::tui::Screen::draw(&mut screen, f));
    assert_inert(&drawn);
    assert!(drawn.contains("target site"), "{drawn}");
    // The target's own key bar says how to get back to the list.
    assert!(
        drawn.contains("esc fleet") && drawn.contains("q the fleet"),
        "{drawn}"
    );
    assert!(!drawn.contains("pwn") && !drawn.contains("[2J"), "{drawn}");
}

#[test]
fn enter_opens_the_selected_target_and_esc_returns_to_the_list() {
    let members = fleet();
    let mut ui = FleetUi::new(members.len());
    for _ in 0..3 {
        press(&mut ui, &members, KeyCode::Down);
    }
    press(&mut ui, &members, KeyCode::Char('k'));
    press(&mut ui, &members, KeyCode::Char('j'));
    assert_eq!(
        press(&mut ui, &members, KeyCode::Enter),
        FleetEffect::Opened(3)
    );
    assert_eq!(ui.open, Some(3));
    // Enter on the target's screen drills into its first workload; Esc closes that first.
    assert_eq!(press(&mut ui, &members, KeyCode::Enter), FleetEffect::None);
    assert!(ui.targets[3].detail.is_some());
    assert_eq!(press(&mut ui, &members, KeyCode::Esc), FleetEffect::None);
    assert!(ui.targets[3].detail.is_none());
    assert_eq!(ui.open, Some(3), "still on the target");
    // `?` opens its help; Esc closes it before leaving.
    press(&mut ui, &members, KeyCode::Char('?'));
    assert_eq!(press(&mut ui, &members, KeyCode::Esc), FleetEffect::None);
    assert_eq!(
        press(&mut ui, &members, KeyCode::Esc),
        FleetEffect::Closed(3)
    );
    assert_eq!((ui.open, ui.selected), (None, 3));
    // Each target keeps its own screen state: the focus moved on target 3 stays there.
    press(&mut ui, &members, KeyCode::Enter);
    press(&mut ui, &members, KeyCode::Tab);
    let focus = ui.targets[3].focus;
    press(&mut ui, &members, KeyCode::Esc);
    press(&mut ui, &members, KeyCode::Up);
    press(&mut ui, &members, KeyCode::Enter);
    assert_eq!(ui.open, Some(2));
    assert_ne!(ui.targets[2].focus, focus);
    press(&mut ui, &members, KeyCode::Esc);
    press(&mut ui, &members, KeyCode::Down);
    press(&mut ui, &members, KeyCode::Enter);
    assert_eq!(ui.targets[3].focus, focus);
}

#[test]
fn q_after_a_targets_verdict_goes_back_to_the_list() {
    let members = fleet();
    let mut ui = FleetUi::new(members.len());
    press(&mut ui, &members, KeyCode::Enter);
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('q')),
        FleetEffect::Closed(0)
    );
    // A target that never started has nothing to cancel: `q` goes back too.
    ui.selected = 4;
    press(&mut ui, &members, KeyCode::Enter);
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('q')),
        FleetEffect::Closed(4)
    );
}

#[test]
fn q_while_targets_run_asks_first() {
    let members = fleet();
    let mut ui = FleetUi::new(members.len());
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('q')),
        FleetEffect::None
    );
    assert!(ui.asking);
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('n')),
        FleetEffect::None
    );
    assert!(!ui.asking && !ui.cancelling);
    press(&mut ui, &members, KeyCode::Char('q'));
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('y')),
        FleetEffect::CancelAll
    );
    assert!(ui.cancelling);
    // Cancelled, still running: `q` says what it waits for, and leaves only after.
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('q')),
        FleetEffect::None
    );
    assert!(!ui.asking && ui.notice.is_some());
    // Ctrl+C is the fleet's `q`, from a target's screen too.
    let mut ui = FleetUi::new(members.len());
    ui.selected = 3;
    press(&mut ui, &members, KeyCode::Enter);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(ui.on_key(ctrl_c, &members), FleetEffect::Closed(3));
    assert!(ui.asking);
}

#[test]
fn q_once_every_target_settled_quits_at_once() {
    let members = ended();
    let mut ui = FleetUi::new(members.len());
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('q')),
        FleetEffect::Quit
    );
    // A failed target whose engine still waits for `R` has settled too.
    let members = vec![member("eu", "eu", Some(Story::failed()), Lane::Running)];
    let mut ui = FleetUi::new(1);
    assert_eq!(
        press(&mut ui, &members, KeyCode::Char('q')),
        FleetEffect::Quit
    );
}

/// A drive that never ends by itself (the tests end it, or not).
fn pending_drive() -> tokio::task::JoinHandle<Vec<i32>> {
    tokio::spawn(std::future::pending())
}

fn key(screen: &mut FleetScreen, code: KeyCode) {
    screen.handle(TuiEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

#[tokio::test]
async fn y_on_the_prompt_cancels_the_fleet_and_the_screen_waits_for_the_drive() {
    let members = fleet();
    let cancel = CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel::<Vec<i32>>();
    let drive = tokio::spawn(async move { rx.await.unwrap_or_default() });
    let mut screen = FleetScreen::new(members.clone(), cancel.clone(), None, drive);
    key(&mut screen, KeyCode::Char('q'));
    assert!(!cancel.is_cancelled(), "asked, not cancelled yet");
    key(&mut screen, KeyCode::Char('y'));
    assert!(cancel.is_cancelled());
    assert!(
        members.iter().all(|m| !m.cancel.is_cancelled()),
        "the drive relays it, not the screen"
    );
    assert!(
        screen.ui.targets[3].cancelling,
        "the running target's screen says so"
    );
    assert!(!crate::ui::tui::Screen::done(&screen));
    // The drive ends (every target did); the screen stays until `q`.
    for m in &members {
        if *m.lane.borrow() == Lane::Running || *m.lane.borrow() == Lane::Waiting {
            m.lane.send_replace(Lane::Ended { code: 1 });
        }
    }
    tx.send(vec![0, 3, 1, 1, 1, 1]).expect("the drive waits");
    let ended = async {
        while screen.codes.is_none() {
            crate::ui::tui::Screen::changed(&mut screen).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), ended)
        .await
        .expect("the drive's end is seen");
    assert!(!crate::ui::tui::Screen::done(&screen), "stays until q");
    key(&mut screen, KeyCode::Char('q'));
    assert!(crate::ui::tui::Screen::done(&screen));
    assert_eq!(screen.codes, Some(vec![0, 3, 1, 1, 1, 1]));
}

#[tokio::test]
async fn a_signal_cancels_every_target_and_leaves_at_the_end() {
    let cancel = CancellationToken::new();
    let mut screen = FleetScreen::new(fleet(), cancel.clone(), None, pending_drive());
    screen.handle(TuiEvent::Signal(crate::signals::Signal::Terminate));
    assert!(cancel.is_cancelled() && screen.quit);
    assert!(
        !crate::ui::tui::Screen::done(&screen),
        "not before the drive ended"
    );
    screen.codes = Some(vec![1; 6]);
    assert!(crate::ui::tui::Screen::done(&screen));
}

#[tokio::test]
async fn a_targets_own_cancel_cancels_only_that_target() {
    let members = fleet();
    let cancel = CancellationToken::new();
    let mut screen = FleetScreen::new(members.clone(), cancel.clone(), None, pending_drive());
    for _ in 0..3 {
        key(&mut screen, KeyCode::Down);
    }
    key(&mut screen, KeyCode::Enter);
    assert_eq!(screen.ui.open, Some(3));
    assert!(screen.logs.is_none(), "not connected: no log streamer");
    assert!(screen.ui.targets[3].notice.is_some(), "and it says so");
    key(&mut screen, KeyCode::Char('q'));
    assert_eq!(screen.ui.targets[3].overlay, Overlay::Confirm);
    key(&mut screen, KeyCode::Char('y'));
    assert!(members[3].cancel.is_cancelled());
    for (i, m) in members.iter().enumerate() {
        assert_eq!(m.cancel.is_cancelled(), i == 3, "member {i}");
    }
    assert!(!cancel.is_cancelled(), "the fleet goes on");
    assert_eq!(screen.ui.open, Some(3), "the target's screen stays");
}

fn connected(member: &Member, answers: crate::engine::ask::Answers) {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a valid URL"));
    let screen_of = MemberScreen {
        client: kube::Client::try_from(config).expect("a client"),
        namespace: "apps".into(),
        context: fixture::EKS.into(),
        scrub: Scrub::default(),
        answers: std::sync::Mutex::new(answers),
    };
    assert!(member.screen.set(screen_of).is_ok());
}

/// With no terminal nobody can answer: a target that connects and then waits for `R` (or its
/// plan's `y`) is told no at once, and the fleet ends.
#[tokio::test]
async fn with_nobody_at_a_screen_no_target_waits_for_a_key() {
    let members = vec![member("eu", "eu", Some(Story::failed()), Lane::Running)];
    let (asks, answers) = Asks::ask(&[Question::Plan, Question::Rollback]);
    let m = members[0].clone();
    let drive = async move {
        connected(&m, answers);
        let plan = asks.take(Question::Plan).expect("asked");
        let rollback = asks.take(Question::Rollback).expect("asked");
        // Withdrawn: each wait ends as a no.
        assert!(plan.await.is_err() && rollback.await.is_err());
        vec![1]
    };
    let codes = tokio::time::timeout(Duration::from_secs(5), unattended(&members, drive)).await;
    assert_eq!(codes.expect("nothing waits for a key"), vec![1]);
}

/// A connected target: its log streamer runs while it is open, and `R`, `y` answer its own
/// engine through its member screen.
#[tokio::test]
async fn a_connected_targets_answers_reach_its_engine() {
    let failed = member("eu", fixture::EKS, Some(Story::failed()), Lane::Running);
    let (asks, answers) = Asks::ask(&[Question::Rollback]);
    connected(&failed, answers);
    let mut rollback = asks.take(Question::Rollback).expect("asked");
    let mut screen = FleetScreen::new(
        vec![failed],
        CancellationToken::new(),
        None,
        pending_drive(),
    );
    key(&mut screen, KeyCode::Enter);
    assert!(
        screen.logs.is_some(),
        "its log streamer runs while it is open"
    );
    key(&mut screen, KeyCode::Char('R'));
    assert_eq!(screen.ui.targets[0].overlay, Overlay::Rollback);
    assert_eq!(
        rollback.try_recv(),
        Err(tokio::sync::oneshot::error::TryRecvError::Empty)
    );
    key(&mut screen, KeyCode::Char('y'));
    assert_eq!(rollback.try_recv(), Ok(true));
    key(&mut screen, KeyCode::Esc);
    assert_eq!(screen.ui.open, None);
    assert!(screen.logs.is_none(), "stopped on the way back to the list");
    let _ = Effect::None;
}
