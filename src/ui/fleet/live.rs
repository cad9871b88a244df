//! The fleet screen in the shared [`Tui`]: the caller's drive runs every target on a task of its
//! own, each folding into its member's state; the screen borrows those states for each frame
//! and redraws at most at [`FRAME`] rate after any of them (or a lane) changed, on input, and
//! on the slow tick. Enter opens a target's own deploy screen (the same draw and keys as a
//! single deploy); its drill-down's log streamer runs only while that target is open.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use color_eyre::eyre::Result;
use ratatui::Frame;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::engine::ask::Question;
use crate::engine::fleet::{Lane, Member};
use crate::engine::logs::{LogMsg, LogRequest};
use crate::engine::state::DeployState;
use crate::engine::verdict::Outcome;
use crate::signals::Signal;
use crate::ui::deck::Effect;
use crate::ui::fleet::list::{self, FleetFrame};
use crate::ui::fleet::state::{FleetEffect, FleetUi};
use crate::ui::live::{FRAME, Logs, TICK, answer, live_frame, masked_log};
use crate::ui::screen;
use crate::ui::theme::Theme;
use crate::ui::tui::{self, Flow, Screen, Tui, TuiEvent};

/// Runs the fleet under the TUI: the fleet screen while `drive` (the caller's future that runs
/// every target, folding each into its `member.state`, and returns each member's exit code)
/// runs. Returns the codes once `drive` ended and the operator left with `q` (or at once after
/// a signal, or when the keyboard is gone). With no usable terminal it just awaits `drive`.
///
/// `cancel` is the fleet's: `y` on the list's `q` prompt, SIGINT, SIGTERM and SIGHUP cancel it
/// (the drive relays it to every member's own cancel). A target's own `q`, `y` cancels only
/// that member's. A target's `y`/`n` on its plan, `u` and `R` go through its
/// [`crate::engine::fleet::MemberScreen::answers`], once the runner set `member.screen`.
pub async fn run_fleet(
    members: Vec<Arc<Member>>,
    cancel: CancellationToken,
    title: Option<String>,
    drive: impl Future<Output = Vec<i32>> + Send + 'static,
) -> Result<Vec<i32>> {
    let Some(mut tui) = Tui::enter_or_plain(Some(TICK)) else {
        return Ok(unattended(&members, drive).await);
    };
    let mut screen = FleetScreen::new(members, cancel, title, tokio::spawn(drive));
    let outcome = tui::run(&mut tui, &mut screen).await;
    if let Some((_, logs)) = screen.logs.take() {
        logs.stop().await;
    }
    let codes = match screen.codes.take() {
        Some(codes) => codes,
        None => {
            // The loop failed before the drive ended: nothing is left running behind us.
            screen.cancel.cancel();
            let done = (&mut screen.drive).await;
            screen.codes_of(done)
        }
    };
    drop(tui);
    outcome?;
    // The caller leaves each target's verdict and the fleet's line in the scrollback, as the
    // headless run ends with them.
    Ok(codes)
}

/// The drive with nobody at a screen: every question a connected target's engine would wait
/// on is withdrawn as soon as it is there (a plan not approved, a lock not cleared, no `R`),
/// so no target waits for a key that cannot come.
pub(super) async fn unattended(
    members: &[Arc<Member>],
    drive: impl Future<Output = Vec<i32>>,
) -> Vec<i32> {
    let mut drive = std::pin::pin!(drive);
    let mut every = tokio::time::interval(UNATTENDED);
    loop {
        tokio::select! {
            codes = &mut drive => return codes,
            _ = every.tick() => {
                for s in members.iter().filter_map(|m| m.screen.get()) {
                    let mut answers = s.answers.lock().unwrap_or_else(|e| e.into_inner());
                    for q in [Question::Plan, Question::Unlock, Question::Rollback] {
                        answers.withdraw(q);
                    }
                }
            }
        }
    }
}

/// How soon a target connected with nobody at the screen has its questions withdrawn.
const UNATTENDED: std::time::Duration = std::time::Duration::from_millis(100);

/// What wakes the screen: a member's state or its lane changed.
enum Change {
    State(watch::Receiver<DeployState>),
    Lane(watch::Receiver<Lane>),
}

impl Change {
    async fn changed(&mut self) {
        let gone = match self {
            Change::State(rx) => rx.changed().await.is_err(),
            Change::Lane(rx) => rx.changed().await.is_err(),
        };
        if gone {
            // The member holds its senders: never, but a gone sender has nothing more to say.
            std::future::pending::<()>().await;
        }
    }

    fn seen(&mut self) {
        match self {
            Change::State(rx) => rx.mark_unchanged(),
            Change::Lane(rx) => rx.mark_unchanged(),
        }
    }
}

/// Resolves once any member changed since the last frame and a frame is due ([`FRAME`] after
/// the last one). Cancel-safe, as the deploy screen's: a change seen stays in `stale`.
async fn changed_any(changes: &mut [Change], stale: &mut bool, drawn: Instant) {
    if !*stale {
        if changes.is_empty() {
            std::future::pending::<()>().await;
        }
        let waits: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = changes
            .iter_mut()
            .map(|c| Box::pin(c.changed()) as _)
            .collect();
        futures::future::select_all(waits).await;
        *stale = true;
    }
    tokio::time::sleep_until((drawn + FRAME).into()).await;
}

/// The next message of the open target's log streamer; pending while none runs.
async fn next_log(logs: &mut Option<(usize, Logs)>) -> Option<LogMsg> {
    match logs {
        Some((_, logs)) => logs.rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The fleet screen: the members it shows, what the operator looks at, the drive's task.
pub(super) struct FleetScreen {
    pub(super) members: Vec<Arc<Member>>,
    pub(super) ui: FleetUi,
    pub(super) cancel: CancellationToken,
    title: Option<String>,
    theme: Theme,
    started: Instant,
    /// When each member's lane was first seen Running (its clock until its verdict).
    clocks: Vec<Option<Instant>>,
    changes: Vec<Change>,
    stale: bool,
    drawn: Instant,
    drive: JoinHandle<Vec<i32>>,
    /// The drive's codes, once it ended.
    pub(super) codes: Option<Vec<i32>>,
    /// The open target's log streamer (started only for a target whose run is connected).
    pub(super) logs: Option<(usize, Logs)>,
    /// The log stream last asked for.
    asked: Option<LogRequest>,
    /// Leave once the drive ended: `q` after everything settled, or a signal.
    pub(super) quit: bool,
    /// The terminal is gone: everything is cancelled and runs to its end unseen.
    blind: bool,
    input_open: bool,
}

impl FleetScreen {
    pub(super) fn new(
        members: Vec<Arc<Member>>,
        cancel: CancellationToken,
        title: Option<String>,
        drive: JoinHandle<Vec<i32>>,
    ) -> FleetScreen {
        let changes = members
            .iter()
            .flat_map(|m| {
                [
                    Change::State(m.state.subscribe()),
                    Change::Lane(m.lane.subscribe()),
                ]
            })
            .collect();
        FleetScreen {
            ui: FleetUi::new(members.len()),
            clocks: vec![None; members.len()],
            members,
            cancel,
            title,
            theme: Theme::from_env(),
            started: Instant::now(),
            changes,
            stale: false,
            drawn: Instant::now(),
            drive,
            codes: None,
            logs: None,
            asked: None,
            quit: false,
            blind: false,
            input_open: true,
        }
    }

    /// The codes of a drive that ended; a failed task leaves each member's lane to say.
    fn codes_of(&self, done: Result<Vec<i32>, tokio::task::JoinError>) -> Vec<i32> {
        done.unwrap_or_else(|_| {
            self.members
                .iter()
                .map(|m| m.lane.borrow().code().unwrap_or(Outcome::Failed.code()))
                .collect()
        })
    }

    /// Cancels every running target (each helm gets one SIGTERM, never SIGKILL).
    fn cancel_all(&mut self) {
        self.ui.cancel_all(&self.members);
        self.cancel.cancel();
    }

    /// Nobody will press `R` any more: each engine waiting for it after a failed verdict ends.
    fn withdraw_rollbacks(&self) {
        for m in &self.members {
            if let Some(s) = m.screen.get() {
                s.answers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .withdraw(Question::Rollback);
            }
        }
    }

    pub(super) fn handle(&mut self, event: TuiEvent) -> Flow {
        match event {
            TuiEvent::Key(key) => {
                let effect = self.ui.on_key(key, &self.members);
                self.apply(effect);
                Flow::Redraw
            }
            TuiEvent::Tick => {
                self.ui.tick = self.ui.tick.wrapping_add(1);
                for ui in &mut self.ui.targets {
                    ui.tick = self.ui.tick;
                }
                Flow::Redraw
            }
            TuiEvent::Signal(Signal::Hangup) => {
                self.blind = true;
                self.cancel_all();
                Flow::Same
            }
            TuiEvent::Signal(Signal::Interrupt | Signal::Terminate) => {
                self.quit = true;
                self.cancel_all();
                Flow::Redraw
            }
            TuiEvent::InputClosed => {
                self.input_open = false;
                self.withdraw_rollbacks();
                Flow::Same
            }
            TuiEvent::Resize => Flow::Redraw,
        }
    }

    fn apply(&mut self, effect: FleetEffect) {
        match effect {
            FleetEffect::None => {}
            FleetEffect::Opened(i) => self.open(i),
            FleetEffect::Closed(i) => {
                if let Some((_, logs)) = self.logs.take() {
                    logs.halt();
                }
                self.asked = None;
                if let Some(ui) = self.ui.targets.get_mut(i) {
                    ui.log = Default::default();
                }
            }
            FleetEffect::CancelAll => self.cancel_all(),
            FleetEffect::Quit => {
                self.quit = true;
                self.withdraw_rollbacks();
            }
            FleetEffect::Target(i, effect) => self.target_effect(i, effect),
        }
    }

    /// Target `i`'s screen opened: its log streamer starts once its run is connected; before
    /// that the screen shows what state there is and says so.
    fn open(&mut self, i: usize) {
        let Some(member) = self.members.get(i) else {
            return;
        };
        self.asked = None;
        match member.screen.get() {
            Some(s) => {
                self.logs = Some((i, Logs::start(s.client.clone(), s.namespace.clone())));
            }
            None => {
                self.ui.targets[i].notice = Some(
                    "not connected yet: no live log, and y/n, u and R wait for its run to start"
                        .into(),
                );
            }
        }
    }

    /// What target `i`'s own keys asked: its cancel only, or an answer to its engine.
    fn target_effect(&mut self, i: usize, effect: Effect) {
        let (Some(member), Some(ui)) = (self.members.get(i), self.ui.targets.get_mut(i)) else {
            return;
        };
        if effect == Effect::Cancel {
            member.cancel.cancel();
            return;
        }
        let Some(s) = member.screen.get() else {
            ui.notice = Some("not connected yet: nothing waits for that answer".into());
            return;
        };
        let state = member.state.borrow();
        let running = *member.lane.borrow() == Lane::Running;
        let mut answers = s.answers.lock().unwrap_or_else(|e| e.into_inner());
        answer(effect, &mut answers, &state, running, ui);
    }

    /// Asks the open target's log streamer for the container its drill-down shows.
    fn ask_log(&mut self) {
        let (Some(i), Some((at, logs))) = (self.ui.open, self.logs.as_ref()) else {
            return;
        };
        if *at != i {
            return;
        }
        let wanted = self.ui.targets[i].wanted_log(&self.members[i].state.borrow());
        if wanted != self.asked {
            let _ = logs.requests.send(wanted.clone());
            self.asked = wanted;
        }
    }

    /// Starts the clock of each member seen running for the first time.
    fn observe(&mut self) {
        for (m, clock) in self.members.iter().zip(&mut self.clocks) {
            if clock.is_none() && *m.lane.borrow() == Lane::Running {
                *clock = Some(Instant::now());
            }
        }
    }

    async fn next_change(&mut self) -> Flow {
        tokio::select! {
            () = changed_any(&mut self.changes, &mut self.stale, self.drawn) => Flow::Redraw,
            Some(msg) = next_log(&mut self.logs) => {
                let Some((i, logs)) = self.logs.as_mut() else {
                    return Flow::Same;
                };
                let scrub = self.members[*i].screen.get().map(|s| &s.scrub);
                let ui = &mut self.ui.targets[*i];
                let mut apply = |msg| match scrub {
                    Some(scrub) => ui.log.apply(masked_log(scrub, msg)),
                    None => ui.log.apply(msg),
                };
                apply(msg);
                while let Ok(msg) = logs.rx.try_recv() {
                    apply(msg);
                }
                Flow::Redraw
            }
            done = &mut self.drive, if self.codes.is_none() => {
                self.codes = Some(self.codes_of(done));
                Flow::Redraw
            }
            else => std::future::pending().await,
        }
    }

    fn draw_target(&mut self, frame: &mut Frame, i: usize) {
        let member = self.members[i].clone();
        let state = member.state.borrow();
        let running = self.clocks[i].map_or(state.now_secs, |c| c.elapsed().as_secs_f64());
        let context = member
            .screen
            .get()
            .map_or(member.target.context.as_str(), |s| s.context.as_str());
        let title = match &self.title {
            Some(t) => format!("{t} · target {}", member.target.label),
            None => format!("target {}", member.target.label),
        };
        let ctx = live_frame(
            &state,
            self.theme,
            Some(&title),
            context,
            running,
            &[],
            Some(jiff::Timestamp::now()),
        );
        let ui = &mut self.ui.targets[i];
        let engine_runs = *member.lane.borrow() == Lane::Running;
        let waits = |q| {
            member
                .screen
                .get()
                .is_some_and(|s| s.answers.lock().unwrap_or_else(|e| e.into_inner()).waits(q))
        };
        ui.rollback_waits = engine_runs && waits(Question::Rollback);
        ui.unlock_waits = engine_runs && waits(Question::Unlock);
        screen::draw(frame, &ctx, ui);
    }
}

impl Screen for FleetScreen {
    fn draw(&mut self, frame: &mut Frame) {
        self.stale = false;
        self.drawn = Instant::now();
        for c in &mut self.changes {
            c.seen();
        }
        self.observe();
        if let Some(i) = self.ui.open.filter(|i| *i < self.members.len()) {
            self.draw_target(frame, i);
            return;
        }
        let now = Instant::now();
        let clocks: Vec<Option<f64>> = self
            .clocks
            .iter()
            .map(|c| c.map(|c| now.duration_since(c).as_secs_f64()))
            .collect();
        let ctx = FleetFrame {
            members: &self.members,
            clocks: &clocks,
            theme: self.theme,
            title: self.title.as_deref(),
            elapsed: self.started.elapsed().as_secs_f64(),
        };
        list::draw(frame, &ctx, &self.ui);
    }

    fn on_event(&mut self, event: TuiEvent) -> Flow {
        let flow = self.handle(event);
        self.ask_log();
        flow
    }

    async fn changed(&mut self) -> Flow {
        let flow = self.next_change().await;
        if self.quit || self.blind || !self.input_open {
            // Nobody will press `R`: a target failing after that (one connected later) must
            // not wait for it either.
            self.withdraw_rollbacks();
        }
        self.ask_log();
        flow
    }

    fn on_lost(&mut self, _: std::io::Error) -> Result<Flow> {
        self.blind = true;
        self.cancel_all();
        Ok(Flow::Same)
    }

    /// Once the drive ended and the operator left (`q` after everything settled), a signal
    /// asked for it, or nobody can see the screen or press a key any more.
    fn done(&self) -> bool {
        self.codes.is_some() && (self.quit || self.blind || !self.input_open)
    }
}
