//! The whole screen: header, verdict banner, the panes (or the drill-down), the key bar, and
//! the overlays. Sizes adapt from 80x24 up; the focused pane takes the spare rows.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use crate::ui::app::UiState;
use crate::ui::deck::{FilterSlot, Overlay, Pane};
use crate::ui::panes::{
    DeployFrame, banner, detail, header, helm, help, history, hooks, plan, recover, workloads,
};
use crate::ui::{keybar, layout, model};

/// From this width blocked workloads show their pod-level cause on a second line.
const WIDE: u16 = 120;

pub fn draw(frame: &mut Frame, ctx: &DeployFrame, ui: &mut UiState) {
    ui.sync(ctx.state);
    let Some(areas) = layout::split(frame, |width, max| banner::height(ctx, width, max)) else {
        return;
    };
    header::render(frame, areas.head, ctx, ui.tick);
    if areas.banner.height > 0 {
        banner::render(frame, areas.banner, ctx);
    }
    if ui.detail.is_some() {
        detail::render(frame, areas.body, ctx, ui);
    } else if crate::ui::plan::showing(ctx.state) {
        plan::render(frame, areas.body, ctx, ui);
    } else {
        // The history (watch --follow) keeps to a few rows; the panes of the revision followed
        // now come first.
        let max = if areas.body.height < 24 { 4 } else { 8 };
        let rows = history::height(ctx.history, max);
        let [panes, past] =
            Layout::vertical([Constraint::Fill(1), Constraint::Length(rows)]).areas(areas.body);
        render_panes(frame, panes, ctx, ui);
        if rows > 0 {
            history::render(frame, past, ctx);
        }
    }
    render_keys(frame, areas.keys, ctx, ui);
    match ui.overlay {
        Overlay::Help => help::render_help(frame, areas.whole, ctx),
        Overlay::Confirm => help::render_confirm(frame, areas.whole, ctx),
        Overlay::Unlock => recover::render_unlock(frame, areas.whole, ctx),
        Overlay::Rollback => recover::render_rollback(frame, areas.whole, ctx),
        Overlay::None => {}
    }
}

/// Rows a table pane wants: its rows, a header and two borders.
fn wanted_rows(ctx: &DeployFrame, ui: &UiState, pane: Pane, wide: bool) -> u16 {
    let rows: usize = match pane {
        Pane::Workloads => {
            workloads::wanted_rows(ctx.state, ui.filters.get(FilterSlot::Workloads), wide)
        }
        Pane::Hooks => model::hook_rows(ctx.state, ui.filters.get(FilterSlot::Hooks)).len(),
        Pane::Helm => 0,
    };
    rows.max(1) as u16 + 3
}

fn render_panes(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState) {
    let h = area.height;
    let focus = ui.focus;
    let wide = area.width >= WIDE;
    // Each table pane gets the rows it wants while helm keeps a few; when they do not fit, the
    // unfocused table gives up rows first, then the focused one.
    let helm_min: u16 = if focus == Pane::Helm {
        (h / 2).max(5)
    } else {
        5
    };
    let mut wl = wanted_rows(ctx, ui, Pane::Workloads, wide);
    let mut hk = wanted_rows(ctx, ui, Pane::Hooks, wide);
    let order = if focus == Pane::Hooks {
        [Pane::Workloads, Pane::Hooks]
    } else {
        [Pane::Hooks, Pane::Workloads]
    };
    for pane in order {
        let over = (wl + hk + helm_min).saturating_sub(h);
        let rows = if pane == Pane::Workloads {
            &mut wl
        } else {
            &mut hk
        };
        *rows = rows.saturating_sub(over).max(4);
    }
    let [a, b, c] = Layout::vertical([
        Constraint::Length(wl),
        Constraint::Length(hk),
        Constraint::Min(3),
    ])
    .areas(area);
    workloads::render(frame, a, ctx, ui, focus == Pane::Workloads);
    hooks::render(frame, b, ctx, ui, focus == Pane::Hooks);
    helm::render(frame, c, ctx, ui, focus == Pane::Helm);
}

fn render_keys(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &UiState) {
    let t = &ctx.theme;
    if let Some(typed) = ui.filters.typing() {
        keybar::render_filter(frame, area, typed, t);
        return;
    }
    if let Some(notice) = &ui.notice {
        keybar::render_notice(frame, area, notice, t);
        return;
    }
    if ui.cancelling && ctx.state.verdict.is_none() {
        let text = if ctx.state.plan.watch {
            "stopping the watch (the cluster is left as it is); waiting for the verdict"
        } else {
            "cancelling: helm got SIGTERM (never SIGKILL); waiting for it to exit and for the verdict"
        };
        keybar::render_notice(frame, area, text, t);
        return;
    }
    let quit = match &ctx.state.verdict {
        // One target of a fleet: `q` goes back to the fleet's list.
        Some(_) if ui.in_fleet => "the fleet".to_string(),
        Some(v) => format!("quit (exit {})", v.code()),
        None => "cancel".to_string(),
    };
    let answer = crate::ui::plan::awaiting(ctx.state) && !ui.plan.answered;
    let mut keys: Vec<(&str, &str)> = if crate::ui::plan::showing(ctx.state) && ui.detail.is_none()
    {
        let mut keys = if ui.plan.diff.is_some() {
            vec![("esc", "back"), ("↑↓", "scroll")]
        } else {
            vec![("↑↓", "select"), ("enter", "diff")]
        };
        if answer {
            keys.extend([("y", "apply the plan"), ("n", "decline")]);
        }
        keys.extend([("?", "help"), ("q", quit.as_str())]);
        keys
    } else if ui.detail.is_some() {
        vec![
            ("esc", "back"),
            ("↑↓", "pod"),
            ("c", "container"),
            ("f", "follow"),
            ("/", "search"),
            ("?", "help"),
            ("q", &quit),
        ]
    } else if ui.unlock_waits
        && ctx.state.verdict.is_none()
        && crate::ui::recover::lock_offer(ctx.state)
        && crate::ui::recover::may_unlock(ctx.state)
    {
        // Preflight waits on the stuck lock: `u` first, as `R` is after a failure.
        vec![
            ("u", "clear the lock"),
            ("q", &quit),
            ("tab", "focus"),
            ("↑↓", "select"),
            ("enter", "details"),
            ("?", "help"),
        ]
    } else if ui.rollback_waits && crate::ui::recover::rollback_offer(ctx.state).is_some() {
        // First after the verdict's own keys, so a narrow screen drops browsing keys before it.
        vec![
            ("R", "roll back"),
            ("q", &quit),
            ("tab", "focus"),
            ("↑↓", "select"),
            ("enter", "details"),
            ("?", "help"),
        ]
    } else {
        vec![
            ("tab", "focus"),
            ("↑↓", "select"),
            ("enter", "details"),
            ("/", "filter"),
            ("f", "follow"),
            ("?", "help"),
            ("q", &quit),
        ]
    };
    // One target of a fleet: Esc at the top level goes back to the list, first so it stays.
    let top =
        ui.detail.is_none() && !(crate::ui::plan::showing(ctx.state) && ui.plan.diff.is_some());
    if ui.in_fleet && top {
        keys.insert(0, ("esc", "fleet"));
    }
    // The keys that do not fit go, from the end.
    while !keys.is_empty() && keybar::keys_width(&keys) > area.width as usize {
        keys.pop();
    }
    keybar::render_keys(frame, area, &keys, t);
}

/// Draws one frame into a test terminal (used by the snapshot tests and the hostile-text test).
#[cfg(test)]
pub fn render_to_string(ctx: &DeployFrame, ui: &mut UiState, width: u16, height: u16) -> String {
    layout::render_to_string(width, height, |f| draw(f, ctx, ui))
}
