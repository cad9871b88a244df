//! Helm hooks (name, kind, events, weight, phase, start, duration) as the engine reports them,
//! plus the init Job helmdeck runs after the rollout. Failed hooks stand out; skipped hooks
//! say skipped.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Row};

use crate::engine::event::Step;
use crate::ui::app::UiState;
use crate::ui::deck::FilterSlot;
use crate::ui::fit;
use crate::ui::model::{self, HookRow, Mark};
use crate::ui::panes::{
    DeployFrame, failed_span, filter_span, mark_style, pane_block, render_empty, table,
};

fn duration(row: &HookRow, ctx: &DeployFrame) -> String {
    match (row.started_at, row.completed_at) {
        (Some(s), Some(c)) => fit::between(s, c).map(fit::duration).unwrap_or_default(),
        (Some(s), None) if row.mark == Mark::Running => ctx
            .now
            .and_then(|now| fit::since(s, now))
            .map(fit::duration)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState, focused: bool) {
    let t = &ctx.theme;
    let state = ctx.state;
    let filter = ui.filters.get(FilterSlot::Hooks).to_string();
    let rows = model::hook_rows(state, &filter);
    let mut title = vec![Span::raw("Hooks")];
    let failed = rows.iter().filter(|r| r.mark == Mark::Failed).count();
    title.extend(failed_span(failed, t));
    title.extend(filter_span(&ui.filters, FilterSlot::Hooks, t));
    let block = pane_block(title, focused, t);
    let inner = block.inner(area);
    if rows.is_empty() {
        let text = if !filter.is_empty() {
            format!("no hook matches “{}”", fit::inert(&filter))
        } else if state.outcome(Step::Upgrade).is_none() {
            "hooks are read from the release record when helm exits".to_string()
        } else {
            "this release has no hooks".to_string()
        };
        render_empty(frame, area, block, text, t);
        return;
    }
    let width = inner.width as usize;
    let (name_max, events_max) = if width >= 90 { (32, 28) } else { (16, 20) };
    let name_w = fit::column(rows.iter().map(|r| r.name), 6, name_max);
    let events_w = fit::column(rows.iter().map(|r| &r.events), 6, events_max);
    // Wide enough for `ServiceAccount`, so a hook helm records as Succeeded reads as its kind;
    // the START column gives way first, so the phase is not cut for it.
    let kind_w = fit::column(rows.iter().map(|r| r.kind), 4, 14);
    let with_start = width >= 70 + kind_w.saturating_sub(4);
    let tick = ui.tick;
    let table_rows: Vec<Row> = rows
        .iter()
        .map(|r| {
            let style = match r.mark {
                Mark::Failed => t.bad(),
                _ if r.not_in_run => t.muted(),
                _ => Style::new(),
            };
            let mut cells = vec![
                Cell::from(Span::styled(r.mark.glyph(tick), mark_style(r.mark, t))),
                Cell::from(fit::middle(&fit::inert(r.name), name_w).into_owned()),
                Cell::from(fit::end(&fit::inert(r.kind), kind_w).into_owned()),
                Cell::from(fit::end(&fit::inert(&r.events), events_w).into_owned()),
                table::right(
                    r.weight
                        .map(|w| w.to_string())
                        .unwrap_or_else(|| "–".into()),
                ),
                Cell::from(Span::styled(
                    fit::inert(&r.phase).into_owned(),
                    if r.mark == Mark::Skipped {
                        t.warn()
                    } else {
                        style
                    },
                )),
            ];
            if with_start {
                cells.push(Cell::from(
                    r.started_at.and_then(fit::clock).unwrap_or_default(),
                ));
            }
            cells.push(table::right(duration(r, ctx)));
            Row::new(cells).style(style)
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(name_w as u16),
        Constraint::Length(kind_w as u16),
        Constraint::Length(events_w as u16),
        Constraint::Length(3),
        Constraint::Fill(1),
    ];
    let mut header = vec!["", "NAME", "KIND", "EVENTS", "W", "PHASE"];
    if with_start {
        widths.push(Constraint::Length(8));
        header.push("START");
    }
    widths.push(Constraint::Length(6));
    header.push("DUR");
    let right_aligned = [4, header.len() - 1];
    let header = table::header(header, &right_aligned, t);
    let keys: Vec<String> = rows.iter().map(|r| r.key()).collect();
    let table = table::keyed(table_rows, widths, header, focused, t).block(block);
    table::render_keyed(frame, area, table, &mut ui.hooks, &keys);
}
