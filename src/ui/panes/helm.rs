//! Helm's output as it comes, with its colours (only SGR passes), between what the steps noted
//! (the checks before, the command run, what came after), with scrollback and follow mode.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::engine::event::Level;
use crate::ui::app::UiState;
use crate::ui::deck::FilterSlot;
use crate::ui::model::{self, HelmPaneLine};
use crate::ui::nav::Scroll;
use crate::ui::panes::{DeployFrame, filter_span, pane_block, render_empty, wrap_spans};
use crate::ui::theme::Theme;
use crate::ui::{ansi, fit};

/// A line of the pane as styled pieces: notes marked by their level, helm's own colours over
/// the stderr tint, the exit line muted or red.
fn pieces(line: &HelmPaneLine, theme: &Theme) -> Vec<(Style, String)> {
    match line {
        HelmPaneLine::Note(level, text) => {
            let (mark, style) = match level {
                Level::Info => ("· ", theme.muted()),
                Level::Warn => ("! ", theme.warn()),
                Level::Error => ("✗ ", theme.bad()),
            };
            vec![(style, format!("{mark}{}", fit::inert(text)))]
        }
        HelmPaneLine::Helm { stderr, raw } => {
            let base = if *stderr { theme.warn() } else { Style::new() };
            ansi::styled(raw, base, theme.colour)
        }
        HelmPaneLine::Exit(text, ok) => {
            vec![(if *ok { theme.muted() } else { theme.bad() }, text.clone())]
        }
    }
}

/// Visual lines for a scrolled list of logical lines: the tail when following, else from
/// `scroll.top`. Shared with the drill-down's log.
pub fn window<T>(
    items: &[T],
    scroll: &mut Scroll,
    height: usize,
    width: usize,
    render: impl Fn(&T, usize) -> Vec<Line<'static>>,
) -> Vec<Line<'static>> {
    scroll.height = height;
    if height == 0 || items.is_empty() {
        return Vec::new();
    }
    if scroll.follow {
        let mut out: Vec<Line<'static>> = Vec::new();
        for item in items.iter().rev() {
            let mut visual = render(item, width);
            visual.append(&mut out);
            out = visual;
            if out.len() >= height {
                break;
            }
        }
        let skip = out.len().saturating_sub(height);
        return out.split_off(skip);
    }
    scroll.top = scroll.top.min(items.len() - 1);
    let mut out = Vec::new();
    for item in &items[scroll.top..] {
        out.extend(render(item, width));
        if out.len() >= height {
            break;
        }
    }
    out.truncate(height);
    out
}

/// `following` or where the pane is anchored.
pub fn position_span<'a>(scroll: &Scroll, total: usize, theme: &Theme) -> Span<'a> {
    if scroll.follow {
        Span::styled("  following", theme.muted())
    } else {
        let at = scroll.at(total);
        Span::styled(format!("  paused at {at} · f follows"), theme.warn())
    }
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState, focused: bool) {
    let t = ctx.theme;
    let filter = ui.filters.get(FilterSlot::Helm).to_string();
    let items = model::helm_lines(ctx.state, &filter);
    let mut title = vec![Span::raw("Helm"), position_span(&ui.helm, items.len(), &t)];
    if let Some(f) = filter_span(&ui.filters, FilterSlot::Helm, &t) {
        title.push(f);
    }
    let block = pane_block(title, focused, &t);
    let inner = block.inner(area);
    if items.is_empty() {
        let text = if filter.is_empty() {
            "helm has not started yet"
        } else {
            "no line matches the filter"
        };
        render_empty(frame, area, block, text, &t);
        return;
    }
    let visual = window(
        &items,
        &mut ui.helm,
        inner.height as usize,
        inner.width as usize,
        |l, w| wrap_spans(&pieces(l, &t), w),
    );
    frame.render_widget(Paragraph::new(visual).block(block), area);
}
