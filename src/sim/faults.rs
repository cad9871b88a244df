//! Faults of the API server itself, fired on the scenario's schedule: dropped watches, 410s,
//! bursts of 500s, latency, refused connections.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::scenario::{Anchor, Fault, FaultAction, Scenario};

pub struct Faults {
    schedule: Vec<Fault>,
    started: Instant,
    /// Set at the first create of a Deployment, StatefulSet or DaemonSet.
    applied: Mutex<Option<Instant>>,
    fired: Mutex<Vec<bool>>,
    gone_budget: AtomicU32,
    errors_until: Mutex<Option<Instant>>,
    latency: Mutex<Option<(Instant, Duration)>>,
    refuse_until: Mutex<Option<Instant>>,
    /// Bumped to close every open watch.
    drop_epoch: watch::Sender<u64>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Faults {
    pub fn new(scenario: &Scenario) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Faults {
            fired: Mutex::new(vec![false; scenario.faults.len()]),
            schedule: scenario.faults.clone(),
            started: Instant::now(),
            applied: Mutex::new(None),
            gone_budget: AtomicU32::new(0),
            errors_until: Mutex::new(None),
            latency: Mutex::new(None),
            refuse_until: Mutex::new(None),
            drop_epoch: watch::channel(0).0,
        })
    }

    /// Called after every create; anchors `apply` faults at the first workload.
    pub fn note_write(&self, kind: &str) {
        if matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet") {
            lock(&self.applied).get_or_insert_with(Instant::now);
        }
    }

    /// Fires every fault that is due. Called by [`Faults::run`] on a short tick.
    pub fn fire_due(&self, now: Instant) {
        let applied = *lock(&self.applied);
        let mut fired = lock(&self.fired);
        for (i, fault) in self.schedule.iter().enumerate() {
            if fired[i] {
                continue;
            }
            let anchor = match fault.anchor {
                Anchor::Start => Some(self.started),
                Anchor::Apply => applied,
            };
            let Some(anchor) = anchor else { continue };
            if now < anchor + fault.at {
                continue;
            }
            fired[i] = true;
            let until = now + fault.span();
            match fault.action {
                FaultAction::DropWatches => {
                    self.drop_epoch.send_modify(|e| *e += 1);
                }
                FaultAction::GoneNextWatch => {
                    self.gone_budget
                        .fetch_add(fault.count.unwrap_or(1), Ordering::SeqCst);
                }
                FaultAction::Errors500 => *lock(&self.errors_until) = Some(until),
                FaultAction::Latency => {
                    *lock(&self.latency) = Some((until, fault.delay.unwrap_or_default()))
                }
                FaultAction::RefuseConnections => *lock(&self.refuse_until) = Some(until),
            }
        }
    }

    pub async fn run(self: std::sync::Arc<Self>) {
        if self.schedule.is_empty() {
            return;
        }
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        loop {
            tick.tick().await;
            self.fire_due(Instant::now());
        }
    }

    pub fn erroring(&self) -> bool {
        lock(&self.errors_until).is_some_and(|t| Instant::now() < t)
    }

    pub fn refusing(&self) -> bool {
        lock(&self.refuse_until).is_some_and(|t| Instant::now() < t)
    }

    pub fn latency(&self) -> Option<Duration> {
        lock(&self.latency)
            .filter(|(t, _)| Instant::now() < *t)
            .map(|(_, d)| d)
    }

    /// Takes one 410 from the budget, if any is left.
    pub fn take_gone(&self) -> bool {
        self.gone_budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    pub fn drops(&self) -> watch::Receiver<u64> {
        self.drop_epoch.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_anchored_faults_wait_for_the_first_workload() {
        let s = Scenario::parse(
            "faults:\n  - {at: 1s, do: gone_next_watch, count: 2}\n  - {at: 0s, anchor: start, do: errors_500, for: 10s}\n",
            "t",
        )
        .unwrap();
        let f = Faults::new(&s);
        let now = Instant::now();
        f.fire_due(now + Duration::from_secs(5));
        assert!(f.erroring());
        assert!(!f.take_gone(), "not anchored yet");
        f.note_write("ConfigMap");
        f.fire_due(now + Duration::from_secs(60));
        assert!(!f.take_gone(), "a ConfigMap is not the apply anchor");
        f.note_write("Deployment");
        f.fire_due(Instant::now() + Duration::from_secs(2));
        assert!(f.take_gone());
        assert!(f.take_gone());
        assert!(!f.take_gone());
    }
}
