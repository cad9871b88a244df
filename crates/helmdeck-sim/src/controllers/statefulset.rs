//! The StatefulSet controller: pods `{sts}-0..N-1` created in order, a rolling update from
//! the highest ordinal down to the partition, ControllerRevisions, PVCs from
//! `volumeClaimTemplates`, and the revision bookkeeping kubectl and Helm compare.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::kubelet::Plan;
use super::{
    CONTROLLER_REVISIONS, Controllers, Ident, PVCS, Pass, array_at, int_at, is_rolling, label,
    meta, min_ready, owner_ref, pod_template, put_nonzero, spec_replicas,
};
use crate::resources::ids;

pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";
/// Where StatefulSets and DaemonSets keep their strategy's type.
pub(crate) const UPDATE_STRATEGY: &str = "/spec/updateStrategy/type";
const STS_CONTROLLER: &str = "statefulset-controller";

/// One StatefulSet as this pass sees it: its spec, the revision of its current template,
/// and its ControllerRevisions (older templates for pods below the partition).
struct StsPass<'a> {
    sts: &'a Value,
    replicas: i64,
    rolling: bool,
    /// Ordinals below it keep the current revision (0 unless RollingUpdate).
    partition: i64,
    /// podManagementPolicy Parallel: no waiting for the previous ordinal.
    parallel: bool,
    template: Value,
    /// The ControllerRevision name of `template`.
    update_rev: String,
    revisions: Vec<Arc<Value>>,
    rule: Option<usize>,
}

impl StsPass<'_> {
    /// The pod template of revision `rev`: the current one, or the one kept in its
    /// ControllerRevision (the current template when that is gone).
    fn template_of(&self, rev: &str) -> Value {
        if rev == self.update_rev {
            return self.template.clone();
        }
        self.revisions
            .iter()
            .find(|r| meta(r, "name") == rev)
            .and_then(|r| r.pointer("/data/spec/template"))
            .cloned()
            .map(|mut t| {
                t.as_object_mut().map(|o| o.remove("$patch"));
                t
            })
            .unwrap_or_else(|| self.template.clone())
    }

    /// Whether `pod` runs the current template.
    fn is_updated(&self, pod: &Value) -> bool {
        label(pod, REVISION_LABEL) == Some(self.update_rev.as_str())
    }
}

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
            self.statefulset_sync(p, snap, sts);
        }
    }

    /// One StatefulSet: record its revision, then at most one change per pass in order
    /// (remove stray pods, scale down, create missing ordinals, roll one outdated pod), then
    /// the status. A step that changed something ("busy") holds the rolling update back.
    fn statefulset_sync(&mut self, p: &Pass, snap: &Cache, sts: &Value) {
        let Some((id, rule)) = self.observe(p, "StatefulSet", sts) else {
            return;
        };
        let rolling = is_rolling(sts, UPDATE_STRATEGY);
        let (template, hash) = pod_template(sts);
        let s = StsPass {
            sts,
            replicas: spec_replicas(sts),
            rolling,
            partition: if rolling {
                int_at(sts, "/spec/updateStrategy/rollingUpdate/partition")
                    .unwrap_or(0)
                    .max(0)
            } else {
                0
            },
            parallel: sts
                .pointer("/spec/podManagementPolicy")
                .and_then(Value::as_str)
                == Some("Parallel"),
            update_rev: format!("{}-{hash}", id.name),
            revisions: snap.revisions_of(id.uid),
            template,
            rule,
        };
        self.ensure_revision(p, sts, &s.update_rev, &hash, &s.template, &s.revisions);
        let current_rev = sts
            .pointer("/status/currentRevision")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .unwrap_or(&s.update_rev)
            .to_string();

        let (mut pods, mut busy) = self.sts_pods_by_ordinal(p, snap, &s, id.uid);
        busy |= self.sts_scale_down(p, &s, &mut pods);
        busy |= self.sts_create_missing(p, &s, &current_rev, &mut pods);
        if !busy {
            self.sts_roll(p, &s, &mut pods);
        }
        self.sts_status(p, &s, &id, current_rev, &pods);
    }

    /// The StatefulSet's live pods by ordinal; finished pods (replaced later) and pods
    /// without an ordinal of this set are deleted. Returns whether it deleted any.
    fn sts_pods_by_ordinal(
        &mut self,
        p: &Pass,
        snap: &Cache,
        s: &StsPass,
        uid: &str,
    ) -> (BTreeMap<i64, Arc<Value>>, bool) {
        let prefix = format!("{}-", meta(s.sts, "name"));
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
                    self.sts_delete(p, s.sts, pod);
                    busy = true;
                }
            }
        }
        (pods, busy)
    }

    /// Scale down from the highest ordinal, one at a time. Returns whether it deleted one.
    fn sts_scale_down(
        &mut self,
        p: &Pass,
        s: &StsPass,
        pods: &mut BTreeMap<i64, Arc<Value>>,
    ) -> bool {
        let Some((&o, pod)) = pods.iter().next_back().filter(|(o, _)| **o >= s.replicas) else {
            return false;
        };
        let pod = pod.clone();
        self.sts_delete(p, s.sts, &pod);
        pods.remove(&o);
        true
    }

    /// Create missing ordinals: in order, each once the one before it is Ready (all at once
    /// when Parallel). Ordinals below the partition get the current revision, the others the
    /// update revision. Returns whether it tried to create any.
    fn sts_create_missing(
        &mut self,
        p: &Pass,
        s: &StsPass,
        current_rev: &str,
        pods: &mut BTreeMap<i64, Arc<Value>>,
    ) -> bool {
        let mut busy = false;
        for i in 0..s.replicas {
            if let Some(pod) = pods.get(&i) {
                if !s.parallel && !self.pod_ready(pod) {
                    break;
                }
                continue;
            }
            let rev = if i < s.partition {
                current_rev
            } else {
                s.update_rev.as_str()
            };
            let rev_template = s.template_of(rev);
            if let Some(pod) = self.sts_create(p, s.sts, i, rev, &rev_template, s.rule) {
                pods.insert(i, pod);
            }
            busy = true;
            if !s.parallel {
                break;
            }
        }
        busy
    }

    /// Rolling update: with every pod there and Ready, replace the highest outdated ordinal
    /// at or above the partition (its deletion; the next pass creates it anew).
    fn sts_roll(&mut self, p: &Pass, s: &StsPass, pods: &mut BTreeMap<i64, Arc<Value>>) {
        let all_ready =
            (0..s.replicas).all(|i| pods.get(&i).is_some_and(|pod| self.pod_ready(pod)));
        if !(s.rolling && all_ready && pods.len() as i64 == s.replicas) {
            return;
        }
        let outdated = (s.partition..s.replicas)
            .rev()
            .find(|i| pods.get(i).is_some_and(|pod| !s.is_updated(pod)));
        if let Some(i) = outdated {
            let pod = pods.remove(&i).expect("found above");
            self.sts_delete(p, s.sts, &pod);
        }
    }

    /// Counts the pods (ready, available, per revision), moves the current revision to the
    /// update revision once a rolling update has converged (unless the scenario says it
    /// never does), marks the set settled when every ready pod is available, and writes
    /// the status when it changed.
    fn sts_status(
        &mut self,
        p: &Pass,
        s: &StsPass,
        id: &Ident,
        mut current_rev: String,
        pods: &BTreeMap<i64, Arc<Value>>,
    ) {
        let min = min_ready(s.sts);
        let count = pods.len() as i64;
        let mut n_ready = 0;
        let mut available = 0;
        for pod in pods.values() {
            if let Some(st) = self.pods.get(meta(pod, "uid")) {
                n_ready += i64::from(st.ready);
                available += i64::from(st.available(p.now, min));
            }
        }
        let at = |rev: &str| {
            pods.values()
                .filter(|pod| label(pod, REVISION_LABEL) == Some(rev))
                .count() as i64
        };
        let updated = at(&s.update_rev);
        let mut current = at(&current_rev);
        if s.rolling
            && !p.rule(s.rule).revision_never_converges
            && updated == count
            && n_ready == count
            && count == s.replicas
        {
            current_rev = s.update_rev.clone();
            current = updated;
        }
        self.settle(id.uid, n_ready == available);
        let mut status = json!({"observedGeneration": id.generation, "replicas": count, "availableReplicas": available});
        put_nonzero(&mut status, "readyReplicas", n_ready);
        put_nonzero(&mut status, "currentReplicas", current);
        put_nonzero(&mut status, "updatedReplicas", updated);
        status["currentRevision"] = json!(current_rev);
        status["updateRevision"] = json!(s.update_rev);
        status["collisionCount"] = json!(0);
        if s.sts.get("status") != Some(&status) {
            p.sim
                .store
                .update_with(*ids::STATEFULSETS, Some(id.ns), id.name, |o| {
                    o["status"] = status;
                });
        }
    }

    /// Whether the kubelet reports `pod` Ready.
    fn pod_ready(&self, pod: &Value) -> bool {
        self.pods.get(meta(pod, "uid")).is_some_and(|s| s.ready)
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
