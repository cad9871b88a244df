//! A workload's (or a Job's) pods as both drill-downs list them: phase, readiness, restarts,
//! node, last exit code and cause, old pods greyed.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use crate::engine::event::PodView;
use crate::ui::fit;
use crate::ui::model::{self, Mark};
use crate::ui::nav::Selection;
use crate::ui::panes::{mark_style, table};
use crate::ui::theme::Theme;

/// What differs between the screens' pod tables.
pub struct PodTable<'a> {
    /// What the section says when there are no pods.
    pub empty: &'a str,
    /// The node column's width on a wide pane (120 columns and up).
    pub wide_node: usize,
    /// The workload is optional: its pods' causes are never red.
    pub optional: bool,
    /// Every cause, without its exit code (else the first, as it came).
    pub all_causes: bool,
    /// The spinner's frame.
    pub tick: u64,
}

fn pod_mark(p: &PodView, optional: bool) -> Mark {
    match p.phase.as_str() {
        "Succeeded" => Mark::Done,
        "Failed" => Mark::Failed,
        _ if p.ready => Mark::Done,
        _ if !p.current => Mark::Skipped,
        _ if !p.causes.is_empty() && optional => Mark::Optional,
        _ if !p.causes.is_empty() => Mark::Failed,
        _ => Mark::Running,
    }
}

fn cause(p: &PodView, all: bool) -> String {
    if all {
        let causes: Vec<&str> = p.causes.iter().map(|c| model::cause_only(c)).collect();
        fit::inert(&causes.join("; ")).into_owned()
    } else {
        p.causes
            .first()
            .map(|c| fit::inert(c).into_owned())
            .unwrap_or_default()
    }
}

pub fn render(
    frame: &mut Frame,
    area: Rect,
    pods: &[&PodView],
    sel: &mut Selection,
    look: &PodTable,
    t: &Theme,
) {
    if pods.is_empty() {
        frame.render_widget(
            Paragraph::new(vec![
                Line::from(Span::styled("PODS", t.heading())),
                Line::from(Span::styled(look.empty.to_string(), t.muted())),
            ]),
            area,
        );
        return;
    }
    let width = area.width as usize;
    let name_w = pods
        .iter()
        .map(|p| fit::width(&p.name) + if p.current { 0 } else { 4 })
        .max()
        .unwrap_or(8)
        .clamp(8, if width >= 120 { 44 } else { 24 });
    let node_w = if width >= 120 { look.wide_node } else { 8 };
    let rows: Vec<Row> = pods
        .iter()
        .map(|p| {
            let mark = pod_mark(p, look.optional);
            let name = if p.current {
                p.name.clone()
            } else {
                format!("{} old", p.name)
            };
            let cause_style = match mark {
                Mark::Failed => t.bad(),
                Mark::Optional => t.optional(),
                _ => Style::new(),
            };
            let row = Row::new(vec![
                Cell::from(Span::styled(mark.glyph(look.tick), mark_style(mark, t))),
                Cell::from(fit::middle(&fit::inert(&name), name_w).into_owned()),
                Cell::from(fit::inert(&p.phase).into_owned()),
                Cell::from(if p.ready { "yes" } else { "no" }),
                table::right(p.restarts.to_string()),
                Cell::from(
                    fit::middle(&fit::inert(p.node.as_deref().unwrap_or("–")), node_w).into_owned(),
                ),
                table::right(model::last_exit(&p.causes).unwrap_or_else(|| "–".into())),
                Cell::from(Span::styled(cause(p, look.all_causes), cause_style)),
            ]);
            if p.current { row } else { row.style(t.muted()) }
        })
        .collect();
    let header = table::header(
        [
            "", "PODS", "PHASE", "READY", "RESTARTS", "NODE", "EXIT", "REASON",
        ],
        &[4, 6],
        t,
    );
    let widths = [
        Constraint::Length(1),
        Constraint::Length(name_w as u16),
        Constraint::Length(9),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Length(node_w as u16),
        Constraint::Length(4),
        Constraint::Fill(1),
    ];
    let keys: Vec<String> = pods.iter().map(|p| p.name.clone()).collect();
    let table = table::keyed(rows, widths, header, true, t);
    table::render_keyed(frame, area, table, sel, &keys);
}
