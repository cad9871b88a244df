//! The whole inspect screen: header, the lock (or unreadable) banner, then the history, hooks
//! and workloads panes (or a drill-down), the warnings the collector met, the key bar and the
//! help overlay. Sizes adapt from 80x24 up; the focused pane keeps its rows first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::inspect::data::InspectFrame;
use crate::ui::inspect::state::{Drill, Focus, InspectUi, Slot};
use crate::ui::inspect::{evidence, header, help, history, hooks, text_drills, workload};
use crate::ui::panes::pane_block;
use crate::ui::{fit, keybar, layout};

/// From this width blocked workloads show their pod-level cause on a second line (as the
/// deploy pane decides).
const WIDE: u16 = 120;
/// The fewest rows a table pane keeps: borders, its header and one row.
const PANE_MIN: u16 = 4;
/// The fewest spare rows worth a preview of the selected hook's evidence.
const PREVIEW_MIN: u16 = 6;

pub fn draw(frame: &mut Frame, v: &InspectFrame, ui: &mut InspectUi) {
    ui.sync(v.data);
    let Some(areas) = layout::split(frame, |width, max| header::banner_height(v, width, max))
    else {
        return;
    };
    let body = areas.body;
    header::render(frame, areas.head, v);
    if areas.banner.height > 0 {
        header::render_banner(frame, areas.banner, v);
    }
    match &ui.drill {
        Some(Drill::Hook(_)) => evidence::render(frame, body, v, ui),
        Some(Drill::Workload(_)) => workload::render_drill(frame, body, v, ui),
        Some(Drill::Revision(_)) => text_drills::render_revision(frame, body, v, ui),
        Some(Drill::Manifest(_)) => text_drills::render_manifest(frame, body, v, ui),
        None => render_panes(frame, body, v, ui),
    }
    render_keys(frame, areas.keys, v, ui);
    if ui.help {
        help::render(frame, areas.whole, v);
    }
}

fn render_panes(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &mut InspectUi) {
    let t = &v.theme;
    let warnings = &v.inspection().warnings;
    let warn_h = if warnings.is_empty() {
        0
    } else {
        (warnings.len().min(3) as u16 + 2).min(area.height / 4)
    };
    let [panes, warn_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(warn_h)]).areas(area);
    let inner_w = panes.width.saturating_sub(2) as usize;
    let i = v.inspection();
    let wanted = |rows: usize| (rows.max(1) as u16).saturating_add(3);
    let mut hs =
        wanted(crate::ui::inspect::data::history_rows(i, ui.filters.get(Slot::History)).len());
    let mut hk = wanted(hooks::row_heights(v, ui, inner_w));
    let mut wl = wanted(workload::wanted_rows(v, ui, panes.width >= WIDE));
    // When they do not fit, the panes without focus give up rows first (history, then the
    // workloads, then the hooks), then the focused one.
    let mut order = vec![Focus::History, Focus::Workloads, Focus::Hooks];
    order.retain(|f| *f != ui.focus);
    order.push(ui.focus);
    for pane in order {
        let over = (hs + hk + wl).saturating_sub(panes.height);
        let rows = match pane {
            Focus::History => &mut hs,
            Focus::Hooks => &mut hk,
            Focus::Workloads => &mut wl,
        };
        *rows = rows.saturating_sub(over).max(PANE_MIN);
    }
    // Rows to spare show the selected hook's evidence; else the workloads take them.
    let spare = panes.height.saturating_sub(hs + hk + wl);
    let preview_h = if spare >= PREVIEW_MIN && !i.hooks.is_empty() {
        spare
    } else {
        0
    };
    let [a, b, c, d] = Layout::vertical([
        Constraint::Length(hs),
        Constraint::Length(hk),
        if preview_h > 0 {
            Constraint::Length(wl)
        } else {
            Constraint::Fill(1)
        },
        Constraint::Length(preview_h),
    ])
    .areas(panes);
    let focus = ui.focus;
    history::render(frame, a, v, ui, focus == Focus::History);
    hooks::render(frame, b, v, ui, focus == Focus::Hooks);
    workload::render_pane(frame, c, v, ui, focus == Focus::Workloads);
    if preview_h > 0 {
        evidence::render_preview(frame, d, v, ui);
    }
    if warn_h > 0 {
        let block = pane_block(
            vec![Span::styled(
                format!(
                    "Warnings  {} (evidence that could not be read)",
                    warnings.len()
                ),
                t.warn(),
            )],
            false,
            t,
        );
        let inner = block.inner(warn_area);
        let room = inner.height as usize;
        let mut lines: Vec<Line> = warnings
            .iter()
            .take(room)
            .map(|w| {
                Line::from(Span::styled(
                    fit::end(&format!("! {}", fit::inert(w)), inner.width as usize).into_owned(),
                    t.warn(),
                ))
            })
            .collect();
        if warnings.len() > room && room > 0 {
            lines.truncate(room - 1);
            lines.push(Line::from(Span::styled(
                format!(
                    "… {} more (helmdeck inspect --headless lists them all)",
                    warnings.len() - (room - 1)
                ),
                t.muted(),
            )));
        }
        frame.render_widget(Paragraph::new(lines).block(block), warn_area);
    }
}

fn render_keys(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &InspectUi) {
    let t = &v.theme;
    if let Some(typed) = ui.filters.typing() {
        keybar::render_filter(frame, area, typed, t);
        return;
    }
    let message = match (&ui.notice, ui.reloading) {
        (Some(n), _) => Some(n.clone()),
        (None, true) => Some("reading the release again…".to_string()),
        _ => None,
    };
    if let Some(m) = message {
        keybar::render_notice(frame, area, &m, t);
        return;
    }
    let quit = format!("quit (exit {})", v.inspection().exit_code());
    let enter = match ui.focus {
        Focus::Hooks => "evidence",
        Focus::Workloads => "pods",
        Focus::History => "record",
    };
    // (key, what, rank): when the line is too narrow the highest ranks go first; quitting
    // (with its exit code) always stays.
    let keys: Vec<(&str, &str, u8)> = match &ui.drill {
        Some(Drill::Hook(_)) => vec![
            ("esc", "back", 1),
            ("↑↓", "pod", 2),
            ("c", "container", 4),
            ("PgUp/PgDn", "log", 3),
            ("/", "search", 5),
            ("?", "help", 6),
            ("q", &quit, 0),
        ],
        Some(Drill::Workload(_)) => vec![
            ("esc", "back", 1),
            ("↑↓", "pod", 2),
            ("PgUp/PgDn", "events", 3),
            ("/", "search", 5),
            ("?", "help", 6),
            ("q", &quit, 0),
        ],
        Some(Drill::Revision(_)) => vec![
            ("esc", "back", 1),
            ("↑↓", "revision", 2),
            ("?", "help", 6),
            ("q", &quit, 0),
        ],
        Some(Drill::Manifest(_)) => vec![
            ("esc", "back", 1),
            ("↑↓", "scroll", 2),
            ("/", "search", 5),
            ("?", "help", 6),
            ("q", &quit, 0),
        ],
        None => vec![
            ("tab", "focus", 2),
            ("↑↓", "select", 3),
            ("enter", enter, 1),
            ("/", "filter", 5),
            ("r", "reload", 7),
            ("?", "help", 6),
            ("q", &quit, 0),
        ],
    };
    let mut keys = keys;
    while keybar::keys_width(&without_ranks(&keys)) > area.width as usize && keys.len() > 1 {
        let Some(drop) = keys
            .iter()
            .enumerate()
            .max_by_key(|(_, (_, _, rank))| *rank)
            .map(|(n, _)| n)
        else {
            break;
        };
        keys.remove(drop);
    }
    keybar::render_keys(frame, area, &without_ranks(&keys), t);
}

fn without_ranks<'a>(keys: &[(&'a str, &'a str, u8)]) -> Vec<(&'a str, &'a str)> {
    keys.iter().map(|(key, what, _)| (*key, *what)).collect()
}

/// Draws one frame into a test terminal.
#[cfg(test)]
pub fn render_to_string(v: &InspectFrame, ui: &mut InspectUi, width: u16, height: u16) -> String {
    crate::ui::layout::render_to_string(width, height, |f| draw(f, v, ui))
}
