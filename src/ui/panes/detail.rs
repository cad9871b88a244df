//! The drill-down: a workload's (or a Job's) pods with phase, readiness, restarts, node, last
//! exit code and cause; the recent events about them; and the streamed log of the selected
//! pod's container.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::engine::event::{KubeEventView, PodView, WorkloadView};
use crate::ui::app::UiState;
use crate::ui::deck::{FilterSlot, log_lines, shown_container, test_log};
use crate::ui::fit;
use crate::ui::model::{self, Target};
use crate::ui::panes::events::event_line;
use crate::ui::panes::helm::{position_span, window};
use crate::ui::panes::pods::{self, PodTable};
use crate::ui::panes::{DeployFrame, filter_span, pane_block, plain_lines};
use crate::ui::theme::Theme;

/// `LOG pod / container`, and which of the pod's containers it is when there are more.
pub fn log_heading(pod: &str, container: &str, index: usize, containers: usize) -> String {
    let mut head = format!(
        "LOG {} / {}",
        fit::middle(&fit::inert(pod), 40),
        fit::inert(container)
    );
    if containers > 1 {
        head.push_str(&format!(
            " ({} of {containers}, c next)",
            index % containers + 1
        ));
    }
    head
}

/// ` · optional (why)` after an optional workload's name in a drill-down's title.
pub fn optional_note(w: &WorkloadView, t: &Theme) -> Option<Span<'static>> {
    if !w.optional {
        return None;
    }
    let because = w
        .optional_because
        .as_deref()
        .map(|b| format!(" ({})", fit::inert(b)))
        .unwrap_or_default();
    Some(Span::styled(format!(" · optional{because}"), t.optional()))
}

/// A drill-down's name for the workload: `namespace/name` outside the release namespace `home`.
pub fn shown_name(w: &WorkloadView, home: &str) -> String {
    if w.namespace == home {
        w.name.clone()
    } else {
        format!("{}/{}", w.namespace, w.name)
    }
}

fn title<'a>(ctx: &DeployFrame, target: &Target) -> Vec<Span<'a>> {
    let t = &ctx.theme;
    let s = ctx.state;
    match target {
        Target::Workload { kind, name, .. } => {
            match target.workload_key().and_then(|k| s.workloads.get(&k)) {
                Some(w) => {
                    let mut spans = vec![
                        Span::raw(fit::inert(&shown_name(w, &s.plan.namespace)).into_owned()),
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
                    spans.extend(optional_note(w, t));
                    spans
                }
                None => vec![Span::raw(format!("{name} · {kind} · gone"))],
            }
        }
        Target::Job { name, init } => {
            let hook = s.hooks.iter().find(|h| &h.name == name).filter(|_| !*init);
            let what = match hook {
                _ if *init => "init step (run by helmdeck after the rollout)".to_string(),
                Some(h) => format!("hook {} · {}", h.events.join(","), h.phase),
                None => "hook".into(),
            };
            // A test hook is a Pod, not a Job: its log is in the helm pane (`helm test --logs`).
            let kind = hook.map_or("Job", |h| h.kind.as_str());
            vec![
                Span::raw(fit::inert(name).into_owned()),
                Span::styled(
                    format!(" · {} · {}", fit::inert(kind), fit::inert(&what)),
                    t.muted(),
                ),
            ]
        }
    }
}

fn section<'a>(text: String, right: Option<Span<'a>>, ctx: &DeployFrame) -> Line<'a> {
    let mut spans = vec![Span::styled(text, ctx.theme.heading())];
    spans.extend(right);
    Line::from(spans)
}

/// The drill-down: its pods, the events about them, and the selected container's log.
pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState) {
    let t = ctx.theme;
    let state = ctx.state;
    let Some(detail) = ui.detail.clone() else {
        return;
    };
    let block =
        pane_block(title(ctx, &detail.target), true, &t).title_bottom(Line::from(Span::styled(
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
    let selected = detail
        .pod
        .key
        .as_ref()
        .and_then(|k| pods.iter().find(|p| &p.name == k).copied());
    // A pod with initContainers lists every container with its state (one line).
    let strip = selected.filter(|p| p.container_states.iter().any(|c| c.init));
    let [
        pods_area,
        events_area,
        containers_area,
        log_title_area,
        log_area,
    ] = Layout::vertical([
        Constraint::Length(pods_h),
        Constraint::Length(events_h),
        Constraint::Length(u16::from(strip.is_some())),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let optional = detail
        .target
        .workload_key()
        .and_then(|k| state.workloads.get(&k))
        .is_some_and(|w| w.optional);
    if let Some(d) = ui.detail.as_mut() {
        let look = PodTable {
            empty: "no pods seen for this target",
            wide_node: 14,
            optional,
            all_causes: false,
            tick: ui.tick,
        };
        pods::render(frame, pods_area, &pods, &mut d.pod, &look, &t);
    }
    render_events(frame, events_area, ctx, &events);
    if let Some(pod) = strip {
        let shown = shown_container(state, &detail).map(|(_, c)| c);
        let line = containers_line(pod, shown.as_deref(), containers_area.width as usize, ctx);
        frame.render_widget(Paragraph::new(line), containers_area);
    }
    render_log(frame, [log_title_area, log_area], ctx, ui, &pods);
}

/// `CONTAINERS init wait-db completed · ▸init configure waiting: CrashLoopBackOff (exit 1), 6
/// restarts · app waiting: PodInitializing`: every container in the order they run, the one
/// whose log is shown marked, cut to `width`.
fn containers_line<'a>(
    pod: &PodView,
    shown: Option<&str>,
    width: usize,
    ctx: &DeployFrame,
) -> Line<'a> {
    let items: Vec<String> = pod
        .container_states
        .iter()
        .map(|c| {
            let mark = if shown == Some(c.name.as_str()) {
                "▸"
            } else {
                ""
            };
            let init = if c.init { "init " } else { "" };
            let restarts = match c.restarts {
                0 => String::new(),
                1 => ", 1 restart".into(),
                n => format!(", {n} restarts"),
            };
            format!(
                "{mark}{init}{} {}{restarts}",
                fit::inert(&c.name),
                fit::inert(&c.state)
            )
        })
        .collect();
    let text = fit::end(&items.join(" · "), width.saturating_sub(11)).into_owned();
    Line::from(vec![
        Span::styled("CONTAINERS ", ctx.theme.heading()),
        Span::raw(text),
    ])
}

/// The selected container's log: its title (which pod and container, the scroll position,
/// where the lines come from, the filter), the scrolled lines, and why the stream ended.
fn render_log(
    frame: &mut Frame,
    [title_area, log_area]: [Rect; 2],
    ctx: &DeployFrame,
    ui: &mut UiState,
    pods: &[&PodView],
) {
    let t = ctx.theme;
    let state = ctx.state;
    let Some(detail) = ui.detail.clone() else {
        return;
    };
    let (lines, status) = log_lines(state, &detail, &ui.log, ui.filters.get(FilterSlot::Log));
    let shown = shown_container(state, &detail);
    let pod = shown
        .as_ref()
        .and_then(|(p, _)| pods.iter().find(|x| &x.name == p));
    let containers = pod.map_or(0, |p| p.log_containers().len());
    let head = match &shown {
        Some((p, c)) => {
            let init =
                pod.is_some_and(|p| p.container_states.iter().any(|s| s.init && &s.name == c));
            let label = if init { format!("init {c}") } else { c.clone() };
            log_heading(p, &label, detail.container, containers)
        }
        None if test_log(state, &detail.target).is_some() => {
            format!("LOG {}", fit::inert(detail.target.name()))
        }
        None => "LOG".into(),
    };
    let mut right = vec![
        position_span(&detail.log, lines.len(), &t),
        Span::styled(format!(" · {status}"), t.muted()),
    ];
    if let Some(f) = filter_span(&ui.filters, FilterSlot::Log, &t) {
        right.push(f);
    }
    let mut title_line = section(head, None, ctx);
    title_line.spans.extend(right);
    frame.render_widget(Paragraph::new(title_line), title_area);
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
        |l, w| plain_lines(l, w),
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
        let empty = if ui.filters.get(FilterSlot::Log).is_empty() {
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

fn render_events(frame: &mut Frame, area: Rect, ctx: &DeployFrame, events: &[&KubeEventView]) {
    let t = &ctx.theme;
    let mut lines = vec![section("EVENTS (newest first)".into(), None, ctx)];
    if events.is_empty() {
        lines.push(Line::from(Span::styled(
            "no events about these objects",
            t.muted(),
        )));
    }
    let width = area.width as usize;
    for e in events.iter().take(area.height.saturating_sub(1) as usize) {
        lines.push(event_line(e, ctx.now, width, 16, t));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
