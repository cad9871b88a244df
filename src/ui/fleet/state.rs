//! What the operator looks at on the fleet screen (the list's selection, the target open, the
//! prompt) and how keys change it. Pure, as app.rs is: a key and the members in, an effect
//! out; the screen ([`super::live`]) carries the effect out (a cancel, an answer, a log
//! streamer started or stopped).

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use crate::engine::event::RollbackStatus;
use crate::engine::fleet::{Lane, Member};
use crate::engine::state::DeployState;
use crate::ui::app::UiState;
use crate::ui::deck::{Effect, Overlay};
use crate::ui::nav;

/// What a key asks the fleet screen to do besides redrawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetEffect {
    None,
    /// This target's deploy screen opened: its log streamer starts.
    Opened(usize),
    /// Back to the list from this target's screen: its log streamer stops.
    Closed(usize),
    /// `y` on the prompt: cancel every running target (the fleet's cancel, which the drive
    /// relays to each; each helm gets its own SIGTERM).
    CancelAll,
    /// `q` once every target ended: leave as soon as the drive has.
    Quit,
    /// What a target's own screen asked for: its cancel, or an answer to its engine.
    Target(usize, Effect),
}

/// The fleet screen's own state; each target keeps its own [`UiState`] while the operator goes
/// back and forth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetUi {
    /// The row selected in the list.
    pub selected: usize,
    /// The target whose deploy screen is shown (None: the list).
    pub open: Option<usize>,
    /// Each target's deploy screen state, in the members' order.
    pub targets: Vec<UiState>,
    /// `q` asked "cancel every running target? y/n".
    pub asking: bool,
    /// The fleet was cancelled: the screen stays until every target ended.
    pub cancelling: bool,
    /// A one-line message for the list's key bar.
    pub notice: Option<String>,
    /// Advances on every slow tick (the spinners).
    pub tick: u64,
}

/// Whether a target has nothing more to run unless asked: it ended, never started, or has its
/// verdict (its engine may still wait for `R`; a rollback already running is not settled).
pub fn settled(lane: &Lane, state: &DeployState) -> bool {
    match lane {
        Lane::Ended { .. } | Lane::NotStarted { .. } => true,
        Lane::Waiting => false,
        Lane::Running => {
            state.verdict.is_some()
                && !state
                    .rollback
                    .as_ref()
                    .is_some_and(|r| r.status == RollbackStatus::Running)
        }
    }
}

/// The code a target adds to the fleet's exit as it stands: its lane's, or its verdict's while
/// its engine waits for `R`; None while it runs.
pub fn code_of(lane: &Lane, state: &DeployState) -> Option<i32> {
    lane.code().or_else(|| match settled(lane, state) {
        true => state.verdict.as_ref().map(|v| v.code()),
        false => None,
    })
}

/// Every target settled.
pub fn all_settled(members: &[Arc<Member>]) -> bool {
    members
        .iter()
        .all(|m| settled(&m.lane.borrow(), &m.state.borrow()))
}

impl FleetUi {
    pub fn new(targets: usize) -> FleetUi {
        let target = UiState {
            in_fleet: true,
            ..UiState::new()
        };
        FleetUi {
            selected: 0,
            open: None,
            targets: vec![target; targets],
            asking: false,
            cancelling: false,
            notice: None,
            tick: 0,
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, members: &[Arc<Member>]) -> FleetEffect {
        if key.kind == KeyEventKind::Release {
            return FleetEffect::None;
        }
        self.notice = None;
        if nav::is_ctrl_c(key) {
            // Ctrl+C anywhere is the fleet's `q`: from a target's screen too, whose own prompt
            // would cancel only that target.
            if self.asking {
                self.asking = false;
                return FleetEffect::None;
            }
            let closed = self.close();
            return match self.quit_request(members) {
                FleetEffect::None => closed,
                effect => effect,
            };
        }
        match self.open {
            Some(i) => self.on_target_key(i, key, members),
            None if self.asking => self.on_prompt(key),
            None => self.on_list_key(key, members),
        }
    }

    /// Back to the list, when a target is open.
    fn close(&mut self) -> FleetEffect {
        match self.open.take() {
            Some(i) => {
                self.selected = i;
                FleetEffect::Closed(i)
            }
            None => FleetEffect::None,
        }
    }

    fn on_list_key(&mut self, key: KeyEvent, members: &[Arc<Member>]) -> FleetEffect {
        let last = members.len().saturating_sub(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            KeyCode::Enter if !members.is_empty() => {
                let i = self.selected.min(last);
                self.open = Some(i);
                return FleetEffect::Opened(i);
            }
            KeyCode::Char('q') => return self.quit_request(members),
            _ => {}
        }
        FleetEffect::None
    }

    /// `q` on the list: leave once everything settled, else ask to cancel what runs.
    fn quit_request(&mut self, members: &[Arc<Member>]) -> FleetEffect {
        if all_settled(members) {
            return FleetEffect::Quit;
        }
        if self.cancelling {
            self.notice = Some(
                "cancelling: each running helm got SIGTERM; waiting for every target to end".into(),
            );
            return FleetEffect::None;
        }
        self.asking = true;
        FleetEffect::None
    }

    fn on_prompt(&mut self, key: KeyEvent) -> FleetEffect {
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                self.asking = false;
                self.cancelling = true;
                FleetEffect::CancelAll
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc | KeyCode::Char('q') => {
                self.asking = false;
                FleetEffect::None
            }
            _ => FleetEffect::None,
        }
    }

    /// A key on target `i`'s own screen: its deploy screen's keys, but for Esc at its top
    /// level (and `q` once it settled), which go back to the list.
    fn on_target_key(&mut self, i: usize, key: KeyEvent, members: &[Arc<Member>]) -> FleetEffect {
        let (Some(member), Some(ui)) = (members.get(i), self.targets.get_mut(i)) else {
            return self.close();
        };
        let state = member.state.borrow();
        let top = at_top(ui, &state);
        match key.code {
            KeyCode::Esc if top => return self.close(),
            KeyCode::Char('q')
                if top
                    && matches!(
                        *member.lane.borrow(),
                        Lane::Ended { .. } | Lane::NotStarted { .. }
                    ) =>
            {
                return self.close();
            }
            _ => {}
        }
        match ui.on_key(key, &state) {
            Effect::None => FleetEffect::None,
            // `q` after its verdict: back to the list (the fleet's `q` leaves).
            Effect::Quit => {
                drop(state);
                self.close()
            }
            effect => FleetEffect::Target(i, effect),
        }
    }

    /// The fleet was cancelled (`y`, a signal): every target not settled shows its cancel.
    pub fn cancel_all(&mut self, members: &[Arc<Member>]) {
        self.asking = false;
        self.cancelling = true;
        for (ui, m) in self.targets.iter_mut().zip(members) {
            if !settled(&m.lane.borrow(), &m.state.borrow()) {
                ui.cancelling = true;
            }
        }
    }
}

/// A target's screen shows nothing Esc would close first: no overlay, drill-down, filter being
/// typed or set on the focused pane, nor the plan's diff.
fn at_top(ui: &UiState, state: &DeployState) -> bool {
    ui.overlay == Overlay::None
        && ui.detail.is_none()
        && ui.filters.typing().is_none()
        && ui.filters.get(ui.filter_slot()).is_empty()
        && !(crate::ui::plan::showing(state) && ui.plan.diff.is_some())
}
