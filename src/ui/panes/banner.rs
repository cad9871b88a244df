//! The verdict banner: the word in a colour block with its exit code, the reason, and what to
//! do next. Green, red or amber; the glyph and the word carry it without colour.

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use crate::engine::verdict::{Outcome, Verdict};
use crate::ui::fit;
use crate::ui::panes::{DeployFrame, wrap_spans};
use crate::ui::theme::Theme;

pub fn glyph(o: Outcome) -> &'static str {
    match o {
        Outcome::Landed | Outcome::DryRun | Outcome::NoChanges => "✓",
        Outcome::Failed => "✗",
        Outcome::LiveInitIncomplete | Outcome::ChangesPending => "!",
    }
}

/// The optional workloads left behind, by name (they never gate).
fn optional_left(ctx: &DeployFrame) -> Vec<String> {
    ctx.state
        .optional()
        .filter(|w| !w.ready)
        .map(|w| w.name.clone())
        .collect()
}

/// The banner's lines, at most `rows` (more when the next command needs them): the reason
/// gives up lines first, so the next step always shows whole.
fn lines(ctx: &DeployFrame, v: &Verdict, width: usize, rows: usize) -> Vec<Line<'static>> {
    let t = &ctx.theme;
    let word = format!(" {} {} ", glyph(v.outcome), v.outcome.title());
    let head = wrap_spans(
        &[
            (t.banner_word(v.outcome), word),
            (t.outcome(v.outcome), format!("  exit {}  ", v.code())),
            (t.bold(), fit::inert(&v.reason).into_owned()),
        ],
        width,
    );
    let mut out = Vec::new();
    if v.outcome == Outcome::Failed
        && let Some(why) = new_fact(&v.evidence, &v.reason)
    {
        out.extend(wrap_spans(
            &[
                (t.muted(), "why: ".into()),
                (Style::new(), fit::inert(why).into_owned()),
            ],
            width,
        ));
    }
    // A command cut mid-flag would be pasted and run wrong: the banner grows to hold it all.
    let mut rows = rows;
    if let Some(next) = &v.next {
        out.extend(wrap_spans(
            &[
                (t.muted(), "next: ".into()),
                (t.key(), fit::inert(next).into_owned()),
            ],
            width,
        ));
        rows = rows.max(out.len() + 1);
    }
    let optional = optional_left(ctx);
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
    fit_rows(head, out, rows)
}

/// The first evidence line that says something the reason does not (the crashing container's
/// log line, the FailedCreate event): the banner says each fact once. A line repeats the reason
/// when every `; `-separated part of it (after a `REF not ready: ` lead) is in the reason.
pub fn new_fact<'a>(evidence: &'a [String], reason: &str) -> Option<&'a str> {
    let said = |part: &str| {
        let part = part.trim().trim_end_matches("...").trim_end_matches('.');
        part.is_empty() || reason.contains(part)
    };
    evidence.iter().map(String::as_str).find(|line| {
        let facts = line.split_once(" not ready: ").map_or(*line, |(_, f)| f);
        !facts.split("; ").all(said)
    })
}

/// A banner's `head` and `tail` in `rows` lines: the head gives up lines first (ending in `…`),
/// so the tail (what to do next) always shows.
pub fn fit_rows(
    mut head: Vec<Line<'static>>,
    mut tail: Vec<Line<'static>>,
    rows: usize,
) -> Vec<Line<'static>> {
    tail.truncate(rows.saturating_sub(1));
    let room = rows.saturating_sub(tail.len()).max(1);
    if head.len() > room {
        head.truncate(room);
        if let Some(last) = head.last_mut() {
            last.spans.push(Span::raw("…"));
        }
    }
    head.extend(tail);
    head
}

/// Rows the banner takes at this width (borders included), capped to leave room for the rest.
pub fn height(ctx: &DeployFrame, width: u16, max: u16) -> u16 {
    let Some(v) = &ctx.state.verdict else {
        return 0;
    };
    let n = lines(
        ctx,
        v,
        width.saturating_sub(4) as usize,
        max.saturating_sub(2) as usize,
    )
    .len() as u16;
    n + 2
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame) {
    let rows = area.height.saturating_sub(2) as usize;
    let Some(v) = &ctx.state.verdict else { return };
    let t = &ctx.theme;
    let body = lines(ctx, v, area.width.saturating_sub(4) as usize, rows);
    // Following (a history on screen), the screen stays only until the next revision.
    let bottom = if ctx.history.is_empty() {
        " q quit · the screen stays for inspection "
    } else {
        " q quit · the next revision takes the screen "
    };
    render_box(
        frame,
        area,
        t.outcome(v.outcome),
        " verdict ",
        bottom,
        body,
        t,
    );
}

/// A banner's double frame in `colour`, its title, the muted note at its bottom right, and its
/// lines one column in from the borders.
pub fn render_box(
    frame: &mut Frame,
    area: Rect,
    colour: Style,
    title: &str,
    bottom: &str,
    body: Vec<Line<'static>>,
    t: &Theme,
) {
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(colour)
        .title(Span::styled(title.to_string(), colour))
        .title_bottom(
            Line::from(Span::styled(bottom.to_string(), t.muted())).alignment(Alignment::Right),
        );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let text_area = Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(2),
        ..inner
    };
    frame.render_widget(Paragraph::new(body), text_area);
}
