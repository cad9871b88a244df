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

use crate::engine::ask::{Answers, Asks, Question};
use crate::engine::event::Event;
use crate::engine::logs::{self, LogRequest};
use crate::engine::run::{self, Prepared};
use crate::engine::state::{DeployState, PlanSummary};
use crate::headless::Headless;
use crate::record::scrub::Scrub;
use crate::signals::Signal;
use crate::ui::app::UiState;
use crate::ui::deck::Effect;
use crate::ui::panes::DeployFrame;
use crate::ui::panes::history::Judged;
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
    tap: impl FnMut(&Event, &DeployState) + Send + 'static,
) -> Result<DeployState> {
    let (plan, context, client, namespace) = screen_inputs(&prepared);
    let scrub = Scrub::of_helm_args(&prepared.plan.value_args_with_extra());
    // A terminal that does not answer gets the plain lines instead; nothing has run yet.
    let Some(mut tui) = Tui::enter_or_plain(Some(TICK)) else {
        return crate::headless::run(prepared, cancel, tap, true).await;
    };

    // With an operator at the screen the upgrade waits for `y` on the plan; a stuck lock for
    // `u` and `y` (never with --recover-lock, which needs no answer); after a failed verdict the
    // engine waits for `R` and `y` until the screen withdraws the question.
    let asked = &prepared.plan;
    let questions = [
        (asked.plan && !asked.plan_only).then_some(Question::Plan),
        (!asked.recover_lock && asked.watch.is_none()).then_some(Question::Unlock),
        asked.watch.is_none().then_some(Question::Rollback),
    ];
    let (asks, answers) = Asks::ask(&questions.into_iter().flatten().collect::<Vec<_>>());
    prepared.asks = asks;
    let pass = Pass::spawn(prepared, cancel.clone(), tap);
    let logs = Logs::start(client, namespace);
    let mut screen = DeployScreen {
        mirror: DeployState::new(plan),
        ui: UiState::new(),
        theme: Theme::from_env(),
        started: pass.started,
        title,
        context,
        logs,
        asked: None,
        pass,
        finished: None,
        cancel,
        answers,
        quit: false,
        blind: false,
        input_open: true,
        follow: None,
        scrub: scrub.clone(),
    };
    let outcome = tui::run(&mut tui, &mut screen).await;
    screen.logs.stop().await;
    drop(tui);
    outcome?;
    let state = screen
        .finished
        .unwrap_or_else(|| Err(eyre!("the deploy ended without a result")))?;
    if let Some(v) = &state.verdict {
        // The screen is gone: leave the verdict in the scrollback (if the terminal is still
        // there: after a hang-up the write fails, which must not turn into a panic), its
        // values masked as in the report: the scrollback outlives the screen.
        let mut out = std::io::stdout().lock();
        for line in Headless::masking(scrub).masked_lines(&Event::Verdict(v.clone()), &state) {
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
    history: &'a [Judged],
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
        history,
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
        &[],
        now,
    );
    crate::ui::layout::draw_to_text(width, height, |f| {
        screen::draw(f, &ctx, &mut UiState::new())
    })
}

/// What a screen takes from a prepared run before it starts: the plan's summary, the context
/// the header names (the server when no context was named), and the client and namespace the
/// drill-down's log streamer reads.
fn screen_inputs(prepared: &Prepared) -> (PlanSummary, String, kube::Client, String) {
    let context = prepared
        .plan
        .context
        .clone()
        .unwrap_or_else(|| prepared.cluster.server.clone());
    (
        run::summary(prepared),
        context,
        prepared.cluster.client.clone(),
        prepared.namespace().to_string(),
    )
}

/// `helmdeck watch --follow` under the TUI: one screen for every revision. Each pass of the
/// engine judges one revision; its verdict goes to `judged` (the report, the exit code) and
/// into the history pane, and the next pass (from `next`, given the newest revision judged)
/// waits for the revision after it while the screen keeps the last verdict. `q` then leaves
/// with the last verdict's code; before a verdict `q` asks to cancel the revision followed
/// (exit 1, as a signal gives the headless follow). `None`: no usable terminal, nothing ran
/// (the caller follows headless).
pub async fn run_follow(
    cancel: CancellationToken,
    title: String,
    mut next: impl FnMut(Option<i64>) -> Prepared,
    judged: impl FnMut(Result<DeployState>) -> i32,
) -> Result<Option<i32>> {
    let prepared = next(None);
    let (plan, context, client, namespace) = screen_inputs(&prepared);
    let Some(mut tui) = Tui::enter_or_plain(Some(TICK)) else {
        return Ok(None);
    };
    let pass = Pass::spawn(prepared, cancel.clone(), |_, _| {});
    let mut screen = DeployScreen {
        mirror: DeployState::new(plan.clone()),
        ui: UiState::new(),
        theme: Theme::from_env(),
        started: pass.started,
        title: Some(title),
        context,
        logs: Logs::start(client, namespace),
        asked: None,
        pass,
        finished: None,
        cancel: cancel.clone(),
        answers: Default::default(),
        quit: false,
        blind: false,
        input_open: true,
        follow: Some(Follow {
            next: Box::new(next),
            judged: Box::new(judged),
            plan,
            history: Vec::new(),
            staged: None,
            after: None,
            last_code: None,
        }),
        // A watch is given no values: nothing to mask.
        scrub: Scrub::default(),
    };
    let outcome = tui::run(&mut tui, &mut screen).await;
    // The pass waiting for the next revision has nothing to say: stop it before leaving.
    cancel.cancel();
    if !screen.pass.ended {
        let _ = (&mut screen.pass.deploy).await;
    }
    let DeployScreen {
        logs,
        follow,
        finished,
        ..
    } = screen;
    logs.stop().await;
    drop(tui);
    outcome?;
    if let Some(Err(e)) = finished {
        return Err(e);
    }
    let follow = follow.ok_or_else(|| eyre!("the follow ended without its state"))?;
    // The screen is gone: each revision's verdict stays in the scrollback, oldest first.
    let mut out = std::io::stdout().lock();
    for judged in &follow.history {
        for line in &judged.lines {
            let _ = writeln!(out, "{line}");
        }
    }
    Ok(Some(
        follow
            .last_code
            .unwrap_or(crate::engine::verdict::Outcome::Failed.code()),
    ))
}

/// One run of the engine: its events as it applies them, and its end. A deploy has one; a
/// `watch --follow` one per revision.
struct Pass {
    events: mpsc::UnboundedReceiver<(Event, f64, String)>,
    deploy: JoinHandle<Result<DeployState>>,
    /// The task's result was taken (a `JoinHandle` must not be polled again after that).
    ended: bool,
    started: Instant,
}

impl Pass {
    fn spawn(
        prepared: Prepared,
        cancel: CancellationToken,
        mut tap: impl FnMut(&Event, &DeployState) + Send + 'static,
    ) -> Pass {
        let (events_tx, events) = mpsc::unbounded_channel::<(Event, f64, String)>();
        let scrub = Scrub::of_helm_args(&prepared.plan.value_args_with_extra());
        let deploy = tokio::spawn(async move {
            run::deploy(prepared, cancel, move |event, state| {
                tap(event, state);
                // The loop may be gone (terminal lost); the deploy goes on regardless.
                let _ = events_tx.send((
                    shown(&scrub, event),
                    state.now_secs,
                    state.stamped_wall(event).unwrap_or_default(),
                ));
            })
            .await
        });
        Pass {
            events,
            deploy,
            ended: false,
            started: Instant::now(),
        }
    }
}

/// An event as the screen shows it: helm's own streamed lines (and the `--plan` diff, the
/// preview of the values' changes) as helm printed them; everything else (steps, notes, the
/// verdict, its problems and next step, logs) with the release's values masked as the report
/// masks them. An event whose masked form no longer reads as one is shown as it is.
fn shown(scrub: &Scrub, event: &Event) -> Event {
    match event {
        Event::HelmLine { .. } | Event::Plan(_) => event.clone(),
        _ => scrub.event(event).unwrap_or_else(|| event.clone()),
    }
}

/// A container's live log line with the release's values masked.
fn masked_log(scrub: &Scrub, msg: logs::LogMsg) -> logs::LogMsg {
    match msg {
        logs::LogMsg::Line { id, text } => logs::LogMsg::Line {
            id,
            text: scrub.text(&text),
        },
        other => other,
    }
}

/// The drill-down's log streamer: one container at a time, asked for by the screen.
struct Logs {
    rx: mpsc::UnboundedReceiver<logs::LogMsg>,
    requests: mpsc::UnboundedSender<Option<LogRequest>>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Logs {
    fn start(client: kube::Client, namespace: String) -> Logs {
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let (logs_tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let task = tokio::spawn(logs::serve(
            client,
            namespace,
            requests_rx,
            logs_tx,
            stop.clone(),
        ));
        Logs {
            rx,
            requests,
            stop,
            task,
        }
    }

    async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// `watch --follow` in the screen: where the next revision's pass comes from, where each
/// finished pass's verdict goes (the report), and the verdicts so far.
struct Follow<'a> {
    next: Box<dyn FnMut(Option<i64>) -> Prepared + 'a>,
    judged: Box<dyn FnMut(Result<DeployState>) -> i32 + 'a>,
    plan: PlanSummary,
    history: Vec<Judged>,
    /// The pass waiting for the next revision folds here until it names one, so the screen
    /// keeps the last verdict (and `q` means leave) until there is something new to show.
    staged: Option<DeployState>,
    /// The newest revision judged: the next pass follows only those after it.
    after: Option<i64>,
    last_code: Option<i32>,
}

/// The deploy screen: a mirror of the engine's state, what the operator looks at, and the
/// channels to the engine and the log streamer.
struct DeployScreen<'a> {
    mirror: DeployState,
    ui: UiState,
    theme: Theme,
    /// When the pass on screen started (the header's clock until its verdict).
    started: Instant,
    title: Option<String>,
    context: String,
    logs: Logs,
    /// The log stream last asked for.
    asked: Option<LogRequest>,
    pass: Pass,
    finished: Option<Result<DeployState>>,
    cancel: CancellationToken,
    /// Where `y`/`n` on the plan, `y` on the lock prompt and `y` on the rollback prompt go,
    /// each taken by its answer; the rollback's is withdrawn when the operator quits or the
    /// keyboard is gone, which ends the engine's wait after the verdict.
    answers: Answers,
    quit: bool,
    /// The terminal is gone or unusable: the deploy is cancelled and runs to its verdict unseen.
    blind: bool,
    input_open: bool,
    follow: Option<Follow<'a>>,
    /// The release's values, masked in the drill-down's live log as in the events.
    scrub: Scrub,
}

impl DeployScreen<'_> {
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
            let _ = self.logs.requests.send(wanted.clone());
            self.asked = wanted;
        }
    }

    fn handle(&mut self, event: TuiEvent) -> Flow {
        match event {
            TuiEvent::Key(key) => {
                match self.ui.on_key(key, &self.mirror) {
                    Effect::Cancel => self.cancel.cancel(),
                    effect @ (Effect::ApprovePlan | Effect::DeclinePlan) => {
                        if let Some(answer) = self.answers.take(Question::Plan) {
                            // The engine may have ended meanwhile (a cancel): nobody to tell.
                            let _ = answer.send(effect == Effect::ApprovePlan);
                        }
                    }
                    Effect::Quit => {
                        self.quit = true;
                        // The engine may be waiting for `R`: it ends once nobody can ask.
                        self.answers.withdraw(Question::Rollback);
                    }
                    Effect::Unlock => match self.answers.take(Question::Unlock) {
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
                        let sent = match self.answers.take(Question::Rollback) {
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
                self.answers.withdraw(Question::Rollback);
                Flow::Same
            }
            TuiEvent::Resize => Flow::Redraw,
        }
    }

    /// Folds one engine event into what it belongs to: the screen's mirror, or (following)
    /// the staged pass, which takes the screen over once it names a revision or ends.
    fn fold(&mut self, event: &Event, at: f64, wall: &str) -> Flow {
        let Some(staged) = self.follow.as_mut().and_then(|f| f.staged.as_mut()) else {
            self.mirror.apply(event, at, wall);
            return Flow::Redraw;
        };
        staged.apply(event, at, wall);
        // Cancelled before a revision was named: the operator left while waiting, and the last
        // verdict stays on screen (and in the report), as the headless follow keeps it.
        let left_waiting = staged.revision.is_none() && self.cancel.is_cancelled();
        if staged.revision.is_none() && (staged.verdict.is_none() || left_waiting) {
            return Flow::Same;
        }
        if let Some(staged) = self.follow.as_mut().and_then(|f| f.staged.take()) {
            self.mirror = staged;
            // A new revision: what was selected or drilled into belonged to the last one.
            let focus = self.ui.focus;
            self.ui = UiState::new();
            self.ui.focus = focus;
            self.started = self.pass.started;
        }
        Flow::Redraw
    }

    fn fold_queued(&mut self) -> Flow {
        let mut flow = Flow::Same;
        while let Ok((event, at, wall)) = self.pass.events.try_recv() {
            if self.fold(&event, at, &wall) == Flow::Redraw {
                flow = Flow::Redraw;
            }
        }
        flow
    }

    /// A pass ended while following: its verdict goes into the history (and the report), and
    /// unless the watch was cancelled the next pass starts, for the revisions after this one.
    fn next_pass(&mut self, done: DeployState) -> Flow {
        // The task has ended, so every event it sent is queued: the verdict included.
        self.fold_queued();
        let cancelled = self.cancel.is_cancelled();
        let Some(follow) = self.follow.as_mut() else {
            return Flow::Redraw;
        };
        if follow.staged.take().is_some() {
            // Left while waiting for the next revision: the last verdict stands, unjudged
            // again (as the headless follow does on a signal).
            self.quit = true;
            return Flow::Redraw;
        }
        let revision = done.revision;
        if let Some(v) = &self.mirror.verdict {
            follow.history.push(Judged {
                revision,
                verdict: v.clone(),
                at: Some(jiff::Timestamp::now().to_string()),
                lines: Headless::default().lines(&Event::Verdict(v.clone()), &self.mirror),
            });
        }
        follow.last_code = Some((follow.judged)(Ok(done)));
        follow.after = revision.or(follow.after);
        if cancelled {
            self.quit = true;
            return Flow::Redraw;
        }
        let prepared = (follow.next)(follow.after);
        follow.staged = Some(DeployState::new(follow.plan.clone()));
        self.pass = Pass::spawn(prepared, self.cancel.clone(), |_, _| {});
        Flow::Redraw
    }

    async fn next_change(&mut self) -> Flow {
        tokio::select! {
            Some((event, at, wall)) = self.pass.events.recv() => {
                let first = self.fold(&event, at, &wall);
                if self.fold_queued() == Flow::Redraw || first == Flow::Redraw {
                    Flow::Redraw
                } else {
                    Flow::Same
                }
            }
            Some(msg) = self.logs.rx.recv() => {
                self.ui.log.apply(masked_log(&self.scrub, msg));
                while let Ok(msg) = self.logs.rx.try_recv() {
                    self.ui.log.apply(masked_log(&self.scrub, msg));
                }
                Flow::Redraw
            }
            done = &mut self.pass.deploy, if !self.pass.ended => {
                self.pass.ended = true;
                let done = done
                    .map_err(|e| eyre!("the deploy task failed: {e}"))
                    .and_then(|r| r);
                match done {
                    Ok(state) if self.follow.is_some() => self.next_pass(state),
                    done => {
                        let failed = done.is_err();
                        self.finished = Some(done);
                        if failed { Flow::Quit } else { Flow::Redraw }
                    }
                }
            }
            // Every source ended: the terminal's events are all that is left.
            else => std::future::pending().await,
        }
    }
}

impl Screen for DeployScreen<'_> {
    fn draw(&mut self, frame: &mut Frame) {
        let ctx = live_frame(
            &self.mirror,
            self.theme,
            self.title.as_deref(),
            &self.context,
            self.started.elapsed().as_secs_f64(),
            self.follow.as_ref().map_or(&[], |f| &f.history),
            Some(jiff::Timestamp::now()),
        );
        self.ui.rollback_waits = self.answers.waits(Question::Rollback) && self.finished.is_none();
        self.ui.unlock_waits = self.answers.waits(Question::Unlock) && self.finished.is_none();
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
        if self.follow.is_some() {
            // Following, `q` is taken only once a verdict is on screen (before it, `q` asks to
            // cancel, and the cancelled pass's verdict sets `quit`). A closed input alone does
            // not end it: the watch goes on until a signal, as the headless follow does.
            return self.quit && self.mirror.verdict.is_some();
        }
        self.finished.is_some()
            && self.mirror.verdict.is_some()
            && (self.ui.done(&self.mirror, self.quit) || self.blind || !self.input_open)
    }
}
