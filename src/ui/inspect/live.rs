//! The inspect screen's loop: draw the collected inspection, then redraw on keys and resizes
//! only (nothing is polled). `r` reads the release again through the caller's `reload`, while
//! keys still work. The terminal is restored on every way out (the guard, and its panic hook).

use std::future::Future;
use std::pin::Pin;

use color_eyre::eyre::{Result, WrapErr};
use futures::StreamExt;
use ratatui::crossterm::event::{Event as TermEvent, EventStream};
use tokio::signal::unix::{SignalKind, signal};

use crate::inspect::Inspection;
use crate::ui::inspect::data::{IView, Inspected};
use crate::ui::inspect::screen;
use crate::ui::inspect::state::{Effect, InspectUi};
use crate::ui::term;
use crate::ui::theme::Theme;

/// Shows `inspection` until the operator quits; returns the exit code the inspection calls for
/// ([`Inspection::exit_code`] of the last one read). `reload` reads the release again (`r`).
pub async fn run_inspect<F, Fut>(inspection: Inspection, mut reload: F) -> Result<i32>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Inspection>,
{
    let mut term_sig =
        signal(SignalKind::terminate()).wrap_err("installing the SIGTERM handler")?;
    let mut hup_sig = signal(SignalKind::hangup()).wrap_err("installing the SIGHUP handler")?;
    let mut int_sig = signal(SignalKind::interrupt()).wrap_err("installing the SIGINT handler")?;
    let mut guard = term::Guard::enter().wrap_err("setting up the terminal")?;
    let theme = Theme::from_env();
    let mut data = Inspected::new(inspection, Some(jiff::Timestamp::now()));
    let mut ui = InspectUi::new(&data);
    let mut input = EventStream::new();
    let mut pending: Option<Pin<Box<Fut>>> = None;
    let mut dirty = true;
    let outcome: Result<()> = loop {
        if dirty {
            let view = IView { data: &data, theme };
            if let Err(e) = guard
                .terminal
                .draw(|f| screen::draw(f, &view, &mut ui))
                .wrap_err("drawing the inspect screen")
            {
                break Err(e);
            }
            dirty = false;
        }
        tokio::select! {
            key = input.next() => match key {
                Some(Ok(TermEvent::Key(k))) => {
                    match ui.on_key(k, &data) {
                        Effect::Quit => break Ok(()),
                        Effect::Reload => pending = Some(Box::pin(reload())),
                        Effect::None => {}
                    }
                    dirty = true;
                }
                Some(Ok(TermEvent::Resize(..))) => {
                    let _ = guard.terminal.autoresize();
                    dirty = true;
                }
                Some(Ok(_)) => {}
                // The terminal is gone: nothing more to show.
                Some(Err(_)) | None => break Ok(()),
            },
            fresh = async { pending.as_mut().expect("guarded by the condition").await }, if pending.is_some() => {
                pending = None;
                data = Inspected::new(fresh, Some(jiff::Timestamp::now()));
                ui.reloading = false;
                ui.sync(&data);
                dirty = true;
            }
            _ = term_sig.recv() => break Ok(()),
            _ = hup_sig.recv() => break Ok(()),
            _ = int_sig.recv() => break Ok(()),
        }
    };
    drop(guard);
    outcome?;
    // The screen is gone: leave what was inspected in the scrollback.
    if let Some(first) = crate::inspect::text::render(&data.inspection)
        .lines()
        .next()
    {
        println!("{first}");
    }
    Ok(data.inspection.exit_code())
}
