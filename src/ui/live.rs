//! The live deploy screen in the shared [`Tui`]: the engine runs the deploy on its own task;
//! every event it applies is sent here (a clone of the event, not of the state) and folded into
//! a mirror of the state with the same [`DeployState::apply`]. The screen redraws when something
//! changed, on input, and on a slow tick (spinner, clock). The cluster is never polled; only
//! the drill-down asks for a container's log, one stream at a time.

use std::io::Write;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use ratatui::Frame;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::engine::event::Event;
use crate::engine::logs::{self, LogRequest};
use crate::engine::run::{self, Prepared};
use crate::engine::state::{DeployState, PlanSummary};
use crate::headless::Headless;
use crate::signals::Signal;
use crate::ui::app::{Effect, UiState};
use crate::ui::panes::DeployFrame;
use crate::ui::screen;
use crate::ui::theme::Theme;
use crate::ui::tui::{self, Flow, Screen, Tui, TuiEvent};

/// The slow tick: spinner frames and the clock.
const TICK: Duration = Duration::from_millis(250);

/// Runs the deploy under the TUI and returns the engine's final state. The screen stays after
/// the verdict until `q`; a cancel the operator confirmed ends at its verdict.
///
/// `tap` sees every event the engine applied, first (the record).
pub async fn run_deploy(
    mut prepared: Prepared,
    cancel: CancellationToken,
    title: Option<String>,
    mut tap: impl FnMut(&Event, &DeployState) + Send + 'static,
) -> Result<DeployState> {
    let plan = run::summary(&prepared);
    let context = prepared
        .plan
        .context
        .clone()
        .unwrap_or_else(|| prepared.cluster.server.clone());
    let client = prepared.cluster.client.clone();
    let namespace = prepared.namespace().to_string();
    // A terminal that does not answer gets the plain lines instead; nothing has run yet.
    let Some(mut tui) = Tui::enter_or_plain(Some(TICK)) else {
        return crate::headless::run(prepared, cancel, tap, true).await;
    };

    // With an operator at the screen the upgrade waits for `y` on the plan.
    let plan_answer = (prepared.plan.plan && !prepared.plan.plan_only).then(|| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        prepared.plan_answer = Some(rx);
        tx
    });
    // A stuck lock waits for `u` and `y` (never with --recover-lock, which needs no answer).
    let unlock_answer = (!prepared.plan.recover_lock && prepared.plan.watch.is_none()).then(|| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        prepared.unlock_answer = Some(rx);
        tx
    });
    // After a failed verdict the engine waits for `R` and `y` until the screen drops this.
    let rollback_answer = prepared.plan.watch.is_none().then(|| {
        let (tx, rx) = tokio::sync::oneshot::channel();
        prepared.rollback_answer = Some(rx);
        tx
    });
    let (events_tx, events_rx) = mpsc::unbounded_channel::<Sent>();
    let engine_cancel = cancel.clone();
    let deploy = tokio::spawn(async move {
        run::deploy(prepared, engine_cancel, move |event, state| {
            tap(event, state);
            // The loop may be gone (terminal lost); the deploy goes on regardless.
            let _ = events_tx.send((
                event.clone(),
                state.now_secs,
                state.stamped_wall(event).unwrap_or_default(),
            ));
        })
        .await
    });
    let (requests_tx, requests_rx) = mpsc::unbounded_channel();
    let (logs_tx, logs_rx) = mpsc::unbounded_channel();
    let logs_stop = CancellationToken::new();
    let logs_task = tokio::spawn(logs::serve(
        client,
        namespace,
        requests_rx,
        logs_tx,
        logs_stop.clone(),
    ));

    let mut screen = DeployScreen {
        mirror: DeployState::new(plan),
        ui: UiState::new(),
        theme: Theme::from_env(),
        started: Instant::now(),
        title,
        context,
        events: events_rx,
        logs: logs_rx,
        requests: requests_tx,
        asked: None,
        deploy,
        finished: None,
        cancel,
        plan_answer,
        unlock_answer,
        rollback_answer,
        quit: false,
        blind: false,
        input_open: true,
    };
    let outcome = tui::run(&mut tui, &mut screen).await;
    logs_stop.cancel();
    let _ = logs_task.await;
    drop(tui);
    outcome?;
    let state = screen
        .finished
        .unwrap_or_else(|| Err(eyre!("the deploy ended without a result")))?;
    if let Some(v) = &state.verdict {
        // The screen is gone: leave the verdict in the scrollback (if the terminal is still
        // there: after a hang-up the write fails, which must not turn into a panic).
        let mut out = std::io::stdout().lock();
        for line in Headless::default().lines(&Event::Verdict(v.clone()), &state) {
            let _ = writeln!(out, "{line}");
        }
    }
    Ok(state)
}

/// What the engine sends the screen for each event it applied: the event, its offset and the
/// wall time the engine stamped on it (empty when it stamped none).
type Sent = (Event, f64, String);

/// Folds one sent event into the screen's mirror, as the engine folded it.
fn mirror(state: &mut DeployState, (event, at, wall): &Sent) {
    state.apply(event, *at, wall);
}

/// The live screen's frame: the clock runs until the verdict, then stops at its moment.
fn live_frame<'a>(
    mirror: &'a DeployState,
    theme: Theme,
    title: Option<&'a str>,
    context: &'a str,
    running_secs: f64,
    now: Option<jiff::Timestamp>,
) -> DeployFrame<'a> {
    let elapsed = if mirror.verdict.is_some() {
        mirror.now_secs
    } else {
        running_secs
    };
    DeployFrame {
        state: mirror,
        theme,
        title,
        context: Some(context),
        elapsed,
        now,
    }
}

/// The live screen's last frame (after the verdict, before `q`), drawn into a `width`x`height`
/// test terminal, from the events the engine sent it: the same fold, frame and draw as the
/// screen. `now` is the clock ages are told against (the live screen uses the wall clock).
pub fn final_frame(
    plan: PlanSummary,
    sent: impl IntoIterator<Item = (Event, f64, String)>,
    title: Option<&str>,
    context: &str,
    now: Option<jiff::Timestamp>,
    (width, height): (u16, u16),
) -> String {
    let mut state = DeployState::new(plan);
    for s in sent {
        mirror(&mut state, &s);
    }
    let ctx = live_frame(
        &state,
        Theme::coloured(),
        title,
        context,
        state.now_secs,
        now,
    );
    crate::ui::layout::draw_to_text(width, height, |f| {
        screen::draw(f, &ctx, &mut UiState::new())
    })
}

/// The deploy screen: a mirror of the engine's state, what the operator looks at, and the
/// channels to the engine and the log streamer.
struct DeployScreen {
    mirror: DeployState,
    ui: UiState,
    theme: Theme,
    started: Instant,
    title: Option<String>,
    context: String,
    events: mpsc::UnboundedReceiver<Sent>,
    logs: mpsc::UnboundedReceiver<logs::LogMsg>,
    requests: mpsc::UnboundedSender<Option<LogRequest>>,
    /// The log stream last asked for.
    asked: Option<LogRequest>,
    deploy: JoinHandle<Result<DeployState>>,
    finished: Option<Result<DeployState>>,
    cancel: CancellationToken,
    /// Where `y`/`n` on the plan goes (`--plan`; taken by the first answer).
    plan_answer: Option<tokio::sync::oneshot::Sender<bool>>,
    /// Where `y` on the lock prompt goes (taken by it).
    unlock_answer: Option<tokio::sync::oneshot::Sender<bool>>,
    /// Where `y` on the rollback prompt goes; dropped when the operator quits or the keyboard
    /// is gone, which ends the engine's wait after the verdict.
    rollback_answer: Option<tokio::sync::oneshot::Sender<bool>>,
    quit: bool,
    /// The terminal is gone or unusable: the deploy is cancelled and runs to its verdict unseen.
    blind: bool,
    input_open: bool,
}

impl DeployScreen {
    /// Cancels the deploy (helm gets one SIGTERM, never SIGKILL); the screen stays until the
    /// verdict.
    fn cancel(&mut self) {
        self.ui.cancelling = true;
        self.cancel.cancel();
    }

    /// Asks the log streamer for the container the drill-down shows, when that changed.
    fn ask_log(&mut self) {
        let wanted = self.ui.wanted_log(&self.mirror);
        if wanted != self.asked {
            let _ = self.requests.send(wanted.clone());
            self.asked = wanted;
        }
    }

    fn handle(&mut self, event: TuiEvent) -> Flow {
        match event {
            TuiEvent::Key(key) => {
                match self.ui.on_key(key, &self.mirror) {
                    Effect::Cancel => self.cancel.cancel(),
                    effect @ (Effect::ApprovePlan | Effect::DeclinePlan) => {
                        if let Some(answer) = self.plan_answer.take() {
                            // The engine may have ended meanwhile (a cancel): nobody to tell.
                            let _ = answer.send(effect == Effect::ApprovePlan);
                        }
                    }
                    Effect::Quit => {
                        self.quit = true;
                        // The engine may be waiting for `R`: it ends once nobody can ask.
                        self.rollback_answer = None;
                    }
                    Effect::Unlock => match self.unlock_answer.take() {
                        // The engine may have ended meanwhile (a cancel): nobody to tell.
                        Some(answer) if self.mirror.verdict.is_none() => {
                            let _ = answer.send(true);
                        }
                        _ => {
                            self.ui.notice = Some(
                                "the deploy no longer waits on the lock: run it again (add \
                                 --recover-lock headless)"
                                    .into(),
                            )
                        }
                    },
                    Effect::Rollback(to) => {
                        let waiting = self.finished.is_none();
                        let sent = match self.rollback_answer.take() {
                            Some(answer) if waiting => answer.send(true).is_ok(),
                            _ => false,
                        };
                        if !sent {
                            // The engine ended meanwhile (a cancel, a lost terminal): the command
                            // still runs as printed.
                            self.ui.notice = Some(format!(
                                "the deploy no longer waits for R: run {}",
                                crate::ui::recover::rollback_command(&self.mirror, to)
                            ));
                        }
                    }
                    Effect::None => {}
                }
                Flow::Redraw
            }
            TuiEvent::Tick => {
                self.ui.tick = self.ui.tick.wrapping_add(1);
                Flow::Redraw
            }
            TuiEvent::Signal(Signal::Hangup) => {
                self.blind = true;
                self.cancel();
                Flow::Same
            }
            TuiEvent::Signal(Signal::Interrupt | Signal::Terminate) => {
                self.cancel();
                Flow::Redraw
            }
            TuiEvent::InputClosed => {
                self.input_open = false;
                self.rollback_answer = None;
                Flow::Same
            }
            TuiEvent::Resize => Flow::Redraw,
        }
    }

    async fn next_change(&mut self) -> Flow {
        tokio::select! {
            Some(sent) = self.events.recv() => {
                mirror(&mut self.mirror, &sent);
                while let Ok(sent) = self.events.try_recv() {
                    mirror(&mut self.mirror, &sent);
                }
                Flow::Redraw
            }
            Some(msg) = self.logs.recv() => {
                self.ui.log.apply(msg);
                while let Ok(msg) = self.logs.try_recv() {
                    self.ui.log.apply(msg);
                }
                Flow::Redraw
            }
            done = &mut self.deploy, if self.finished.is_none() => {
                let done = done
                    .map_err(|e| eyre!("the deploy task failed: {e}"))
                    .and_then(|r| r);
                let failed = done.is_err();
                self.finished = Some(done);
                if failed { Flow::Quit } else { Flow::Redraw }
            }
            // Every source ended: the terminal's events are all that is left.
            else => std::future::pending().await,
        }
    }
}

impl Screen for DeployScreen {
    fn draw(&mut self, frame: &mut Frame) {
        let elapsed = if self.mirror.verdict.is_some() {
            self.mirror.now_secs
        } else {
            self.started.elapsed().as_secs_f64()
        };
        let ctx = live_frame(
            &self.mirror,
            self.theme,
            self.title.as_deref(),
            &self.context,
            elapsed,
            Some(jiff::Timestamp::now()),
        );
        self.ui.rollback_waits = self.rollback_answer.is_some() && self.finished.is_none();
        screen::draw(frame, &ctx, &mut self.ui);
    }

    fn on_event(&mut self, event: TuiEvent) -> Flow {
        let flow = self.handle(event);
        self.ask_log();
        flow
    }

    async fn changed(&mut self) -> Flow {
        let flow = self.next_change().await;
        self.ask_log();
        flow
    }

    fn on_lost(&mut self, _: std::io::Error) -> Result<Flow> {
        self.blind = true;
        self.cancel();
        Ok(Flow::Same)
    }

    /// After the verdict, once the operator quits (or asked for the cancel that led to it),
    /// or when nobody can see the screen or press a key any more.
    fn done(&self) -> bool {
        self.finished.is_some()
            && self.mirror.verdict.is_some()
            && (self.ui.done(&self.mirror, self.quit) || self.blind || !self.input_open)
    }
}
