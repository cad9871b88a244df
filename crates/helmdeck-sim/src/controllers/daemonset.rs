//! The DaemonSet controller: one pod per simulated node, rolling update within
//! maxUnavailable, and the scheduled/updated/ready/available counts.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::kubelet::Plan;
use super::statefulset::{REVISION_LABEL, UPDATE_STRATEGY};
use super::{
    Controllers, Pass, generation, int_or_percent, is_rolling, label, meta, min_ready,
    pod_template, put_nonzero,
};
use crate::resources::ids;

impl Controllers {
    pub(super) fn daemonsets_sync(&mut self, p: &Pass, snap: &Cache, dirty: &Dirty) {
        for ds in &self.work(&snap.daemonsets, dirty) {
            let Some((id, rule_idx)) = self.observe(p, "DaemonSet", ds) else {
                continue;
            };
            let (name, uid, ns, ds_gen) = (id.name, id.uid, id.ns, id.generation);
            let rolling = is_rolling(ds, UPDATE_STRATEGY);
            let min = min_ready(ds);
            let (template, hash) = pod_template(ds);
            let revisions: Vec<Arc<Value>> = snap.revisions_of(uid);
            self.ensure_revision(
                p,
                ds,
                &format!("{name}-{hash}"),
                &hash,
                &template,
                &revisions,
            );

            let nodes: Vec<&str> = snap.nodes.iter().map(|(n, _)| n.as_str()).collect();
            let desired = nodes.len() as i64;
            let mut by_node: HashMap<String, Vec<Arc<Value>>> = HashMap::new();
            for pod in snap.pods_of(uid) {
                let node = pod
                    .pointer("/spec/nodeName")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if self.pod_terminal(pod) || !nodes.contains(&node) {
                    self.ds_delete(p, ds, pod);
                } else {
                    by_node
                        .entry(node.to_string())
                        .or_default()
                        .push(pod.clone());
                }
            }
            let available = |c: &Controllers, pod: &Value| {
                c.pods
                    .get(meta(pod, "uid"))
                    .is_some_and(|s| s.available(p.now, min))
            };
            for node in &nodes {
                let list = by_node.entry(node.to_string()).or_default();
                if list.is_empty() {
                    if let Some(pod) = self.ds_create(p, ds, node, &hash, &template, rule_idx) {
                        list.push(pod);
                    }
                } else if list.len() > 1 {
                    // Keep the best one: updated, then available.
                    list.sort_by_key(|pod| {
                        let s = self.pods.get(meta(pod, "uid"));
                        (
                            label(pod, REVISION_LABEL) != Some(hash.as_str()),
                            !s.is_some_and(|s| s.ready),
                        )
                    });
                    for pod in list.split_off(1) {
                        self.ds_delete(p, ds, &pod);
                    }
                }
            }
            if rolling {
                let ru = ds.pointer("/spec/updateStrategy/rollingUpdate");
                let surge = int_or_percent(ru.and_then(|r| r.get("maxSurge")), desired, true);
                let mut max_unavailable =
                    int_or_percent(ru.and_then(|r| r.get("maxUnavailable")), desired, true);
                if surge == 0 && max_unavailable == 0 {
                    max_unavailable = 1;
                }
                let mut unavailable = nodes
                    .iter()
                    .filter(|n| !by_node[**n].first().is_some_and(|pod| available(self, pod)))
                    .count() as i64;
                let mut olds: Vec<(String, Arc<Value>)> = by_node
                    .iter()
                    .filter_map(|(n, l)| l.first().map(|pod| (n.clone(), pod.clone())))
                    .filter(|(_, pod)| label(pod, REVISION_LABEL) != Some(hash.as_str()))
                    .collect();
                olds.sort_by_key(|(n, pod)| (available(self, pod), n.clone()));
                for (node, pod) in olds {
                    if available(self, &pod) {
                        if unavailable >= max_unavailable {
                            break;
                        }
                        unavailable += 1;
                    }
                    self.ds_delete(p, ds, &pod);
                    by_node.insert(node, Vec::new());
                }
            }

            let (mut current, mut updated, mut ready, mut avail) = (0, 0, 0, 0);
            for node in &nodes {
                let Some(pod) = by_node.get(*node).and_then(|l| l.first()) else {
                    continue;
                };
                current += 1;
                updated += i64::from(label(pod, REVISION_LABEL) == Some(hash.as_str()));
                if let Some(s) = self.pods.get(meta(pod, "uid")) {
                    ready += i64::from(s.ready);
                    avail += i64::from(s.available(p.now, min));
                }
            }
            self.settle(uid, ready == avail);
            let mut status = json!({"currentNumberScheduled": current, "numberMisscheduled": 0,
                                    "desiredNumberScheduled": desired, "numberReady": ready,
                                    "observedGeneration": ds_gen});
            put_nonzero(&mut status, "updatedNumberScheduled", updated);
            put_nonzero(&mut status, "numberAvailable", avail);
            put_nonzero(&mut status, "numberUnavailable", (desired - avail).max(0));
            if ds.get("status") != Some(&status) {
                p.sim
                    .store
                    .update_with(*ids::DAEMONSETS, Some(ns), name, |o| o["status"] = status);
            }
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
