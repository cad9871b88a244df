//! A workload's (or a Job's) pods as both drill-downs list them: phase, readiness, restarts,
//! node, last exit code and cause, old pods greyed.

use std::borrow::Cow;

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

/// The name column: an old pod (of a previous revision) says so.
fn shown_name(p: &PodView) -> Cow<'_, str> {
    if p.current {
        Cow::Borrowed(&p.name)
    } else {
        Cow::Owned(format!("{} old", p.name))
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
        render_none(frame, area, look.empty, t);
        return;
    }
    let width = area.width as usize;
    let (name_max, node_w) = if width >= 120 {
        (44, look.wide_node)
    } else {
        (24, 8)
    };
    let name_w = fit::column(pods.iter().map(|p| shown_name(p)), 8, name_max);
    let keys: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
    // Only the rows that can reach the screen are built: a frame costs what fits, not every pod.
    let window = table::window(sel, &keys, area.height as usize);
    let rows: Vec<Row> = pods[window.rows.clone()]
        .iter()
        .map(|p| {
            let mark = pod_mark(p, look.optional);
            let name = shown_name(p);
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
    let table = table::keyed(rows, widths, header, true, t);
    table::render_window(frame, area, table, sel, &window);
}

/// The pods section with no pods: its heading and why there are none.
pub fn render_none(frame: &mut Frame, area: Rect, why: &str, t: &Theme) {
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(Span::styled("PODS", t.heading())),
            Line::from(Span::styled(why.to_string(), t.muted())),
        ]),
        area,
    );
}
