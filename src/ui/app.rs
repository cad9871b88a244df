//! What the operator is looking at (focus, selections, scroll, filters, overlays) and how keys
//! change it. Pure: a key and the borrowed deploy state in, an effect out; no terminal here.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use crate::engine::logs::LogRequest;
use crate::engine::state::DeployState;
use crate::ui::deck::{
    self, Detail, Effect, FilterSlot, LogBuffer, Overlay, Pane, shown_container,
};
use crate::ui::model::{self, Target};
use crate::ui::nav::{self, Filters, Scroll, Selection, cycle_focus, move_selection, scroll_text};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiState {
    pub focus: Pane,
    pub workloads: Selection,
    pub hooks: Selection,
    pub helm: Scroll,
    /// The filters, and the one being typed.
    pub filters: Filters<FilterSlot>,
    pub overlay: Overlay,
    pub detail: Option<Detail>,
    /// The operator confirmed a cancel; the screen stays until the verdict.
    pub cancelling: bool,
    /// A one-line message for the key bar.
    pub notice: Option<String>,
    /// Advances on every slow tick (the spinner).
    pub tick: u64,
    /// The on-demand log of the container the drill-down shows.
    pub log: LogBuffer,
    /// The plan pane (`--plan`).
    pub plan: crate::ui::plan::PlanUi,
    /// The engine waits for `R`'s answer after the verdict (only the live screen sets it: a
    /// replay answers nothing), so the key bar offers `R`.
    pub rollback_waits: bool,
    /// Preflight waits for `u` on a stuck lock (only the live screen sets it), so the key bar
    /// offers `u`.
    pub unlock_waits: bool,
    /// This deploy is one target of a fleet (the fleet screen sets it): Esc at the top level
    /// goes back to the fleet's list, and so does `q` after the verdict.
    pub in_fleet: bool,
}

impl Default for UiState {
    fn default() -> Self {
        UiState {
            focus: Pane::Workloads,
            workloads: Selection::default(),
            hooks: Selection::default(),
            helm: Scroll::default(),
            filters: Filters::default(),
            overlay: Overlay::None,
            detail: None,
            cancelling: false,
            notice: None,
            tick: 0,
            log: LogBuffer::default(),
            plan: Default::default(),
            rollback_waits: false,
            unlock_waits: false,
            in_fleet: false,
        }
    }
}

fn hook_keys(state: &DeployState, filter: &str) -> Vec<String> {
    model::hook_rows(state, filter)
        .iter()
        .map(|r| r.key())
        .collect()
}

impl UiState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `/` types into right now.
    pub fn filter_slot(&self) -> FilterSlot {
        if self.detail.is_some() {
            return FilterSlot::Log;
        }
        match self.focus {
            Pane::Workloads => FilterSlot::Workloads,
            Pane::Hooks => FilterSlot::Hooks,
            Pane::Helm => FilterSlot::Helm,
        }
    }

    /// The loop ends: after the verdict once the operator quits, or once a cancel they asked
    /// for has reached its verdict.
    pub fn done(&self, state: &DeployState, quit: bool) -> bool {
        state.verdict.is_some() && (quit || self.cancelling)
    }

    /// The container whose log should stream (none when the engine already streams it).
    pub fn wanted_log(&self, state: &DeployState) -> Option<LogRequest> {
        let detail = self.detail.as_ref()?;
        let (pod, container) = shown_container(state, detail)?;
        if state.logs.contains_key(&format!("{pod}/{container}")) {
            return None;
        }
        let namespace = model::pods_of(state, &detail.target)
            .iter()
            .find(|p| p.name == pod)
            .map(|p| p.namespace.clone())
            .unwrap_or_default();
        Some(LogRequest {
            pod,
            namespace,
            container,
        })
    }

    /// Brings selections in line with the rows as they are now (called before each frame).
    pub fn sync(&mut self, state: &DeployState) {
        self.workloads.resolve(&model::workload_keys(
            state,
            self.filters.get(FilterSlot::Workloads),
        ));
        self.hooks
            .resolve(&hook_keys(state, self.filters.get(FilterSlot::Hooks)));
        if let Some(d) = self.detail.as_mut() {
            d.pod.resolve(&model::pod_keys(state, &d.target));
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, state: &DeployState) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::None;
        }
        self.notice = None;
        if nav::is_ctrl_c(key) {
            self.filters.editing = None;
            if self.overlay == Overlay::Confirm {
                self.overlay = Overlay::None;
                return Effect::None;
            }
            return self.quit_request(state);
        }
        match self.overlay {
            Overlay::Confirm => return self.on_confirm(key),
            Overlay::Unlock | Overlay::Rollback => return self.on_prompt(key, state),
            Overlay::Help => {
                if nav::closes_help(key.code) {
                    self.overlay = Overlay::None;
                }
                return Effect::None;
            }
            Overlay::None => {}
        }
        if crate::ui::plan::showing(state)
            && let Some(effect) = self.plan.on_key(key, state)
        {
            return effect;
        }
        if self.filters.type_key(key).is_some() {
            self.sync(state);
            return Effect::None;
        }
        match key.code {
            KeyCode::Char('q') => return self.quit_request(state),
            KeyCode::Char('?') => self.overlay = Overlay::Help,
            KeyCode::Char('/') => self.filters.edit(self.filter_slot()),
            KeyCode::Char('u') if self.detail.is_none() => {
                if crate::ui::recover::lock_offer(state) {
                    self.overlay = Overlay::Unlock;
                } else {
                    self.notice = Some("u: no stuck lock to clear".into());
                }
            }
            KeyCode::Char('R') if self.detail.is_none() => {
                if crate::ui::recover::rollback_offer(state).is_some() {
                    self.overlay = Overlay::Rollback;
                } else {
                    self.notice = Some(
                        "R: only after a failed verdict, when this run wrote the latest revision \
                         and a deployed one exists before it"
                            .into(),
                    );
                }
            }
            _ if self.detail.is_some() => self.on_detail_key(key, state),
            _ => self.on_main_key(key, state),
        }
        Effect::None
    }

    fn quit_request(&mut self, state: &DeployState) -> Effect {
        if state.verdict.is_some() {
            return Effect::Quit;
        }
        if self.cancelling {
            // A watch runs no helm: it only stops reading.
            self.notice = Some(if state.plan.watch {
                "stopping the watch; waiting for the verdict".into()
            } else {
                "cancelling: helm got SIGTERM; waiting for it to exit and for the verdict".into()
            });
            return Effect::None;
        }
        self.overlay = Overlay::Confirm;
        Effect::None
    }

    fn on_confirm(&mut self, key: KeyEvent) -> Effect {
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                self.overlay = Overlay::None;
                self.cancelling = true;
                Effect::Cancel
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc | KeyCode::Char('q') => {
                self.overlay = Overlay::None;
                Effect::None
            }
            _ => Effect::None,
        }
    }

    /// `y` runs what the open prompt offers (when it may run), `n` or Esc closes it.
    fn on_prompt(&mut self, key: KeyEvent, state: &DeployState) -> Effect {
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                let effect = match self.overlay {
                    Overlay::Unlock if crate::ui::recover::may_unlock(state) => Effect::Unlock,
                    Overlay::Rollback => match crate::ui::recover::rollback_offer(state) {
                        Some(to) => Effect::Rollback(to),
                        None => return Effect::None,
                    },
                    // A refused lock has no `y`: the prompt says why.
                    _ => return Effect::None,
                };
                self.overlay = Overlay::None;
                effect
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc | KeyCode::Char('q') => {
                self.overlay = Overlay::None;
                Effect::None
            }
            _ => Effect::None,
        }
    }

    fn on_main_key(&mut self, key: KeyEvent, state: &DeployState) {
        if cycle_focus(&mut self.focus, key.code) {
            return;
        }
        let helm_total = model::helm_line_count(state, self.filters.get(FilterSlot::Helm));
        match key.code {
            KeyCode::Char('f') => self.helm.toggle(helm_total),
            KeyCode::Esc => self.filters.clear(self.filter_slot()),
            KeyCode::Enter => self.open_detail(state),
            code => match self.focus {
                Pane::Workloads => {
                    let keys = model::workload_keys(state, self.filters.get(FilterSlot::Workloads));
                    move_selection(&mut self.workloads, &keys, code);
                }
                Pane::Hooks => {
                    let keys = hook_keys(state, self.filters.get(FilterSlot::Hooks));
                    move_selection(&mut self.hooks, &keys, code);
                }
                Pane::Helm => scroll_text(&mut self.helm, helm_total, code),
            },
        }
    }

    fn open_detail(&mut self, state: &DeployState) {
        let target = match self.focus {
            Pane::Workloads => {
                let rows = model::workload_rows(state, self.filters.get(FilterSlot::Workloads));
                let Some(i) = self.workloads.resolve(
                    &rows
                        .iter()
                        .map(|w| model::workload_key(state, w))
                        .collect::<Vec<_>>(),
                ) else {
                    return;
                };
                Target::workload(rows[i])
            }
            Pane::Hooks => {
                let rows = model::hook_rows(state, self.filters.get(FilterSlot::Hooks));
                let Some(i) = self
                    .hooks
                    .resolve(&rows.iter().map(|r| r.key()).collect::<Vec<_>>())
                else {
                    return;
                };
                Target::Job {
                    name: rows[i].name.to_string(),
                    init: rows[i].init,
                }
            }
            Pane::Helm => return,
        };
        let mut detail = Detail {
            target,
            pod: Selection::default(),
            container: 0,
            log: Scroll::default(),
        };
        detail.pod.resolve(&model::pod_keys(state, &detail.target));
        self.filters.clear(FilterSlot::Log);
        self.detail = Some(detail);
    }

    fn on_detail_key(&mut self, key: KeyEvent, state: &DeployState) {
        let log = &self.log;
        let Some(detail) = self.detail.as_mut() else {
            return;
        };
        let total = deck::log_line_count(state, detail, log, self.filters.get(FilterSlot::Log));
        match key.code {
            KeyCode::Esc | KeyCode::Backspace => self.detail = None,
            KeyCode::Up | KeyCode::Char('k') => {
                detail
                    .pod
                    .move_by(&model::pod_keys(state, &detail.target), -1);
                detail.container = 0;
                detail.log = Scroll::default();
            }
            KeyCode::Down | KeyCode::Char('j') => {
                detail
                    .pod
                    .move_by(&model::pod_keys(state, &detail.target), 1);
                detail.container = 0;
                detail.log = Scroll::default();
            }
            KeyCode::Char('c') => {
                detail.container = detail.container.wrapping_add(1);
                detail.log = Scroll::default();
            }
            KeyCode::Char('f') => detail.log.toggle(total),
            code => scroll_text(&mut detail.log, total, code),
        }
    }
}
