//! The drill-down: a workload's (or a Job's) pods with phase, readiness, restarts, node, last
//! exit code and cause; the recent events about them; and the streamed log of the selected
//! pod's container.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

use crate::engine::event::PodView;
use crate::engine::state::DeployState;
use crate::ui::app::{Detail, FilterSlot, LogBuffer, UiState, shown_container};
use crate::ui::fit;
use crate::ui::model::{self, Mark, Target};
use crate::ui::panes::helm::{position_span, window};
use crate::ui::panes::{View, filter_span, mark_style, pane_block};

/// The log lines shown for the selected container, and where they come from.
pub fn log_lines<'a>(
    state: &'a DeployState,
    detail: &Detail,
    log: &'a LogBuffer,
    filter: &str,
) -> (Vec<&'a str>, String) {
    let Some((pod, container)) = shown_container(state, detail) else {
        return (Vec::new(), "no container to show".into());
    };
    let (lines, status): (Vec<&str>, String) =
        if let Some(engine) = state.logs.get(&format!("{pod}/{container}")) {
            (
                engine.iter().map(String::as_str).collect(),
                "streamed by the init step".into(),
            )
        } else if log.is_for(&pod, &container) {
            let status = match &log.ended {
                Some(_) => "ended".into(),
                None => "streaming".into(),
            };
            (log.lines.iter().map(String::as_str).collect(), status)
        } else {
            (Vec::new(), "asking for the log…".into())
        };
    if filter.is_empty() {
        return (lines, status);
    }
    let f = filter.to_lowercase();
    (
        lines
            .into_iter()
            .filter(|l| l.to_lowercase().contains(&f))
            .collect(),
        status,
    )
}

pub fn log_line_count(
    state: &DeployState,
    detail: &Detail,
    log: &LogBuffer,
    filter: &str,
) -> usize {
    log_lines(state, detail, log, filter).0.len()
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

fn title<'a>(view: &View, target: &Target) -> Vec<Span<'a>> {
    let t = &view.theme;
    let s = view.state;
    match target {
        Target::Workload { kind, name } => match s.workloads.get(&(kind.clone(), name.clone())) {
            Some(w) => {
                let mut spans = vec![
                    Span::raw(fit::inert(&w.name).into_owned()),
                    Span::styled(
                        format!(
                            " · {kind} · {}/{} ready · {}",
                            w.ready_replicas,
                            w.desired,
                            fit::inert(&model::short_message(w))
                        ),
                        t.muted(),
                    ),
                ];
                if w.optional {
                    let because = w
                        .optional_because
                        .as_deref()
                        .map(|b| format!(" ({})", fit::inert(b)))
                        .unwrap_or_default();
                    spans.push(Span::styled(format!(" · optional{because}"), t.optional()));
                }
                spans
            }
            None => vec![Span::raw(format!("{name} · {kind} · gone"))],
        },
        Target::Job { name, init } => {
            let what = if *init {
                "init step (run by helmdeck after the rollout)".to_string()
            } else {
                s.hooks
                    .iter()
                    .find(|h| &h.name == name)
                    .map(|h| format!("hook {} · {}", h.events.join(","), h.phase))
                    .unwrap_or_else(|| "hook".into())
            };
            vec![
                Span::raw(fit::inert(name).into_owned()),
                Span::styled(format!(" · Job · {}", fit::inert(&what)), t.muted()),
            ]
        }
    }
}

fn section<'a>(text: String, right: Option<Span<'a>>, view: &View) -> Line<'a> {
    let mut spans = vec![Span::styled(text, view.theme.heading())];
    spans.extend(right);
    Line::from(spans)
}

pub fn render(frame: &mut Frame, area: Rect, view: &View, ui: &mut UiState) {
    let t = view.theme;
    let state = view.state;
    let Some(detail) = ui.detail.clone() else {
        return;
    };
    let block =
        pane_block(title(view, &detail.target), true, &t).title_bottom(Line::from(Span::styled(
            " esc back · ↑↓ pod · c container · f follow · / search · PgUp/PgDn scroll ",
            t.muted(),
        )));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let pods = model::pods_of(state, &detail.target);
    let events = model::events_of(state, &detail.target, &pods);
    let h = inner.height;
    let pods_h = ((pods.len().max(1) as u16) + 1).min((h / 3).max(3));
    let events_h = ((events.len().max(1) as u16) + 1).min((h / 4).max(2));
    let [pods_area, events_area, log_title_area, log_area] = Layout::vertical([
        Constraint::Length(pods_h),
        Constraint::Length(events_h),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let optional = matches!(&detail.target, Target::Workload { kind, name } if state.workloads.get(&(kind.clone(), name.clone())).is_some_and(|w| w.optional));
    render_pods(frame, pods_area, view, ui, &pods, optional);
    render_events(frame, events_area, view, &events);

    let Some(detail) = ui.detail.clone() else {
        return;
    };
    let (lines, status) = log_lines(state, &detail, &ui.log, &ui.filters.log);
    let shown = shown_container(state, &detail);
    let containers = shown
        .as_ref()
        .and_then(|(p, _)| pods.iter().find(|x| &x.name == p))
        .map(|p| p.containers.len())
        .unwrap_or(0);
    let mut head = match &shown {
        Some((p, c)) => format!(
            "LOG {} / {}",
            fit::middle(&fit::inert(p), 40),
            fit::inert(c)
        ),
        None => "LOG".into(),
    };
    if containers > 1 {
        head.push_str(&format!(
            " ({} of {containers}, c next)",
            detail.container % containers + 1
        ));
    }
    let mut right = vec![
        position_span(&detail.log, lines.len(), &t),
        Span::styled(format!(" · {status}"), t.muted()),
    ];
    if let Some(f) = filter_span(&ui.filters.log, ui.editing == Some(FilterSlot::Log), &t) {
        right.push(f);
    }
    let mut title_line = section(head, None, view);
    title_line.spans.extend(right);
    frame.render_widget(Paragraph::new(title_line), log_title_area);
    // Why the stream ended closes the log, unless another source (the init step) shows it.
    let ended = match &shown {
        Some((p, c)) if !state.logs.contains_key(&format!("{p}/{c}")) && ui.log.is_for(p, c) => {
            ui.log.ended.clone()
        }
        _ => None,
    };
    let log_h = (log_area.height as usize).saturating_sub(usize::from(ended.is_some()));
    let mut scroll = detail.log.clone();
    let mut visual = window(
        &lines,
        &mut scroll,
        log_h,
        log_area.width as usize,
        |l, w| {
            let clean = fit::inert(l);
            fit::wrap(&clean, w)
                .into_iter()
                .map(|p| Line::from(p.to_string()))
                .collect()
        },
    );
    if let Some(why) = ended {
        visual.push(Line::from(Span::styled(
            fit::end(&format!("· {}", fit::inert(&why)), log_area.width as usize).into_owned(),
            t.muted(),
        )));
    }
    if let Some(d) = ui.detail.as_mut() {
        d.log = scroll;
    }
    if lines.is_empty() {
        let empty = if ui.filters.log.is_empty() {
            "(no log lines yet)"
        } else {
            "(no log line matches)"
        };
        visual.insert(0, Line::from(Span::styled(empty, t.muted())));
        frame.render_widget(Paragraph::new(visual), log_area);
    } else {
        frame.render_widget(Paragraph::new(visual), log_area);
    }
}

fn render_pods(
    frame: &mut Frame,
    area: Rect,
    view: &View,
    ui: &mut UiState,
    pods: &[&PodView],
    optional: bool,
) {
    let t = &view.theme;
    if pods.is_empty() {
        frame.render_widget(
            Paragraph::new(vec![
                section("PODS".into(), None, view),
                Line::from(Span::styled("no pods seen for this target", t.muted())),
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
    let node_w = if width >= 120 { 14 } else { 8 };
    let tick = ui.tick;
    let rows: Vec<Row> = pods
        .iter()
        .map(|p| {
            let mark = pod_mark(p, optional);
            let name = if p.current {
                p.name.clone()
            } else {
                format!("{} old", p.name)
            };
            let cause = p
                .causes
                .first()
                .map(|c| fit::inert(c).into_owned())
                .unwrap_or_default();
            let cause_style = match mark {
                Mark::Failed => t.bad(),
                Mark::Optional => t.optional(),
                _ => Style::new(),
            };
            let row = Row::new(vec![
                Cell::from(Span::styled(mark.glyph(tick), mark_style(mark, t))),
                Cell::from(fit::middle(&fit::inert(&name), name_w).into_owned()),
                Cell::from(fit::inert(&p.phase).into_owned()),
                Cell::from(if p.ready { "yes" } else { "no" }),
                Cell::from(Line::from(p.restarts.to_string()).alignment(Alignment::Right)),
                Cell::from(
                    fit::middle(&fit::inert(p.node.as_deref().unwrap_or("–")), node_w).into_owned(),
                ),
                Cell::from(
                    Line::from(model::last_exit(&p.causes).unwrap_or_else(|| "–".into()))
                        .alignment(Alignment::Right),
                ),
                Cell::from(Span::styled(cause, cause_style)),
            ]);
            if p.current { row } else { row.style(t.muted()) }
        })
        .collect();
    let header = Row::new(
        [
            "", "PODS", "PHASE", "READY", "RESTARTS", "NODE", "EXIT", "REASON",
        ]
        .map(|h| {
            let line = Line::from(h);
            Cell::from(if h == "RESTARTS" || h == "EXIT" {
                line.alignment(Alignment::Right)
            } else {
                line
            })
        }),
    )
    .style(t.heading());
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
    let Some(detail) = ui.detail.as_mut() else {
        return;
    };
    let keys: Vec<String> = pods.iter().map(|p| p.name.clone()).collect();
    let selected = detail.pod.resolve(&keys);
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(t.selected(true));
    let mut ts = TableState::default()
        .with_offset(detail.pod.offset)
        .with_selected(selected);
    frame.render_stateful_widget(table, area, &mut ts);
    detail.pod.offset = ts.offset();
}

fn render_events(
    frame: &mut Frame,
    area: Rect,
    view: &View,
    events: &[&crate::engine::event::KubeEventView],
) {
    let t = &view.theme;
    let mut lines = vec![section("EVENTS (newest first)".into(), None, view)];
    if events.is_empty() {
        lines.push(Line::from(Span::styled(
            "no events about these objects",
            t.muted(),
        )));
    }
    let width = area.width as usize;
    let object_w = if width >= 120 { 36 } else { 22 };
    for e in events.iter().take(area.height.saturating_sub(1) as usize) {
        let age = match (&e.last_seen, view.now) {
            (Some(at), Some(now)) => fit::since(at, now)
                .map(|s| fit::age(s as i64))
                .unwrap_or_default(),
            _ => String::new(),
        };
        let kind_style = if e.kind == "Warning" {
            t.warn()
        } else {
            t.muted()
        };
        let count = if e.count > 1 {
            format!(" ×{}", e.count)
        } else {
            String::new()
        };
        let head = format!("{age:>4} ");
        let kind = fit::pad(&fit::end(&fit::inert(&e.kind), 7), 8);
        let reason = fit::pad(&fit::end(&fit::inert(&e.reason), 16), 17);
        let object = fit::pad(&fit::middle(&fit::inert(&e.object), object_w), object_w + 1);
        let used =
            fit::width(&head) + fit::width(&kind) + fit::width(&reason) + fit::width(&object);
        let message = fit::end(
            &format!("{}{count}", fit::inert(&e.message)),
            width.saturating_sub(used),
        )
        .into_owned();
        lines.push(Line::from(vec![
            Span::styled(head, t.muted()),
            Span::styled(kind, kind_style),
            Span::raw(reason),
            Span::styled(object, t.muted()),
            Span::raw(message),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
