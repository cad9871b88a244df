//! Every key of the inspect screen (`?`).

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use crate::ui::fit;
use crate::ui::inspect::data::IView;
use crate::ui::panes::wrap_spans;

pub const KEYS: &[(&str, &str)] = &[
    ("Tab / Shift-Tab", "move focus: History, Hooks, Workloads"),
    ("j k / ↓ ↑", "move the selection (the pod, in a drill-down)"),
    (
        "g G / Home End",
        "first / last row; in a drill-down, the log's start / end",
    ),
    (
        "PgUp PgDn",
        "page up / down (the log or events, in a drill-down)",
    ),
    (
        "Enter",
        "drill down: a hook's evidence (pods, exit codes, termination messages, log, events); a workload's pods and events; a revision's record",
    ),
    ("Esc", "back from the drill-down; clear the focused filter"),
    (
        "/",
        "filter the focused list or search the log (Enter keeps it, Esc clears it)",
    ),
    ("c", "next container of the selected pod (hook evidence)"),
    (
        "m",
        "the manifest, Secret values masked (with --show-manifest)",
    ),
    ("r", "read the release again"),
    ("?", "show or hide this help"),
    (
        "q / Ctrl+C",
        "quit: exit 0, or 1 when the revision cannot be read",
    ),
];

pub fn render(frame: &mut Frame, area: Rect, v: &IView) {
    let t = &v.theme;
    let key_w = KEYS.iter().map(|(k, _)| fit::width(k)).max().unwrap_or(8);
    let width = (area.width.saturating_sub(4)).min(96);
    let text_w = (width as usize).saturating_sub(key_w + 5);
    let mut lines: Vec<Line> = Vec::new();
    for (key, what) in KEYS {
        for (n, part) in wrap_spans(&[(Style::new(), what.to_string())], text_w.max(10))
            .into_iter()
            .enumerate()
        {
            let k = if n == 0 {
                fit::pad(key, key_w)
            } else {
                " ".repeat(key_w)
            };
            let mut spans = vec![Span::styled(format!(" {k}  "), t.key())];
            spans.extend(part.spans);
            lines.push(Line::from(spans));
        }
    }
    lines.push(Line::from(""));
    let legend = "✓ succeeded  ✗ failed  ◐ running or unknown  · never ran (dimmed)  ░ optional (never gating)";
    for part in wrap_spans(
        &[(t.muted(), legend.to_string())],
        (width as usize).saturating_sub(3),
    ) {
        let mut spans = vec![Span::raw(" ")];
        spans.extend(part.spans);
        lines.push(Line::from(spans));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let w = width.min(area.width);
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - height) / 2,
        width: w,
        height,
    };
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
