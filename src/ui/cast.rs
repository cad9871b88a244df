//! `helmdeck replay RECORD --cast FILE`: the replay screen played through a terminal that is
//! only a writer, kept as an asciicast v2 file (a JSON header line, then one
//! `[seconds, "o", "bytes"]` line per frame). The bytes are what [`super::replay`] sends a real
//! terminal: the same screen drawn by ratatui's crossterm backend, each frame only the cells
//! that changed, paced by the record's offsets and the slow tick as the live replay is. Nothing
//! is read from a terminal, so a cast is made in CI or through a pipe.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use color_eyre::eyre::{Result, WrapErr};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::Hide;
use ratatui::crossterm::queue;
use ratatui::crossterm::terminal::{Clear, ClearType};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::record::reader::Record;
use crate::ui::replay::{ReplayScreen, TICK};
use crate::ui::theme::Theme;
use crate::ui::tui::Screen;

/// The terminal a player is told it plays in (the screen's colours and line drawing).
const TERM: &str = "xterm-256color";

/// The asciicast v2 text of `record` replayed at `speed` on a `width`x`height` screen. Played
/// to the record's end (a cut record: to the cut, the key bar saying so), in colour whatever
/// this process's `NO_COLOR`: the file is shown by someone else's player.
pub fn cast(record: &Record, (width, height): (u16, u16), speed: f64) -> Result<Vec<u8>> {
    let mut screen = ReplayScreen::new(record, speed);
    screen.set_theme(Theme::coloured());
    let options = TerminalOptions {
        viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
    };
    let sink = Sink::default();
    let mut terminal = Terminal::with_options(CrosstermBackend::new(sink.clone()), options)
        .wrap_err("a terminal that writes into memory")?;
    // The player starts blank; a real terminal's alternate screen is entered blank too.
    queue!(sink.clone(), Hide, Clear(ClearType::All)).wrap_err("writing into memory")?;
    let mut out = header(record, width, height)?;
    // Whole microseconds (the format's precision), so the spinner's phase at any event is
    // its time over the tick, exactly.
    let tick = TICK.as_micros() as u64;
    let mut real = 0_u64;
    loop {
        terminal
            .draw(|f| screen.draw(f))
            .wrap_err("drawing into memory")?;
        let bytes = sink.take();
        if !bytes.is_empty() {
            event(&mut out, real, &bytes)?;
        }
        if screen.played_out() {
            break;
        }
        // The next line due, or the spinner's tick, whichever comes first (as the live loop
        // waits for either); rounded up, so the line is reached.
        let next_tick = (real / tick + 1) * tick;
        let next = screen.wait().map_or(next_tick, |w| {
            (real + (w * 1e6).ceil().max(1.0) as u64).min(next_tick)
        });
        screen.ui.tick = next / tick;
        screen.advance_by((next - real) as f64 / 1e6);
        real = next;
    }
    Ok(out)
}

/// What the terminal wrote since the last frame (the backend owns its writer; this is a
/// handle on the same bytes).
#[derive(Clone, Default)]
struct Sink(Rc<RefCell<Vec<u8>>>);

impl Sink {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The header line: the size, the record's start as the cast's timestamp, its title.
fn header(record: &Record, width: u16, height: u16) -> Result<Vec<u8>> {
    let started = record
        .header
        .started
        .parse::<jiff::Timestamp>()
        .map(|t| t.as_second())
        .ok();
    let title = record
        .header
        .title
        .clone()
        .unwrap_or_else(|| record.header.command.clone());
    // The format's own order (a struct: `json!` would sort the keys).
    #[derive(serde::Serialize)]
    struct Header<'a> {
        version: u8,
        width: u16,
        height: u16,
        #[serde(skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
        title: String,
        env: std::collections::BTreeMap<&'a str, &'a str>,
    }
    let header = Header {
        version: 2,
        width,
        height,
        timestamp: started,
        title: format!("helmdeck replay: {}", crate::text::plain(&title)),
        env: [("TERM", TERM)].into(),
    };
    let mut out = serde_json::to_vec(&header).wrap_err("the cast's header")?;
    out.push(b'\n');
    Ok(out)
}

/// One output event: `[seconds, "o", text]`, `at` in microseconds.
fn event(out: &mut Vec<u8>, at: u64, bytes: &[u8]) -> Result<()> {
    let at = at as f64 / 1e6;
    let text = String::from_utf8_lossy(bytes);
    serde_json::to_writer(&mut *out, &(at, "o", text)).wrap_err("a cast event")?;
    out.write_all(b"\n").wrap_err("a cast event")?;
    Ok(())
}

#[cfg(test)]
mod tests;
