//! What the scheduler works from in a pass: the nodes and the cache's view of them
//! ([`Nodes`]), and its own memory between passes ([`Assumed`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::book::{NodeBook, has_pod_affinity};
use super::quantity::{Res, pod_requests};
use crate::controllers::cache::Cache;

/// The scheduler's own memory, kept with the kubelet's counters.
#[derive(Default)]
pub(crate) struct Assumed {
    /// The feed drain these assumptions were made after; the next drain shows them.
    pub drain: u64,
    /// Requests of the pods bound since that drain, per node.
    pub used: HashMap<String, Res>,
    /// Those pods' namespace, labels and affinity (a slim copy: the full objects would keep
    /// an old version of every pod of a burst alive), for inter-pod affinity.
    pub pods: Vec<(String, Value)>,
    /// The ones among them with required pod (anti-)affinity terms of their own.
    pub affine: Vec<(String, Value)>,
    /// Unschedulable pods: the book's change count at the last attempt, when, attempts.
    pub tried: HashMap<String, (u64, Instant, u32)>,
}

impl Assumed {
    /// Records `pod`, bound to `node` in this pass.
    pub fn assume(&mut self, node: &str, pod: &Value) {
        self.used
            .entry(node.to_string())
            .or_default()
            .add(&pod_requests(pod));
        let mut slim = json!({"metadata": {"namespace": pod["metadata"]["namespace"],
                                           "labels": pod["metadata"]["labels"]}});
        if has_pod_affinity(pod) {
            slim["spec"] = json!({"affinity": pod["spec"]["affinity"]});
            self.affine.push((node.to_string(), slim.clone()));
        }
        self.pods.push((node.to_string(), slim));
    }

    pub fn sync(&mut self, drains: u64, pods: &HashMap<String, Arc<Value>>) {
        if self.drain != drains {
            self.drain = drains;
            self.used.clear();
            self.pods.clear();
            self.affine.clear();
        }
        if self.tried.len() > 1024 {
            self.tried.retain(|uid, _| pods.contains_key(uid));
        }
    }
}

/// The nodes the scheduler picks from, and what it knows of them and of the pods.
pub(crate) struct Nodes<'a> {
    /// (name, InternalIP) of each node.
    pub list: &'a [(String, String)],
    pub labels: &'a HashMap<String, Value>,
    pub book: &'a NodeBook,
    pub pods: &'a HashMap<String, Arc<Value>>,
}

impl<'a> Nodes<'a> {
    pub fn of(cache: &'a Cache) -> Self {
        Nodes {
            list: &cache.nodes,
            labels: &cache.node_labels,
            book: &cache.sched,
            pods: &cache.pods,
        }
    }
}
