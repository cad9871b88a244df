//! The deploy screen's plain data, below both its keys ([`crate::ui::app`]) and its panes: which
//! pane has the focus, which list a filter narrows, the drill-down and the log it shows, the
//! overlays, and the effects a key asks for. Apart from the engine it reads only the rows
//! ([`crate::ui::model`]) and the navigation ([`crate::ui::nav`]), so the key handling, the
//! plan pane and the panes all import it and none of them has to reach up into another.

use crate::engine::logs::LogMsg;
use crate::engine::state::DeployState;
use crate::ui::model::{self, Target};
use crate::ui::nav::{Ordered, Scroll, Selection};

use crate::engine::state::LOG_LINES_KEPT;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Workloads,
    Hooks,
    Helm,
}

impl Ordered for Pane {
    const ALL: &'static [Pane] = &[Pane::Workloads, Pane::Hooks, Pane::Helm];
}

/// Which list a filter narrows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterSlot {
    Workloads,
    Hooks,
    Helm,
    Log,
}

impl Ordered for FilterSlot {
    const ALL: &'static [FilterSlot] = &[
        FilterSlot::Workloads,
        FilterSlot::Hooks,
        FilterSlot::Helm,
        FilterSlot::Log,
    ];
}

/// The drill-down into one workload or Job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    pub target: Target,
    pub pod: Selection,
    /// Index into the selected pod's containers.
    pub container: usize,
    pub log: Scroll,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    /// "Cancel the deploy?" while it runs.
    Confirm,
    /// `u`: clear the stuck lock preflight stopped on?
    Unlock,
    /// `R`: roll this run's failed revision back?
    Rollback,
}

/// The on-demand log of the container shown in the drill-down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogBuffer {
    pub id: u64,
    pub pod: String,
    pub container: String,
    pub lines: std::collections::VecDeque<String>,
    /// Why the stream ended, when it did.
    pub ended: Option<String>,
}

impl LogBuffer {
    pub fn apply(&mut self, msg: LogMsg) {
        match msg {
            LogMsg::Started { id, pod, container } => {
                *self = LogBuffer {
                    id,
                    pod,
                    container,
                    ..Default::default()
                };
            }
            LogMsg::Line { id, text } if id == self.id => {
                if self.lines.len() >= LOG_LINES_KEPT {
                    self.lines.pop_front();
                }
                self.lines.push_back(text);
            }
            LogMsg::Ended { id, why } if id == self.id => self.ended = Some(why),
            // A line of a stream that was already replaced.
            _ => {}
        }
    }

    pub fn is_for(&self, pod: &str, container: &str) -> bool {
        self.id != 0 && self.pod == pod && self.container == container
    }
}

/// What a key asks the loop to do besides redrawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Cancel the deploy (the engine sends helm one SIGTERM and waits for it).
    Cancel,
    Quit,
    /// `y` on the plan: the upgrade may start.
    ApprovePlan,
    /// `n` on the plan: nothing is written; the run ends 1.
    DeclinePlan,
    /// `y` on the lock prompt: roll the pending revision back as `--recover-lock` does.
    Unlock,
    /// `y` on the rollback prompt: roll back to this revision as `--rollback-on-failure` does.
    Rollback(i64),
}

/// The pod and container the drill-down shows.
pub fn shown_container(state: &DeployState, detail: &Detail) -> Option<(String, String)> {
    let pods = model::pods_of(state, &detail.target);
    let key = detail.pod.key.as_ref()?;
    let pod = pods.iter().find(|p| &p.name == key)?;
    // initContainers first, as they run: `c` steps through them before the app containers.
    let containers = pod.log_containers();
    if containers.is_empty() {
        return None;
    }
    let c = containers[detail.container % containers.len()];
    Some((pod.name.clone(), c.to_string()))
}

/// The log lines shown for the selected container, and where they come from.
pub fn log_lines<'a>(
    state: &'a DeployState,
    detail: &Detail,
    log: &'a LogBuffer,
    filter: &str,
) -> (Vec<&'a str>, String) {
    let Some((pod, container)) = shown_container(state, detail) else {
        return match test_log(state, &detail.target) {
            Some(lines) => (
                filtered(lines, filter),
                "as helm test --logs printed it".into(),
            ),
            None => (Vec::new(), "no container to show".into()),
        };
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
    (filtered(lines, filter), status)
}

fn filtered<'a>(lines: Vec<&'a str>, filter: &str) -> Vec<&'a str> {
    if filter.is_empty() {
        return lines;
    }
    let f = filter.to_lowercase();
    lines
        .into_iter()
        .filter(|l| l.to_lowercase().contains(&f))
        .collect()
}

/// A test hook's log as `helm test --logs` printed it into the helm pane: a test hook is a Pod
/// that is gone or of no Job, so no stream is asked for. The lines after its `POD LOGS: NAME`
/// header up to the next one; None for any other target, or before helm printed it.
pub fn test_log<'a>(state: &'a DeployState, target: &Target) -> Option<Vec<&'a str>> {
    let Target::Job { name, init: false } = target else {
        return None;
    };
    let hook = state.hooks.iter().find(|h| &h.name == name)?;
    if !hook.events.iter().any(|e| e == "test") {
        return None;
    }
    let header = |l: &str| {
        crate::text::plain(l)
            .trim()
            .strip_prefix("POD LOGS:")
            .map(|n| n.trim().to_string())
    };
    let mut lines = state
        .helm
        .lines
        .iter()
        .filter(|(stderr, _)| !stderr)
        .map(|(_, l)| l.as_str());
    lines
        .by_ref()
        .find(|l| header(l).as_deref() == Some(name.as_str()))?;
    Some(
        lines
            .take_while(|l| header(l).is_none())
            .filter(|l| !l.trim().is_empty())
            .collect(),
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
