//! The live loop: the engine runs the deploy on its own task; every event it applies is sent
//! here (a clone of the event, not of the state) and folded into a mirror of the state with
//! the same [`DeployState::apply`]. The screen redraws when something changed, on input, and on
//! a slow tick (spinner, clock). The cluster is never polled; only the drill-down asks for a
//! container's log, one stream at a time.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr, eyre};
use futures::StreamExt;
use ratatui::crossterm::event::{Event as TermEvent, EventStream};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::engine::event::Event;
use crate::engine::logs::{self, LogRequest};
use crate::engine::run::{self, Prepared};
use crate::engine::state::DeployState;
use crate::headless::Headless;
use crate::ui::app::{Effect, UiState};
use crate::ui::panes::View;
use crate::ui::theme::Theme;
use crate::ui::{screen, term};

/// The slow tick: spinner frames and the clock.
const TICK: Duration = Duration::from_millis(250);

/// The wall time the engine stamped on a step transition, so the mirror matches exactly.
fn wall_of(event: &Event, state: &DeployState) -> String {
    let step = match event {
        Event::StepStarted { step } => state.steps.get(step).and_then(|s| s.started_at.clone()),
        Event::StepEnded { step, .. } => state.steps.get(step).and_then(|s| s.ended_at.clone()),
        _ => None,
    };
    step.unwrap_or_default()
}

/// Runs the deploy under the TUI and returns the engine's final state. The screen stays after
/// the verdict until `q`; a cancel the operator confirmed ends at its verdict.
pub async fn run_deploy(
    prepared: Prepared,
    cancel: CancellationToken,
    title: Option<String>,
) -> Result<DeployState> {
    let plan = run::summary(&prepared);
    let context = prepared
        .plan
        .context
        .clone()
        .unwrap_or_else(|| prepared.cluster.server.clone());
    let client = prepared.cluster.client.clone();
    let namespace = prepared.namespace().to_string();
    // Signals first, the terminal second: nothing has started if either fails.
    let signals = Signals::new()?;
    let mut guard = term::Guard::enter().wrap_err("setting up the terminal")?;

    let (events_tx, events_rx) = mpsc::unbounded_channel::<(Event, f64, String)>();
    let engine_cancel = cancel.clone();
    let deploy = tokio::spawn(async move {
        run::deploy(prepared, engine_cancel, move |event, state| {
            // The loop may be gone (terminal lost); the deploy goes on regardless.
            let _ = events_tx.send((event.clone(), state.now_secs, wall_of(event, state)));
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

    let channels = Channels {
        events: events_rx,
        logs: logs_rx,
        requests: requests_tx,
        signals,
    };
    let outcome = ui_loop(
        &mut guard,
        DeployState::new(plan),
        channels,
        deploy,
        &cancel,
        title.as_deref(),
        &context,
    )
    .await;
    logs_stop.cancel();
    let _ = logs_task.await;
    drop(guard);
    let state = outcome?;
    if let Some(v) = &state.verdict {
        // The screen is gone: leave the verdict in the scrollback.
        for line in Headless::default().lines(&Event::Verdict(v.clone()), &state) {
            println!("{line}");
        }
    }
    Ok(state)
}

struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals> {
        Ok(Signals {
            term: signal(SignalKind::terminate()).wrap_err("installing the SIGTERM handler")?,
            int: signal(SignalKind::interrupt()).wrap_err("installing the SIGINT handler")?,
            hup: signal(SignalKind::hangup()).wrap_err("installing the SIGHUP handler")?,
        })
    }
}

struct Channels {
    events: mpsc::UnboundedReceiver<(Event, f64, String)>,
    logs: mpsc::UnboundedReceiver<logs::LogMsg>,
    requests: mpsc::UnboundedSender<Option<LogRequest>>,
    signals: Signals,
}

async fn ui_loop(
    guard: &mut term::Guard,
    mut mirror: DeployState,
    mut ch: Channels,
    mut deploy: tokio::task::JoinHandle<Result<DeployState>>,
    cancel: &CancellationToken,
    title: Option<&str>,
    context: &str,
) -> Result<DeployState> {
    let theme = Theme::from_env();
    let started = Instant::now();
    let mut ui = UiState::new();
    let mut input = EventStream::new();
    let mut input_open = true;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut finished: Option<Result<DeployState>> = None;
    let mut asked: Option<LogRequest> = None;
    let mut quit = false;
    // The terminal is gone or unusable: the deploy is cancelled and runs to its verdict unseen.
    let mut blind = false;
    let mut dirty = true;
    loop {
        if dirty && !blind {
            let elapsed = if mirror.verdict.is_some() {
                mirror.now_secs
            } else {
                started.elapsed().as_secs_f64()
            };
            let view = View {
                state: &mirror,
                theme,
                title,
                context: Some(context),
                elapsed,
                now: Some(jiff::Timestamp::now()),
            };
            if guard
                .terminal
                .draw(|f| screen::draw(f, &view, &mut ui))
                .is_err()
            {
                blind = true;
                ui.cancelling = true;
                cancel.cancel();
            }
            dirty = false;
        }
        if finished.is_some()
            && mirror.verdict.is_some()
            && (ui.done(&mirror, quit) || blind || !input_open)
        {
            break;
        }
        tokio::select! {
            Some((event, at, wall)) = ch.events.recv() => {
                mirror.apply(&event, at, &wall);
                while let Ok((event, at, wall)) = ch.events.try_recv() {
                    mirror.apply(&event, at, &wall);
                }
                dirty = true;
            }
            Some(msg) = ch.logs.recv() => {
                ui.log.apply(msg);
                while let Ok(msg) = ch.logs.try_recv() {
                    ui.log.apply(msg);
                }
                dirty = true;
            }
            key = input.next(), if input_open => match key {
                Some(Ok(TermEvent::Key(k))) => {
                    match ui.on_key(k, &mirror) {
                        Effect::Cancel => cancel.cancel(),
                        Effect::Quit => quit = true,
                        Effect::None => {}
                    }
                    dirty = true;
                }
                Some(Ok(TermEvent::Resize(..))) => {
                    let _ = guard.terminal.autoresize();
                    dirty = true;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => input_open = false,
            },
            _ = tick.tick() => {
                ui.tick = ui.tick.wrapping_add(1);
                dirty = true;
            }
            done = &mut deploy, if finished.is_none() => {
                finished = Some(done.map_err(|e| eyre!("the deploy task failed: {e}")).and_then(|r| r));
                if finished.as_ref().is_some_and(|r| r.is_err()) {
                    break;
                }
                dirty = true;
            }
            _ = ch.signals.term.recv() => { ui.cancelling = true; cancel.cancel(); dirty = true; }
            _ = ch.signals.int.recv() => { ui.cancelling = true; cancel.cancel(); dirty = true; }
            _ = ch.signals.hup.recv() => { blind = true; ui.cancelling = true; cancel.cancel(); }
        }
        let wanted = ui.wanted_log(&mirror);
        if wanted != asked {
            let _ = ch.requests.send(wanted.clone());
            asked = wanted;
        }
    }
    finished.unwrap_or_else(|| Err(eyre!("the deploy ended without a result")))
}
