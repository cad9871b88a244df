//! The rows both screens share: a two-line header, the banner (as tall as it needs, up to a
//! share of the height), the body and the key bar; or only a note when the terminal is too
//! small.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;

use crate::ui::fit;

/// Below this the screen only says it is too small.
const MIN_WIDTH: u16 = 40;
const MIN_HEIGHT: u16 = 12;

pub struct Areas {
    pub whole: Rect,
    pub head: Rect,
    pub banner: Rect,
    pub body: Rect,
    pub keys: Rect,
}

/// Splits the frame; `banner_height(width, max)` says the rows the banner takes (0: none).
/// `None` when the terminal is too small (the frame then says so).
pub fn split(frame: &mut Frame, banner_height: impl FnOnce(u16, u16) -> u16) -> Option<Areas> {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "helmdeck needs at least {MIN_WIDTH}x{MIN_HEIGHT} (now {}x{})",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(fit::end(&msg, area.width as usize).into_owned()),
            area,
        );
        return None;
    }
    let banner_max = match area.height {
        0..30 => 4,
        30..40 => 5,
        _ => 8,
    };
    let banner_h = banner_height(area.width, banner_max);
    let [head, banner, body, keys] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(banner_h),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Some(Areas {
        whole: area,
        head,
        banner,
        body,
        keys,
    })
}

/// Draws one frame into a `width`x`height` test terminal: its text, then every cell's style
/// (so two frames compare equal only when they look the same, colours included).
pub fn draw_to_text(width: u16, height: u16, draw: impl FnOnce(&mut Frame)) -> String {
    // A test backend draws into memory: it cannot fail.
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("a test terminal");
    terminal.draw(draw).expect("drawing into a test terminal");
    let backend = terminal.backend();
    format!("{backend}\n{:?}", backend.buffer())
}

/// Draws one frame into a test terminal (the snapshot tests).
#[cfg(test)]
pub fn render_to_string(width: u16, height: u16, draw: impl FnOnce(&mut Frame)) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("a test terminal");
    terminal.draw(draw).expect("drawing into a test terminal");
    terminal.backend().to_string()
}
