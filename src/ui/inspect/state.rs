//! What the operator looks at on the inspect screen (focus, selections, filters, the
//! drill-down, help) and how keys change it. Pure: a key and the borrowed inspection in, an
//! effect out; no terminal here.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use crate::helm::hooks::HookPhase;

use crate::ui::inspect::data::{self, Inspected};
use crate::ui::model::{self, Target};
use crate::ui::nav::{
    self, Filters, Ordered, Scroll, Selection, cycle_focus, move_selection, scroll_text,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    History,
    Hooks,
    Workloads,
}

impl Ordered for Focus {
    const ALL: &'static [Focus] = &[Focus::History, Focus::Hooks, Focus::Workloads];
}

/// Which list a filter narrows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    History,
    Hooks,
    Workloads,
    /// The log in a hook's evidence.
    Log,
    /// The events in a workload's drill-down.
    Events,
    Manifest,
}

impl Ordered for Slot {
    const ALL: &'static [Slot] = &[
        Slot::History,
        Slot::Hooks,
        Slot::Workloads,
        Slot::Log,
        Slot::Events,
        Slot::Manifest,
    ];
}

/// A hook's evidence: its pods, the selected pod's containers and the shown container's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDrill {
    /// `Kind/name` of the hook.
    pub key: String,
    pub pod: Selection,
    /// Index into the selected pod's containers.
    pub container: usize,
    pub log: Scroll,
}

/// A workload's pods and the events about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadDrill {
    pub target: Target,
    pub pod: Selection,
    pub events: Scroll,
}

/// What the body shows instead of the panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drill {
    Hook(HookDrill),
    Workload(WorkloadDrill),
    /// One stored revision's record.
    Revision(i64),
    /// The manifest (`--show-manifest`), Secret values masked.
    Manifest(Scroll),
}

/// What a key asks the loop to do besides redrawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Read the release again.
    Reload,
    Quit,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectUi {
    pub focus: Focus,
    pub history: Selection,
    pub hooks: Selection,
    pub workloads: Selection,
    /// The filters, and the one being typed.
    pub filters: Filters<Slot>,
    pub help: bool,
    pub drill: Option<Drill>,
    /// A one-line message for the key bar.
    pub notice: Option<String>,
    /// A reload is under way.
    pub reloading: bool,
}

fn on(key: String) -> Selection {
    Selection {
        key: Some(key),
        touched: true,
        ..Selection::default()
    }
}

/// A top-anchored scroll (lists read from their first line).
fn from_top() -> Scroll {
    Scroll {
        follow: false,
        ..Scroll::default()
    }
}

impl InspectUi {
    /// Opens on what went wrong: the first failed hook (or one with live evidence), else the
    /// first gating workload that is not ready; the history on the inspected revision.
    pub fn new(data: &Inspected) -> InspectUi {
        let i = &data.inspection;
        let mut ui = InspectUi {
            focus: Focus::Hooks,
            history: Selection::default(),
            hooks: Selection::default(),
            workloads: Selection::default(),
            filters: Filters::default(),
            help: false,
            drill: None,
            notice: None,
            reloading: false,
        };
        if let Some(rev) = i
            .revision
            .filter(|r| i.history.iter().any(|h| h.revision == *r))
        {
            ui.history = on(rev.to_string());
        }
        let telling = i
            .hooks
            .iter()
            .find(|h| h.record.phase == HookPhase::Failed)
            .or_else(|| i.hooks.iter().find(|h| h.live.is_some()));
        let blocker = model::workload_rows(&data.mirror, "")
            .into_iter()
            .find(|w| !w.ready && !w.optional);
        if i.info.is_none() {
            // Nothing decoded: the history says what there is.
            ui.focus = Focus::History;
        } else if let Some(h) = telling {
            ui.hooks = on(data::hook_key(h));
        } else if let Some(w) = blocker {
            ui.focus = Focus::Workloads;
            ui.workloads = on(model::workload_key(&data.mirror, w));
        } else if i.hooks.is_empty() {
            ui.focus = if i.workloads.is_empty() {
                Focus::History
            } else {
                Focus::Workloads
            };
        }
        ui.sync(data);
        ui
    }

    /// Brings selections in line with the rows as they are now (before each frame, and after
    /// a reload).
    pub fn sync(&mut self, data: &Inspected) {
        let i = &data.inspection;
        self.history
            .resolve(&data::history_keys(i, self.filters.get(Slot::History)));
        self.hooks
            .resolve(&data::hook_keys(i, self.filters.get(Slot::Hooks)));
        self.workloads.resolve(&model::workload_keys(
            &data.mirror,
            self.filters.get(Slot::Workloads),
        ));
        match self.drill.as_mut() {
            Some(Drill::Hook(d)) => {
                if let Some(h) = data::find_hook(i, &d.key) {
                    d.pod.resolve(&data::hook_pod_keys(h));
                }
            }
            Some(Drill::Workload(d)) => {
                d.pod.resolve(&model::pod_keys(&data.mirror, &d.target));
            }
            _ => {}
        }
    }

    /// Where `/` types into right now (`None`: nothing to narrow here).
    pub fn filter_slot(&self) -> Option<Slot> {
        match &self.drill {
            Some(Drill::Hook(_)) => Some(Slot::Log),
            Some(Drill::Workload(_)) => Some(Slot::Events),
            Some(Drill::Manifest(_)) => Some(Slot::Manifest),
            Some(Drill::Revision(_)) => None,
            None => Some(match self.focus {
                Focus::History => Slot::History,
                Focus::Hooks => Slot::Hooks,
                Focus::Workloads => Slot::Workloads,
            }),
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, data: &Inspected) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::None;
        }
        self.notice = None;
        if nav::is_ctrl_c(key) {
            return Effect::Quit;
        }
        if self.help {
            if nav::closes_help(key.code) {
                self.help = false;
            }
            return Effect::None;
        }
        if let Some(slot) = self.filters.type_key(key) {
            self.on_filtered(slot, data);
            return Effect::None;
        }
        match key.code {
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Char('/') => match self.filter_slot() {
                Some(slot) => self.filters.edit(slot),
                None => self.notice = Some("nothing to filter here".into()),
            },
            KeyCode::Char('r') => {
                if self.reloading {
                    self.notice = Some("already reading the release".into());
                } else {
                    self.reloading = true;
                    return Effect::Reload;
                }
            }
            KeyCode::Char('m') if !matches!(self.drill, Some(Drill::Manifest(_))) => {
                if data.inspection.manifest.is_some() {
                    self.filters.clear(Slot::Manifest);
                    self.drill = Some(Drill::Manifest(from_top()));
                } else {
                    self.notice = Some(
                        "no manifest: run helmdeck inspect with --show-manifest to read it".into(),
                    );
                }
            }
            _ if self.drill.is_some() => self.on_drill_key(key, data),
            _ => self.on_main_key(key, data),
        }
        Effect::None
    }

    /// A key went to the filter of `slot`: a narrowed log or list starts over.
    fn on_filtered(&mut self, slot: Slot, data: &Inspected) {
        match (slot, self.drill.as_mut()) {
            (Slot::Log, Some(Drill::Hook(d))) => d.log = Scroll::default(),
            (Slot::Events, Some(Drill::Workload(d))) => d.events = from_top(),
            (Slot::Manifest, Some(Drill::Manifest(s))) => *s = from_top(),
            _ => {}
        }
        self.sync(data);
    }

    fn on_main_key(&mut self, key: KeyEvent, data: &Inspected) {
        let i = &data.inspection;
        if cycle_focus(&mut self.focus, key.code) {
            return;
        }
        match key.code {
            KeyCode::Esc => {
                if let Some(slot) = self.filter_slot() {
                    self.filters.clear(slot);
                }
                self.sync(data);
            }
            KeyCode::Enter => {
                self.open(data);
                if self.drill.is_none() {
                    self.notice = Some("nothing selected to open".into());
                }
            }
            code => match self.focus {
                Focus::History => {
                    let keys = data::history_keys(i, self.filters.get(Slot::History));
                    move_selection(&mut self.history, &keys, code);
                }
                Focus::Hooks => {
                    let keys = data::hook_keys(i, self.filters.get(Slot::Hooks));
                    move_selection(&mut self.hooks, &keys, code);
                }
                Focus::Workloads => {
                    let keys =
                        model::workload_keys(&data.mirror, self.filters.get(Slot::Workloads));
                    move_selection(&mut self.workloads, &keys, code);
                }
            },
        }
    }

    /// Enter: the selected row's drill-down.
    fn open(&mut self, data: &Inspected) {
        let i = &data.inspection;
        self.sync(data);
        let drill = match self.focus {
            Focus::History => {
                let keys = data::history_keys(i, self.filters.get(Slot::History));
                let Some(at) = self.history.resolve(&keys) else {
                    return;
                };
                let rows = data::history_rows(i, self.filters.get(Slot::History));
                Drill::Revision(rows[at].revision)
            }
            Focus::Hooks => {
                let keys = data::hook_keys(i, self.filters.get(Slot::Hooks));
                let Some(at) = self.hooks.resolve(&keys) else {
                    return;
                };
                let mut d = HookDrill {
                    key: keys[at].clone(),
                    pod: Selection::default(),
                    container: 0,
                    log: Scroll::default(),
                };
                if let Some(h) = data::find_hook(i, &d.key) {
                    d.pod.resolve(&data::hook_pod_keys(h));
                }
                self.filters.clear(Slot::Log);
                Drill::Hook(d)
            }
            Focus::Workloads => {
                let rows = model::workload_rows(&data.mirror, self.filters.get(Slot::Workloads));
                let keys: Vec<String> = rows
                    .iter()
                    .map(|w| model::workload_key(&data.mirror, w))
                    .collect();
                let Some(at) = self.workloads.resolve(&keys) else {
                    return;
                };
                let target = Target::workload(rows[at]);
                let mut d = WorkloadDrill {
                    pod: Selection::default(),
                    events: from_top(),
                    target,
                };
                d.pod.resolve(&model::pod_keys(&data.mirror, &d.target));
                self.filters.clear(Slot::Events);
                Drill::Workload(d)
            }
        };
        self.drill = Some(drill);
    }

    fn on_drill_key(&mut self, key: KeyEvent, data: &Inspected) {
        let i = &data.inspection;
        if matches!(key.code, KeyCode::Esc | KeyCode::Backspace) {
            self.drill = None;
            return;
        }
        let Some(drill) = self.drill.as_mut() else {
            return;
        };
        match drill {
            Drill::Hook(d) => {
                let Some(h) = data::find_hook(i, &d.key) else {
                    return;
                };
                let pods = data::hook_pod_keys(h);
                let lines = data::shown_log(
                    h,
                    d.pod.key.as_deref(),
                    d.container,
                    self.filters.get(Slot::Log),
                )
                .map_or(0, |(_, _, lines)| lines.len());
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => {
                        d.pod.move_by(&pods, -1);
                        d.container = 0;
                        d.log = Scroll::default();
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        d.pod.move_by(&pods, 1);
                        d.container = 0;
                        d.log = Scroll::default();
                    }
                    KeyCode::Char('c') => {
                        d.container = d.container.wrapping_add(1);
                        d.log = Scroll::default();
                    }
                    code => scroll_text(&mut d.log, lines, code),
                }
            }
            Drill::Workload(d) => {
                let pods = model::pod_keys(&data.mirror, &d.target);
                let events =
                    data::workload_events(data, &d.target, self.filters.get(Slot::Events)).len();
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => d.pod.move_by(&pods, -1),
                    KeyCode::Down | KeyCode::Char('j') => d.pod.move_by(&pods, 1),
                    code => scroll_text(&mut d.events, events, code),
                }
            }
            Drill::Revision(rev) => {
                // ↑↓ walk the history (in the order the pane lists it).
                let revs: Vec<i64> = i.history.iter().map(|r| r.revision).collect();
                let Some(at) = revs.iter().position(|r| r == rev) else {
                    return;
                };
                let to = match key.code {
                    KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => (at + 1).min(revs.len() - 1),
                    KeyCode::Char('g') | KeyCode::Home => 0,
                    KeyCode::Char('G') | KeyCode::End => revs.len() - 1,
                    _ => at,
                };
                *rev = revs[to];
                self.history = on(revs[to].to_string());
            }
            Drill::Manifest(s) => {
                let total = data::manifest_lines(i, self.filters.get(Slot::Manifest)).len();
                scroll_text(s, total, key.code);
            }
        }
    }
}
