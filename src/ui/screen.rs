//! The whole screen: header, verdict banner, the panes (or the drill-down), the key bar, and
//! the overlays. Sizes adapt from 80x24 up; the focused pane takes the spare rows.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::app::{Overlay, Pane, UiState};
use crate::ui::fit;
use crate::ui::model;
use crate::ui::panes::{View, banner, detail, header, helm, help, hooks, workloads};

/// Below this the screen only says it is too small.
const MIN_WIDTH: u16 = 40;
const MIN_HEIGHT: u16 = 12;
/// From this width blocked workloads show their pod-level cause on a second line.
const WIDE: u16 = 120;

pub fn draw(frame: &mut Frame, view: &View, ui: &mut UiState) {
    ui.sync(view.state);
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
        return;
    }
    let banner_max = match area.height {
        0..30 => 4,
        30..40 => 5,
        _ => 8,
    };
    let banner_h = banner::height(view, area.width, banner_max);
    let [head, banner_area, body, keys] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(banner_h),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    header::render(frame, head, view, ui.tick);
    if banner_h > 0 {
        banner::render(frame, banner_area, view);
    }
    if ui.detail.is_some() {
        detail::render(frame, body, view, ui);
    } else {
        render_panes(frame, body, view, ui);
    }
    render_keys(frame, keys, view, ui);
    match ui.overlay {
        Overlay::Help => help::render_help(frame, area, view),
        Overlay::Confirm => help::render_confirm(frame, area, view),
        Overlay::None => {}
    }
}

/// Rows a table pane wants: its rows, a header and two borders.
fn wanted_rows(view: &View, ui: &UiState, pane: Pane, wide: bool) -> u16 {
    let rows: usize = match pane {
        Pane::Workloads => model::workload_rows(view.state, &ui.filters.workloads)
            .iter()
            .map(|w| {
                if wide && !w.ready && !w.optional && !w.pod_causes.is_empty() {
                    2
                } else {
                    1
                }
            })
            .sum(),
        Pane::Hooks => model::hook_rows(view.state, &ui.filters.hooks).len(),
        Pane::Helm => 0,
    };
    rows.max(1) as u16 + 3
}

fn render_panes(frame: &mut Frame, area: Rect, view: &View, ui: &mut UiState) {
    let h = area.height;
    let focus = ui.focus;
    let wide = area.width >= WIDE;
    // Each table pane gets the rows it wants while helm keeps a few; when they do not fit, the
    // unfocused table gives up rows first, then the focused one.
    let helm_min: u16 = if focus == Pane::Helm {
        (h / 2).max(5)
    } else {
        5
    };
    let mut wl = wanted_rows(view, ui, Pane::Workloads, wide);
    let mut hk = wanted_rows(view, ui, Pane::Hooks, wide);
    let order = if focus == Pane::Hooks {
        [Pane::Workloads, Pane::Hooks]
    } else {
        [Pane::Hooks, Pane::Workloads]
    };
    for pane in order {
        let over = (wl + hk + helm_min).saturating_sub(h);
        let rows = if pane == Pane::Workloads {
            &mut wl
        } else {
            &mut hk
        };
        *rows = rows.saturating_sub(over).max(4);
    }
    let [a, b, c] = Layout::vertical([
        Constraint::Length(wl),
        Constraint::Length(hk),
        Constraint::Min(3),
    ])
    .areas(area);
    workloads::render(frame, a, view, ui, focus == Pane::Workloads);
    hooks::render(frame, b, view, ui, focus == Pane::Hooks);
    helm::render(frame, c, view, ui, focus == Pane::Helm);
}

fn render_keys(frame: &mut Frame, area: Rect, view: &View, ui: &UiState) {
    let t = &view.theme;
    let width = area.width as usize;
    if let Some(slot) = ui.editing {
        let text = ui.filters.get(slot);
        let line = Line::from(vec![
            Span::styled(" filter: ", t.key()),
            Span::raw(fit::end(&fit::inert(text), width.saturating_sub(40)).into_owned()),
            Span::styled("▏", t.key()),
            Span::styled("  enter keeps · esc clears", t.muted()),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    if let Some(notice) = &ui.notice {
        frame.render_widget(
            Paragraph::new(Span::styled(
                fit::end(&format!(" {notice}"), width).into_owned(),
                t.warn(),
            )),
            area,
        );
        return;
    }
    if ui.cancelling && view.state.verdict.is_none() {
        let text = " cancelling: helm got SIGTERM (never SIGKILL); waiting for it to exit and for the verdict";
        frame.render_widget(
            Paragraph::new(Span::styled(fit::end(text, width).into_owned(), t.warn())),
            area,
        );
        return;
    }
    let quit = match &view.state.verdict {
        Some(v) => format!("quit (exit {})", v.code),
        None => "cancel".to_string(),
    };
    let keys: Vec<(&str, &str)> = if ui.detail.is_some() {
        vec![
            ("esc", "back"),
            ("↑↓", "pod"),
            ("c", "container"),
            ("f", "follow"),
            ("/", "search"),
            ("?", "help"),
            ("q", &quit),
        ]
    } else {
        vec![
            ("tab", "focus"),
            ("↑↓", "select"),
            ("enter", "details"),
            ("/", "filter"),
            ("f", "follow"),
            ("?", "help"),
            ("q", &quit),
        ]
    };
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (i, (k, what)) in keys.iter().enumerate() {
        let piece = fit::width(k) + 1 + fit::width(what) + if i > 0 { 3 } else { 0 };
        if used + piece > width {
            break;
        }
        if i > 0 {
            spans.push(Span::styled(" · ", t.muted()));
        }
        spans.push(Span::styled(k.to_string(), t.key()));
        spans.push(Span::styled(format!(" {what}"), t.muted()));
        used += piece;
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Draws one frame into a test terminal (used by the snapshot tests and the hostile-text test).
#[cfg(test)]
pub fn render_to_string(view: &View, ui: &mut UiState, width: u16, height: u16) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("a test terminal");
    terminal
        .draw(|f| draw(f, view, ui))
        .expect("drawing into a test terminal");
    terminal.backend().to_string()
}
