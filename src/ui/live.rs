//! The live deploy screen in the shared [`Tui`]: the engine runs the deploy on its own task
//! and folds each event once into the deploy state it shares ([`run::Shared`]); the screen
//! borrows that state for each frame and is told that it changed, however many events that was.
//! It redraws at most at [`FRAME`] rate after a change, on input, and on a slow tick (spinner,
//! clock). The cluster is never polled; only the drill-down asks for a container's log, one
//! stream at a time.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use ratatui::Frame;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::engine::ask::{Answers, Asks, Question};
use crate::engine::event::Event;
use crate::engine::logs::{self, LogRequest};
use crate::engine::run::{self, Prepared, Shared};
use crate::engine::scrub::Scrub;
use crate::engine::state::{DeployState, PlanSummary};
use crate::headless::Headless;
use crate::signals::Signal;
use crate::ui::app::UiState;
use crate::ui::deck::Effect;
use crate::ui::panes::DeployFrame;
use crate::ui::panes::history::{self, HISTORY_KEPT, Judged};
use crate::ui::screen;
use crate::ui::theme::Theme;
use crate::ui::tui::{self, Flow, Screen, Tui, TuiEvent};

/// The slow tick: spinner frames and the clock.
pub(crate) const TICK: Duration = Duration::from_millis(250);
/// The shortest time between two frames a change of the deploy state draws: at thousands of
/// pods the engine folds events far faster than a terminal can show them.
pub(crate) const FRAME: Duration = Duration::from_millis(33);

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
    let (context, client, namespace) = screen_inputs(&prepared);
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
        shown: pass.shared.clone(),
        stale: false,
        drawn: Instant::now(),
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
    screen
        .finished
        .unwrap_or_else(|| Err(eyre!("the deploy ended without a result")))?;
    // The deploy is over and the screen gone: the one state is moved out, not copied.
    let state = screen.pass.shared.send_replace(DeployState::default());
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

/// The live screen's frame: the clock runs until the verdict, then stops at its moment.
pub(crate) fn live_frame<'a>(
    state: &'a DeployState,
    theme: Theme,
    title: Option<&'a str>,
    context: &'a str,
    running_secs: f64,
    history: &'a [Judged],
    now: Option<jiff::Timestamp>,
) -> DeployFrame<'a> {
    let elapsed = if state.verdict.is_some() {
        state.now_secs
    } else {
        running_secs
    };
    DeployFrame {
        state,
        theme,
        title,
        context: Some(context),
        elapsed,
        now,
        history,
    }
}

/// The live screen's last frame (after the verdict, before `q`), drawn into a `width`x`height`
/// test terminal, from the events the engine folded (each with its offset and the wall time
/// it stamped, empty when none), masked as the engine keeps them: the same fold, frame and
/// draw as the screen. `now` is the clock ages are told against (the live screen uses the wall clock).
pub fn final_frame(
    plan: PlanSummary,
    sent: impl IntoIterator<Item = (Event, f64, String)>,
    title: Option<&str>,
    context: &str,
    now: Option<jiff::Timestamp>,
    (width, height): (u16, u16),
) -> String {
    let mut state = DeployState::new(plan);
    for (event, at, wall) in sent {
        state.apply(&event, at, &wall);
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

/// What a screen takes from a prepared run before it starts: the context the header names (the server when no context was named), and the client and namespace the
/// drill-down's log streamer reads.
fn screen_inputs(prepared: &Prepared) -> (String, kube::Client, String) {
    let context = prepared
        .plan
        .context
        .clone()
        .unwrap_or_else(|| prepared.cluster.server.clone());
    (
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
    judged: impl FnMut(&DeployState) -> i32,
) -> Result<Option<i32>> {
    let prepared = next(None);
    let (context, client, namespace) = screen_inputs(&prepared);
    let Some(mut tui) = Tui::enter_or_plain(Some(TICK)) else {
        return Ok(None);
    };
    let pass = Pass::spawn(prepared, cancel.clone(), |_, _| {});
    let mut screen = DeployScreen {
        shown: pass.shared.clone(),
        stale: false,
        drawn: Instant::now(),
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
            history: Vec::new(),
            staged: false,
            after: None,
            last_code: None,
            not_kept: 0,
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
    if follow.not_kept > 0 {
        let _ = writeln!(
            out,
            "({} earlier verdicts not kept: a follow keeps the newest {HISTORY_KEPT})",
            follow.not_kept
        );
    }
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

/// One run of the engine: the state it folds its events into, and its end. A deploy has one;
/// a `watch --follow` one per revision.
struct Pass {
    shared: Arc<Shared>,
    /// Told when the engine changed the state (once however many changes since it last looked).
    changes: watch::Receiver<DeployState>,
    deploy: JoinHandle<Result<()>>,
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
        let shared = Arc::new(Shared::new(DeployState::new(run::summary(&prepared))));
        let changes = shared.subscribe();
        let engine = shared.clone();
        let deploy = tokio::spawn(async move {
            run::deploy_into(prepared, cancel, &engine, move |event, state| {
                tap(event, state)
            })
            .await
        });
        Pass {
            shared,
            changes,
            deploy,
            ended: false,
            started: Instant::now(),
        }
    }
}

/// A container's live log line with the release's values masked.
pub(crate) fn masked_log(scrub: &Scrub, msg: logs::LogMsg) -> logs::LogMsg {
    match msg {
        logs::LogMsg::Line { id, text } => logs::LogMsg::Line {
            id,
            text: scrub.text(&text),
        },
        other => other,
    }
}

/// Resolves once the state changed since the last frame and a frame is due ([`FRAME`] after
/// the last one). Cancel-safe: a change seen before the loop dropped this future stays in
/// `stale` until a frame is drawn.
async fn changed(changes: &mut watch::Receiver<DeployState>, stale: &mut bool, drawn: Instant) {
    if !*stale {
        if changes.changed().await.is_err() {
            // The pass holds its sender: never, but a gone engine has nothing more to say.
            std::future::pending::<()>().await;
        }
        *stale = true;
    }
    tokio::time::sleep_until((drawn + FRAME).into()).await;
}

/// The drill-down's log streamer: one container at a time, asked for by the screen.
pub(crate) struct Logs {
    pub(crate) rx: mpsc::UnboundedReceiver<logs::LogMsg>,
    pub(crate) requests: mpsc::UnboundedSender<Option<LogRequest>>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Logs {
    pub(crate) fn start(client: kube::Client, namespace: String) -> Logs {
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

    pub(crate) async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }

    /// Stops the streamer without waiting for it (from a key handler, which cannot await): its
    /// task ends on its own at the cancel.
    pub(crate) fn halt(self) {
        self.stop.cancel();
    }
}

/// `watch --follow` in the screen: where the next revision's pass comes from, where each
/// finished pass's verdict goes (the report), and the verdicts so far.
struct Follow<'a> {
    next: Box<dyn FnMut(Option<i64>) -> Prepared + 'a>,
    judged: Box<dyn FnMut(&DeployState) -> i32 + 'a>,
    history: Vec<Judged>,
    /// The pass waiting for the next revision is not shown until it names one, so the screen
    /// keeps the last verdict (and `q` means leave) until there is something new to show.
    staged: bool,
    /// The newest revision judged: the next pass follows only those after it.
    after: Option<i64>,
    last_code: Option<i32>,
    /// Verdicts dropped from `history`, oldest first, past [`HISTORY_KEPT`].
    not_kept: usize,
}

/// The deploy screen: the engine's state it shows, what the operator looks at, and the
/// channels to the engine and the log streamer.
struct DeployScreen<'a> {
    /// The state on screen: the pass's, or (following, while the next pass waits for a
    /// revision) the last judged one's.
    shown: Arc<Shared>,
    /// The pass's state changed since the last frame.
    stale: bool,
    /// When the last frame was drawn.
    drawn: Instant,
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
    finished: Option<Result<()>>,
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

/// What a key answered, sent to the engine waiting for it: `y`/`n` on the plan, `y` on the lock
/// prompt, `y` on the rollback prompt; or, when nobody waits any more, a notice saying what to
/// run instead. `running`: the engine has not ended (it may still wait for `R`). Cancel and
/// quit are the screen's own; any other effect is ignored here.
pub(crate) fn answer(
    effect: Effect,
    answers: &mut Answers,
    state: &DeployState,
    running: bool,
    ui: &mut UiState,
) {
    match effect {
        Effect::ApprovePlan | Effect::DeclinePlan => {
            if let Some(answer) = answers.take(Question::Plan) {
                // The engine may have ended meanwhile (a cancel): nobody to tell.
                let _ = answer.send(effect == Effect::ApprovePlan);
            }
        }
        Effect::Unlock => match answers.take(Question::Unlock) {
            // The engine may have ended meanwhile (a cancel): nobody to tell.
            Some(answer) if state.verdict.is_none() => {
                let _ = answer.send(true);
            }
            _ => {
                ui.notice = Some(
                    "the deploy no longer waits on the lock: run it again (add \
                     --recover-lock headless)"
                        .into(),
                )
            }
        },
        Effect::Rollback(to) => {
            let sent = match answers.take(Question::Rollback) {
                Some(answer) if running => answer.send(true).is_ok(),
                _ => false,
            };
            if !sent {
                // The engine ended meanwhile (a cancel, a lost terminal): the command still
                // runs as printed.
                ui.notice = Some(format!(
                    "the deploy no longer waits for R: run {}",
                    crate::ui::recover::rollback_command(state, to)
                ));
            }
        }
        Effect::None | Effect::Cancel | Effect::Quit => {}
    }
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
        let wanted = self.ui.wanted_log(&self.shown.borrow());
        if wanted != self.asked {
            let _ = self.logs.requests.send(wanted.clone());
            self.asked = wanted;
        }
    }

    fn handle(&mut self, event: TuiEvent) -> Flow {
        match event {
            TuiEvent::Key(key) => {
                let shown = self.shown.clone();
                let state = shown.borrow();
                match self.ui.on_key(key, &state) {
                    Effect::Cancel => self.cancel.cancel(),
                    Effect::Quit => {
                        self.quit = true;
                        // The engine may be waiting for `R`: it ends once nobody can ask.
                        self.answers.withdraw(Question::Rollback);
                    }
                    effect => answer(
                        effect,
                        &mut self.answers,
                        &state,
                        self.finished.is_none(),
                        &mut self.ui,
                    ),
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

    /// The pass's state changed. Following, the pass waiting for the next revision takes the
    /// screen over once it names a revision or ends; until then the last verdict stays.
    fn on_change(&mut self) -> Flow {
        let Some(follow) = self.follow.as_mut().filter(|f| f.staged) else {
            return Flow::Redraw;
        };
        {
            let staged = self.pass.shared.borrow();
            // Cancelled before a revision was named: the operator left while waiting, and the
            // last verdict stays on screen (and in the report), as the headless follow keeps it.
            let left_waiting = staged.revision.is_none() && self.cancel.is_cancelled();
            if staged.revision.is_none() && (staged.verdict.is_none() || left_waiting) {
                return Flow::Same;
            }
        }
        follow.staged = false;
        self.shown = self.pass.shared.clone();
        // A new revision: what was selected or drilled into belonged to the last one.
        let focus = self.ui.focus;
        self.ui = UiState::new();
        self.ui.focus = focus;
        self.started = self.pass.started;
        Flow::Redraw
    }

    /// A pass ended while following: its verdict goes into the history (and the report), and
    /// unless the watch was cancelled the next pass starts, for the revisions after this one.
    fn next_pass(&mut self) -> Flow {
        // The task has ended, so its state is whole: the verdict included.
        self.on_change();
        let cancelled = self.cancel.is_cancelled();
        let Some(follow) = self.follow.as_mut() else {
            return Flow::Redraw;
        };
        if std::mem::take(&mut follow.staged) {
            // Left while waiting for the next revision: the last verdict stands, unjudged
            // again (as the headless follow does on a signal).
            self.quit = true;
            return Flow::Redraw;
        }
        let done = self.pass.shared.borrow();
        let revision = done.revision;
        if let Some(v) = &done.verdict {
            let judged = Judged {
                revision,
                verdict: v.clone(),
                at: Some(jiff::Timestamp::now().to_string()),
                lines: Headless::default().lines(&Event::Verdict(v.clone()), &done),
            };
            follow.not_kept += history::remember(&mut follow.history, judged);
        }
        follow.last_code = Some((follow.judged)(&done));
        drop(done);
        follow.after = revision.or(follow.after);
        if cancelled {
            self.quit = true;
            return Flow::Redraw;
        }
        let prepared = (follow.next)(follow.after);
        follow.staged = true;
        self.pass = Pass::spawn(prepared, self.cancel.clone(), |_, _| {});
        crate::memory::give_back_freed();
        Flow::Redraw
    }

    async fn next_change(&mut self) -> Flow {
        tokio::select! {
            () = changed(&mut self.pass.changes, &mut self.stale, self.drawn) => {
                let flow = self.on_change();
                if flow == Flow::Same {
                    // Nothing to draw (a pass not shown yet): wait for its next change.
                    self.stale = false;
                }
                flow
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
                    Ok(()) if self.follow.is_some() => self.next_pass(),
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
        self.stale = false;
        self.drawn = Instant::now();
        // Drawn under a read borrow: the engine's next fold waits for this frame, never for an
        // await; a frame draws the rows it shows, not every pod.
        let shown = self.shown.clone();
        let state = shown.borrow();
        let ctx = live_frame(
            &state,
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
            return self.quit && self.shown.borrow().verdict.is_some();
        }
        let state = self.shown.borrow();
        self.finished.is_some()
            && state.verdict.is_some()
            && (self.ui.done(&state, self.quit) || self.blind || !self.input_open)
    }
}
