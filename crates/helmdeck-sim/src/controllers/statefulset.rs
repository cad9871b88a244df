//! The StatefulSet controller: pods `{sts}-0..N-1` created in order, a rolling update from
//! the highest ordinal down to the partition, ControllerRevisions, PVCs from
//! `volumeClaimTemplates`, and the revision bookkeeping kubectl and Helm compare.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::kubelet::Plan;
use super::{
    CONTROLLER_REVISIONS, Controllers, PVCS, Pass, array_at, int_at, is_rolling, label, meta,
    min_ready, owner_ref, pod_template, put_nonzero, spec_replicas,
};
use crate::resources::ids;

pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";
/// Where StatefulSets and DaemonSets keep their strategy's type.
pub(crate) const UPDATE_STRATEGY: &str = "/spec/updateStrategy/type";
const STS_CONTROLLER: &str = "statefulset-controller";

impl Controllers {
    /// Creates the ControllerRevision `name` holding `template`, unless it exists.
    pub(super) fn ensure_revision(
        &mut self,
        p: &Pass,
        owner: &Value,
        name: &str,
        hash: &str,
        template: &Value,
        existing: &[Arc<Value>],
    ) {
        if existing.iter().any(|r| meta(r, "name") == name) {
            return;
        }
        let next = existing
            .iter()
            .filter_map(|r| r["revision"].as_i64())
            .max()
            .unwrap_or(0)
            + 1;
        let mut labels = template
            .pointer("/metadata/labels")
            .cloned()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        labels[REVISION_LABEL] = json!(hash);
        let mut data_template = template.clone();
        data_template["$patch"] = json!("replace");
        let cr = json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": meta(owner, "namespace"), "labels": labels,
                         "ownerReferences": [owner_ref(owner)]},
            "data": {"spec": {"template": data_template}},
            "revision": next,
        });
        let _ = p
            .sim
            .store
            .create(*CONTROLLER_REVISIONS, Some(meta(owner, "namespace")), cr);
    }

    pub(super) fn statefulsets_sync(&mut self, p: &Pass, snap: &Cache, dirty: &Dirty) {
        for sts in &self.work(&snap.statefulsets, dirty) {
            let Some((id, rule_idx)) = self.observe(p, "StatefulSet", sts) else {
                continue;
            };
            let (name, uid, ns, sts_gen) = (id.name, id.uid, id.ns, id.generation);
            let rule = p.rule(rule_idx);
            let replicas = spec_replicas(sts);
            let rolling = is_rolling(sts, UPDATE_STRATEGY);
            let partition = if rolling {
                int_at(sts, "/spec/updateStrategy/rollingUpdate/partition")
                    .unwrap_or(0)
                    .max(0)
            } else {
                0
            };
            let parallel = sts
                .pointer("/spec/podManagementPolicy")
                .and_then(Value::as_str)
                == Some("Parallel");
            let min = min_ready(sts);
            let (template, hash) = pod_template(sts);
            let update_rev = format!("{name}-{hash}");
            let revisions: Vec<Arc<Value>> = snap.revisions_of(uid);
            self.ensure_revision(p, sts, &update_rev, &hash, &template, &revisions);
            let mut current_rev = sts
                .pointer("/status/currentRevision")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
                .unwrap_or(&update_rev)
                .to_string();

            let prefix = format!("{name}-");
            let mut pods: BTreeMap<i64, Arc<Value>> = BTreeMap::new();
            let mut busy = false;
            for pod in snap.pods_of(uid) {
                let ordinal = meta(pod, "name")
                    .strip_prefix(&prefix)
                    .and_then(|o| o.parse::<i64>().ok());
                match ordinal {
                    Some(o) if !self.pod_terminal(pod) => {
                        pods.insert(o, pod.clone());
                    }
                    _ => {
                        // A failed pod is replaced; a stray one removed.
                        self.sts_delete(p, sts, pod);
                        busy = true;
                    }
                }
            }
            let ready = |c: &Controllers, pod: &Value| {
                c.pods.get(meta(pod, "uid")).is_some_and(|s| s.ready)
            };

            // Scale down from the highest ordinal, one at a time.
            if let Some((&o, pod)) = pods.iter().next_back().filter(|(o, _)| **o >= replicas) {
                let pod = pod.clone();
                self.sts_delete(p, sts, &pod);
                pods.remove(&o);
                busy = true;
            }
            // Create missing ordinals: in order, each once the one before it is Ready.
            for i in 0..replicas {
                if pods.contains_key(&i) {
                    if !parallel && !ready(self, &pods[&i]) {
                        break;
                    }
                    continue;
                }
                let rev = if i < partition {
                    current_rev.clone()
                } else {
                    update_rev.clone()
                };
                let rev_template = if rev == update_rev {
                    template.clone()
                } else {
                    revisions
                        .iter()
                        .find(|r| meta(r, "name") == rev)
                        .and_then(|r| r.pointer("/data/spec/template"))
                        .cloned()
                        .map(|mut t| {
                            t.as_object_mut().map(|o| o.remove("$patch"));
                            t
                        })
                        .unwrap_or_else(|| template.clone())
                };
                if let Some(pod) = self.sts_create(p, sts, i, &rev, &rev_template, rule_idx) {
                    pods.insert(i, pod);
                }
                busy = true;
                if !parallel {
                    break;
                }
            }
            // Rolling update: with every pod there and Ready, replace the highest outdated
            // ordinal at or above the partition.
            let all_ready = (0..replicas).all(|i| pods.get(&i).is_some_and(|pod| ready(self, pod)));
            if rolling && !busy && all_ready && pods.len() as i64 == replicas {
                let outdated = (partition..replicas).rev().find(|i| {
                    pods.get(i)
                        .is_some_and(|pod| label(pod, REVISION_LABEL) != Some(update_rev.as_str()))
                });
                if let Some(i) = outdated {
                    let pod = pods.remove(&i).expect("found above");
                    self.sts_delete(p, sts, &pod);
                }
            }

            let count = pods.len() as i64;
            let mut n_ready = 0;
            let mut available = 0;
            for pod in pods.values() {
                if let Some(s) = self.pods.get(meta(pod, "uid")) {
                    n_ready += i64::from(s.ready);
                    available += i64::from(s.available(p.now, min));
                }
            }
            let at = |rev: &str| {
                pods.values()
                    .filter(|pod| label(pod, REVISION_LABEL) == Some(rev))
                    .count() as i64
            };
            let updated = at(&update_rev);
            let mut current = at(&current_rev);
            if rolling
                && !rule.revision_never_converges
                && updated == count
                && n_ready == count
                && count == replicas
            {
                current_rev = update_rev.clone();
                current = updated;
            }
            self.settle(uid, n_ready == available);
            let mut status = json!({"observedGeneration": sts_gen, "replicas": count, "availableReplicas": available});
            put_nonzero(&mut status, "readyReplicas", n_ready);
            put_nonzero(&mut status, "currentReplicas", current);
            put_nonzero(&mut status, "updatedReplicas", updated);
            status["currentRevision"] = json!(current_rev);
            status["updateRevision"] = json!(update_rev);
            status["collisionCount"] = json!(0);
            if sts.get("status") != Some(&status) {
                p.sim
                    .store
                    .update_with(*ids::STATEFULSETS, Some(ns), name, |o| {
                        o["status"] = status;
                    });
            }
        }
    }

    fn sts_delete(&mut self, p: &Pass, sts: &Value, pod: &Value) {
        self.delete_pod(p, pod);
        let msg = format!(
            "delete Pod {} in StatefulSet {} successful",
            meta(pod, "name"),
            meta(sts, "name")
        );
        self.events
            .normal(p, sts, "SuccessfulDelete", &msg, STS_CONTROLLER);
    }

    fn sts_create(
        &mut self,
        p: &Pass,
        sts: &Value,
        ordinal: i64,
        rev: &str,
        template: &Value,
        rule: Option<usize>,
    ) -> Option<Arc<Value>> {
        let name = meta(sts, "name");
        let ns = meta(sts, "namespace");
        let pod_name = format!("{name}-{ordinal}");
        let service = sts
            .pointer("/spec/serviceName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let claims = array_at(sts, "/spec/volumeClaimTemplates");
        let selector_labels = sts
            .pointer("/spec/selector/matchLabels")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut volumes = Vec::new();
        for claim in &claims {
            let claim_name = meta(claim, "name");
            let pvc_name = format!("{claim_name}-{name}-{ordinal}");
            let mut labels = claim
                .pointer("/metadata/labels")
                .cloned()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            if let Some(sel) = selector_labels.as_object() {
                for (k, v) in sel {
                    labels[k] = v.clone();
                }
            }
            let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": pvc_name, "namespace": ns, "labels": labels},
                "spec": claim.get("spec").cloned().unwrap_or_else(|| json!({}))});
            if p.sim.store.create(*PVCS, Some(ns), pvc).is_ok() {
                let msg =
                    format!("create Claim {pvc_name} Pod {pod_name} in StatefulSet {name} success");
                self.events
                    .normal(p, sts, "SuccessfulCreate", &msg, STS_CONTROLLER);
            }
            volumes.push(
                json!({"name": claim_name, "persistentVolumeClaim": {"claimName": pvc_name}}),
            );
        }
        let extra = [
            (REVISION_LABEL, rev.to_string()),
            ("statefulset.kubernetes.io/pod-name", pod_name.clone()),
            ("apps.kubernetes.io/pod-index", ordinal.to_string()),
        ];
        let hostname = pod_name.clone();
        let pod = self.create_pod(
            p,
            sts,
            template,
            Some(pod_name.clone()),
            "",
            &extra,
            |spec| {
                spec["hostname"] = json!(hostname);
                if !service.is_empty() {
                    spec["subdomain"] = json!(service);
                }
                if !volumes.is_empty() {
                    if !spec["volumes"].is_array() {
                        spec["volumes"] = json!([]);
                    }
                    let list = spec["volumes"].as_array_mut().expect("made an array above");
                    for v in &volumes {
                        if !list.iter().any(|x| x["name"] == v["name"]) {
                            list.push(v.clone());
                        }
                    }
                }
            },
            Plan::Serve { rule },
        )?;
        let msg = format!("create Pod {pod_name} in StatefulSet {name} successful");
        self.events
            .normal(p, sts, "SuccessfulCreate", &msg, STS_CONTROLLER);
        Some(pod)
    }
}
