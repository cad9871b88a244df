//! The controllers' view of the store, kept up to date from the store's change feed (the
//! broadcast every write goes through) instead of re-listing every object on every pass: with
//! 10,000 pods, merely reading each pod's JSON once per pass costs tens of milliseconds.
//!
//! Each pass drains the feed, updates the objects and the owner indexes, and records what
//! changed ([`Dirty`]) so the controllers only look at workloads whose objects (or whose pods)
//! changed, plus those still waiting on time. If the feed overflows (lag), the cache re-lists
//! everything and marks it all dirty.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast::{self, error::TryRecvError};

use super::refs::keys::RefObjects;
use super::scheduler::book::holder;
use super::{CONTROLLER_REVISIONS, PVCS, controller_uid, generation, meta};
use crate::SimState;
use crate::resources::{ResourceId, ids};
use crate::selector::Selector;
use crate::store::{EventType, WatchEvent, slim_pod};

#[derive(Clone)]
pub(crate) struct OwnerInfo {
    pub kind: &'static str,
    pub name: String,
    pub generation: i64,
    pub owner: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Pod,
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
    Pvc,
    Revision,
    Node,
}

fn slot(res: ResourceId) -> Option<Slot> {
    Some(match res {
        r if r == *ids::PODS => Slot::Pod,
        r if r == *ids::DEPLOYMENTS => Slot::Deployment,
        r if r == *ids::REPLICASETS => Slot::ReplicaSet,
        r if r == *ids::STATEFULSETS => Slot::StatefulSet,
        r if r == *ids::DAEMONSETS => Slot::DaemonSet,
        r if r == *ids::JOBS => Slot::Job,
        r if r == *PVCS => Slot::Pvc,
        r if r == *CONTROLLER_REVISIONS => Slot::Revision,
        r if r == *ids::NODES => Slot::Node,
        _ => return None,
    })
}

/// What changed since the last pass.
#[derive(Default)]
pub(crate) struct Dirty {
    /// Everything is to be looked at (first pass, or after a re-list).
    pub all: bool,
    /// Workload uids whose object, ReplicaSets or pods changed.
    pub objs: HashSet<String>,
    /// Pods added or changed (the kubelet picks up new ones).
    pub pods: Vec<String>,
    /// PVCs added or changed.
    pub pvcs: Vec<String>,
    /// Deleted objects: (uid, namespace, name, is a pod).
    pub gone: Vec<(String, String, String, bool)>,
    /// Namespaces where a Secret or ConfigMap was written or deleted (pods held back on a
    /// missing one look again).
    pub refs_ns: HashSet<String>,
}

impl Dirty {
    /// The objects of `objects` that `uids` (one of this pass's lists) names, or all of them
    /// after a re-list.
    pub fn changed<'c>(
        &self,
        uids: &[String],
        objects: &'c HashMap<String, Arc<Value>>,
    ) -> Vec<&'c Arc<Value>> {
        if self.all {
            objects.values().collect()
        } else {
            uids.iter().filter_map(|u| objects.get(u)).collect()
        }
    }

    /// Marks `uid` and its controller owner (a pod's ReplicaSet's Deployment).
    pub fn mark_up(&mut self, uid: &str, owners: &HashMap<String, OwnerInfo>) {
        self.objs.insert(uid.to_string());
        if let Some(o) = owners.get(uid).and_then(|o| o.owner.as_ref()) {
            self.objs.insert(o.clone());
        }
    }
}

#[derive(Default)]
pub(crate) struct Cache {
    rx: Option<broadcast::Receiver<Arc<WatchEvent>>>,
    /// Events at or before this rv are already in the listed state.
    listed_rv: u64,
    /// Pods as the controllers read them: whole until bound, then only what the workload
    /// controllers and the scheduler's affinity read of a bound pod ([`slim`]); the whole
    /// object is parsed again from [`Cache::full_pod`] where needed.
    pub pods: HashMap<String, Arc<Value>>,
    /// Each pod's stored JSON (shared with the store, not a copy).
    pod_json: HashMap<String, Bytes>,
    pub deployments: HashMap<String, Arc<Value>>,
    pub replicasets: HashMap<String, Arc<Value>>,
    pub statefulsets: HashMap<String, Arc<Value>>,
    pub daemonsets: HashMap<String, Arc<Value>>,
    pub jobs: HashMap<String, Arc<Value>>,
    pub pvcs: HashMap<String, Arc<Value>>,
    revisions: HashMap<String, Arc<Value>>,
    node_ips: BTreeMap<String, String>,
    /// (name, InternalIP), by name.
    pub nodes: Vec<(String, String)>,
    /// Each node's `metadata.labels`, for the scheduler's node selection.
    pub node_labels: HashMap<String, Value>,
    pub pods_by_owner: HashMap<String, Vec<String>>,
    rs_by_owner: HashMap<String, Vec<String>>,
    revisions_by_owner: HashMap<String, Vec<String>>,
    /// Child uid → the owner uid it is indexed under.
    indexed_under: HashMap<String, String>,
    /// uid → kind, name, generation and controller owner of every workload object.
    pub owners: HashMap<String, OwnerInfo>,
    // The scheduler's view (node allocatable and taints, requests bound per node, claims).
    pub sched: super::scheduler::book::NodeBook,
    /// Secrets' and ConfigMaps' key names and claims' volumes, for the kubelet's checks.
    pub refs: RefObjects,
}

impl Cache {
    /// Brings the cache up to date and records what changed in `dirty`.
    pub fn drain(&mut self, sim: &SimState, dirty: &mut Dirty) {
        self.sched.drains += 1;
        if self.rx.is_none() {
            self.relist(sim, dirty);
            return;
        }
        loop {
            let next = self.rx.as_mut().map(|rx| rx.try_recv());
            match next {
                Some(Ok(ev)) => {
                    if ev.rv > self.listed_rv && Self::reads(ev.resource) {
                        let deleted = ev.kind == EventType::Deleted;
                        // Before apply, which reads a deleted pod's last version from it.
                        if ev.resource == *ids::PODS {
                            self.pod_json
                                .insert(ev.stored.idx.uid.to_string(), ev.stored.bytes.clone());
                        }
                        self.apply(
                            ev.resource,
                            &ev.object(),
                            deleted,
                            ev.kind == EventType::Added,
                            dirty,
                        );
                    }
                }
                Some(Err(TryRecvError::Lagged(_))) => {
                    self.relist(sim, dirty);
                    return;
                }
                _ => return,
            }
        }
    }

    /// Whether the cache keeps anything of this resource's objects.
    fn reads(res: ResourceId) -> bool {
        slot(res).is_some() || res == *ids::SECRETS || res == *ids::CONFIGMAPS
    }

    fn relist(&mut self, sim: &SimState, dirty: &mut Dirty) {
        let drains = self.sched.drains;
        *self = Cache::default();
        self.sched.drains = drains;
        self.rx = sim
            .store
            .subscribe(*ids::PODS, None, None, None)
            .ok()
            .map(|s| s.live);
        self.listed_rv = sim.store.current_rv();
        dirty.all = true;
        for res in [
            *ids::NODES,
            *CONTROLLER_REVISIONS,
            *ids::DEPLOYMENTS,
            *ids::REPLICASETS,
            *ids::STATEFULSETS,
            *ids::DAEMONSETS,
            *ids::JOBS,
            *PVCS,
            *ids::SECRETS,
            *ids::CONFIGMAPS,
            *ids::PODS,
        ] {
            let all = Selector::default();
            for stored in sim.store.list_stored(res, None, &all, &all).0 {
                if res == *ids::PODS {
                    self.pod_json
                        .insert(stored.idx.uid.to_string(), stored.bytes.clone());
                }
                self.apply(res, &Arc::new(stored.value()), false, true, dirty);
            }
        }
    }

    fn map_mut(&mut self, slot: Slot) -> &mut HashMap<String, Arc<Value>> {
        match slot {
            Slot::Pod => &mut self.pods,
            Slot::Deployment => &mut self.deployments,
            Slot::ReplicaSet => &mut self.replicasets,
            Slot::StatefulSet => &mut self.statefulsets,
            Slot::DaemonSet => &mut self.daemonsets,
            Slot::Job => &mut self.jobs,
            Slot::Pvc => &mut self.pvcs,
            Slot::Revision | Slot::Node => &mut self.revisions,
        }
    }

    fn index_mut(&mut self, slot: Slot) -> Option<&mut HashMap<String, Vec<String>>> {
        match slot {
            Slot::Pod => Some(&mut self.pods_by_owner),
            Slot::ReplicaSet => Some(&mut self.rs_by_owner),
            Slot::Revision => Some(&mut self.revisions_by_owner),
            _ => None,
        }
    }

    fn apply(
        &mut self,
        res: ResourceId,
        obj: &Arc<Value>,
        deleted: bool,
        added: bool,
        dirty: &mut Dirty,
    ) {
        self.apply_ref(res, obj, deleted, dirty);
        let Some(slot) = slot(res) else { return };
        if slot == Slot::Node {
            self.apply_node(obj, deleted, dirty);
            return;
        }
        let uid = meta(obj, "uid").to_string();
        if let Some(prev) = self.indexed_under.remove(&uid)
            && let Some(idx) = self.index_mut(slot)
            && let Some(list) = idx.get_mut(&prev)
        {
            list.retain(|u| *u != uid);
            if list.is_empty() {
                idx.remove(&prev);
            }
        }
        let owner = controller_uid(obj).map(String::from);
        self.tell_scheduler(slot, &uid, obj, deleted);
        if deleted {
            self.map_mut(slot).remove(&uid);
            self.pod_json.remove(&uid);
            self.owners.remove(&uid);
            let ns = meta(obj, "namespace").to_string();
            dirty.gone.push((
                uid.clone(),
                ns,
                meta(obj, "name").to_string(),
                slot == Slot::Pod,
            ));
        } else {
            let kept = match slot {
                Slot::Pod if bound_whole(obj) => Arc::new(slim_pod(obj)),
                _ => obj.clone(),
            };
            self.map_mut(slot).insert(uid.clone(), kept);
            if let Some(o) = &owner
                && let Some(idx) = self.index_mut(slot)
            {
                idx.entry(o.clone()).or_default().push(uid.clone());
                self.indexed_under.insert(uid.clone(), o.clone());
            }
            let kind = match slot {
                Slot::Deployment => Some("Deployment"),
                Slot::ReplicaSet => Some("ReplicaSet"),
                Slot::StatefulSet => Some("StatefulSet"),
                Slot::DaemonSet => Some("DaemonSet"),
                Slot::Job => Some("Job"),
                _ => None,
            };
            if let Some(kind) = kind {
                let info = OwnerInfo {
                    kind,
                    name: meta(obj, "name").to_string(),
                    generation: generation(obj),
                    owner: owner.clone(),
                };
                self.owners.insert(uid.clone(), info);
            }
        }
        match slot {
            Slot::Pod => {
                if let Some(o) = &owner {
                    dirty.mark_up(o, &self.owners);
                }
                if added && !deleted {
                    dirty.pods.push(uid);
                }
            }
            Slot::Deployment
            | Slot::ReplicaSet
            | Slot::StatefulSet
            | Slot::DaemonSet
            | Slot::Job => {
                dirty.mark_up(&uid, &self.owners);
                if let Some(o) = &owner {
                    dirty.objs.insert(o.clone());
                }
            }
            Slot::Pvc if !deleted => dirty.pvcs.push(uid),
            _ => {}
        }
    }

    /// A node's name, labels and address, for the scheduler and the DaemonSets.
    fn apply_node(&mut self, obj: &Value, deleted: bool, dirty: &mut Dirty) {
        let name = meta(obj, "name").to_string();
        if deleted {
            self.node_ips.remove(&name);
            self.node_labels.remove(&name);
        } else {
            let labels = obj.pointer("/metadata/labels").cloned();
            self.node_labels
                .insert(name.clone(), labels.unwrap_or(Value::Null));
            let ip = obj
                .pointer("/status/addresses")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().find(|x| x["type"] == "InternalIP"))
                .and_then(|x| x["address"].as_str())
                .map(String::from)
                .unwrap_or_else(|| super::node_ip(self.node_ips.len()));
            self.node_ips.insert(name.clone(), ip);
        }
        self.sched.node_changed(&name, (!deleted).then_some(obj));
        self.nodes = self
            .node_ips
            .iter()
            .map(|(n, ip)| (n.clone(), ip.clone()))
            .collect();
        // Every DaemonSet follows the nodes.
        dirty.objs.extend(self.daemonsets.keys().cloned());
    }

    /// Keeps the scheduler's book: a pod's change against its cached object, a claim's.
    fn tell_scheduler(&mut self, slot: Slot, uid: &str, obj: &Value, deleted: bool) {
        match slot {
            Slot::Pod => {
                let old = self.pods.get(uid).cloned();
                let new = (!deleted).then_some(obj);
                let moves = old.as_deref().and_then(holder) != new.and_then(holder);
                let specs = [new, old.as_deref()].into_iter().flatten().any(has_spec);
                if moves && !specs {
                    // Both slim (a pod ending or deleted): its requests from the whole
                    // version, which has the same node and phase as `obj`.
                    let whole = self.full_pod(uid);
                    let whole = whole.as_deref();
                    let (old, new) = if deleted {
                        (whole, None)
                    } else {
                        (old.as_deref(), whole)
                    };
                    self.sched.pod_changed(uid, old, new);
                } else {
                    self.sched.pod_changed(uid, old.as_deref(), new);
                }
            }
            Slot::Pvc => {
                let key = format!("{}/{}", meta(obj, "namespace"), meta(obj, "name"));
                self.sched.claim_changed(key, (!deleted).then_some(obj));
            }
            _ => {}
        }
    }

    /// Keeps what the kubelet's reference checks need of Secrets, ConfigMaps and claims.
    fn apply_ref(&mut self, res: ResourceId, obj: &Value, deleted: bool, dirty: &mut Dirty) {
        let kind = match res {
            r if r == *ids::SECRETS => "Secret",
            r if r == *ids::CONFIGMAPS => "ConfigMap",
            r if r == *PVCS => "PersistentVolumeClaim",
            _ => return,
        };
        if let Some(ns) = self.refs.apply(kind, obj, deleted) {
            dirty.refs_ns.insert(ns);
        }
    }

    /// A pod's whole object, parsed from its stored JSON.
    pub fn full_pod(&self, uid: &str) -> Option<Arc<Value>> {
        let json = self.pod_json.get(uid)?;
        serde_json::from_slice(json).ok().map(Arc::new)
    }

    pub fn pods_of<'s>(&'s self, owner: &str) -> impl Iterator<Item = &'s Arc<Value>> + 's {
        self.pods_by_owner
            .get(owner)
            .into_iter()
            .flatten()
            .filter_map(|u| self.pods.get(u))
    }

    pub fn rs_of(&self, owner: &str) -> Vec<Arc<Value>> {
        self.rs_by_owner
            .get(owner)
            .into_iter()
            .flatten()
            .filter_map(|u| self.replicasets.get(u))
            .cloned()
            .collect()
    }

    pub fn revisions_of(&self, owner: &str) -> Vec<Arc<Value>> {
        self.revisions_by_owner
            .get(owner)
            .into_iter()
            .flatten()
            .filter_map(|u| self.revisions.get(u))
            .cloned()
            .collect()
    }
}

fn has_spec(pod: &Value) -> bool {
    pod.pointer("/spec/containers").is_some()
}

/// A whole pod that is bound: what the cache keeps slim.
fn bound_whole(pod: &Value) -> bool {
    holder(pod).is_some() && has_spec(pod)
}
