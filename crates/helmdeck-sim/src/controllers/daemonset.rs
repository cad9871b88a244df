//! The DaemonSet controller: one pod per simulated node, rolling update within
//! maxUnavailable, and the scheduled/updated/ready/available counts.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::kubelet::Plan;
use super::statefulset::{REVISION_LABEL, UPDATE_STRATEGY};
use super::{
    Controllers, Ident, Pass, generation, int_or_percent, is_rolling, label, meta, min_ready,
    pod_template, put_nonzero,
};
use crate::resources::ids;

/// One DaemonSet as this pass sees it: its wanted pod template and the nodes to cover.
struct DaemonSetPass<'a> {
    ds: &'a Value,
    /// The simulated nodes, in cache order: one pod each.
    nodes: Vec<&'a str>,
    template: Value,
    hash: String,
    rule: Option<usize>,
    min: Duration,
}

impl DaemonSetPass<'_> {
    /// Whether `pod` runs the current template (its revision label matches).
    fn is_updated(&self, pod: &Value) -> bool {
        label(pod, REVISION_LABEL) == Some(self.hash.as_str())
    }
}

impl Controllers {
    pub(super) fn daemonsets_sync(&mut self, p: &Pass, snap: &Cache, dirty: &Dirty) {
        for ds in &self.work(&snap.daemonsets, dirty) {
            self.daemonset_sync(p, snap, ds);
        }
    }

    /// One DaemonSet: record its revision, keep exactly one pod per node, roll old pods within
    /// maxUnavailable, then write the counts. The steps run in this order because each one
    /// works on the pods the previous one left.
    fn daemonset_sync(&mut self, p: &Pass, snap: &Cache, ds: &Value) {
        let Some((id, rule)) = self.observe(p, "DaemonSet", ds) else {
            return;
        };
        let (template, hash) = pod_template(ds);
        let revisions: Vec<Arc<Value>> = snap.revisions_of(id.uid);
        self.ensure_revision(
            p,
            ds,
            &format!("{}-{hash}", id.name),
            &hash,
            &template,
            &revisions,
        );
        let d = DaemonSetPass {
            ds,
            nodes: snap.nodes.iter().map(|(n, _)| n.as_str()).collect(),
            template,
            hash,
            rule,
            min: min_ready(ds),
        };
        let mut by_node = self.ds_pods_by_node(p, snap, &d, id.uid);
        self.ds_one_pod_per_node(p, &d, &mut by_node);
        if is_rolling(ds, UPDATE_STRATEGY) {
            self.ds_roll(p, &d, &mut by_node);
        }
        self.ds_status(p, &d, &id, &by_node);
    }

    /// The DaemonSet's live pods grouped by node; finished pods and pods on nodes that are
    /// gone are deleted instead (the node set follows the cluster).
    fn ds_pods_by_node(
        &mut self,
        p: &Pass,
        snap: &Cache,
        d: &DaemonSetPass,
        uid: &str,
    ) -> HashMap<String, Vec<Arc<Value>>> {
        let mut by_node: HashMap<String, Vec<Arc<Value>>> = HashMap::new();
        for pod in snap.pods_of(uid) {
            let node = pod
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .unwrap_or("");
            if self.pod_terminal(pod) || !d.nodes.contains(&node) {
                self.ds_delete(p, d.ds, pod);
            } else {
                by_node
                    .entry(node.to_string())
                    .or_default()
                    .push(pod.clone());
            }
        }
        by_node
    }

    /// Creates the pod of every node without one and deletes the extras of nodes with more
    /// (keeping the best: updated, then ready). Every node gets an entry in `by_node`.
    fn ds_one_pod_per_node(
        &mut self,
        p: &Pass,
        d: &DaemonSetPass,
        by_node: &mut HashMap<String, Vec<Arc<Value>>>,
    ) {
        for node in &d.nodes {
            let list = by_node.entry(node.to_string()).or_default();
            if list.is_empty() {
                if let Some(pod) = self.ds_create(p, d.ds, node, &d.hash, &d.template, d.rule) {
                    list.push(pod);
                }
            } else if list.len() > 1 {
                // Keep the best one: updated, then available.
                list.sort_by_key(|pod| {
                    let s = self.pods.get(meta(pod, "uid"));
                    (!d.is_updated(pod), !s.is_some_and(|s| s.ready))
                });
                for pod in list.split_off(1) {
                    self.ds_delete(p, d.ds, &pod);
                }
            }
        }
    }

    /// The rolling update: deletes old-revision pods (unavailable ones first, then by node
    /// name) while the unavailable count stays within maxUnavailable; the next pass creates
    /// their replacements.
    fn ds_roll(
        &mut self,
        p: &Pass,
        d: &DaemonSetPass,
        by_node: &mut HashMap<String, Vec<Arc<Value>>>,
    ) {
        let available = |c: &Controllers, pod: &Value| {
            c.pods
                .get(meta(pod, "uid"))
                .is_some_and(|s| s.available(p.now, d.min))
        };
        let desired = d.nodes.len() as i64;
        let ru = d.ds.pointer("/spec/updateStrategy/rollingUpdate");
        let surge = int_or_percent(ru.and_then(|r| r.get("maxSurge")), desired, true);
        let mut max_unavailable =
            int_or_percent(ru.and_then(|r| r.get("maxUnavailable")), desired, true);
        if surge == 0 && max_unavailable == 0 {
            max_unavailable = 1;
        }
        let mut unavailable = d
            .nodes
            .iter()
            .filter(|n| !by_node[**n].first().is_some_and(|pod| available(self, pod)))
            .count() as i64;
        let mut olds: Vec<(String, Arc<Value>)> = by_node
            .iter()
            .filter_map(|(n, l)| l.first().map(|pod| (n.clone(), pod.clone())))
            .filter(|(_, pod)| !d.is_updated(pod))
            .collect();
        olds.sort_by_key(|(n, pod)| (available(self, pod), n.clone()));
        for (node, pod) in olds {
            if available(self, &pod) {
                if unavailable >= max_unavailable {
                    break;
                }
                unavailable += 1;
            }
            self.ds_delete(p, d.ds, &pod);
            by_node.insert(node, Vec::new());
        }
    }

    /// Counts the node pods (scheduled, updated, ready, available), marks the DaemonSet
    /// settled once every ready pod is available, and writes the status when it changed.
    fn ds_status(
        &mut self,
        p: &Pass,
        d: &DaemonSetPass,
        id: &Ident,
        by_node: &HashMap<String, Vec<Arc<Value>>>,
    ) {
        let desired = d.nodes.len() as i64;
        let (mut current, mut updated, mut ready, mut avail) = (0, 0, 0, 0);
        for node in &d.nodes {
            let Some(pod) = by_node.get(*node).and_then(|l| l.first()) else {
                continue;
            };
            current += 1;
            updated += i64::from(d.is_updated(pod));
            if let Some(s) = self.pods.get(meta(pod, "uid")) {
                ready += i64::from(s.ready);
                avail += i64::from(s.available(p.now, d.min));
            }
        }
        self.settle(id.uid, ready == avail);
        let mut status = json!({"currentNumberScheduled": current, "numberMisscheduled": 0,
                                "desiredNumberScheduled": desired, "numberReady": ready,
                                "observedGeneration": id.generation});
        put_nonzero(&mut status, "updatedNumberScheduled", updated);
        put_nonzero(&mut status, "numberAvailable", avail);
        put_nonzero(&mut status, "numberUnavailable", (desired - avail).max(0));
        if d.ds.get("status") != Some(&status) {
            p.sim
                .store
                .update_with(*ids::DAEMONSETS, Some(id.ns), id.name, |o| {
                    o["status"] = status;
                });
        }
    }

    fn ds_delete(&mut self, p: &Pass, ds: &Value, pod: &Value) {
        self.delete_pod(p, pod);
        let msg = format!("Deleted pod: {}", meta(pod, "name"));
        self.events
            .normal(p, ds, "SuccessfulDelete", &msg, "daemonset-controller");
    }

    fn ds_create(
        &mut self,
        p: &Pass,
        ds: &Value,
        node: &str,
        hash: &str,
        template: &Value,
        rule: Option<usize>,
    ) -> Option<Arc<Value>> {
        let name = meta(ds, "name");
        let extra = [
            (REVISION_LABEL, hash.to_string()),
            ("pod-template-generation", generation(ds).to_string()),
        ];
        let node_name = node.to_string();
        let pod = self.create_pod(
            p,
            ds,
            template,
            None,
            &format!("{name}-"),
            &extra,
            |spec| {
                spec["nodeName"] = json!(node_name);
                spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
                    "nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]});
            },
            Plan::Serve { rule },
        )?;
        let msg = format!("Created pod: {}", meta(&pod, "name"));
        self.events
            .normal(p, ds, "SuccessfulCreate", &msg, "daemonset-controller");
        Some(pod)
    }
}
