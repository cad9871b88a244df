//! The store's event log: every write is one event, stamped with the next resourceVersion,
//! kept in a bounded log and broadcast live, so a watch resumes from any retained rv and sees
//! every later change exactly once.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::{Inner, Store, Stored, name_of, slim_pod};
use crate::resources::{ResourceId, ids};

/// How many events the log keeps for watch resumption; older rvs get 410 Gone (and the
/// client relists, as against a real API server's watch cache).
const LOG_CAPACITY: usize = 10_000;
/// The most JSON the log's entries may hold: each pins one object version, so a burst of
/// large objects (a chart's ConfigMaps, a release's Secrets) must not grow the simulator.
pub(super) const LOG_BYTES: usize = 16 << 20;
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

/// A write as the live feed carries it: stored, and parsed for the controllers' cache
/// ([`feed_object`]): Events and bound pods make most of the writes, and a receiver lagging
/// by a pass would hold each as a parsed object (~20 KB for a pod) until it catches up.
#[derive(Debug)]
pub struct WatchEvent {
    pub rv: u64,
    pub kind: EventType,
    pub resource: ResourceId,
    object: Option<Arc<Value>>,
    pub stored: Stored,
}

impl WatchEvent {
    /// The object written, parsed.
    pub fn object(&self) -> Arc<Value> {
        match &self.object {
            Some(o) => o.clone(),
            None => Arc::new(self.stored.value()),
        }
    }
}

/// What the feed carries parsed: nothing for an Event (no controller reads them), a bound
/// pod slim, anything else as written (the controllers' cache keeps that same object).
fn feed_object(res: ResourceId, obj: &Arc<Value>) -> Option<Arc<Value>> {
    if res == *ids::EVENTS {
        return None;
    }
    let bound = obj
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    Some(if res == *ids::PODS && bound {
        Arc::new(slim_pod(obj))
    } else {
        obj.clone()
    })
}

/// A write as the log keeps it: the object's bytes and index only.
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub kind: EventType,
    pub resource: ResourceId,
    pub stored: Stored,
}

/// The subscription a watch starts with: the retained events after its rv, then the live feed.
pub struct Subscription {
    pub backlog: Vec<LogEntry>,
    pub live: broadcast::Receiver<Arc<WatchEvent>>,
    /// The rv the snapshot was taken at (for the initial-events-end bookmark).
    pub rv: u64,
    /// With `initial`: the matching objects as of `rv`.
    pub initial: Vec<Stored>,
}

impl Store {
    /// Stamps the rv, stores (or removes) the object, logs and broadcasts the event.
    pub(super) fn commit(
        &self,
        inner: &mut Inner,
        res: ResourceId,
        kind: EventType,
        obj: Value,
    ) -> Arc<Value> {
        self.commit_json(inner, res, kind, obj, None)
    }

    /// [`Store::commit`], with `json` the object's serialization when the caller already
    /// stamped it with the next rv and serialized it.
    pub(super) fn commit_json(
        &self,
        inner: &mut Inner,
        res: ResourceId,
        kind: EventType,
        mut obj: Value,
        json: Option<Vec<u8>>,
    ) -> Arc<Value> {
        inner.rv += 1;
        let rv = inner.rv;
        let stored = match json {
            Some(json) => Stored::from_json(json, &obj, rv),
            None => {
                obj["metadata"]["resourceVersion"] = json!(rv.to_string());
                Stored::encode(&obj, rv)
            }
        };
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
            inner.map_mut(res).insert(key, stored.clone());
        }
        Self::log(
            inner,
            LogEntry {
                kind,
                resource: res,
                stored: stored.clone(),
            },
        );
        let event = Arc::new(WatchEvent {
            rv,
            kind,
            resource: res,
            object: feed_object(res, &obj),
            stored,
        });
        // No receivers is fine: nobody is watching.
        let _ = self.events.send(event);
        obj
    }

    /// Appends to the log, dropping its oldest entries past the count or the byte bound.
    fn log(inner: &mut Inner, entry: LogEntry) {
        inner.log_bytes += entry.stored.bytes.len();
        inner.log.push_back(entry);
        while inner.log.len() > LOG_CAPACITY || inner.log_bytes > inner.log_limit {
            let Some(old) = inner.log.pop_front() else {
                break;
            };
            inner.log_bytes -= old.stored.bytes.len();
        }
    }

    /// The JSON bytes the watch log holds now, and its bound.
    pub fn log_bytes(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.log_bytes, inner.log_limit)
    }

    /// Bounds the watch log to `limit` bytes of JSON from the next write on.
    pub fn set_log_bytes(&self, limit: usize) {
        self.lock().log_limit = limit;
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
        initial: Option<&dyn Fn(&Stored) -> bool>,
    ) -> Result<Subscription, ()> {
        let inner = self.lock();
        let live = self.events.subscribe();
        let rv = inner.rv;
        let initial = match initial {
            Some(f) => Self::stored_locked(&inner, res, ns, f),
            None => Vec::new(),
        };
        let backlog = match from_rv {
            None => Vec::new(),
            Some(from) if from >= rv => Vec::new(),
            Some(from) => {
                let oldest = inner.log.front().map_or(rv + 1, |e| e.stored.rv);
                // Events after `from` must all still be in the log.
                if from + 1 < oldest {
                    return Err(());
                }
                inner
                    .log
                    .iter()
                    .filter(|e| e.stored.rv > from && e.resource == res)
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
