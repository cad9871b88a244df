//! The verdict banner: the word in a colour block with its exit code, the reason, and what to
//! do next. Green, red or amber; the glyph and the word carry it without colour.

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use crate::engine::verdict::{Outcome, Verdict};
use crate::ui::fit;
use crate::ui::panes::{View, wrap_spans};

fn glyph(o: Outcome) -> &'static str {
    match o {
        Outcome::Landed => "✓",
        Outcome::Failed => "✗",
        Outcome::LiveInitIncomplete => "!",
    }
}

/// The optional workloads left behind, by name (they never gate).
fn optional_left(view: &View) -> Vec<String> {
    view.state
        .optional()
        .filter(|w| !w.ready)
        .map(|w| w.name.clone())
        .collect()
}

/// The banner's lines, at most `rows`: the reason gives up lines first, so the next step
/// always shows.
fn lines(view: &View, v: &Verdict, width: usize, rows: usize) -> Vec<Line<'static>> {
    let t = &view.theme;
    let word = format!(" {} {} ", glyph(v.outcome), v.outcome.title());
    let mut head = wrap_spans(
        &[
            (t.banner_word(v.outcome), word),
            (t.outcome(v.outcome), format!("  exit {}  ", v.code)),
            (t.bold(), fit::inert(&v.reason).into_owned()),
        ],
        width,
    );
    let mut out = Vec::new();
    if let Some(next) = &v.next {
        out.extend(wrap_spans(
            &[
                (t.muted(), "next: ".into()),
                (t.key(), fit::inert(next).into_owned()),
            ],
            width,
        ));
    } else if v.outcome == Outcome::Failed
        && let Some(first) = v.evidence.first()
    {
        out.extend(wrap_spans(
            &[
                (t.muted(), "why: ".into()),
                (Style::new(), fit::inert(first).into_owned()),
            ],
            width,
        ));
    }
    let optional = optional_left(view);
    if !optional.is_empty() {
        let names = optional
            .iter()
            .map(|n| fit::inert(n).into_owned())
            .collect::<Vec<_>>()
            .join(", ");
        out.extend(wrap_spans(
            &[(
                t.optional(),
                format!("optional, not gating, not ready: {names}"),
            )],
            width,
        ));
    }
    out.truncate(rows.saturating_sub(1));
    let room = rows.saturating_sub(out.len()).max(1);
    if head.len() > room {
        head.truncate(room);
        if let Some(last) = head.last_mut() {
            last.spans.push(Span::raw("…"));
        }
    }
    head.extend(out);
    head
}

/// Rows the banner takes at this width (borders included), capped to leave room for the rest.
pub fn height(view: &View, width: u16, max: u16) -> u16 {
    let Some(v) = &view.state.verdict else {
        return 0;
    };
    let n = lines(
        view,
        v,
        width.saturating_sub(4) as usize,
        max.saturating_sub(2) as usize,
    )
    .len() as u16;
    n + 2
}

pub fn render(frame: &mut Frame, area: Rect, view: &View) {
    let rows = area.height.saturating_sub(2) as usize;
    let Some(v) = &view.state.verdict else { return };
    let t = &view.theme;
    let colour = t.outcome(v.outcome);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(colour)
        .title(Span::styled(" verdict ", colour))
        .title_bottom(
            Line::from(Span::styled(
                " q quit · the screen stays for inspection ",
                t.muted(),
            ))
            .alignment(Alignment::Right),
        );
    let inner_width = area.width.saturating_sub(4) as usize;
    let body = lines(view, v, inner_width, rows);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let text_area = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(2),
        ..inner
    };
    frame.render_widget(Paragraph::new(body), text_area);
}
