//! The release's workloads, judged as the deploy step judges them, in the deploy screen's own
//! pane (gating first, optional greyed); and a workload's drill-down: its pods with restarts,
//! last exit and cause, its causes and notes, and the events about it, its ReplicaSets and pods.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::engine::event::{KubeEventView, WorkloadView};
use crate::ui::app::UiState;
use crate::ui::deck::FilterSlot;
use crate::ui::fit;
use crate::ui::inspect::data::{self, InspectFrame};
use crate::ui::inspect::evidence::{event_lines, position};
use crate::ui::inspect::state::{Drill, InspectUi, Slot, WorkloadDrill};
use crate::ui::model::{self, Target};
use crate::ui::panes::detail::optional_note;
use crate::ui::panes::helm::window;
use crate::ui::panes::pods::{self, PodTable};
use crate::ui::panes::{filter_span, mark_style, pane_block, render_empty, workloads, wrap_spans};
use crate::ui::theme::Theme;

/// The workloads pane: the deploy screen's, over the inspection's workloads.
pub fn render_pane(
    frame: &mut Frame,
    area: Rect,
    v: &InspectFrame,
    ui: &mut InspectUi,
    focused: bool,
) {
    let t = &v.theme;
    let i = v.inspection();
    if i.workloads.is_empty() {
        let block = pane_block(vec![Span::raw("Workloads")], focused, t);
        let text = match i.requested {
            Some(n) if i.revision_absent() => {
                format!("not read: the release has no revision {n}")
            }
            _ => format!(
                "no workload of the release found (app.kubernetes.io/instance={} in {})",
                i.release, i.namespace
            ),
        };
        render_empty(frame, area, block, text, t);
        return;
    }
    // The deploy pane reads its selection, filter and focus from the deploy UI state.
    let mut deck = UiState::new();
    deck.workloads = ui.workloads.clone();
    deck.filters
        .set(FilterSlot::Workloads, ui.filters.get(Slot::Workloads));
    if ui.filters.is_editing(Slot::Workloads) {
        deck.filters.edit(FilterSlot::Workloads);
    }
    workloads::render(frame, area, &v.deploy_frame(), &mut deck, focused);
    ui.workloads = deck.workloads;
}

/// Rows the workloads pane wants (each row, two for a blocker with a cause when wide).
pub fn wanted_rows(v: &InspectFrame, ui: &InspectUi, wide: bool) -> usize {
    workloads::wanted_rows(&v.data.mirror, ui.filters.get(Slot::Workloads), wide)
}

/// A workload's drill-down: its pods, its causes and notes, the events about it (scrolled and
/// filtered), and how to read the selected pod's log.
pub fn render_drill(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &mut InspectUi) {
    let t = v.theme;
    let data = v.data;
    let Some(Drill::Workload(mut d)) = ui.drill.clone() else {
        return;
    };
    let w = d
        .target
        .workload_key()
        .and_then(|k| data.mirror.workloads.get(&k));
    let block =
        pane_block(drill_title(v, &d.target, w), true, &t).title_bottom(Line::from(Span::styled(
            " esc back · ↑↓ pod · PgUp/PgDn g/G events · / search ",
            t.muted(),
        )));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let pods = model::pods_of(&data.mirror, &d.target);
    let events = data::workload_events(data, &d.target, ui.filters.get(Slot::Events));
    let facts = w.map_or_else(Vec::new, |w| facts(w, &t, width));
    let hint = log_hint(d.pod.key.as_deref(), &data.inspection.namespace);
    let h = inner.height;
    let pods_h = ((pods.len().max(1) as u16) + 1).min((h / 3).max(3));
    let facts_h = (facts.len() as u16).min(h / 5);
    let [pods_area, facts_area, events_title, events_area, hint_area] = Layout::vertical([
        Constraint::Length(pods_h),
        Constraint::Length(facts_h),
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(u16::from(!hint.is_empty())),
    ])
    .areas(inner);
    let look = PodTable {
        empty: "no pods of this workload",
        wide_node: 16,
        optional: w.is_some_and(|w| w.optional),
        all_causes: true,
        tick: 0,
    };
    pods::render(frame, pods_area, &pods, &mut d.pod, &look, &t);
    frame.render_widget(Paragraph::new(facts), facts_area);
    render_events(frame, [events_title, events_area], v, ui, &mut d, &events);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("log: ", t.muted()),
            Span::styled(
                fit::end(&hint, width.saturating_sub(5)).into_owned(),
                t.key(),
            ),
        ])),
        hint_area,
    );
    ui.drill = Some(Drill::Workload(d));
}

/// The drill's title: the workload's name, kind, readiness and where it stands (and why it is
/// optional), or that it is gone.
fn drill_title(v: &InspectFrame, target: &Target, w: Option<&WorkloadView>) -> Vec<Span<'static>> {
    let t = &v.theme;
    let (kind, name) = match target {
        Target::Workload { kind, name, .. } => (kind.clone(), name.clone()),
        Target::Job { name, .. } => ("Job".to_string(), name.clone()),
    };
    let shown = w.map_or(name, |w| {
        crate::ui::panes::detail::shown_name(w, &v.data.mirror.plan.namespace)
    });
    let mut title = vec![Span::raw(fit::inert(&shown).into_owned())];
    match w {
        Some(w) => {
            let mark = model::workload_mark(w);
            title.push(Span::styled(
                format!(" · {kind} · {}/{} ready · ", w.ready_replicas, w.desired),
                t.muted(),
            ));
            title.push(Span::styled(
                format!("{} {}", mark.glyph(0), fit::inert(&model::short_message(w))),
                mark_style(mark, t),
            ));
            title.extend(optional_note(w, t));
        }
        None => title.push(Span::styled(format!(" · {kind} · gone"), t.muted())),
    }
    title
}

/// The workload's pod-level causes (`!`, never red for an optional one) and its notes.
fn facts(w: &WorkloadView, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut facts: Vec<Line<'static>> = Vec::new();
    for c in &w.pod_causes {
        facts.extend(wrap_spans(
            &[(
                if w.optional { t.optional() } else { t.warn() },
                format!("! {}", fit::inert(c)),
            )],
            width,
        ));
    }
    for n in &w.notes {
        facts.extend(wrap_spans(
            &[(t.muted(), format!("note: {}", fit::inert(n)))],
            width,
        ));
    }
    facts
}

/// Logs of workload pods are not collected: the command that reads the selected pod's (empty
/// when no pod is selected).
fn log_hint(pod: Option<&str>, namespace: &str) -> String {
    pod.map(|p| format!("kubectl logs {} -n {namespace} [--previous]", fit::inert(p)))
        .unwrap_or_default()
}

/// The events' heading (count, scroll position, filter) in `title_area` and the scrolled
/// events under it, or why there are none.
fn render_events(
    frame: &mut Frame,
    [title_area, area]: [Rect; 2],
    v: &InspectFrame,
    ui: &InspectUi,
    d: &mut WorkloadDrill,
    events: &[&KubeEventView],
) {
    let t = &v.theme;
    let mut head = vec![Span::styled(
        format!("EVENTS (newest first, {})", events.len()),
        t.heading(),
    )];
    head.push(position(&d.events, events.len(), area.height, t));
    if let Some(f) = filter_span(&ui.filters, Slot::Events, t) {
        head.push(f);
    }
    frame.render_widget(Paragraph::new(Line::from(head)), title_area);
    let mut lines = window(
        events,
        &mut d.events,
        area.height as usize,
        area.width as usize,
        |e, w| event_lines(&[*e], v, w, 0, 1),
    );
    if events.is_empty() {
        let empty = if ui.filters.get(Slot::Events).is_empty() {
            "no events about this workload, its ReplicaSets or its pods"
        } else {
            "no event matches"
        };
        lines.push(Line::from(Span::styled(empty, t.muted())));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
