//! A hook's evidence (Enter on a hook): the Job's state, its pods with their exit codes, the
//! selected pod's containers with exit code, reason and termination message, the events
//! about the Job and its pods, and the tail of the shown container's log.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use crate::engine::event::KubeEventView;
use crate::helm::hooks::HookPhase;
use crate::inspect::digest;
use crate::inspect::evidence::LOG_TAIL;
use crate::inspect::model::{ContainerEvidence, HookPod, InspectedHook};
use crate::ui::fit;
use crate::ui::inspect::data::{self, InspectFrame};
use crate::ui::inspect::state::{Drill, HookDrill, InspectUi, Slot};
use crate::ui::model::Mark;
use crate::ui::nav::Scroll;
use crate::ui::panes::events::event_line;
use crate::ui::panes::helm::window;
use crate::ui::panes::{
    filter_span, mark_style, pane_block, plain_lines, pods, render_empty, table, wrap_spans,
};
use crate::ui::theme::Theme;

fn pod_mark(p: &HookPod) -> Mark {
    match p.phase.as_str() {
        "Succeeded" => Mark::Done,
        "Failed" => Mark::Failed,
        "Running" | "Pending" => Mark::Running,
        _ if !p.causes.is_empty() => Mark::Failed,
        _ => Mark::Pending,
    }
}

fn container_mark(c: &ContainerEvidence) -> Mark {
    match data::exit_of(c) {
        Some(t) if t.exit_code != 0 => Mark::Failed,
        _ if c.state == "running" => Mark::Running,
        Some(_) => Mark::Done,
        None if c.state.starts_with("waiting") => Mark::Failed,
        None => Mark::Pending,
    }
}

/// Where a static text is scrolled to: nothing at its end, else the first line shown.
pub fn position<'a>(scroll: &Scroll, total: usize, height: u16, t: &Theme) -> Span<'a> {
    if scroll.follow || total <= height as usize {
        Span::raw("")
    } else {
        let at = scroll.at(total);
        Span::styled(format!(" · from line {at} · G end"), t.warn())
    }
}

fn section<'a>(text: String, t: &Theme) -> Span<'a> {
    Span::styled(text, t.heading())
}

fn title<'a>(h: &InspectedHook, t: &Theme) -> Vec<Span<'a>> {
    let r = &h.record;
    let mark = data::hook_mark(r.phase);
    let phase_style = if r.phase == HookPhase::NeverRan {
        data::dimmed(t)
    } else {
        mark_style(mark, t)
    };
    vec![
        Span::raw(fit::inert(&r.name).into_owned()),
        Span::styled(
            format!(
                " · {} · {} · weight {} · ",
                fit::inert(&r.kind),
                fit::inert(&r.events.join(",")),
                r.weight
            ),
            t.muted(),
        ),
        Span::styled(format!("{} {}", mark.glyph(0), r.phase.word()), phase_style),
    ]
}

/// The record's facts and the live object's state: what is known before the pods.
fn summary(h: &InspectedHook, v: &InspectFrame, width: usize) -> Vec<Line<'static>> {
    let t = &v.theme;
    let r = &h.record;
    let mut facts: Vec<String> = Vec::new();
    if !r.path.is_empty() {
        facts.push(r.path.clone());
    }
    if let Some(s) = r.started_at.as_deref().and_then(fit::clock) {
        facts.push(format!("started {s}"));
    }
    if let (Some(s), Some(c)) = (&r.started_at, &r.completed_at)
        && let Some(d) = fit::between(s, c)
    {
        facts.push(format!("took {}", fit::duration(d)));
    }
    if !r.delete_policies.is_empty() {
        facts.push(format!("delete policy {}", r.delete_policies.join(",")));
    }
    if !h.in_this_run {
        let op = v
            .inspection()
            .info
            .as_ref()
            .map_or("this operation", |i| i.operation.name());
        facts.push(format!("not part of an {op}"));
    }
    let mut lines = vec![Line::from(Span::styled(
        fit::end(&fit::inert(&facts.join(" · ")), width).into_owned(),
        t.muted(),
    ))];
    let Some(e) = &h.live else {
        let why = match r.phase {
            HookPhase::NeverRan => "it never ran in this revision: there is nothing live to read",
            HookPhase::Succeeded => {
                "it succeeded: inspect reads the live Job only for hooks that did not"
            }
            _ => "no live object was read for this hook",
        };
        lines.push(Line::from(Span::styled(
            fit::end(why, width).into_owned(),
            t.muted(),
        )));
        return lines;
    };
    if e.found {
        let status = e.status.as_deref().unwrap_or("unknown");
        let style = if status.starts_with("Failed") {
            t.bad()
        } else {
            Style::new()
        };
        let counts = if e.kind == "Job" {
            format!(
                " · {} active, {} succeeded, {} failed",
                e.active, e.succeeded, e.failed
            )
        } else {
            String::new()
        };
        lines.extend(wrap_spans(
            &[
                (t.heading(), format!("{} ", fit::inert(&e.kind))),
                (style, fit::inert(status).into_owned()),
                (t.muted(), counts),
            ],
            width,
        ));
    }
    for note in &e.notes {
        lines.extend(wrap_spans(
            &[(t.warn(), format!("! {}", fit::inert(note)))],
            width,
        ));
    }
    lines
}

fn render_pods(
    frame: &mut Frame,
    area: Rect,
    v: &InspectFrame,
    pods: &[HookPod],
    d: &mut HookDrill,
) {
    let t = &v.theme;
    if pods.is_empty() {
        pods::render_none(frame, area, "no pods of this hook remain", t);
        return;
    }
    let width = area.width as usize;
    let (name_max, node_w) = if width >= 120 { (40, 16) } else { (22, 8) };
    let name_w = fit::column(pods.iter().map(|p| &p.name), 8, name_max);
    let rows: Vec<Row> = pods
        .iter()
        .map(|p| {
            let mark = pod_mark(p);
            let exits: Vec<String> = p
                .containers
                .iter()
                .filter_map(|c| data::exit_of(c).map(|x| x.exit_code.to_string()))
                .collect();
            let cause_style = if mark == Mark::Failed {
                t.bad()
            } else {
                Style::new()
            };
            Row::new(vec![
                Cell::from(Span::styled(mark.glyph(0), mark_style(mark, t))),
                Cell::from(fit::middle(&fit::inert(&p.name), name_w).into_owned()),
                Cell::from(fit::inert(&p.phase).into_owned()),
                Cell::from(
                    fit::middle(&fit::inert(p.node.as_deref().unwrap_or("–")), node_w).into_owned(),
                ),
                table::right(if exits.is_empty() {
                    "–".to_string()
                } else {
                    exits.join(",")
                }),
                Cell::from(Span::styled(
                    fit::inert(&p.causes.join("; ")).into_owned(),
                    cause_style,
                )),
            ])
        })
        .collect();
    let header = table::header(["", "PODS", "PHASE", "NODE", "EXIT", "REASON"], &[4], t);
    let widths = [
        Constraint::Length(1),
        Constraint::Length(name_w as u16),
        Constraint::Length(9),
        Constraint::Length(node_w as u16),
        Constraint::Length(4),
        Constraint::Fill(1),
    ];
    let keys: Vec<String> = pods.iter().map(|p| p.name.clone()).collect();
    let table = table::keyed(rows, widths, header, true, t);
    table::render_keyed(frame, area, table, &mut d.pod, &keys);
}

/// One line per container (the shown one marked `▸`), each followed by its termination
/// message.
fn container_lines(
    pod: &HookPod,
    shown: usize,
    v: &InspectFrame,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &v.theme;
    let mut lines = vec![Line::from(section(
        format!("CONTAINERS of {}", fit::middle(&fit::inert(&pod.name), 40)),
        t,
    ))];
    if pod.containers.is_empty() {
        lines.push(Line::from(Span::styled("no container statuses", t.muted())));
    }
    let n = pod.containers.len().max(1);
    for (k, c) in pod.containers.iter().enumerate() {
        let mark = container_mark(c);
        let mut words = vec![c.state.clone()];
        if let Some(x) = &c.terminated {
            words.push(data::exit_words(x));
        }
        if c.restarts > 0 {
            words.push(format!("{} restarts", c.restarts));
        }
        if let Some(x) = &c.last_terminated {
            words.push(format!("last run {}", data::exit_words(x)));
        }
        if let Some(at) = data::exit_of(c)
            .and_then(|x| x.finished_at.as_deref())
            .and_then(fit::clock)
        {
            words.push(format!("finished {at}"));
        }
        let style = if mark == Mark::Failed {
            t.bad()
        } else {
            Style::new()
        };
        let pointer = if k == shown % n { "▸" } else { " " };
        let name = format!(
            "{}{}",
            fit::inert(&c.name),
            if c.init { " (init)" } else { "" }
        );
        let head = format!("{pointer} {} {name}  ", mark.glyph(0));
        let rest = fit::end(
            &fit::inert(&words.join(" · ")),
            width.saturating_sub(fit::width(&head)),
        )
        .into_owned();
        lines.push(Line::from(vec![
            Span::styled(head, mark_style(mark, t)),
            Span::styled(rest, style),
        ]));
        for m in [&c.terminated, &c.last_terminated]
            .into_iter()
            .flatten()
            .filter_map(|x| x.message.as_deref())
            .filter(|m| !m.trim().is_empty())
        {
            for part in wrap_spans(
                &[
                    (t.muted(), "termination message: ".into()),
                    (style, fit::inert(m).into_owned()),
                ],
                width.saturating_sub(6),
            )
            .into_iter()
            .take(3)
            {
                let mut spans = vec![Span::raw("      ")];
                spans.extend(part.spans);
                lines.push(Line::from(spans));
            }
        }
    }
    lines
}

/// Events, newest first, as the deploy drill-down lists them.
pub fn event_lines(
    events: &[&KubeEventView],
    v: &InspectFrame,
    width: usize,
    skip: usize,
    take: usize,
) -> Vec<Line<'static>> {
    events
        .iter()
        .skip(skip)
        .take(take)
        .map(|e| event_line(e, v.data.now, width, 20, &v.theme))
        .collect()
}

/// A hook's evidence, top to bottom: the summary, its pods, the selected pod's containers, the
/// events (newest first), and the shown container's log, scrolled and filtered.
pub fn render(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &mut InspectUi) {
    let t = v.theme;
    let i = v.inspection();
    let Some(Drill::Hook(mut d)) = ui.drill.clone() else {
        return;
    };
    let keys = " esc back · ↑↓ pod · c container · PgUp/PgDn g/G log · / search ";
    let Some(h) = data::find_hook(i, &d.key) else {
        let block = pane_block(vec![Span::raw(d.key.clone())], true, &t);
        render_empty(
            frame,
            area,
            block,
            "this hook is not in the inspected revision any more",
            &t,
        );
        return;
    };
    let block =
        pane_block(title(h, &t), true, &t).title_bottom(Line::from(Span::styled(keys, t.muted())));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let top = summary(h, v, width);
    let Some(e) = &h.live else {
        frame.render_widget(Paragraph::new(top), inner);
        return;
    };
    d.pod.resolve(&data::hook_pod_keys(h));
    let shown = data::shown_log(
        h,
        d.pod.key.as_deref(),
        d.container,
        ui.filters.get(Slot::Log),
    );
    let containers = match &shown {
        Some((pod, _, _)) => container_lines(pod, d.container, v, width),
        None => Vec::new(),
    };
    let digest = digest::digest(&e.events);
    let folded = digest.len() < e.events.len();
    let views = digest::as_views(&digest);
    let mut events: Vec<&KubeEventView> = views.iter().collect();
    events.reverse();
    let [
        top_area,
        pods_area,
        containers_area,
        events_area,
        log_title_area,
        log_area,
    ] = sections(
        inner,
        top.len(),
        e.pods.len(),
        containers.len(),
        events.len(),
    );
    frame.render_widget(Paragraph::new(top), top_area);
    render_pods(frame, pods_area, v, &e.pods, &mut d);
    frame.render_widget(Paragraph::new(containers), containers_area);
    if events_area.height > 0 {
        let heading = if folded {
            format!(
                "EVENTS (newest first, {}, repeated Normal ones folded)",
                e.events.len()
            )
        } else {
            format!("EVENTS (newest first, {})", events.len())
        };
        let mut lines = vec![Line::from(section(heading, &t))];
        lines.extend(event_lines(
            &events,
            v,
            width,
            0,
            events_area.height.saturating_sub(1) as usize,
        ));
        frame.render_widget(Paragraph::new(lines), events_area);
    }
    render_log(frame, [log_title_area, log_area], v, ui, &mut d, shown);
    ui.drill = Some(Drill::Hook(d));
}

/// The evidence's sections in `inner`: the summary, the pods and the containers, each capped to
/// a share of the height so the log always keeps the rest; the events only when there are any;
/// one row for the log's title.
fn sections(inner: Rect, top: usize, pods: usize, containers: usize, events: usize) -> [Rect; 6] {
    let hgt = inner.height;
    let top_h = (top as u16).min(hgt / 4).max(1);
    let pods_h = if pods == 0 {
        2
    } else {
        ((pods as u16) + 1).min((hgt / 4).max(3))
    };
    let containers_h = (containers as u16).min((hgt / 5).max(2));
    let events_h = if events == 0 {
        0
    } else {
        ((events as u16) + 1).min((hgt / 4).max(2))
    };
    Layout::vertical([
        Constraint::Length(top_h),
        Constraint::Length(pods_h),
        Constraint::Length(containers_h),
        Constraint::Length(events_h),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner)
}

/// The shown container's log: its title (pod, container, exit, how many lines, scroll position,
/// filter) and the scrolled lines, or why there are none; just `LOG` when no container is shown.
fn render_log(
    frame: &mut Frame,
    [title_area, log_area]: [Rect; 2],
    v: &InspectFrame,
    ui: &InspectUi,
    d: &mut HookDrill,
    shown: Option<(&HookPod, &ContainerEvidence, Vec<&str>)>,
) {
    let t = v.theme;
    let Some((pod, c, lines)) = shown else {
        frame.render_widget(
            Paragraph::new(Line::from(section("LOG".into(), &t))),
            title_area,
        );
        return;
    };
    let mut head = format!(
        "LOG {} / {}",
        fit::middle(&fit::inert(&pod.name), 40),
        fit::inert(&c.name)
    );
    let n = pod.containers.len();
    if n > 1 {
        head.push_str(&format!(" ({} of {n}, c next)", d.container % n + 1));
    }
    let mut right = Vec::new();
    if let Some(x) = data::exit_of(c) {
        let style = if x.exit_code == 0 { t.ok() } else { t.bad() };
        right.push(Span::styled(format!(" · {}", data::exit_words(x)), style));
    }
    let count = if c.log.len() as i64 >= LOG_TAIL {
        format!("last {LOG_TAIL} lines")
    } else {
        format!("{} lines", c.log.len())
    };
    let previous = if c.log_previous {
        " · previous run"
    } else {
        ""
    };
    right.push(Span::styled(format!(" · {count}{previous}"), t.muted()));
    right.push(position(&d.log, lines.len(), log_area.height, &t));
    if let Some(f) = filter_span(&ui.filters, Slot::Log, &t) {
        right.push(f);
    }
    let mut title_line = Line::from(section(head, &t));
    title_line.spans.extend(right);
    frame.render_widget(Paragraph::new(title_line), title_area);
    let mut visual = window(
        &lines,
        &mut d.log,
        log_area.height as usize,
        log_area.width as usize,
        |l, w| plain_lines(l, w),
    );
    if lines.is_empty() {
        let empty = match (&c.log_error, ui.filters.get(Slot::Log).is_empty()) {
            (Some(err), _) => format!("log unavailable: {}", fit::inert(err)),
            (None, true) => "(the container logged nothing)".into(),
            (None, false) => "(no log line matches)".into(),
        };
        visual.insert(
            0,
            Line::from(Span::styled(
                fit::end(&empty, log_area.width as usize).into_owned(),
                t.muted(),
            )),
        );
    }
    frame.render_widget(Paragraph::new(visual), log_area);
}

/// The main screen's preview of the selected hook (when there is room): the Job's state, and
/// for the attempt that tells how it ended, the exit code, termination message and log tail.
pub fn render_preview(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &InspectUi) {
    let t = v.theme;
    let i = v.inspection();
    let h = ui.hooks.key.as_deref().and_then(|k| data::find_hook(i, k));
    let mut title = vec![Span::raw("Evidence")];
    let Some(h) = h else {
        let block = pane_block(title, false, &t);
        render_empty(frame, area, block, "select a hook to see its evidence", &t);
        return;
    };
    title.push(Span::styled(
        format!(
            "  {} · enter on the hook: every pod, its events and the whole log",
            fit::inert(&h.record.name)
        ),
        t.muted(),
    ));
    let block = pane_block(title, false, &t);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines = summary(h, v, width);
    let room = inner.height as usize;
    if let Some((pod, c)) = data::telling(h) {
        let mut head = vec![Span::styled(
            format!(
                "LOG {}{}",
                fit::middle(&fit::inert(&pod.name), 40),
                c.map(|c| format!(" / {}", fit::inert(&c.name)))
                    .unwrap_or_default()
            ),
            t.heading(),
        )];
        if let Some(x) = c.and_then(data::exit_of) {
            let style = if x.exit_code == 0 { t.ok() } else { t.bad() };
            head.push(Span::styled(format!(" · {}", data::exit_words(x)), style));
        }
        let attempts = data::hook_pods(h).len();
        if attempts > 1 {
            head.push(Span::styled(
                format!(" · the last of {attempts} attempts"),
                t.muted(),
            ));
        }
        lines.push(Line::from(head));
        if let Some(m) = c
            .and_then(data::exit_of)
            .and_then(|x| x.message.as_deref())
            .filter(|m| !m.trim().is_empty())
        {
            lines.extend(wrap_spans(
                &[
                    (t.muted(), "termination message: ".into()),
                    (t.bad(), fit::inert(m).into_owned()),
                ],
                width,
            ));
        }
        let log: &[String] = c.map(|c| c.log.as_slice()).unwrap_or(&[]);
        let mut scroll = Scroll::default();
        let tail = window(
            log,
            &mut scroll,
            room.saturating_sub(lines.len()),
            width,
            |l, w| plain_lines(l, w),
        );
        if log.is_empty() {
            let why = c
                .and_then(|c| c.log_error.as_deref())
                .map(|e| format!("log unavailable: {}", fit::inert(e)))
                .unwrap_or_else(|| "(the container logged nothing)".into());
            lines.push(Line::from(Span::styled(
                fit::end(&why, width).into_owned(),
                t.muted(),
            )));
        }
        lines.extend(tail);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
