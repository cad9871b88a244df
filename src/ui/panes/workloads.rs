//! One row per workload: kind, name, ready/desired, updated, available, age, and kubectl's
//! wording of where it stands, with the pod-level cause of a blocker. Gating rows first, then
//! optional rows, greyed (DIM) with an `optional` tag and never red. A NAMESPACE column
//! appears only when the workloads live in more than one namespace. When the names would be cut
//! and all share a prefix (a chart's fullname: `trust-release-flip-trust-`), the prefix is said
//! once in the title and each row shows `…` and the part that differs.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Row};

use crate::engine::event::{Step, WorkloadView};
use crate::engine::state::DeployState;
use crate::ui::app::UiState;
use crate::ui::deck::FilterSlot;
use crate::ui::fit;
use crate::ui::model::{self, Mark};
use crate::ui::panes::{DeployFrame, filter_span, mark_style, pane_block, render_empty, table};

/// Inner widths from which the full layout (long kind names, two-line blockers) is used.
const WIDE: usize = 118;

/// The NAME column's widest, in the narrow and the wide layout.
const NAME_MAX: (usize, usize) = (18, 30);

fn short_kind(kind: &str) -> &str {
    match kind {
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        other => other,
    }
}

struct Columns<'p> {
    wide: bool,
    /// The prefix every name shares, elided from each row (said in the title).
    prefix: Option<&'p str>,
    kind: u16,
    /// Present when more than one namespace is shown.
    namespace: Option<u16>,
    name: u16,
    /// READY, UPD and AVAIL: as wide as their widest number (or heading), never cut.
    numbers: [u16; 3],
    /// The progress gauge's width; 0 (no column) when the numbers need the room.
    gauge: u16,
    status: usize,
}

/// The gauge's width in the wide layout and in a middling one; below [`GAUGE_FROM`] inner
/// columns there is none.
const GAUGE: (usize, usize) = (10, 6);
const GAUGE_FROM: usize = 100;

/// The STATUS column's narrowest before the gauge, then the NAME column, give way.
const STATUS_MIN: usize = 8;

/// The NAME column's narrowest when it yields to the numbers.
const NAME_MIN: usize = 6;

/// The three count cells of a row: ready of desired; updated (of desired during a roll, so
/// `2/2` ready is not read as done); available.
fn numbers(w: &WorkloadView) -> [String; 3] {
    [
        format!("{}/{}", w.ready_replicas, w.desired),
        if w.updated < w.desired && !w.ready {
            format!("{}/{}", w.updated, w.desired)
        } else {
            w.updated.to_string()
        },
        w.available.to_string(),
    ]
}

/// The gauge of `width` cells: `█` ready, `▒` updated but not ready yet, `░` the rest of
/// desired. Cells round down, so the bar is full only when every replica is ready. Plain
/// (unstyled) on an optional row, which the row's grey then covers.
fn gauge<'a>(w: &WorkloadView, width: usize, ctx: &DeployFrame) -> Cell<'a> {
    if width == 0 || w.desired <= 0 {
        return Cell::from("");
    }
    // i32 counts times a width that fits a terminal: i64 holds the product.
    let desired = i64::from(w.desired);
    let cells = |n: i32| (i64::from(n.clamp(0, w.desired)) * width as i64 / desired) as usize;
    let ready = cells(w.ready_replicas);
    let updated = cells(w.updated.max(w.ready_replicas)).max(ready);
    let parts = [
        ("█".repeat(ready), ctx.theme.ok()),
        ("▒".repeat(updated - ready), ctx.theme.progress()),
        ("░".repeat(width - updated), ctx.theme.muted()),
    ];
    Cell::from(Line::from(
        parts
            .into_iter()
            .map(|(text, style)| {
                if w.optional {
                    Span::raw(text)
                } else {
                    Span::styled(text, style)
                }
            })
            .collect::<Vec<_>>(),
    ))
}

/// Rows the pane lists: one a workload, two for a blocker with a cause when `wide`.
pub fn wanted_rows(state: &DeployState, filter: &str, wide: bool) -> usize {
    model::workload_rows(state, filter)
        .iter()
        .map(|w| {
            if wide && !w.ready && !w.optional && !w.pod_causes.is_empty() {
                2
            } else {
                1
            }
        })
        .sum()
}

fn name_max(inner: usize) -> usize {
    if inner >= WIDE {
        NAME_MAX.1
    } else {
        NAME_MAX.0
    }
}

/// A shared prefix shorter than this is left alone: eliding `demo-` gains 4 columns and costs
/// the reader the name as the chart wrote it.
const MIN_PREFIX: usize = 8;

/// The prefix all `names` share, up to and including its last `-`, when some name is wider
/// than `max` (it would be cut), the prefix is at least [`MIN_PREFIX`] long and every name
/// keeps something after it; else `None`. Cut at a `-` so the part shown is a whole word
/// (`trust-api`, not `st-api`).
pub fn shared_prefix<'a>(names: &[&'a str], max: usize) -> Option<&'a str> {
    let (first, rest) = names.split_first()?;
    if rest.is_empty() || names.iter().all(|n| fit::width(n) <= max) {
        return None;
    }
    let common = rest.iter().fold(first.len(), |len, n| {
        first
            .bytes()
            .zip(n.bytes())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count()
    });
    // A `-` is one byte: the cut after it is a character boundary.
    let cut = first.as_bytes()[..common]
        .iter()
        .rposition(|b| *b == b'-')?
        + 1;
    (cut >= MIN_PREFIX && names.iter().all(|n| n.len() > cut)).then(|| &first[..cut])
}

/// The name as its row shows it: `…` for the shared prefix.
fn shown_name<'a>(name: &'a str, prefix: Option<&str>) -> Cow<'a, str> {
    match prefix.and_then(|p| name.strip_prefix(p)) {
        Some(rest) => Cow::Owned(format!("…{rest}")),
        None => Cow::Borrowed(name),
    }
}

fn columns<'p>(
    rows: &[&WorkloadView],
    inner: usize,
    namespaces: bool,
    prefix: Option<&'p str>,
) -> Columns<'p> {
    let wide = inner >= WIDE;
    let longest = rows
        .iter()
        .map(|w| fit::width(&shown_name(&w.name, prefix)))
        .max()
        .unwrap_or(4);
    let name = longest.clamp(8, name_max(inner));
    let kind = if wide { 11 } else { 6 };
    let namespace = namespaces.then(|| {
        let longest = rows
            .iter()
            .map(|w| fit::width(&w.namespace))
            .max()
            .unwrap_or(2);
        if wide {
            longest.clamp(9, 20)
        } else {
            longest.clamp(2, 10)
        }
    });
    let heads = [5, 3, if wide { 5 } else { 3 }];
    let mut numbers = heads;
    for w in rows {
        for (widest, n) in numbers.iter_mut().zip(self::numbers(w)) {
            *widest = (*widest).max(n.len());
        }
    }
    // mark, kind, namespace, ready, upd, avail, age, and the spaces between them (name's
    // and the gauge's added below).
    let fixed = 1 + kind + namespace.map_or(0, |n| n + 1) + numbers.iter().sum::<usize>() + 4 + 7;
    let mut gauge = match inner {
        i if i >= WIDE => GAUGE.0,
        i if i >= GAUGE_FROM => GAUGE.1,
        _ => 0,
    };
    // Wide numbers take their room from the gauge first, then from NAME: a number is never cut.
    if fixed + name + gauge + 1 + STATUS_MIN > inner {
        gauge = 0;
    }
    let spare = inner.saturating_sub(fixed + STATUS_MIN);
    let name = name.min(spare.max(NAME_MIN));
    let used = fixed + name + if gauge > 0 { gauge + 1 } else { 0 };
    Columns {
        wide,
        prefix,
        kind: kind as u16,
        namespace: namespace.map(|n| n as u16),
        name: name as u16,
        numbers: numbers.map(|n| n as u16),
        gauge: gauge as u16,
        status: inner.saturating_sub(used).max(STATUS_MIN),
    }
}

fn status_cell<'a>(w: &WorkloadView, cols: &Columns, ctx: &DeployFrame) -> (Cell<'a>, u16) {
    let t = &ctx.theme;
    let width = cols.status;
    let message = fit::inert(&model::short_message(w)).into_owned();
    let cause = w.pod_causes.first().map(|c| fit::inert(c).into_owned());
    let notes = if w.notes.is_empty() {
        String::new()
    } else {
        format!(" · {}", w.notes.join(" · "))
    };
    if w.optional {
        let what = match (&cause, w.ready) {
            (_, true) => message,
            (Some(c), false) => model::cause_only(c).to_string(),
            (None, false) => message,
        };
        let line = fit::end(&format!("optional · {what}{notes}"), width).into_owned();
        return (Cell::from(line), 1);
    }
    let cause_style = if w.failed { t.bad() } else { t.warn() };
    let message_style = if w.failed { t.bad() } else { Style::new() };
    match cause {
        Some(c) if !w.ready && cols.wide => {
            let first = Line::from(vec![
                Span::styled(fit::end(&message, width).into_owned(), message_style),
                Span::styled(
                    fit::end(&notes, width.saturating_sub(fit::width(&message))).into_owned(),
                    t.muted(),
                ),
            ]);
            let second = Line::from(Span::styled(fit::end(&c, width).into_owned(), cause_style));
            (Cell::from(Text::from(vec![first, second])), 2)
        }
        Some(c) if !w.ready => {
            let line =
                fit::end(&format!("{} · {message}", model::cause_only(&c)), width).into_owned();
            (Cell::from(Span::styled(line, cause_style)), 1)
        }
        _ => {
            let line = fit::end(&format!("{message}{notes}"), width).into_owned();
            (Cell::from(Span::styled(line, message_style)), 1)
        }
    }
}

fn row<'a>(w: &WorkloadView, cols: &Columns, ctx: &DeployFrame, tick: u64) -> Row<'a> {
    let t = &ctx.theme;
    let mark = model::workload_mark(w);
    let kind = if cols.wide {
        w.kind.as_str()
    } else {
        short_kind(&w.kind)
    };
    let age = fit::age_at(w.created.as_deref(), ctx.now);
    let (status, height) = status_cell(w, cols, ctx);
    let mark_cell = Cell::from(Span::styled(mark.glyph(tick), mark_style(mark, t)));
    let mut cells = vec![
        mark_cell,
        Cell::from(fit::end(&fit::inert(kind), cols.kind as usize).into_owned()),
    ];
    if let Some(width) = cols.namespace {
        cells.push(Cell::from(
            fit::middle(&fit::inert(&w.namespace), width as usize).into_owned(),
        ));
    }
    cells.extend([Cell::from(
        fit::middle(
            &fit::inert(&shown_name(&w.name, cols.prefix)),
            cols.name as usize,
        )
        .into_owned(),
    )]);
    cells.extend(numbers(w).map(table::right));
    if cols.gauge > 0 {
        cells.push(gauge(w, cols.gauge as usize, ctx));
    }
    cells.extend([table::right(age), status]);
    let row = Row::new(cells).height(height);
    if w.optional {
        row.style(t.optional())
    } else {
        row
    }
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState, focused: bool) {
    let t = &ctx.theme;
    let state = ctx.state;
    let filter = ui.filters.get(FilterSlot::Workloads).to_string();
    let rows = model::workload_rows(state, &filter);
    let total = state.workloads.len();
    let optional = state.optional().count();
    let ready = state.workloads.values().filter(|w| w.ready).count();
    let mut title = vec![Span::raw("Workloads")];
    if total > 0 {
        title.push(Span::styled(
            format!("  {ready}/{total} ready · {optional} optional"),
            t.muted(),
        ));
    }
    // Over every workload, not the filtered rows: the names do not change as a filter is typed.
    let names: Vec<&str> = state.workloads.values().map(|w| w.name.as_str()).collect();
    let width = pane_block(vec![], focused, t).inner(area).width as usize;
    let prefix = shared_prefix(&names, name_max(width));
    if let Some(p) = prefix {
        title.push(Span::styled(format!(" · {}…", fit::inert(p)), t.muted()));
    }
    if let Some(f) = filter_span(&ui.filters, FilterSlot::Workloads, t) {
        title.push(f);
    }
    let block = pane_block(title, focused, t);
    let inner = block.inner(area);
    if rows.is_empty() {
        let text = if total > 0 {
            format!(
                "no workload matches “{}” (esc clears the filter)",
                fit::inert(&filter)
            )
        } else if model::step_mark(state, Step::Rollout) == Mark::Pending {
            "workloads appear when the rollout step starts".to_string()
        } else {
            "no workload of the release seen yet".to_string()
        };
        render_empty(frame, area, block, text, t);
        return;
    }
    let cols = columns(&rows, inner.width as usize, state.many_namespaces(), prefix);
    let mut header_names: Vec<&str> = if cols.wide {
        vec!["", "KIND", "NAME", "READY", "UPD", "AVAIL", "AGE", "STATUS"]
    } else {
        vec!["", "KIND", "NAME", "READY", "UPD", "AVL", "AGE", "STATUS"]
    };
    let [ready_w, upd_w, avail_w] = cols.numbers;
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(cols.kind),
        Constraint::Length(cols.name),
        Constraint::Length(ready_w),
        Constraint::Length(upd_w),
        Constraint::Length(avail_w),
        Constraint::Length(4),
        Constraint::Fill(1),
    ];
    let mut right_aligned = vec![3, 4, 5, 6];
    if cols.gauge > 0 {
        // The gauge, headed by what it draws, after AVAIL.
        header_names.insert(6, "");
        widths.insert(6, Constraint::Length(cols.gauge));
        right_aligned = vec![3, 4, 5, 7];
    }
    if let Some(width) = cols.namespace {
        header_names.insert(2, if cols.wide { "NAMESPACE" } else { "NS" });
        widths.insert(2, Constraint::Length(width));
        for i in &mut right_aligned {
            *i += 1;
        }
    }
    let header = table::header(header_names, &right_aligned, t);
    let tick = ui.tick;
    let keys: Vec<String> = rows.iter().map(|w| model::workload_key(state, w)).collect();
    // Only the rows that can reach the screen are built: a frame costs what fits.
    let window = table::window(&mut ui.workloads, &keys, inner.height as usize);
    let table_rows: Vec<Row> = rows[window.rows.clone()]
        .iter()
        .map(|w| row(w, &cols, ctx, tick))
        .collect();
    let table = table::keyed(table_rows, widths, header, focused, t).block(block);
    table::render_window(frame, area, table, &mut ui.workloads, &window);
}
