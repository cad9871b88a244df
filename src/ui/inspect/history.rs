//! The history: every stored revision, oldest first, as `helm history` lists it (revision,
//! updated, status, chart, app version, description), the inspected one marked `▸`, and an
//! unreadable record with its own error while the others still show.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Row};

use crate::inspect::model::HistoryRow;
use crate::ui::fit;
use crate::ui::inspect::data::{self, InspectFrame};
use crate::ui::inspect::state::{InspectUi, Slot};
use crate::ui::panes::{filter_span, pane_block, render_empty, table};

/// Inner widths from which the full dates and the app version show.
const WIDE: usize = 110;

fn description_cell<'a>(r: &HistoryRow, v: &InspectFrame, width: usize) -> Cell<'a> {
    let t = &v.theme;
    match &r.error {
        None => Cell::from(fit::end(&fit::inert(&r.description), width).into_owned()),
        Some(e) => {
            let label = r.label_status();
            let text = format!(
                "✗ unreadable{label}: {} {}: {e}",
                r.storage.kubectl_name(),
                r.object
            );
            Cell::from(Span::styled(
                fit::end(&fit::inert(&text), width).into_owned(),
                t.bad(),
            ))
        }
    }
}

pub fn render(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &mut InspectUi, focused: bool) {
    let t = &v.theme;
    let i = v.inspection();
    let filter = ui.filters.get(Slot::History).to_string();
    let rows = data::history_rows(i, &filter);
    let mut title = vec![Span::raw("History")];
    if !i.history.is_empty() {
        let n = i.history.len();
        let unreadable = i.history.iter().filter(|r| r.error.is_some()).count();
        let mut facts = format!("  {n} revision{}", if n == 1 { "" } else { "s" });
        if unreadable > 0 {
            facts.push_str(&format!(" · {unreadable} unreadable"));
        }
        title.push(Span::styled(facts, t.muted()));
    }
    if let Some(f) = filter_span(&ui.filters, Slot::History, t) {
        title.push(f);
    }
    let block = pane_block(title, focused, t);
    let inner = block.inner(area);
    if rows.is_empty() {
        let text = if i.history.is_empty() {
            format!(
                "no release record of {} in {} (Secrets or ConfigMaps labelled owner=helm)",
                i.release, i.namespace
            )
        } else {
            format!("no revision matches “{}”", fit::inert(&filter))
        };
        render_empty(frame, area, block, text, t);
        return;
    }
    let width = inner.width as usize;
    let wide = width >= WIDE;
    let readable = rows.iter().filter(|r| r.error.is_none());
    let status_w = fit::column(rows.iter().map(|r| &r.status), 6, 16) + 2;
    let chart_max = if wide { 30 } else { 16 };
    let chart_w = fit::column(readable.clone().map(|r| &r.chart), 5, chart_max);
    let app_w = fit::column(readable.map(|r| &r.app_version), 3, 16).max(if wide { 11 } else { 3 });
    let updated_w = if wide { 19 } else { 11 };
    // marker, rev, updated, status, chart, (app), and the spaces between them.
    let fixed = 1 + 4 + updated_w + status_w + chart_w + if wide { app_w + 1 } else { 0 } + 5;
    let desc_w = width.saturating_sub(fixed).max(8);
    let table_rows: Vec<Row> = rows
        .iter()
        .map(|r| {
            let inspected = Some(r.revision) == i.revision;
            let (glyph, style) = data::status_mark(&r.status, t);
            let mut cells = vec![
                Cell::from(if inspected { "▸" } else { " " }),
                table::right(r.revision.to_string()),
                Cell::from(Span::styled(
                    data::when(&r.updated, wide).to_string(),
                    t.muted(),
                )),
                Cell::from(Span::styled(
                    fit::end(&format!("{glyph} {}", fit::inert(&r.status)), status_w).into_owned(),
                    style,
                )),
                Cell::from(fit::middle(&fit::inert(&r.chart), chart_w).into_owned()),
            ];
            if wide {
                cells.push(Cell::from(
                    fit::end(&fit::inert(&r.app_version), app_w).into_owned(),
                ));
            }
            cells.push(description_cell(r, v, desc_w));
            let row = Row::new(cells);
            if inspected {
                row.style(Style::new().add_modifier(ratatui::style::Modifier::BOLD))
            } else {
                row
            }
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(4),
        Constraint::Length(updated_w as u16),
        Constraint::Length(status_w as u16),
        Constraint::Length(chart_w as u16),
    ];
    let mut header = vec!["", "REV", "UPDATED", "STATUS", "CHART"];
    if wide {
        widths.push(Constraint::Length(app_w as u16));
        header.push("APP VERSION");
    }
    widths.push(Constraint::Fill(1));
    header.push("DESCRIPTION");
    let header = table::header(header, &[1], t);
    let keys: Vec<String> = rows.iter().map(|r| data::history_key(r)).collect();
    let table = table::keyed(table_rows, widths, header, focused, t).block(block);
    table::render_keyed(frame, area, table, &mut ui.history, &keys);
}
