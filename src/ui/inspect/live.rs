//! The inspect screen in the shared [`Tui`]: draw the collected inspection, then redraw on keys
//! and resizes only (nothing is polled, no tick). `r` reads the release again through the
//! caller's `reload`, while keys still work. Any signal, or the end of the input, quits.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;

use color_eyre::eyre::{Result, WrapErr};
use ratatui::Frame;

use crate::inspect::Inspection;
use crate::ui::inspect::data::{InspectFrame, Inspected};
use crate::ui::inspect::screen;
use crate::ui::inspect::state::{Effect, InspectUi};
use crate::ui::theme::Theme;
use crate::ui::tui::{self, Flow, Screen, Tui, TuiEvent};

/// Shows `inspection` until the operator quits; returns the exit code the inspection calls for
/// ([`Inspection::exit_code`] of the last one read). `reload` reads the release again (`r`).
pub async fn run_inspect<F, Fut>(inspection: Inspection, reload: F) -> Result<i32>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Inspection>,
{
    // A terminal that does not answer gets the plain text instead.
    let Some(mut tui) = Tui::enter_or_plain(None) else {
        return crate::inspect::print(&inspection, false);
    };
    let data = Inspected::new(inspection, Some(jiff::Timestamp::now()));
    let mut screen = InspectScreen {
        ui: InspectUi::new(&data),
        data,
        theme: Theme::from_env(),
        reload,
        pending: None,
    };
    let outcome = tui::run(&mut tui, &mut screen).await;
    drop(tui);
    outcome?;
    // The screen is gone: leave what was inspected in the scrollback.
    if let Some(first) = crate::inspect::text::render(&screen.data.inspection)
        .lines()
        .next()
    {
        let _ = writeln!(std::io::stdout(), "{first}");
    }
    Ok(screen.data.inspection.exit_code())
}

struct InspectScreen<F, Fut> {
    data: Inspected,
    ui: InspectUi,
    theme: Theme,
    reload: F,
    /// The release being read again, if it is.
    pending: Option<Pin<Box<Fut>>>,
}

impl<F, Fut> Screen for InspectScreen<F, Fut>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Inspection>,
{
    fn draw(&mut self, frame: &mut Frame) {
        let ctx = InspectFrame {
            data: &self.data,
            theme: self.theme,
        };
        screen::draw(frame, &ctx, &mut self.ui);
    }

    fn on_event(&mut self, event: TuiEvent) -> Flow {
        match event {
            TuiEvent::Key(key) => match self.ui.on_key(key, &self.data) {
                Effect::Quit => Flow::Quit,
                Effect::Reload => {
                    self.pending = Some(Box::pin((self.reload)()));
                    Flow::Redraw
                }
                Effect::None => Flow::Redraw,
            },
            TuiEvent::Resize => Flow::Redraw,
            TuiEvent::Tick => Flow::Same,
            // The terminal is gone, or the operator wants out: nothing more to show.
            TuiEvent::Signal(_) | TuiEvent::InputClosed => Flow::Quit,
        }
    }

    async fn changed(&mut self) -> Flow {
        let Some(pending) = self.pending.as_mut() else {
            return std::future::pending().await;
        };
        let fresh = pending.await;
        self.pending = None;
        self.data = Inspected::new(fresh, Some(jiff::Timestamp::now()));
        self.ui.reloading = false;
        self.ui.sync(&self.data);
        Flow::Redraw
    }

    fn on_lost(&mut self, error: std::io::Error) -> Result<Flow> {
        Err(error).wrap_err("drawing the inspect screen")
    }
}
