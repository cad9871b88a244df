//! The inspected revision's hooks in helm's execution order (weight, then name): phase as
//! glyph and word, start and duration, and for a hook that did not succeed the gist of its
//! live evidence (exit code and the line that says why). A failed hook stands out in bold red;
//! a hook that never ran is dimmed; one that is not part of the revision's operation says so.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Row};

use crate::helm::hooks::HookPhase;
use crate::inspect::model::{InspectedHook, Inspection};
use crate::ui::fit;
use crate::ui::inspect::data::{self, InspectFrame};
use crate::ui::inspect::state::{InspectUi, Slot};
use crate::ui::model::{self, Mark};
use crate::ui::panes::{failed_span, filter_span, mark_style, pane_block, render_empty, table};

/// Inner widths from which the evidence shares the row (else it takes a second line).
const WIDE: usize = 120;

fn duration(h: &InspectedHook) -> String {
    match (&h.record.started_at, &h.record.completed_at) {
        (Some(s), Some(c)) => fit::between(s, c).map(fit::duration).unwrap_or_default(),
        _ => String::new(),
    }
}

/// Rows each hook takes at this width (for the layout).
pub fn row_heights(v: &InspectFrame, ui: &InspectUi, inner_width: usize) -> usize {
    data::hook_rows(v.inspection(), ui.filters.get(Slot::Hooks))
        .iter()
        .map(|h| {
            if inner_width < WIDE && note(h, v).is_some() {
                2
            } else {
                1
            }
        })
        .sum()
}

/// What the evidence column says: the gist of the evidence, or why the hook had no part in
/// this run.
fn note(h: &InspectedHook, v: &InspectFrame) -> Option<(String, Style)> {
    let t = &v.theme;
    if let Some(s) = data::evidence_summary(h) {
        let style = if h.record.phase == HookPhase::Failed {
            t.bad()
        } else {
            t.warn()
        };
        return Some((s, style));
    }
    if !h.in_this_run {
        let op = v
            .inspection()
            .info
            .as_ref()
            .map(|i| i.operation.name())
            .unwrap_or("this operation");
        return Some((format!("not part of an {op}"), t.muted()));
    }
    None
}

pub fn render(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &mut InspectUi, focused: bool) {
    let t = &v.theme;
    let i = v.inspection();
    let filter = ui.filters.get(Slot::Hooks).to_string();
    let rows = data::hook_rows(i, &filter);
    let block = pane_block(title(v, ui), focused, t);
    let inner = block.inner(area);
    if rows.is_empty() {
        render_empty(frame, area, block, empty_text(i, &filter), t);
        return;
    }
    let width = inner.width as usize;
    let events: Vec<String> = rows
        .iter()
        .map(|h| model::compact_events(&h.record.events))
        .collect();
    let cols = Columns::fitted(&rows, &events, width);
    // Each row is laid out by hand so that a second line (the evidence, when narrow) can
    // run across the columns; the table still selects and scrolls.
    let table_rows: Vec<Row> = rows
        .iter()
        .zip(&events)
        .map(|(h, events)| row(h, events, &cols, width, v))
        .collect();
    let header = Row::new(vec![Cell::from(header_text(&cols, width >= WIDE))]).style(t.heading());
    let keys: Vec<String> = rows.iter().map(|h| data::hook_key(h)).collect();
    let table = table::keyed(table_rows, [Constraint::Fill(1)], header, focused, t).block(block);
    table::render_keyed(frame, area, table, &mut ui.hooks, &keys);
}

/// `Hooks of revision N · operation · execution order`, then how many failed and the filter.
fn title(v: &InspectFrame, ui: &InspectUi) -> Vec<Span<'static>> {
    let t = &v.theme;
    let i = v.inspection();
    let mut title = vec![Span::raw("Hooks")];
    if let Some(info) = &i.info {
        title.push(Span::styled(
            format!(
                " of revision {} · {} · execution order",
                info.revision,
                info.operation.name()
            ),
            t.muted(),
        ));
    }
    let failed = i
        .hooks
        .iter()
        .filter(|h| h.record.phase == HookPhase::Failed)
        .count();
    title.extend(failed_span(failed, t));
    title.extend(filter_span(&ui.filters, Slot::Hooks, t));
    title
}

/// Why the pane lists no hook: the revision is unreadable, the filter matches none, or the
/// revision has none.
fn empty_text(i: &Inspection, filter: &str) -> String {
    match (&i.info, filter.is_empty()) {
        (None, _) => "hooks unknown: the revision cannot be read".to_string(),
        (Some(_), false) => format!("no hook matches “{}”", fit::inert(filter)),
        (Some(info), true) => format!("revision {} has no hooks", info.revision),
    }
}

/// One hook's row: mark, weight, name, kind, events, phase, start and duration, then the
/// evidence note beside them when the pane is wide, or on a second line under them when not.
fn row(
    h: &InspectedHook,
    events: &str,
    cols: &Columns,
    width: usize,
    v: &InspectFrame,
) -> Row<'static> {
    let t = &v.theme;
    let r = &h.record;
    let mark = data::hook_mark(r.phase);
    let style = match r.phase {
        HookPhase::Failed => t.bad(),
        HookPhase::NeverRan => data::dimmed(t),
        _ if !h.in_this_run => t.muted(),
        _ => Style::new(),
    };
    let phase_style = if mark == Mark::Pending {
        style
    } else {
        mark_style(mark, t).patch(style)
    };
    let mut spans = vec![
        Span::styled(mark.glyph(0), mark_style(mark, t)),
        Span::raw(format!(" {:>3} ", r.weight)),
        Span::raw(fit::pad(
            &fit::middle(&fit::inert(&r.name), cols.name),
            cols.name + 1,
        )),
        Span::raw(fit::pad(
            &fit::end(&fit::inert(&r.kind), cols.kind),
            cols.kind + 1,
        )),
        Span::raw(fit::pad(
            &fit::end(&fit::inert(events), cols.events),
            cols.events + 1,
        )),
        Span::styled(fit::pad(r.phase.word(), PHASE), phase_style),
    ];
    if cols.start {
        let start = r
            .started_at
            .as_deref()
            .and_then(fit::clock)
            .unwrap_or_default();
        spans.push(Span::raw(format!(" {}", fit::pad(&start, 8))));
    }
    spans.push(Span::raw(format!(" {:>6}", duration(h))));
    let mut lines = Vec::new();
    match note(h, v) {
        Some((text, nstyle)) if width >= WIDE => {
            let room = width.saturating_sub(cols.fixed() + 1);
            spans.push(Span::raw(" "));
            spans.push(Span::styled(
                fit::end(&fit::inert(&text), room).into_owned(),
                nstyle,
            ));
            lines.push(Line::from(spans));
        }
        Some((text, nstyle)) => {
            lines.push(Line::from(spans));
            let indent = 6;
            lines.push(Line::from(vec![
                Span::raw(" ".repeat(indent)),
                Span::styled(
                    fit::end(&fit::inert(&text), width.saturating_sub(indent)).into_owned(),
                    nstyle,
                ),
            ]));
        }
        None => lines.push(Line::from(spans)),
    }
    let height = lines.len() as u16;
    Row::new(vec![Cell::from(Text::from(lines))])
        .style(style)
        .height(height)
}

/// The header, laid out as the rows are (each row is one cell); `EVIDENCE` only when the
/// evidence shares the row.
fn header_text(cols: &Columns, wide: bool) -> String {
    let mut head = format!(
        "  {:>3} {}{}{}{}",
        "W",
        fit::pad("NAME", cols.name + 1),
        fit::pad("KIND", cols.kind + 1),
        fit::pad("EVENTS", cols.events + 1),
        fit::pad("PHASE", PHASE)
    );
    if cols.start {
        head.push_str(&format!(" {}", fit::pad("START", 8)));
    }
    head.push_str(&format!(" {:>6}", "DUR"));
    if wide {
        head.push_str(" EVIDENCE");
    }
    head
}

/// The width of the phase column.
const PHASE: usize = 9;
/// The widest kind a hook has in practice (`ServiceAccount`, `ClusterRoleBinding` is cut).
const KIND_MAX: usize = 14;
/// Narrowest a name gets before the kind gives up room: enough for a middle cut to keep
/// both the chart's prefix and the distinguishing suffix.
const NAME_MIN: usize = 12;

struct Columns {
    name: usize,
    kind: usize,
    events: usize,
    start: bool,
}

impl Columns {
    /// The columns for these rows at `width`: each as wide as its widest cell up to a cap
    /// (roomier when the evidence shares the row), the start only from 90 columns, then shrunk
    /// to fit.
    fn fitted(rows: &[&InspectedHook], events: &[String], width: usize) -> Columns {
        let (name_max, events_max) = if width >= WIDE { (32, 28) } else { (18, 20) };
        Columns {
            name: fit::column(rows.iter().map(|h| &h.record.name), 6, name_max),
            kind: fit::column(rows.iter().map(|h| &h.record.kind), 4, KIND_MAX),
            events: fit::column(events, 6, events_max),
            start: width >= 90,
        }
        .within(width)
    }

    /// Columns before the evidence: mark, weight, name, kind, events, phase, start, duration.
    fn fixed(&self) -> usize {
        1 + 5
            + self.name
            + 1
            + self.kind
            + 1
            + self.events
            + 1
            + PHASE
            + if self.start { 9 } else { 0 }
            + 7
    }

    /// Shrunk to fit `width` when the row would overflow: the name first (cut in the middle,
    /// so its suffix stays), then the events, and the kind only last, so it reads whole
    /// whenever the terminal has room for it.
    fn within(mut self, width: usize) -> Columns {
        let over = self.fixed().saturating_sub(width);
        let by = over.min(self.name.saturating_sub(NAME_MIN));
        self.name -= by;
        let over = self.fixed().saturating_sub(width);
        let by = over.min(self.events.saturating_sub(6));
        self.events -= by;
        let over = self.fixed().saturating_sub(width);
        let by = over.min(self.kind.saturating_sub(4));
        self.kind -= by;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(width: usize) -> Columns {
        Columns {
            name: 18,
            kind: 14,
            events: 20,
            start: false,
        }
        .within(width)
    }

    #[test]
    fn the_kind_gives_way_last() {
        let roomy = columns(78);
        assert_eq!((roomy.name, roomy.kind, roomy.events), (18, 14, 20));
        let tight = columns(68);
        assert_eq!((tight.name, tight.kind, tight.events), (12, 14, 17));
        assert_eq!(tight.fixed(), 68);
        let tighter = columns(58);
        assert_eq!((tighter.name, tighter.kind), (12, 14));
        assert_eq!(tighter.events, 7);
        // Only with no room left at all does the kind get cut.
        let cramped = columns(50);
        assert_eq!((cramped.name, cramped.events), (12, 6));
        assert_eq!(cramped.kind, 7);
        assert_eq!(cramped.fixed(), 50);
    }
}
