//! Container logs of simulated pods, served at `/api/v1/namespaces/NS/pods/NAME/log`.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

type Key = (String, String, String);

#[derive(Default)]
struct Buffer {
    /// Lines of the current run, each `(timestamp, text)`.
    current: Vec<(String, String)>,
    /// Lines of the previous run (`?previous=true`).
    previous: Vec<(String, String)>,
    /// Bumped on every append and when the container stops; followers wait on it.
    changed: Option<watch::Sender<u64>>,
    running: bool,
}

/// Per-container log buffers.
#[derive(Default)]
pub struct PodLogs {
    buffers: Mutex<HashMap<Key, Buffer>>,
}

/// What a follower gets: the lines so far, and a receiver that changes on news.
pub struct Follow {
    pub lines: Vec<(String, String)>,
    pub running: bool,
    pub changed: watch::Receiver<u64>,
}

fn key(ns: &str, pod: &str, container: &str) -> Key {
    (ns.to_string(), pod.to_string(), container.to_string())
}

impl PodLogs {
    fn with<R>(&self, k: Key, f: impl FnOnce(&mut Buffer) -> R) -> R {
        let mut map = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let buf = map.entry(k).or_default();
        f(buf)
    }

    fn notify(buf: &mut Buffer) {
        let tx = buf.changed.get_or_insert_with(|| watch::channel(0).0);
        tx.send_modify(|n| *n += 1);
    }

    /// A container (re)started: the old run becomes `previous`.
    pub fn start(&self, ns: &str, pod: &str, container: &str) {
        self.with(key(ns, pod, container), |b| {
            if !b.current.is_empty() || b.running {
                b.previous = std::mem::take(&mut b.current);
            }
            b.running = true;
            Self::notify(b);
        });
    }

    pub fn append(&self, ns: &str, pod: &str, container: &str, line: &str) {
        let ts = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%S%.9fZ")
            .to_string();
        self.with(key(ns, pod, container), |b| {
            b.current.push((ts, line.to_string()));
            Self::notify(b);
        });
    }

    /// The container stopped: followers reach the end of the stream.
    pub fn stop(&self, ns: &str, pod: &str, container: &str) {
        self.with(key(ns, pod, container), |b| {
            b.running = false;
            Self::notify(b);
        });
    }

    /// Drops every buffer of a pod (it was deleted).
    pub fn forget_pod(&self, ns: &str, pod: &str) {
        let mut map = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|(n, p, _), b| {
            let keep = !(n == ns && p == pod);
            if !keep {
                b.running = false;
                if let Some(tx) = &b.changed {
                    tx.send_modify(|n| *n += 1);
                }
            }
            keep
        });
    }

    /// The lines of the current (or previous) run; `None` when the container never ran.
    pub fn read(
        &self,
        ns: &str,
        pod: &str,
        container: &str,
        previous: bool,
    ) -> Option<Vec<(String, String)>> {
        let map = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let b = map.get(&key(ns, pod, container))?;
        Some(if previous {
            b.previous.clone()
        } else {
            b.current.clone()
        })
    }

    pub fn follow(&self, ns: &str, pod: &str, container: &str) -> Follow {
        self.with(key(ns, pod, container), |b| {
            let tx = b.changed.get_or_insert_with(|| watch::channel(0).0);
            Follow {
                lines: b.current.clone(),
                running: b.running,
                changed: tx.subscribe(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_moves_current_to_previous() {
        let logs = PodLogs::default();
        logs.start("ns", "p", "c");
        logs.append("ns", "p", "c", "first run");
        logs.stop("ns", "p", "c");
        logs.start("ns", "p", "c");
        logs.append("ns", "p", "c", "second run");
        let cur = logs.read("ns", "p", "c", false).unwrap();
        let prev = logs.read("ns", "p", "c", true).unwrap();
        assert_eq!(
            cur.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
            ["second run"]
        );
        assert_eq!(
            prev.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
            ["first run"]
        );
        assert!(logs.read("ns", "p", "other", false).is_none());
    }
}
