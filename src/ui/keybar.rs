//! The bottom line of either screen: the filter being typed, a notice, or the keys that work
//! here.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::fit;
use crate::ui::theme::Theme;

/// The filter as it is typed, with the keys that end the typing.
pub fn render_filter(frame: &mut Frame, area: Rect, text: &str, t: &Theme) {
    let width = area.width as usize;
    let line = Line::from(vec![
        Span::styled(" filter: ", t.key()),
        Span::raw(fit::end(&fit::inert(text), width.saturating_sub(40)).into_owned()),
        Span::styled("▏", t.key()),
        Span::styled("  enter keeps · esc clears", t.muted()),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

/// A one-line message in place of the keys.
pub fn render_notice(frame: &mut Frame, area: Rect, message: &str, t: &Theme) {
    frame.render_widget(
        Paragraph::new(Span::styled(
            fit::end(&format!(" {message}"), area.width as usize).into_owned(),
            t.warn(),
        )),
        area,
    );
}

/// The columns [`render_keys`] takes for `keys`.
pub fn keys_width(keys: &[(&str, &str)]) -> usize {
    1 + keys
        .iter()
        .map(|(key, what)| fit::width(key) + 1 + fit::width(what))
        .sum::<usize>()
        + 3 * keys.len().saturating_sub(1)
}

/// ` esc back · ↑↓ pod · …`: each key and what it does.
pub fn render_keys(frame: &mut Frame, area: Rect, keys: &[(&str, &str)], t: &Theme) {
    let mut spans = vec![Span::raw(" ")];
    for (n, (k, what)) in keys.iter().enumerate() {
        if n > 0 {
            spans.push(Span::styled(" · ", t.muted()));
        }
        spans.push(Span::styled(k.to_string(), t.key()));
        spans.push(Span::styled(format!(" {what}"), t.muted()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
