//! The plan pane's keys (`--plan`): the list of objects the upgrade would change, Enter on one
//! opens its diff, Esc goes back; `y` lets the upgrade start, `n` declines it (nothing is
//! written). Pure, as app.rs is: a key and the state in, an effect out ([`crate::ui::deck`]'s,
//! so the screen's keys can hand keys here without this reaching back up).

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use crate::engine::event::Step;
use crate::engine::state::DeployState;
use crate::ui::deck::Effect;
use crate::ui::nav::{Scroll, Selection, move_selection, scroll_text};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanUi {
    pub list: Selection,
    /// The diff of the selected object, when open.
    pub diff: Option<Scroll>,
    /// `y` or `n` was pressed: the answer went to the engine.
    pub answered: bool,
}

/// The plan takes the screen: from the moment it is known until the operator answers
/// (`--plan`), or for good (`--plan-only`, where nothing follows it).
pub fn showing(state: &DeployState) -> bool {
    state.changes.is_some()
        && !state.plan_declined
        && (state.plan.plan_only || state.outcome(Step::Plan).is_none())
}

/// The engine waits for an answer.
pub fn awaiting(state: &DeployState) -> bool {
    showing(state) && !state.plan.plan_only && state.verdict.is_none()
}

/// The objects' keys in list order.
pub fn keys(state: &DeployState) -> Vec<String> {
    state
        .changes
        .iter()
        .flat_map(|p| p.objects.iter())
        .map(|o| format!("{}/{}/{}/{}", o.api_version, o.kind, o.namespace, o.name))
        .collect()
}

/// Lines of the diff shown: the selected object's.
pub fn diff_lines<'a>(state: &'a DeployState, ui: &PlanUi) -> Vec<&'a str> {
    let Some(plan) = &state.changes else {
        return vec![];
    };
    plan.objects
        .get(ui.list.index)
        .map(|o| o.diff.lines().collect())
        .unwrap_or_default()
}

impl PlanUi {
    /// The effect of `key` when the plan pane takes it; None leaves it to the screen's keys
    /// (`q`, `?`, Ctrl+C).
    pub fn on_key(&mut self, key: KeyEvent, state: &DeployState) -> Option<Effect> {
        let keys = keys(state);
        self.list.resolve(&keys);
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') if awaiting(state) && !self.answered => {
                self.answered = true;
                Some(Effect::ApprovePlan)
            }
            KeyCode::Char('n') | KeyCode::Char('N') if awaiting(state) && !self.answered => {
                self.answered = true;
                Some(Effect::DeclinePlan)
            }
            KeyCode::Enter if self.diff.is_none() && !keys.is_empty() => {
                self.diff = Some(Scroll {
                    follow: false,
                    ..Scroll::default()
                });
                Some(Effect::None)
            }
            KeyCode::Esc | KeyCode::Backspace if self.diff.is_some() => {
                self.diff = None;
                Some(Effect::None)
            }
            KeyCode::Char('q') | KeyCode::Char('?') => None,
            code => {
                if self.diff.is_some() {
                    let total = diff_lines(state, self).len();
                    if let Some(scroll) = self.diff.as_mut() {
                        scroll_text(scroll, total, code);
                        // The diff opens at its top and never grows: reaching its end must not
                        // turn into following it.
                        scroll.follow = false;
                        scroll.top = scroll.top.min(total.saturating_sub(scroll.height));
                    }
                } else {
                    move_selection(&mut self.list, &keys, code);
                }
                Some(Effect::None)
            }
        }
    }
}
