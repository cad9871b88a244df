//! initContainers: run one at a time, in order, before the app containers. Each has its own
//! state, exit code, restart count, back-off and log; a scenario `init_containers` rule says
//! how long each run takes and how it exits (no rule: it completes at once). A failed
//! initContainer fails the pod under restartPolicy Never, and restarts in place with back-off
//! (`Init:CrashLoopBackOff`) under Always and OnFailure.
//!
//! Sidecars (`restartPolicy: Always` on an initContainer) are run like any other
//! initContainer.

use serde_json::{Value, json};

use super::backoff::{self, Backoff};
use super::images::image_id;
use super::{Events, Pass, PodSim, Stage, Which};
use crate::scenario::InitRule;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not started yet (an earlier one has not completed).
    Pending,
    /// Its turn, but its rule's `start_after` has not passed.
    Waiting,
    Running,
    /// Exited non-zero; restarts when the back-off has passed.
    BackOff,
    Completed,
    /// Exited non-zero in a pod that does not restart it: the pod failed.
    Failed,
}

/// One initContainer's progress.
struct InitSim {
    rule: Option<usize>,
    restarts: u32,
    backoff: Backoff,
    state: State,
    started: String,
    /// The last run's `terminated` state (current state when Completed or Failed).
    term: Option<Value>,
    /// The run before (`lastState.terminated`) while it backs off or runs again.
    last_term: Option<Value>,
}

/// The pod's initContainers, in spec order.
pub(crate) struct Inits {
    /// The one running or next to run; `each.len()` once all completed.
    pub current: usize,
    each: Vec<InitSim>,
    /// When the last one completed (the Initialized condition's transition time).
    pub t_done: String,
}

impl Inits {
    /// None for a pod without initContainers, so most pods pay one pointer.
    pub fn for_pod(n: usize) -> Option<Box<Self>> {
        (n > 0).then(|| {
            let each = (0..n)
                .map(|_| InitSim {
                    rule: None,
                    restarts: 0,
                    backoff: Backoff::default(),
                    state: State::Pending,
                    started: String::new(),
                    term: None,
                    last_term: None,
                })
                .collect();
            Box::new(Inits {
                current: 0,
                each,
                t_done: String::new(),
            })
        })
    }

    pub fn done(&self) -> bool {
        self.current >= self.each.len()
    }

    pub fn restarts(&self) -> u32 {
        self.each.iter().map(|s| s.restarts).sum()
    }
}

/// The behaviour of an initContainer no rule matches: completes at once.
static DEFAULT_INIT: InitRule = InitRule {
    pattern: String::new(),
    container: String::new(),
    start_after: None,
    run_for: None,
    exit_code: None,
    fail_first: None,
    hang: false,
    logs: Vec::new(),
};

fn rule<'p>(p: &Pass<'p>, idx: Option<usize>) -> &'p InitRule {
    idx.and_then(|i| p.sim.scenario.init_containers.get(i))
        .unwrap_or(&DEFAULT_INIT)
}

impl PodSim {
    fn init_mut(&mut self, i: usize) -> Option<&mut InitSim> {
        self.init.as_mut().and_then(|s| s.each.get_mut(i))
    }

    fn init_ref(&self, i: usize) -> Option<&InitSim> {
        self.init.as_ref().and_then(|s| s.each.get(i))
    }

    /// It is initContainer `i`'s turn: it waits its rule's `start_after`, or starts.
    pub(super) fn init_begin(&mut self, p: &Pass, ev: &mut Events, i: usize) {
        let name = self.init_containers.get(i).map_or("", |c| c.0.as_str());
        let idx = p.sim.scenario.init_rule(&self.name, name);
        let wait = rule(p, idx).start_after.unwrap_or_default();
        let Some(s) = self.init_mut(i) else { return };
        s.rule = idx;
        if wait.is_zero() {
            self.init_run(p, ev, i, true);
        } else {
            s.state = State::Waiting;
            self.enter(Stage::Initializing, p.now);
        }
    }

    /// Starts (or restarts) initContainer `i`.
    fn init_run(&mut self, p: &Pass, ev: &mut Events, i: usize, first: bool) {
        let Some(idx) = self.init_ref(i).map(|s| s.rule) else {
            return;
        };
        self.start_container(p, ev, Which::Init(i), first, &rule(p, idx).logs);
        let wall = p.wall.clone();
        if let Some(s) = self.init_mut(i) {
            s.state = State::Running;
            s.started = wall;
        }
        self.enter(Stage::Initializing, p.now);
    }

    /// One initContainer transition if one is due; false when nothing changed.
    pub(super) fn step_init(&mut self, p: &Pass, ev: &mut Events) -> bool {
        let now = p.now;
        let Some(i) = self.init.as_ref().map(|s| s.current) else {
            self.start_app(p, ev);
            return true;
        };
        let Some(s) = self.init_ref(i) else {
            self.start_app(p, ev);
            return true;
        };
        let r = rule(p, s.rule);
        match s.state {
            State::Pending => {
                self.init_begin(p, ev, i);
                true
            }
            State::Waiting if now >= self.since + r.start_after.unwrap_or_default() => {
                self.init_run(p, ev, i, true);
                true
            }
            State::Running if !r.hang && now >= self.since + r.run_for.unwrap_or_default() => {
                let code = r.exit_of(s.restarts);
                self.init_exit(p, ev, i, code);
                true
            }
            State::BackOff if now >= self.since + Self::real(p, s.backoff.delay()) => {
                if let Some(s) = self.init_mut(i) {
                    s.backoff.next();
                    s.restarts += 1;
                }
                self.init_run(p, ev, i, false);
                true
            }
            _ => false,
        }
    }

    /// InitContainer `i` exits with `code`: the next one (or the app containers) starts, or
    /// it restarts (at once, or after its back-off), or the pod fails.
    fn init_exit(&mut self, p: &Pass, ev: &mut Events, i: usize, code: i32) {
        let now = p.now;
        let name = self.init_containers.get(i).map_or("", |c| c.0.as_str());
        p.sim.logs.stop(&self.ns, &self.name, name);
        let reason = if code == 0 { "Completed" } else { "Error" };
        let id = self.container_id(name);
        let (wall, restart) = (p.wall.clone(), self.restart.restarts(code));
        let forget = Self::real(p, backoff::FORGET);
        let ran = now.saturating_duration_since(self.since);
        let Some(s) = self.init_mut(i) else { return };
        let term = json!({"exitCode": code, "reason": reason, "startedAt": s.started,
                          "finishedAt": wall, "containerID": id});
        if code == 0 {
            s.state = State::Completed;
            s.term = Some(term);
            self.init_next(p, ev, i);
        } else if !restart {
            s.state = State::Failed;
            s.term = Some(term);
            self.enter(Stage::Failed, now);
            self.set_ready(p, false);
        } else {
            s.last_term = Some(term);
            if ran >= forget {
                s.backoff.reset();
            }
            if !s.backoff.started() {
                s.backoff.next();
                s.restarts += 1;
                self.init_run(p, ev, i, false);
                return;
            }
            s.state = State::BackOff;
            self.enter(Stage::Initializing, now);
            let c = self.init_containers.get(i).map_or("", |c| c.0.as_str());
            let msg = format!(
                "Back-off restarting failed container {c} in pod {}_{}({})",
                self.name, self.ns, self.uid
            );
            self.kubelet_event(p, ev, Some(Which::Init(i)), "Warning", "BackOff", &msg);
        }
    }

    /// InitContainer `i` completed: the next one begins, or the app containers start.
    fn init_next(&mut self, p: &Pass, ev: &mut Events, i: usize) {
        let wall = p.wall.clone();
        let Some(inits) = self.init.as_mut() else {
            return;
        };
        inits.current = i + 1;
        if inits.done() {
            inits.t_done = wall;
            self.version += 1;
            self.start_app(p, ev);
        } else {
            self.enter(Stage::Initializing, p.now);
            self.init_begin(p, ev, i + 1);
        }
    }

    /// `status.initContainerStatuses`, in the kubelet's shape.
    pub(super) fn init_statuses(&self, inits: &Inits) -> Vec<Value> {
        self.init_containers
            .iter()
            .zip(&inits.each)
            .map(|((c, img), s)| {
                let state = match s.state {
                    State::Completed | State::Failed => {
                        json!({"terminated": s.term.clone().unwrap_or_else(|| json!({"exitCode": 0}))})
                    }
                    State::Running => json!({"running": {"startedAt": s.started}}),
                    State::BackOff => json!({"waiting": {"reason": "CrashLoopBackOff",
                        "message": format!("back-off {} restarting failed container={c} pod={}_{}({})",
                            backoff::go_duration(s.backoff.delay()), self.name, self.ns, self.uid)}}),
                    State::Pending | State::Waiting => {
                        json!({"waiting": {"reason": "PodInitializing"}})
                    }
                };
                let mut cs = json!({"name": c, "image": img, "imageID": "",
                    "ready": s.state == State::Completed, "started": s.state == State::Running,
                    "restartCount": s.restarts, "state": state,
                    "lastState": s.last_term.as_ref().map_or(json!({}), |t| json!({"terminated": t}))});
                if !s.started.is_empty() {
                    cs["imageID"] = json!(image_id(img));
                    cs["containerID"] = json!(self.container_id(c));
                }
                cs
            })
            .collect()
    }
}
