//! Scoped watches as a stream of changes, with their health. A collection is trustworthy only
//! after a full (re)list since its last error: that is what "synced" means here.

use std::collections::BTreeMap;
use std::fmt::Debug;

use futures::StreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc::UnboundedSender;

/// What one watch reports.
#[derive(Debug)]
pub enum Change<K> {
    Applied(K),
    Deleted(K),
    /// A full (re)list: the complete current set, each object boxed as it was listed: the
    /// collection keeps the boxes, and the list's buffer grows by a pointer per object, not
    /// by a whole object (a pod's summary is about a kilobyte inline; the buffer of 6,000 of
    /// them, doubling as it grew, was the largest allocation of a 3,000-pod rollout).
    Resynced(Vec<Box<K>>),
    /// The watch failed; it retries with backoff.
    Failed(String),
}

impl<K> Change<K> {
    /// A full (re)list of `all`.
    pub fn resynced(all: Vec<K>) -> Self {
        Change::Resynced(all.into_iter().map(Box::new).collect())
    }
}

/// First and longest pause before a failed watch starts over.
const BACKOFF_MIN: std::time::Duration = std::time::Duration::from_millis(200);
const BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs a watcher until the receiver goes away, mapping each change with `wrap`.
///
/// On any error the watch starts over with a full list (after a backoff), rather than
/// resuming: so every error is followed by a [`Change::Resynced`] before the collection counts
/// as trustworthy again.
pub fn spawn<K, M, F>(
    api: Api<K>,
    config: watcher::Config,
    tx: UnboundedSender<M>,
    wrap: F,
) -> tokio::task::JoinHandle<()>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    M: Send + 'static,
    F: Fn(Change<K>) -> M + Send + 'static,
{
    spawn_trimmed(api, config, tx, wrap, ())
}

/// Objects a (re)list buffers before [`ListCut::cut`] is first asked to cut them.
const TRIM_FIRST: usize = 2_000;

/// How a (re)list is cut while it is read, before it is handed on. Both must keep what the
/// consumer would keep of it.
pub trait ListCut<K>: Send + 'static {
    /// Whether one listed object is kept at all, asked as it arrives (a dropped one is never
    /// buffered).
    fn admit(&mut self, _object: &K) -> bool {
        true
    }

    /// Cuts the objects buffered so far.
    // Boxed on purpose: the collection keeps the boxes (`Change::Resynced`).
    #[allow(clippy::vec_box)]
    fn cut(&mut self, _listed: &mut Vec<Box<K>>) {}
}

/// Nothing cut.
impl<K> ListCut<K> for () {}

/// [`spawn`], with a (re)list's objects cut by `cut` while they are listed: each one admitted
/// or not as it arrives, and the buffer cut whenever it has doubled since the last cut (from
/// [`TRIM_FIRST`]) and once before the list is handed on. A namespace's Events can run to tens
/// of thousands, most of which the consumer drops at once (it keeps a few per object, and
/// none about objects it does not watch); buffering them all first made the list the largest
/// allocation of a deploy, and grew a `watch --follow` with every revision's Events.
pub fn spawn_trimmed<K, M, F>(
    api: Api<K>,
    config: watcher::Config,
    tx: UnboundedSender<M>,
    wrap: F,
    mut cut: impl ListCut<K>,
) -> tokio::task::JoinHandle<()>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    M: Send + 'static,
    F: Fn(Change<K>) -> M + Send + 'static,
{
    tokio::spawn(async move {
        let mut backoff = BACKOFF_MIN;
        loop {
            let stream = watcher::watcher(api.clone(), config.clone());
            let mut stream = std::pin::pin!(stream);
            let mut buffer: Vec<Box<K>> = Vec::new();
            let mut next_trim = TRIM_FIRST;
            let mut failed = false;
            while let Some(item) = stream.next().await {
                let change = match item {
                    Ok(Event::Init) => {
                        buffer = Vec::new();
                        next_trim = TRIM_FIRST;
                        continue;
                    }
                    Ok(Event::InitApply(o)) => {
                        if !cut.admit(&o) {
                            continue;
                        }
                        buffer.push(Box::new(o));
                        if buffer.len() >= next_trim {
                            cut.cut(&mut buffer);
                            next_trim = (buffer.len() * 2).max(TRIM_FIRST);
                        }
                        continue;
                    }
                    Ok(Event::InitDone) => {
                        backoff = BACKOFF_MIN;
                        cut.cut(&mut buffer);
                        buffer.shrink_to_fit();
                        Change::Resynced(std::mem::take(&mut buffer))
                    }
                    Ok(Event::Apply(o)) => Change::Applied(o),
                    Ok(Event::Delete(o)) => Change::Deleted(o),
                    Err(e) => {
                        failed = true;
                        Change::Failed(e.to_string())
                    }
                };
                // Never a bounded queue that makes the watch wait: a watch read slowly falls
                // behind the API server's window and is answered 410 Gone, and a relist of a
                // namespace's Events costs more than the queue held (measured at 20,000 pods
                // with a queue of 1,024: 560 Event LIST pages where 10 did).
                if tx.send(wrap(change)).is_err() {
                    return;
                }
                if failed {
                    break;
                }
            }
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = next_backoff(backoff);
        }
    })
}

/// Doubles the pause after each failure, up to [`BACKOFF_MAX`].
fn next_backoff(current: std::time::Duration) -> std::time::Duration {
    (current * 2).min(BACKOFF_MAX)
}

/// The current objects of one watch, by name, and whether they can be trusted. Each object is
/// boxed: a map's nodes hold eleven slots, often half empty, and a slot holding an object
/// inline is as large as the object.
#[derive(Debug)]
pub struct Collection<K> {
    pub items: BTreeMap<String, Box<K>>,
    pub synced: bool,
    pub error: Option<String>,
}

impl<K> Default for Collection<K> {
    fn default() -> Self {
        Collection {
            items: BTreeMap::new(),
            synced: false,
            error: None,
        }
    }
}

/// What applying a change did to the collection's health.
#[derive(Debug, PartialEq, Eq)]
pub enum Health {
    Unchanged,
    Degraded(String),
    Recovered,
}

impl<K: Resource> Collection<K> {
    pub fn apply(&mut self, change: Change<K>) -> Health {
        match change {
            Change::Applied(o) => {
                self.items.insert(o.name_any(), Box::new(o));
                Health::Unchanged
            }
            Change::Deleted(o) => {
                self.items.remove(&o.name_any());
                Health::Unchanged
            }
            Change::Resynced(all) => {
                self.items = all.into_iter().map(|o| (o.name_any(), o)).collect();
                self.synced = true;
                if self.error.take().is_some() {
                    Health::Recovered
                } else {
                    Health::Unchanged
                }
            }
            Change::Failed(e) => {
                // Until a relist succeeds, what we hold may be stale.
                self.synced = false;
                let first = self.error.is_none();
                self.error = Some(e.clone());
                if first {
                    Health::Degraded(e)
                } else {
                    Health::Unchanged
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn cm(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(next_backoff(BACKOFF_MIN), BACKOFF_MIN * 2);
        assert_eq!(next_backoff(BACKOFF_MAX), BACKOFF_MAX);
        assert_eq!(next_backoff(std::time::Duration::from_secs(4)), BACKOFF_MAX);
    }

    #[test]
    fn a_failure_unsyncs_until_the_next_full_relist() {
        let mut c: Collection<ConfigMap> = Collection::default();
        assert!(!c.synced);
        assert_eq!(c.apply(Change::resynced(vec![cm("a")])), Health::Unchanged);
        assert!(c.synced);
        assert_eq!(
            c.apply(Change::Failed("boom".into())),
            Health::Degraded("boom".into())
        );
        assert!(!c.synced);
        assert_eq!(c.apply(Change::Failed("again".into())), Health::Unchanged);
        c.apply(Change::Applied(cm("b")));
        assert!(!c.synced, "a single event is not a resync");
        assert_eq!(c.apply(Change::resynced(vec![cm("b")])), Health::Recovered);
        assert!(c.synced);
        assert_eq!(c.items.keys().collect::<Vec<_>>(), ["b"]);
    }
}
