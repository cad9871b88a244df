//! What the scheduler knows of the cluster, kept by the controllers' cache from the change
//! feed: each node's allocatable and taints, the requests of the pods bound to each node
//! (running sums, so a fit check never walks the pods), which claims are bound, and which
//! pods carry required inter-pod (anti-)affinity.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::quantity::{Res, pod_requests};

/// A node as the scheduler's filters see it.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeFacts {
    pub allocatable: Res,
    /// (key, value, effect) of each taint.
    pub taints: Vec<(String, String, String)>,
    pub unschedulable: bool,
}

#[derive(Default)]
pub(crate) struct NodeBook {
    pub nodes: HashMap<String, NodeFacts>,
    /// Requests of the non-terminal pods bound to each node.
    pub used: HashMap<String, Res>,
    /// `ns/name` of every claim → whether it is Bound.
    pub claims: HashMap<String, bool>,
    /// uids of bound pods with required pod affinity or anti-affinity terms.
    pub affine: HashSet<String>,
    /// Bumped by every change that may let an Unschedulable pod fit (a node changed, a bound
    /// pod went away or ended, a claim changed).
    pub changes: u64,
    /// Bumped on every drain of the change feed.
    pub drains: u64,
}

/// The node a pod holds resources on: bound and not finished.
pub(crate) fn holder(pod: &Value) -> Option<&str> {
    let node = pod.pointer("/spec/nodeName").and_then(Value::as_str)?;
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    (!node.is_empty() && !matches!(phase, Some("Succeeded" | "Failed"))).then_some(node)
}

pub(crate) fn has_pod_affinity(pod: &Value) -> bool {
    let Some(affinity) = pod.pointer("/spec/affinity") else {
        return false;
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        affinity[*kind]["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    })
}

impl NodeBook {
    pub fn node_changed(&mut self, name: &str, node: Option<&Value>) {
        self.changes += 1;
        let Some(node) = node else {
            self.nodes.remove(name);
            return;
        };
        let taints = node
            .pointer("/spec/taints")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .map(|t| {
                        let s = |k: &str| t[k].as_str().unwrap_or("").to_string();
                        (s("key"), s("value"), s("effect"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let facts = NodeFacts {
            allocatable: Res::of_list(node.pointer("/status/allocatable")),
            taints,
            unschedulable: node.pointer("/spec/unschedulable") == Some(&Value::Bool(true)),
        };
        self.nodes.insert(name.to_string(), facts);
    }

    /// A pod's object went from `old` (as last cached) to `new` (None: deleted). Only a
    /// change of node or of finished-ness touches the sums, so status updates of running
    /// pods cost two pointer lookups.
    pub fn pod_changed(&mut self, uid: &str, old: Option<&Value>, new: Option<&Value>) {
        let before = old.and_then(holder);
        let after = new.and_then(holder);
        if before == after {
            return;
        }
        // From the version that has a spec: the cache keeps a bound pod without one.
        let whole = [new, old]
            .into_iter()
            .flatten()
            .find(|p| p.pointer("/spec/containers").is_some());
        let requests = pod_requests(whole.or(new).or(old).unwrap_or(&Value::Null));
        if let Some(n) = before {
            self.used.entry(n.to_string()).or_default().sub(&requests);
            self.changes += 1;
        }
        if let Some(n) = after {
            self.used.entry(n.to_string()).or_default().add(&requests);
        }
        // The affinity terms cannot change; only binding and ending move a pod in or out.
        if after.is_some() && new.is_some_and(has_pod_affinity) {
            self.affine.insert(uid.to_string());
        } else if self.affine.remove(uid) {
            self.changes += 1;
        }
    }

    pub fn claim_changed(&mut self, key: String, claim: Option<&Value>) {
        self.changes += 1;
        match claim {
            Some(c) => {
                let bound = c.pointer("/status/phase").and_then(Value::as_str) == Some("Bound");
                self.claims.insert(key, bound);
            }
            None => {
                self.claims.remove(&key);
            }
        }
    }

    /// A claim the binder bound in this pass (the feed shows it at the next drain).
    pub fn claim_bound(&mut self, key: String) {
        self.changes += 1;
        self.claims.insert(key, true);
    }

    /// What is free on `node` once `assumed` (bound this pass, not yet in the sums) is
    /// counted.
    pub fn free(&self, node: &str, assumed: Option<&Res>) -> Option<Res> {
        let mut free = self.nodes.get(node)?.allocatable;
        if let Some(u) = self.used.get(node) {
            free.sub(u);
        }
        if let Some(a) = assumed {
            free.sub(a);
        }
        Some(free)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(node: &str, phase: &str) -> Value {
        json!({"spec": {"nodeName": node, "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
               "status": {"phase": phase}})
    }

    #[test]
    fn sums_follow_binding_ending_and_deletion() {
        let mut b = NodeBook::default();
        b.node_changed(
            "n1",
            Some(&json!({"status": {"allocatable": {"cpu": "4", "pods": "110"}}})),
        );
        let unbound = json!({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}});
        b.pod_changed("a", None, Some(&unbound));
        assert_eq!(b.free("n1", None).unwrap().cpu, 4000);
        b.pod_changed("a", Some(&unbound), Some(&pod("n1", "Pending")));
        b.pod_changed(
            "a",
            Some(&pod("n1", "Pending")),
            Some(&pod("n1", "Running")),
        );
        let free = b.free("n1", None).unwrap();
        assert_eq!((free.cpu, free.pods), (3000, 109));
        let changes = b.changes;
        b.pod_changed(
            "a",
            Some(&pod("n1", "Running")),
            Some(&pod("n1", "Succeeded")),
        );
        assert_eq!(b.free("n1", None).unwrap().cpu, 4000);
        assert!(b.changes > changes, "a pod that ends frees room: retry");
        b.pod_changed("b", None, Some(&pod("n1", "Running")));
        b.pod_changed("b", Some(&pod("n1", "Running")), None);
        assert_eq!(b.free("n1", None).unwrap().cpu, 4000);
        assert_eq!(b.free("nope", None), None);
    }
}
