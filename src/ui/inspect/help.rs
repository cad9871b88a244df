//! Every key of the inspect screen (`?`).

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::ui::inspect::data::InspectFrame;
use crate::ui::panes::help;

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

pub fn render(frame: &mut Frame, area: Rect, v: &InspectFrame) {
    let legend = "✓ succeeded  ✗ failed  ◐ running or unknown  · never ran (dimmed)  ░ optional (never gating)";
    help::render_keys(frame, area, KEYS, legend, 96, &v.theme);
}
