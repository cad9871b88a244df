//! The fleet screen's list: a header (what is deployed, the clock; the fleet's summary), one row
//! per target (label, context, its step strip, gating pods ready, time, where it stands) and
//! the key bar, or the prompt. Pure: drawn from a borrow of each member's state and lane.
//! Everything a row shows came from a kubeconfig, a values file or a cluster: each name is
//! made inert, then cut to its column.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, TableState};

use crate::engine::event::RollbackStatus;
use crate::engine::fleet::{Lane, Member, Summary};
use crate::engine::state::DeployState;
use crate::engine::verdict::Outcome;
use crate::ui::fit;
use crate::ui::fleet::state::{FleetUi, all_settled, code_of};
use crate::ui::model::{Mark, SPINNER};
use crate::ui::panes::header::{brand_line, strip_parts};
use crate::ui::panes::{DeployFrame, table};
use crate::ui::theme::Theme;
use crate::ui::{keybar, layout};

/// Everything the list is drawn from, borrowed.
pub struct FleetFrame<'a> {
    pub members: &'a [Arc<Member>],
    /// Seconds each target has run (since its lane became Running); None before it started.
    pub clocks: &'a [Option<f64>],
    pub theme: Theme,
    /// What this run is, from the caller (`--title`).
    pub title: Option<&'a str>,
    /// Seconds since the fleet started.
    pub elapsed: f64,
}

/// One target's row, owned: built under a short borrow of its state.
struct TargetRow {
    label: String,
    context: String,
    steps: Vec<(&'static str, Style)>,
    ready: String,
    time: String,
    status: (Style, String),
}

/// The widest the label and context columns get, and the least the status column keeps.
const LABEL_MAX: usize = 28;
const CONTEXT_MAX: usize = 48;
const STATUS_MIN: usize = 24;

pub fn draw(frame: &mut Frame, ctx: &FleetFrame, ui: &FleetUi) {
    let Some(areas) = layout::split(frame, |_, _| 0) else {
        return;
    };
    let t = &ctx.theme;
    let rows: Vec<TargetRow> = ctx
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| target_row(m, ctx.clocks.get(i).copied().flatten(), ui.tick, t))
        .collect();
    frame.render_widget(
        Paragraph::new(head(ctx, ui, areas.head.width as usize)),
        areas.head,
    );
    // The list as tall as its rows; below it, when there is room, the selected target's story.
    let wanted = rows.len() as u16 + 3;
    let about = ctx
        .members
        .get(ui.selected)
        .filter(|_| areas.body.height >= wanted + 5);
    let [list, below] = Layout::vertical([
        Constraint::Length(if about.is_some() {
            wanted
        } else {
            areas.body.height
        }),
        Constraint::Fill(1),
    ])
    .areas(areas.body);
    render_rows(frame, list, &rows, ui, t);
    if let Some(member) = about {
        render_selected(frame, below, member, t);
    }
    render_keys(frame, areas.keys, ctx, ui);
}

/// ` helmdeck  fleet · demo · deckapp 1.4.2 · 6 targets · TITLE      02:41`, then the summary.
fn head<'a>(ctx: &FleetFrame<'a>, ui: &FleetUi, width: usize) -> Vec<Line<'a>> {
    let t = &ctx.theme;
    let mut facts = " fleet".to_string();
    if let Some(first) = ctx.members.first() {
        let state = first.state.borrow();
        facts.push_str(&format!(" · {}", fit::inert(&state.plan.release)));
        let chart = match &state.chart_version {
            Some(c) => c.as_str(),
            None => state
                .plan
                .chart
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(""),
        };
        if !chart.is_empty() {
            facts.push_str(&format!(" · {}", fit::inert(chart)));
        }
    }
    let n = ctx.members.len();
    facts.push_str(&format!(" · {n} target{}", if n == 1 { "" } else { "s" }));
    if let Some(title) = ctx.title {
        facts.push_str(&format!(" · {}", fit::inert(title)));
    }
    let clock = format!(" {} ", fit::duration(ctx.elapsed));
    let title = brand_line(&facts, clock, width, t);

    let lanes: Vec<Lane> = ctx
        .members
        .iter()
        .map(|m| m.lane.borrow().clone())
        .collect();
    let mut line = Summary::of(&lanes).line();
    let (glyph, style) = if all_settled(ctx.members) {
        let code = fleet_code(ctx.members);
        line.push_str(&format!(" · exit {code}"));
        code_look(code, t)
    } else {
        if ui.cancelling {
            line.push_str(" · cancelling");
        }
        (
            SPINNER[(ui.tick % SPINNER.len() as u64) as usize],
            t.progress(),
        )
    };
    let summary = fit::end(&format!(" {glyph} {line}"), width).into_owned();
    vec![title, Line::from(Span::styled(summary, style))]
}

/// The fleet's exit code as it stands: the worst of its targets' (one without a code fails).
pub fn fleet_code(members: &[Arc<Member>]) -> i32 {
    let lanes: Vec<Lane> = members
        .iter()
        .map(|m| match code_of(&m.lane.borrow(), &m.state.borrow()) {
            Some(code) => Lane::Ended { code },
            None => Lane::Running,
        })
        .collect();
    crate::engine::fleet::worst(&lanes)
}

/// The glyph and style of an exit code: `✓` 0, `!` 3 and 4, `✗` the rest.
fn code_look(code: i32, t: &Theme) -> (&'static str, Style) {
    match code {
        0 => ("✓", t.ok()),
        c if c == Outcome::LiveInitIncomplete.code() || c == Outcome::ChangesPending.code() => {
            ("!", t.warn())
        }
        _ => ("✗", t.bad()),
    }
}

fn target_row(member: &Member, clock: Option<f64>, tick: u64, t: &Theme) -> TargetRow {
    let lane = member.lane.borrow().clone();
    let state = member.state.borrow();
    let elapsed = if state.verdict.is_some() {
        state.now_secs
    } else {
        clock.unwrap_or(state.now_secs)
    };
    let ctx = DeployFrame {
        state: &state,
        theme: *t,
        title: None,
        context: None,
        elapsed,
        now: None,
        history: &[],
    };
    let parts = strip_parts(&ctx, tick);
    let steps = parts
        .iter()
        .filter(|p| !p.verdict)
        .map(|p| (p.glyph, p.style))
        .collect();
    let (desired, ready) = state.gating().fold((0i64, 0i64), |(d, r), w| {
        (d + i64::from(w.desired), r + i64::from(w.ready_replicas))
    });
    let ready = if state.workloads.is_empty() {
        "–".to_string()
    } else {
        format!("{ready}/{desired}")
    };
    let started = !matches!(lane, Lane::Waiting | Lane::NotStarted { .. });
    let time = if started {
        fit::duration(elapsed)
    } else {
        String::new()
    };
    let running = parts
        .iter()
        .find(|p| p.mark == Mark::Running && !p.verdict)
        .map(|p| format!("{} {} {}", p.glyph, p.name, p.detail));
    let status = status(
        &lane,
        &state,
        running,
        member.cancel.is_cancelled(),
        tick,
        t,
    );
    TargetRow {
        label: fit::inert(&member.target.label).into_owned(),
        context: fit::inert(&member.target.context).into_owned(),
        steps,
        ready,
        time,
        status,
    }
}

/// Where a target stands: its verdict (glyph, word, exit code, why), its running step, or why
/// it has not started.
fn status(
    lane: &Lane,
    state: &DeployState,
    running: Option<String>,
    cancelled: bool,
    tick: u64,
    t: &Theme,
) -> (Style, String) {
    let spin = SPINNER[(tick % SPINNER.len() as u64) as usize];
    let rolling_back = state
        .rollback
        .as_ref()
        .filter(|r| r.status == RollbackStatus::Running);
    if let Some(rb) = rolling_back {
        return (
            t.progress(),
            format!("{spin} rolling back {} → {}", rb.from, rb.to),
        );
    }
    let text = match (lane, &state.verdict) {
        (Lane::NotStarted { reason }, _) => {
            return (t.muted(), format!("– not started: {}", fit::inert(reason)));
        }
        (Lane::Waiting, _) => return (t.muted(), "· waiting".into()),
        (_, Some(v)) => {
            let (glyph, _) = code_look(v.code(), t);
            let reason = fit::inert(&v.reason);
            return (
                t.outcome(v.outcome),
                format!(
                    "{glyph} {} · exit {} · {reason}",
                    v.outcome.title(),
                    v.code()
                ),
            );
        }
        (Lane::Ended { code }, None) => {
            let (glyph, style) = code_look(*code, t);
            return (
                style,
                format!("{glyph} ended without a verdict · exit {code}"),
            );
        }
        (Lane::Running, None) => running.unwrap_or_else(|| format!("{spin} starting")),
    };
    let text = text.trim_end().to_string();
    if cancelled {
        (t.bad(), format!("{text} · cancelling"))
    } else {
        (t.progress(), text)
    }
}

fn render_rows(frame: &mut Frame, area: Rect, rows: &[TargetRow], ui: &FleetUi, t: &Theme) {
    let block = Block::bordered()
        .border_style(t.border(true))
        .title(Line::from(format!(" Targets  {} ", rows.len())).style(t.title(true)));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // The selection's marker takes two columns of every row (the row is reversed too).
    let inner = Rect {
        width: inner.width.saturating_sub(2),
        ..inner
    };
    let marker_area = Rect {
        width: inner.width + 2,
        ..inner
    };
    // Five gaps, the status column's minimum, the fixed columns; the rest goes to the names.
    let steps_w = rows
        .iter()
        .map(|r| r.steps.len() * 2)
        .max()
        .unwrap_or(1)
        .saturating_sub(1);
    let ready_w = fit::column(rows.iter().map(|r| r.ready.as_str()), 5, 13);
    let time_w = fit::column(rows.iter().map(|r| r.time.as_str()), 4, 8);
    let fixed = 5 + steps_w.max(5) + ready_w + time_w + STATUS_MIN;
    let room = (inner.width as usize).saturating_sub(fixed);
    let label_w = fit::column(
        rows.iter().map(|r| r.label.as_str()),
        6,
        LABEL_MAX.min(room * 2 / 5).max(6),
    );
    let context_w = fit::column(
        rows.iter().map(|r| r.context.as_str()),
        7,
        CONTEXT_MAX.min(room.saturating_sub(label_w)).max(7),
    );
    let status_w = (inner.width as usize)
        .saturating_sub(5 + label_w + context_w + steps_w.max(5) + ready_w + time_w);
    let body: Vec<Row> = rows
        .iter()
        .map(|r| {
            let mut steps = Vec::new();
            for (n, (glyph, style)) in r.steps.iter().enumerate() {
                if n > 0 {
                    steps.push(Span::raw(" "));
                }
                steps.push(Span::styled(*glyph, *style));
            }
            Row::new(vec![
                Cell::from(fit::middle(&r.label, label_w).into_owned()),
                Cell::from(Span::styled(
                    fit::middle(&r.context, context_w).into_owned(),
                    t.muted(),
                )),
                Cell::from(Line::from(steps)),
                table::right(r.ready.clone()),
                table::right(Span::styled(r.time.clone(), t.muted())),
                Cell::from(Span::styled(
                    fit::end(&r.status.1, status_w).into_owned(),
                    r.status.0,
                )),
            ])
        })
        .collect();
    let widths = [
        label_w,
        context_w,
        steps_w.max(5),
        ready_w,
        time_w,
        status_w,
    ]
    .map(|w| Constraint::Length(w as u16));
    let header = table::header(
        ["TARGET", "CONTEXT", "STEPS", "READY", "TIME", "STATUS"],
        &[3, 4],
        t,
    );
    let list = table::keyed(body, widths, header, true, t).highlight_symbol("▸ ");
    let mut state = TableState::default()
        .with_selected((!rows.is_empty()).then_some(ui.selected.min(rows.len().saturating_sub(1))));
    frame.render_stateful_widget(list, marker_area, &mut state);
}

fn render_keys(frame: &mut Frame, area: Rect, ctx: &FleetFrame, ui: &FleetUi) {
    let t = &ctx.theme;
    if ui.asking {
        keybar::render_notice(frame, area, "cancel every running target? y/n", t);
        return;
    }
    if let Some(notice) = &ui.notice {
        keybar::render_notice(frame, area, notice, t);
        return;
    }
    let settled = all_settled(ctx.members);
    if ui.cancelling && !settled {
        keybar::render_notice(
            frame,
            area,
            "cancelling: each running helm got SIGTERM (never SIGKILL); waiting for every target to end",
            t,
        );
        return;
    }
    let quit = if settled {
        format!("quit (exit {})", fleet_code(ctx.members))
    } else {
        "cancel every target".to_string()
    };
    let mut keys = vec![
        ("↑↓", "select"),
        ("enter", "open its screen"),
        ("q", quit.as_str()),
    ];
    // The keys that do not fit go, from the middle: `q` stays.
    while keys.len() > 1 && keybar::keys_width(&keys) > area.width as usize {
        keys.remove(keys.len() - 2);
    }
    keybar::render_keys(frame, area, &keys, t);
}

/// The selected target in full: its context and namespace, then where it stands and why (the
/// verdict's reason and next step, what the rollout waits on, why it never started).
fn render_selected(frame: &mut Frame, area: Rect, member: &Member, t: &Theme) {
    let width = area.width.saturating_sub(2) as usize;
    let key_w = 11;
    let room = width.saturating_sub(key_w + 1);
    let label = fit::inert(&member.target.label);
    let block = Block::bordered().border_style(t.border(false)).title(
        Line::from(format!(
            " {} ",
            fit::middle(&label, width.saturating_sub(2))
        ))
        .style(t.title(false)),
    );
    let lane = member.lane.borrow().clone();
    let state = member.state.borrow();
    let namespace = member
        .target
        .namespace
        .clone()
        .unwrap_or_else(|| state.plan.namespace.clone());
    let mut facts: Vec<(&str, Style, String)> = vec![
        ("context", Style::new(), member.target.context.clone()),
        ("namespace", Style::new(), namespace),
    ];
    match (&lane, &state.verdict) {
        (Lane::NotStarted { reason }, _) => facts.push(("not started", t.muted(), reason.clone())),
        (Lane::Waiting, _) => facts.push((
            "waiting",
            t.muted(),
            "for a slot (--parallel) or for the canary to land".into(),
        )),
        (_, Some(v)) => {
            let (_, style) = code_look(v.code(), t);
            facts.push((
                "verdict",
                style,
                format!("{} · exit {}", v.outcome.title(), v.code()),
            ));
            facts.push(("why", Style::new(), v.reason.clone()));
            if let Some(next) = &v.next {
                facts.push(("next", t.key(), next.clone()));
            }
        }
        (_, None) => {
            for w in state.gating().filter(|w| !w.ready) {
                let mut what = format!(
                    "{}/{}: {}",
                    w.kind,
                    w.name,
                    crate::ui::model::short_message(w)
                );
                if let Some(cause) = w.pod_causes.first() {
                    what.push_str(&format!(" ({})", crate::ui::model::cause_only(cause)));
                }
                facts.push(("waits on", t.progress(), what));
            }
        }
    }
    facts.push((
        "enter",
        t.muted(),
        "its own screen: workloads, hooks, helm, the drill-down and its logs".into(),
    ));
    let mut lines: Vec<Line> = Vec::new();
    for (key, style, value) in facts {
        let value = fit::inert(&value).into_owned();
        lines.extend(crate::ui::panes::keyed_lines(
            key,
            key_w + 1,
            |k| Span::styled(k, t.muted()),
            (style, value),
            room,
        ));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
