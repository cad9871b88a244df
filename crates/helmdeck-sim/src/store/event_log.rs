//! The store's event log: every write is one event, stamped with the next resourceVersion,
//! kept in a bounded log and broadcast live, so a watch resumes from any retained rv and sees
//! every later change exactly once.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::{Inner, Store, name_of};
use crate::resources::ResourceId;

/// How many events the log keeps for watch resumption; older rvs get 410 Gone (and the
/// client relists, as against a real API server's watch cache). Each entry pins one object
/// version, so this bounds the simulator's memory at scale (see docs/benchmarks.md).
const LOG_CAPACITY: usize = 10_000;
/// How far a slow watcher may fall behind before its stream is closed.
pub(super) const BROADCAST_CAPACITY: usize = 65_536;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

#[derive(Debug)]
pub struct WatchEvent {
    pub rv: u64,
    pub kind: EventType,
    pub resource: ResourceId,
    pub object: Arc<Value>,
}

impl WatchEvent {
    pub fn namespace(&self) -> &str {
        self.object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// The subscription a watch starts with: the retained events after its rv, then the live feed.
pub struct Subscription {
    pub backlog: Vec<Arc<WatchEvent>>,
    pub live: broadcast::Receiver<Arc<WatchEvent>>,
    /// The rv the snapshot was taken at (for the initial-events-end bookmark).
    pub rv: u64,
    /// With `initial`: the matching objects as of `rv`.
    pub initial: Vec<Arc<Value>>,
}

impl Store {
    /// Stamps the rv, stores (or removes) the object, logs and broadcasts the event.
    pub(super) fn commit(
        &self,
        inner: &mut Inner,
        res: ResourceId,
        kind: EventType,
        mut obj: Value,
    ) -> Arc<Value> {
        inner.rv += 1;
        let rv = inner.rv;
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        let obj = Arc::new(obj);
        let key = (
            obj.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            name_of(&obj).to_string(),
        );
        if kind == EventType::Deleted {
            inner.map_mut(res).remove(&key);
        } else {
            inner.map_mut(res).insert(key, obj.clone());
        }
        let event = Arc::new(WatchEvent {
            rv,
            kind,
            resource: res,
            object: obj.clone(),
        });
        if inner.log.len() >= LOG_CAPACITY {
            inner.log.pop_front();
        }
        inner.log.push_back(event.clone());
        // No receivers is fine: nobody is watching.
        let _ = self.events.send(event);
        obj
    }

    /// Starts a watch after `from_rv`. `None` from_rv means "now" (no backlog). With
    /// `initial`, the current matching objects are returned for synthetic ADDED events.
    /// Err(()) when `from_rv` is older than the log keeps (the caller answers 410 Gone).
    #[allow(clippy::result_unit_err)]
    pub fn subscribe(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        from_rv: Option<u64>,
        initial: Option<&dyn Fn(&Value) -> bool>,
    ) -> Result<Subscription, ()> {
        let inner = self.lock();
        let live = self.events.subscribe();
        let rv = inner.rv;
        let initial = match initial {
            Some(f) => Self::list_locked(&inner, res, ns, f),
            None => Vec::new(),
        };
        let backlog = match from_rv {
            None => Vec::new(),
            Some(from) if from >= rv => Vec::new(),
            Some(from) => {
                let oldest = inner.log.front().map_or(rv + 1, |e| e.rv);
                // Events after `from` must all still be in the log.
                if from + 1 < oldest {
                    return Err(());
                }
                inner
                    .log
                    .iter()
                    .filter(|e| e.rv > from && e.resource == res)
                    .cloned()
                    .collect()
            }
        };
        Ok(Subscription {
            backlog,
            live,
            rv,
            initial,
        })
    }
}
