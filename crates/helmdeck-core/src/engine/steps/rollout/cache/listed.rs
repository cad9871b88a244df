//! What the Events watch may drop while it lists: the cache shares which objects the pod,
//! ReplicaSet and workload watches hold, so a (re)list of a namespace's Events is cut to the
//! release's as it is read, not once it has been buffered whole. A `watch --follow` pass
//! lists the namespace's Events afresh, and every earlier revision's pods left theirs there
//! (an API server keeps Events an hour): held until the list ended, they grew each pass by a
//! revision's worth.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use foldhash::HashMap;

use super::{STRANGER_SWEEP, keep_newest_per_object};
use crate::cluster::watch::ListCut;
use crate::rollout::objects::EventSummary as KubeEvent;

/// The objects the pod, ReplicaSet and workload watches hold, by a fingerprint of their uid
/// (a collision only keeps an Event that could have gone), each counted as often as a watch
/// holds it; and whether those watches can be trusted (each has listed, none is failing).
#[derive(Default)]
pub(in crate::engine::steps::rollout) struct Known {
    trusted: AtomicBool,
    uids: RwLock<HashMap<u64, u32>>,
}

fn fingerprint(uid: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x6865_6c6d_6465_636b).hash_one(uid)
}

impl Known {
    pub(in crate::engine::steps::rollout) fn insert(&self, uid: &str) {
        if uid.is_empty() {
            return;
        }
        let mut uids = self.uids.write().unwrap_or_else(PoisonError::into_inner);
        *uids.entry(fingerprint(uid)).or_default() += 1;
    }

    pub(in crate::engine::steps::rollout) fn remove(&self, uid: &str) {
        if uid.is_empty() {
            return;
        }
        let mut uids = self.uids.write().unwrap_or_else(PoisonError::into_inner);
        let key = fingerprint(uid);
        if let Some(n) = uids.get_mut(&key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                uids.remove(&key);
            }
        }
    }

    pub(in crate::engine::steps::rollout) fn set_trusted(&self, trusted: bool) {
        self.trusted.store(trusted, Ordering::Release);
    }

    /// Whether the watches can be trusted and none holds `uid`.
    fn is_stranger(&self, uid: &str) -> bool {
        self.trusted.load(Ordering::Acquire)
            && !self
                .uids
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .contains_key(&fingerprint(uid))
    }
}

/// The cut of a (re)list of Events: an Event about an object no trusted watch holds is
/// dropped as it arrives when it is older than the newest Event listed so far by more than
/// [`STRANGER_SWEEP`] (the cache keeps such an Event that long, in case its object is listed a
/// moment later; both times are the cluster's); then the newest per object, as the cache
/// keeps them. An Event without a time, or about no uid, is kept.
pub(in crate::engine::steps::rollout) struct ListedEvents {
    known: Arc<Known>,
    newest: Option<k8s_openapi::jiff::Timestamp>,
}

impl ListedEvents {
    pub(in crate::engine::steps::rollout) fn new(known: Arc<Known>) -> Self {
        ListedEvents {
            known,
            newest: None,
        }
    }
}

impl ListCut<KubeEvent> for ListedEvents {
    fn admit(&mut self, event: &KubeEvent) -> bool {
        let Some(time) = event.time() else {
            return true;
        };
        let newest = self.newest.map_or(time, |n| n.max(time));
        self.newest = Some(newest);
        let stale = newest.as_second().saturating_sub(time.as_second())
            > i64::try_from(STRANGER_SWEEP.as_secs()).unwrap_or(i64::MAX);
        let about = event.involved_object.uid.as_deref().unwrap_or("");
        !(stale && !about.is_empty() && self.known.is_stranger(about))
    }

    #[allow(clippy::vec_box)]
    fn cut(&mut self, listed: &mut Vec<Box<KubeEvent>>) {
        keep_newest_per_object(listed);
    }
}
