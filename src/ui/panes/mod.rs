//! One file per pane. Each renders from the borrowed [`DeployFrame`] (the deploy state and the
//! clock) and the UI state; none owns domain data.

pub mod banner;
pub mod detail;
pub mod events;
pub mod header;
pub mod helm;
pub mod help;
pub mod history;
pub mod hooks;
pub mod plan;
pub mod pods;
pub mod recover;
pub mod table;
pub mod workloads;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use crate::engine::state::DeployState;
use crate::ui::model::Mark;
use crate::ui::nav::{Filters, Ordered};
use crate::ui::theme::Theme;

/// Everything a frame of the deploy screen is drawn from, borrowed (not to be confused with
/// ratatui's `Frame`, the buffer it is drawn into, nor with the engine's `views`, its data).
pub struct DeployFrame<'a> {
    pub state: &'a DeployState,
    pub theme: Theme,
    /// What this run is (`demo · optional-pending`).
    pub title: Option<&'a str>,
    /// The kube context, or the server when no context was named.
    pub context: Option<&'a str>,
    /// Seconds since the deploy started (frozen at the verdict).
    pub elapsed: f64,
    /// The wall clock, for ages; `None` leaves ages blank.
    pub now: Option<jiff::Timestamp>,
    /// `watch --follow`: the revisions judged before (empty otherwise: no history pane).
    pub history: &'a [history::Judged],
}

pub fn mark_style(mark: Mark, theme: &Theme) -> Style {
    match mark {
        Mark::Done => theme.ok(),
        Mark::Running => theme.progress(),
        Mark::Failed | Mark::Cancelled => theme.bad(),
        Mark::Pending | Mark::Skipped => theme.muted(),
        Mark::Optional => theme.optional(),
    }
}

/// A pane's frame: its title (with the filter, when one is set) and focus colour.
pub fn pane_block<'a>(title: Vec<Span<'a>>, focused: bool, theme: &Theme) -> Block<'a> {
    let mut spans = vec![Span::raw(" ")];
    spans.extend(title);
    spans.push(Span::raw(" "));
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(theme.border(focused))
        .title(Line::from(spans).style(theme.title(focused)))
}

/// A pane with nothing to list: why, muted, inside its frame.
pub fn render_empty<'a>(
    frame: &mut Frame,
    area: Rect,
    block: Block<'a>,
    text: impl Into<std::borrow::Cow<'a, str>>,
    theme: &Theme,
) {
    frame.render_widget(
        Paragraph::new(Span::styled(text, theme.muted())).block(block),
        area,
    );
}

/// `  2 failed` after a pane title, when any failed.
pub fn failed_span(failed: usize, theme: &Theme) -> Option<Span<'static>> {
    (failed > 0).then(|| Span::styled(format!("  {failed} failed"), theme.bad()))
}

/// ` / web` after a pane title when the filter of `slot` narrows it (or is being typed).
pub fn filter_span<S: Ordered>(
    filters: &Filters<S>,
    slot: S,
    theme: &Theme,
) -> Option<Span<'static>> {
    let (filter, editing) = (filters.get(slot), filters.is_editing(slot));
    if filter.is_empty() && !editing {
        return None;
    }
    let cursor = if editing { "▏" } else { "" };
    Some(Span::styled(format!(" / {filter}{cursor}"), theme.warn()))
}

/// Lays styled pieces out in lines of at most `width` columns (by display width), breaking
/// at spaces where it can and inside a word only when the word alone is wider than a line.
pub fn wrap_spans(pieces: &[(Style, String)], width: usize) -> Vec<Line<'static>> {
    use crate::ui::fit;
    let width = width.max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (style, text) in pieces {
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let room = width - used;
            if fit::width(rest) <= room {
                current.push(Span::styled(rest.to_string(), *style));
                used += fit::width(rest);
                break;
            }
            // The longest prefix that fits, then back to its last space.
            let fits = fit::wrap(rest, room)[0];
            let fits = if fit::width(fits) > room { "" } else { fits };
            let cut = match rest[fits.len()..].starts_with(' ') {
                true => Some(fits.len()),
                false => fits.rfind(' '),
            };
            match cut {
                Some(at) if at > 0 || used > 0 => {
                    if at > 0 {
                        current.push(Span::styled(rest[..at].to_string(), *style));
                    }
                    rest = rest[at..].trim_start_matches(' ');
                }
                _ if used > 0 => {}
                _ => {
                    // A word wider than a whole line: cut it.
                    let head = if fits.is_empty() {
                        fit::wrap(rest, room)[0]
                    } else {
                        fits
                    };
                    current.push(Span::styled(head.to_string(), *style));
                    rest = &rest[head.len()..];
                }
            }
            lines.push(Line::from(std::mem::take(&mut current)));
            used = 0;
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}

/// `value` wrapped to `width` after `key`, padded to a column `key_w` wide (`key_cell` styles
/// it); the lines after the first leave the column blank.
pub fn keyed_lines(
    key: &str,
    key_w: usize,
    key_cell: impl Fn(String) -> Span<'static>,
    value: (Style, String),
    width: usize,
) -> Vec<Line<'static>> {
    use crate::ui::fit;
    wrap_spans(&[value], width)
        .into_iter()
        .enumerate()
        .map(|(n, part)| {
            let k = if n == 0 {
                fit::pad(key, key_w)
            } else {
                " ".repeat(key_w)
            };
            let mut spans = vec![key_cell(k)];
            spans.extend(part.spans);
            Line::from(spans)
        })
        .collect()
}

/// Untrusted plain text (a log line, a manifest line) made inert and cut into lines of `width`.
pub fn plain_lines(text: &str, width: usize) -> Vec<Line<'static>> {
    use crate::ui::fit;
    fit::wrap(&fit::inert(text), width)
        .into_iter()
        .map(|p| Line::from(p.to_string()))
        .collect()
}
