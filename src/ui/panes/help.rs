//! Overlays: every key (`?`), and the cancel confirmation (`q` or Ctrl+C before the verdict).

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};

use crate::ui::fit;
use crate::ui::panes::{DeployFrame, keyed_lines, wrap_spans};
use crate::ui::theme::Theme;

/// Every key, as the help overlay and docs/keys.md list them.
pub const KEYS: &[(&str, &str)] = &[
    ("Tab / Shift-Tab", "move focus: Workloads, Hooks, Helm"),
    (
        "j k / ↓ ↑",
        "move the selection; scroll the helm pane and the log",
    ),
    ("g G / Home End", "first / last row (G follows again)"),
    ("PgUp PgDn", "page up / down"),
    (
        "Enter",
        "drill down: a workload's pods, events and log; a hook's Job",
    ),
    ("Esc", "back from the drill-down; clear the focused filter"),
    (
        "/",
        "filter the focused list (Enter keeps it, Esc clears it)",
    ),
    ("f", "toggle follow (helm pane; the log in the drill-down)"),
    ("c", "next container of the selected pod (drill-down)"),
    ("u", "stuck lock: show it and offer its recovery (y/n)"),
    ("R", "failed verdict: roll back to the last deployed (y/n)"),
    ("?", "show or hide this help"),
    (
        "q / Ctrl+C",
        "before the verdict: confirm, then cancel (helm gets SIGTERM, never SIGKILL)",
    ),
    (
        "q / Ctrl+C",
        "after the verdict: quit with the verdict's exit code",
    ),
];

pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub fn render_help(frame: &mut Frame, area: Rect, ctx: &DeployFrame) {
    let legend =
        "✓ done  ◐ progressing  ✗ failed  · not started  – skipped  ░ optional (never gating)";
    render_keys(frame, area, KEYS, legend, 90, &ctx.theme);
}

/// The help overlay of either screen: every key and what it does, then the glyphs' legend, in
/// a box at most `max_width` wide.
pub fn render_keys(
    frame: &mut Frame,
    area: Rect,
    keys: &[(&str, &str)],
    legend: &str,
    max_width: u16,
    t: &Theme,
) {
    let key_w = keys.iter().map(|(k, _)| fit::width(k)).max().unwrap_or(8);
    let width = (area.width.saturating_sub(4)).min(max_width);
    let text_w = (width as usize).saturating_sub(key_w + 5);
    let mut lines: Vec<Line> = Vec::new();
    let key_cell = |k: String| Span::styled(format!(" {k}  "), t.key());
    for (key, what) in keys {
        let what = (Style::new(), what.to_string());
        lines.extend(keyed_lines(key, key_w, key_cell, what, text_w.max(10)));
    }
    lines.push(Line::from(""));
    for part in wrap_spans(
        &[(t.muted(), legend.to_string())],
        (width as usize).saturating_sub(3),
    ) {
        let mut spans = vec![Span::raw(" ")];
        spans.extend(part.spans);
        lines.push(Line::from(spans));
    }
    let height = lines.len() as u16 + 2;
    let rect = centered(area, width, height);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(t.border(true))
        .title(Span::styled(" keys ", t.title(true)))
        .title_bottom(
            Line::from(Span::styled(" esc or ? closes ", t.muted())).alignment(Alignment::Right),
        );
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

pub fn render_confirm(frame: &mut Frame, area: Rect, ctx: &DeployFrame) {
    let t = &ctx.theme;
    let width = area.width.saturating_sub(4).min(64);
    let inner = width.saturating_sub(4) as usize;
    // A watch runs no helm: stopping it leaves the cluster as it is.
    let (title, body) = if ctx.state.plan.watch {
        (
            "Stop watching?",
            "The cluster is left as it is; this revision's verdict is the stop's (exit 1).",
        )
    } else {
        (
            "Cancel the deploy?",
            "helm (if it is running) gets one SIGTERM, never SIGKILL, and is waited for; the screen stays until the verdict.",
        )
    };
    let mut lines = wrap_spans(&[(t.bold(), title.into())], inner);
    lines.push(Line::from(""));
    lines.extend(wrap_spans(&[(Style::new(), body.into())], inner));
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::styled("y", t.key()),
        Span::raw(" / Enter: cancel    "),
        Span::styled("n", t.key()),
        Span::raw(" / Esc: keep going"),
    ]));
    let height = lines.len() as u16 + 2;
    let para = Paragraph::new(lines);
    let rect = centered(area, width, height);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(t.warn())
        .title(Span::styled(" cancel? ", t.warn()));
    frame.render_widget(Clear, rect);
    frame.render_widget(para.block(block.padding(Padding::horizontal(1))), rect);
}
