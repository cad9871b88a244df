//! The Deployment and ReplicaSet controllers: new ReplicaSet per pod template, rolling update
//! (maxSurge / maxUnavailable) or Recreate, pods per ReplicaSet, and the status fields and
//! conditions that `kubectl rollout status`, kstatus and Helm read.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::kubelet::{Plan, Stage};
use super::{
    Controllers, Ident, Pass, annotation, generation, int_at, int_or_percent, is_rolling, label,
    meta, min_ready, owner_ref, pod_template, put_nonzero, set_condition, spec_replicas,
};
use crate::resources::ids;

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";
const STRATEGY: &str = "/spec/strategy/type";

/// Controller memory per Deployment.
pub(crate) struct DepSim {
    /// The last time the rollout made progress (for the progress deadline).
    last_progress: Instant,
}

/// What the Deployment controller decided for one Deployment in this pass.
pub(crate) struct DepPlan {
    dep: Arc<Value>,
    rule: Option<usize>,
    new_rs: Option<String>,
    new_rs_uid: Option<String>,
    rs_uids: Vec<String>,
    created_new: bool,
    revision: Option<String>,
}

/// What a ReplicaSet should become in this pass.
pub(crate) struct RsPlan {
    replicas: i64,
    annotations: Vec<(&'static str, String)>,
}

#[derive(Default)]
pub(crate) struct Plans {
    deps: Vec<DepPlan>,
    rs: HashMap<String, RsPlan>,
    /// ReplicaSets created in this pass (not in the cache yet).
    created: Vec<Arc<Value>>,
}

/// The rolling-update numbers of one Deployment.
#[derive(Clone, Copy)]
struct Rolling {
    replicas: i64,
    unavailable: i64,
    /// `surge_never_terminates`: old ReplicaSets keep one replica in total.
    keep_one: bool,
    min: Duration,
}

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RsCounts {
    replicas: i64,
    ready: i64,
    available: i64,
}

/// maxSurge and maxUnavailable resolved against `replicas` (surge rounds up, unavailable
/// down; both 0 makes unavailable 1), as the deployment controller does.
pub(crate) fn surge_and_unavailable(dep: &Value, replicas: i64) -> (i64, i64) {
    let ru = dep.pointer("/spec/strategy/rollingUpdate");
    let surge = int_or_percent(ru.and_then(|r| r.get("maxSurge")), replicas, true);
    let mut unavailable = int_or_percent(ru.and_then(|r| r.get("maxUnavailable")), replicas, false);
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    (surge, unavailable)
}

/// `MaxUnavailable(deployment)` from the deployment utilities: 0 unless RollingUpdate.
fn max_unavailable(dep: &Value, replicas: i64) -> i64 {
    if !is_rolling(dep, STRATEGY) || replicas == 0 {
        return 0;
    }
    surge_and_unavailable(dep, replicas).1.min(replicas)
}

fn revision_of(rs: &Value) -> i64 {
    annotation(rs, REVISION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

impl Controllers {
    fn rs_available(&self, p: &Pass, snap: &Cache, rs_uid: &str, min: Duration) -> i64 {
        snap.pods_of(rs_uid)
            .filter(|pod| {
                self.pods
                    .get(meta(pod, "uid"))
                    .is_some_and(|s| !s.terminal() && s.available(p.now, min))
            })
            .count() as i64
    }

    fn rs_pod_count(&self, snap: &Cache, rs_uid: &str) -> i64 {
        snap.pods_of(rs_uid)
            .filter(|pod| !self.pod_terminal(pod))
            .count() as i64
    }

    fn scaling_event(&mut self, p: &Pass, dep: &Value, rs_name: &str, from: i64, to: i64) {
        let verb = if to > from { "up" } else { "down" };
        let msg = format!("Scaled {verb} replica set {rs_name} from {from} to {to}");
        self.events
            .normal(p, dep, "ScalingReplicaSet", &msg, "deployment-controller");
    }

    /// Phase A: per Deployment, create the new ReplicaSet and decide every ReplicaSet's size.
    pub(super) fn deployments_plan(&mut self, p: &Pass, snap: &Cache, dirty: &Dirty) -> Plans {
        let mut plans = Plans::default();
        for dep in &self.work(&snap.deployments, dirty) {
            let Some((id, rule_idx)) = self.observe(p, "Deployment", dep) else {
                continue;
            };
            let (name, uid, ns, dep_gen) = (id.name, id.uid, id.ns, id.generation);
            let rule = p.rule(rule_idx);
            let replicas = spec_replicas(dep);
            let rolling = is_rolling(dep, STRATEGY);
            let (surge, unavailable) = if rolling {
                surge_and_unavailable(dep, replicas)
            } else {
                (0, 0)
            };
            let paused = dep
                .pointer("/spec/paused")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let min = min_ready(dep);
            let (template, hash) = pod_template(dep);

            let owned: Vec<Arc<Value>> = snap.rs_of(uid);
            let mut new_rs = owned
                .iter()
                .find(|rs| label(rs, HASH_LABEL) == Some(hash.as_str()))
                .cloned();
            let mut olds: Vec<Arc<Value>> = owned
                .iter()
                .filter(|rs| label(rs, HASH_LABEL) != Some(hash.as_str()))
                .cloned()
                .collect();
            olds.sort_by_key(|rs| (revision_of(rs), meta(rs, "creationTimestamp").to_string()));
            let max_old_rev = olds.iter().map(|rs| revision_of(rs)).max().unwrap_or(0);
            let mut desired: HashMap<String, i64> = owned
                .iter()
                .map(|rs| {
                    (
                        meta(rs, "uid").to_string(),
                        int_at(rs, "/spec/replicas").unwrap_or(1),
                    )
                })
                .collect();
            let original = desired.clone();
            let sum = |d: &HashMap<String, i64>, list: &[Arc<Value>]| -> i64 {
                list.iter()
                    .map(|rs| d.get(meta(rs, "uid")).copied().unwrap_or(0))
                    .sum()
            };

            let mut created_new = false;
            let mut create_with: Option<i64> = None;
            if paused {
                // A paused Deployment is not rolled out.
            } else if !rolling {
                let old_pods: i64 = olds
                    .iter()
                    .map(|rs| self.rs_pod_count(snap, meta(rs, "uid")))
                    .sum();
                if sum(&desired, &olds) > 0 {
                    for rs in &olds {
                        desired.insert(meta(rs, "uid").to_string(), 0);
                    }
                } else if old_pods == 0 {
                    match &new_rs {
                        None => create_with = Some(replicas),
                        Some(rs) => {
                            desired.insert(meta(rs, "uid").to_string(), replicas);
                        }
                    }
                }
            } else {
                let max_total = replicas + surge;
                match &new_rs {
                    None => {
                        let current = sum(&desired, &olds);
                        create_with = Some(if current >= max_total {
                            0
                        } else {
                            (max_total - current).min(replicas)
                        });
                    }
                    Some(rs) => {
                        let u = meta(rs, "uid").to_string();
                        let cur = desired[&u];
                        if cur > replicas {
                            desired.insert(u, replicas);
                        } else if cur < replicas {
                            let current: i64 = desired.values().sum();
                            if current < max_total {
                                desired.insert(u, cur + (max_total - current).min(replicas - cur));
                            }
                        }
                    }
                }
            }

            let revision = match &new_rs {
                Some(rs) if revision_of(rs) > max_old_rev => revision_of(rs),
                _ => max_old_rev + 1,
            };
            if let Some(n) = create_with {
                let rs_name = format!("{name}-{hash}");
                let mut rs_template = template.clone();
                rs_template["metadata"]["labels"][HASH_LABEL] = json!(hash);
                let mut labels = rs_template["metadata"]["labels"].clone();
                labels[HASH_LABEL] = json!(hash);
                let mut selector = dep
                    .pointer("/spec/selector")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                selector["matchLabels"][HASH_LABEL] = json!(hash);
                let mut spec =
                    json!({"replicas": n, "selector": selector, "template": rs_template});
                if let Some(m) = dep.pointer("/spec/minReadySeconds") {
                    spec["minReadySeconds"] = m.clone();
                }
                let rs = json!({
                    "apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": rs_name, "namespace": ns, "labels": labels,
                        "annotations": {REVISION: revision.to_string(),
                            "deployment.kubernetes.io/desired-replicas": replicas.to_string(),
                            "deployment.kubernetes.io/max-replicas": (replicas + surge).to_string()},
                        "ownerReferences": [owner_ref(dep)]},
                    "spec": spec,
                });
                if let Ok(created) = p.sim.store.create(*ids::REPLICASETS, Some(ns), rs) {
                    created_new = true;
                    desired.insert(meta(&created, "uid").to_string(), n);
                    plans.created.push(created.clone());
                    if n > 0 {
                        self.scaling_event(p, dep, &rs_name, 0, n);
                    }
                    new_rs = Some(created);
                }
            }

            if rolling && !paused {
                let params = Rolling {
                    replicas,
                    unavailable,
                    keep_one: rule.surge_never_terminates,
                    min,
                };
                self.scale_down_old(p, snap, &params, &olds, new_rs.as_ref(), &mut desired);
            }

            let mut rs_uids = Vec::new();
            for rs in owned.iter().chain(new_rs.iter().filter(|_| created_new)) {
                let u = meta(rs, "uid").to_string();
                let want = desired.get(&u).copied().unwrap_or(0);
                let was = original.get(&u).copied().unwrap_or(want);
                if was != want && original.contains_key(&u) {
                    self.scaling_event(p, dep, meta(rs, "name"), was, want);
                }
                let mut annotations = Vec::new();
                if new_rs.as_ref().is_some_and(|n| meta(n, "uid") == u) && !paused {
                    self.rs_gen.insert(u.clone(), dep_gen);
                    annotations.push((REVISION, revision.to_string()));
                    annotations.push((
                        "deployment.kubernetes.io/desired-replicas",
                        replicas.to_string(),
                    ));
                    annotations.push((
                        "deployment.kubernetes.io/max-replicas",
                        (replicas + surge).to_string(),
                    ));
                }
                plans.rs.insert(
                    u.clone(),
                    RsPlan {
                        replicas: want,
                        annotations,
                    },
                );
                rs_uids.push(u);
            }
            plans.deps.push(DepPlan {
                dep: dep.clone(),
                rule: rule_idx,
                new_rs: new_rs.as_ref().map(|rs| meta(rs, "name").to_string()),
                new_rs_uid: new_rs.as_ref().map(|rs| meta(rs, "uid").to_string()),
                rs_uids,
                created_new,
                revision: new_rs
                    .as_ref()
                    .filter(|_| !paused)
                    .map(|_| revision.to_string()),
            });
        }
        plans
    }

    /// Rolling update, old side: first old pods that are not available, then as many as keep
    /// `replicas - maxUnavailable` available.
    fn scale_down_old(
        &self,
        p: &Pass,
        snap: &Cache,
        r: &Rolling,
        olds: &[Arc<Value>],
        new_rs: Option<&Arc<Value>>,
        desired: &mut HashMap<String, i64>,
    ) {
        let Rolling {
            replicas,
            unavailable,
            keep_one,
            min,
        } = *r;
        let old_total: i64 = olds
            .iter()
            .map(|rs| desired.get(meta(rs, "uid")).copied().unwrap_or(0))
            .sum();
        if old_total == 0 {
            return;
        }
        let floor = if keep_one { 1 } else { 0 };
        let mut remaining_old = old_total;
        let all_total: i64 = desired.values().sum();
        let min_available = replicas - unavailable;
        let (new_desired, new_available) = match new_rs {
            Some(rs) => {
                let u = meta(rs, "uid");
                (
                    desired.get(u).copied().unwrap_or(0),
                    self.rs_available(p, snap, u, min),
                )
            }
            None => (0, 0),
        };
        let mut max_scaled_down = all_total - min_available - (new_desired - new_available).max(0);
        if max_scaled_down <= 0 {
            return;
        }
        for rs in olds {
            if max_scaled_down <= 0 {
                break;
            }
            let u = meta(rs, "uid");
            let d = desired.get(u).copied().unwrap_or(0);
            let unhealthy = (d - self.rs_available(p, snap, u, min)).max(0);
            let scale = max_scaled_down.min(unhealthy).min(remaining_old - floor);
            if d == 0 || scale <= 0 {
                continue;
            }
            desired.insert(u.to_string(), d - scale);
            max_scaled_down -= scale;
            remaining_old -= scale;
        }
        let available_total: i64 = olds
            .iter()
            .chain(new_rs)
            .map(|rs| self.rs_available(p, snap, meta(rs, "uid"), min))
            .sum();
        if available_total <= min_available {
            return;
        }
        let mut total_scale_down = available_total - min_available;
        for rs in olds {
            if total_scale_down <= 0 {
                break;
            }
            let u = meta(rs, "uid");
            let d = desired.get(u).copied().unwrap_or(0);
            let scale = d.min(total_scale_down).min(remaining_old - floor);
            if scale <= 0 {
                continue;
            }
            desired.insert(u.to_string(), d - scale);
            total_scale_down -= scale;
            remaining_old -= scale;
        }
    }

    /// Phase B: every ReplicaSet gets its pods and its status.
    pub(super) fn replicasets_sync(
        &mut self,
        p: &Pass,
        snap: &Cache,
        dirty: &Dirty,
        plans: &Plans,
    ) -> HashMap<String, RsCounts> {
        let mut counts = HashMap::new();
        let mut rs_list = self.work(&snap.replicasets, dirty);
        let listed: std::collections::HashSet<String> = rs_list
            .iter()
            .map(|rs| meta(rs, "uid").to_string())
            .collect();
        let planned = plans
            .rs
            .keys()
            .filter(|u| !listed.contains(*u))
            .filter_map(|u| snap.replicasets.get(u));
        let extra: Vec<Arc<Value>> = planned.chain(plans.created.iter()).cloned().collect();
        rs_list.extend(extra);
        for rs in &rs_list {
            let id = Ident::of(rs);
            let (name, uid, ns, rs_gen) = (id.name, id.uid, id.ns, id.generation);
            let plan = plans.rs.get(uid);
            let spec_replicas = int_at(rs, "/spec/replicas").unwrap_or(1);
            let want = plan.map_or(spec_replicas, |pl| pl.replicas).max(0);
            let min = min_ready(rs);
            let mut pods: Vec<Arc<Value>> = snap
                .pods_of(uid)
                .filter(|pod| !self.pod_terminal(pod))
                .cloned()
                .collect();
            let have = pods.len() as i64;
            if have < want {
                let rule = self.pod_rule_for_rs(p, snap, rs);
                let template = rs
                    .pointer("/spec/template")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                for _ in 0..(want - have).min(500) {
                    let created = self.create_pod(
                        p,
                        rs,
                        &template,
                        None,
                        &format!("{name}-"),
                        &[],
                        |_| {},
                        Plan::Serve { rule },
                    );
                    let Some(pod) = created else { break };
                    let msg = format!("Created pod: {}", meta(&pod, "name"));
                    let component = "replicaset-controller";
                    self.events
                        .normal(p, rs, "SuccessfulCreate", &msg, component);
                    pods.push(pod);
                }
            } else if have > want {
                // Delete the least useful first: unscheduled, not ready, newest.
                pods.sort_by_key(|pod| {
                    let s = self.pods.get(meta(pod, "uid"));
                    let scheduled = s.is_some_and(|s| {
                        !matches!(s.stage, Stage::Unscheduled | Stage::Unschedulable)
                    });
                    let running = s.is_some_and(|s| s.stage == Stage::Running);
                    let ready = s.is_some_and(|s| s.ready);
                    (
                        ready,
                        running,
                        scheduled,
                        Reverse(meta(pod, "creationTimestamp").to_string()),
                        Reverse(meta(pod, "name").to_string()),
                    )
                });
                let victims: Vec<Arc<Value>> = pods.drain(..(have - want) as usize).collect();
                for pod in victims {
                    self.delete_pod(p, &pod);
                    let msg = format!("Deleted pod: {}", meta(&pod, "name"));
                    let component = "replicaset-controller";
                    self.events
                        .normal(p, rs, "SuccessfulDelete", &msg, component);
                }
            }
            let mut c = RsCounts {
                replicas: pods.len() as i64,
                ..RsCounts::default()
            };
            for pod in &pods {
                if let Some(s) = self.pods.get(meta(pod, "uid")) {
                    c.ready += i64::from(s.ready);
                    c.available += i64::from(s.available(p.now, min));
                }
            }
            counts.insert(uid.to_string(), c);
            self.settle(uid, c.ready == c.available);

            let scaled = want != spec_replicas;
            let new_gen = if scaled { rs_gen + 1 } else { rs_gen };
            let mut status = json!({"replicas": c.replicas});
            put_nonzero(&mut status, "fullyLabeledReplicas", c.replicas);
            put_nonzero(&mut status, "readyReplicas", c.ready);
            put_nonzero(&mut status, "availableReplicas", c.available);
            status["observedGeneration"] = json!(new_gen);
            let annotations: &[(&str, String)] = plan.map_or(&[], |pl| &pl.annotations);
            let annotations_same = annotations
                .iter()
                .all(|(k, v)| annotation(rs, k) == Some(v.as_str()));
            if !scaled && annotations_same && rs.get("status") == Some(&status) {
                continue;
            }
            p.sim
                .store
                .update_with(*ids::REPLICASETS, Some(ns), name, |o| {
                    if int_at(o, "/spec/replicas") != Some(want) {
                        o["spec"]["replicas"] = json!(want);
                        o["metadata"]["generation"] = json!(generation(o) + 1);
                    }
                    for (k, v) in annotations {
                        if !o["metadata"]["annotations"].is_object() {
                            o["metadata"]["annotations"] = json!({});
                        }
                        o["metadata"]["annotations"][*k] = json!(v);
                    }
                    status["observedGeneration"] = json!(generation(o));
                    o["status"] = status;
                });
        }
        counts
    }

    /// The scenario rule for a ReplicaSet's new pods: its Deployment's rule at the generation
    /// the ReplicaSet was made for, or the ReplicaSet's own.
    fn pod_rule_for_rs(&mut self, p: &Pass, snap: &Cache, rs: &Value) -> Option<usize> {
        let dep = super::controller_uid(rs)
            .and_then(|u| snap.owners.get(u))
            .filter(|o| o.kind == "Deployment");
        match dep {
            Some(d) => {
                let g = self
                    .rs_gen
                    .get(meta(rs, "uid"))
                    .copied()
                    .unwrap_or(d.generation);
                let n = d.name.clone();
                self.rule_index(p.sim, "Deployment", &n, g)
            }
            None => self.rule_index(p.sim, "ReplicaSet", meta(rs, "name"), generation(rs)),
        }
    }

    /// Phase C: each Deployment's status from its ReplicaSets' counts.
    pub(super) fn deployments_status(
        &mut self,
        p: &Pass,
        plans: &Plans,
        counts: &HashMap<String, RsCounts>,
    ) {
        for plan in &plans.deps {
            let dep = &plan.dep;
            let id = Ident::of(dep);
            let (name, uid, ns, dep_gen) = (id.name, id.uid, id.ns, id.generation);
            let replicas = spec_replicas(dep);
            let rule = p.rule(plan.rule);
            let (mut total, mut ready, mut available, mut total_spec) = (0, 0, 0, 0);
            for u in &plan.rs_uids {
                let c = counts.get(u).copied().unwrap_or_default();
                total += c.replicas;
                ready += c.ready;
                available += c.available;
                total_spec += plans.rs.get(u).map_or(0, |r| r.replicas);
            }
            let updated = plan
                .new_rs_uid
                .as_ref()
                .and_then(|u| counts.get(u))
                .map_or(0, |c| c.replicas);
            let mut status = json!({"observedGeneration": dep_gen});
            put_nonzero(&mut status, "replicas", total);
            put_nonzero(&mut status, "updatedReplicas", updated);
            put_nonzero(&mut status, "readyReplicas", ready);
            put_nonzero(&mut status, "availableReplicas", available);
            put_nonzero(
                &mut status,
                "unavailableReplicas",
                (total_spec - available).max(0),
            );

            let old_status = dep.get("status").cloned().unwrap_or_else(|| json!({}));
            let mut conds: Vec<Value> = old_status["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let wall = p.wall.as_str();
            let av = if available >= replicas - max_unavailable(dep, replicas) {
                json!({"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                       "message": "Deployment has minimum availability."})
            } else {
                json!({"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                       "message": "Deployment does not have minimum availability."})
            };
            set_condition(&mut conds, av, wall, true);

            let deadline = rule.progress_deadline.or_else(|| {
                int_at(dep, "/spec/progressDeadlineSeconds")
                    .map(|s| Duration::from_secs(s.max(0) as u64))
            });
            let subject = match &plan.new_rs {
                Some(rs) => format!("ReplicaSet \"{rs}\""),
                None => format!("Deployment \"{name}\""),
            };
            let sim = self.deployments.entry(uid.to_string()).or_insert(DepSim {
                last_progress: p.now,
            });
            let paused = dep
                .pointer("/spec/paused")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if paused {
                if deadline.is_some() {
                    let c = json!({"type": "Progressing", "status": "Unknown", "reason": "DeploymentPaused",
                                   "message": "Deployment is paused"});
                    set_condition(&mut conds, c, wall, true);
                }
            } else {
                if plan.created_new {
                    let msg = format!(
                        "Created new replica set \"{}\"",
                        plan.new_rs.as_deref().unwrap_or("")
                    );
                    let c = json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetCreated", "message": msg});
                    replace_condition(&mut conds, c, wall);
                    sim.last_progress = p.now;
                }
                let current = conds.iter().find(|c| c["type"] == "Progressing").cloned();
                let current_reason = current
                    .as_ref()
                    .and_then(|c| c["reason"].as_str())
                    .unwrap_or("");
                let settled = total == updated && current_reason == "NewReplicaSetAvailable";
                if let Some(deadline) = deadline.filter(|_| !settled) {
                    let complete =
                        updated == replicas && total == replicas && available == replicas;
                    let old_n = |k: &str| old_status[k].as_i64().unwrap_or(0);
                    let progressing = updated > old_n("updatedReplicas")
                        || (total - updated) < (old_n("replicas") - old_n("updatedReplicas"))
                        || ready > old_n("readyReplicas")
                        || available > old_n("availableReplicas");
                    if complete {
                        let c = json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                                       "message": format!("{subject} has successfully progressed.")});
                        replace_condition(&mut conds, c, wall);
                        sim.last_progress = p.now;
                    } else if progressing {
                        let c = json!({"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                                       "message": format!("{subject} is progressing.")});
                        replace_condition(&mut conds, c, wall);
                        sim.last_progress = p.now;
                    } else if current_reason != "ProgressDeadlineExceeded"
                        && p.now.saturating_duration_since(sim.last_progress) > deadline
                    {
                        let c = json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                                       "message": format!("{subject} has timed out progressing.")});
                        replace_condition(&mut conds, c, wall);
                    }
                }
            }
            // Settled: nothing left that time alone could change (a deadline, minReadySeconds).
            let reason = conds
                .iter()
                .find(|c| c["type"] == "Progressing")
                .and_then(|c| c["reason"].as_str());
            let complete = updated == replicas
                && total == replicas
                && available == replicas
                && ready == available;
            let settled = paused
                || reason == Some("ProgressDeadlineExceeded")
                || (complete && (reason == Some("NewReplicaSetAvailable") || deadline.is_none()));
            self.settle(uid, settled);
            if !conds.is_empty() {
                status["conditions"] = json!(conds);
            }
            let rev = plan.revision.as_deref();
            let rev_same = rev.is_none_or(|r| annotation(dep, REVISION) == Some(r));
            if rev_same && dep.get("status") == Some(&status) {
                continue;
            }
            p.sim
                .store
                .update_with(*ids::DEPLOYMENTS, Some(ns), name, |o| {
                    if let Some(r) = rev {
                        if !o["metadata"]["annotations"].is_object() {
                            o["metadata"]["annotations"] = json!({});
                        }
                        o["metadata"]["annotations"][REVISION] = json!(r);
                    }
                    o["status"] = status;
                });
        }
    }
}

/// Replaces (or adds) a Deployment condition: a new `lastUpdateTime`, and the old
/// `lastTransitionTime` when the status did not change.
fn replace_condition(conds: &mut Vec<Value>, mut cond: Value, wall: &str) {
    let pos = conds.iter().position(|c| c["type"] == cond["type"]);
    cond["lastUpdateTime"] = json!(wall);
    cond["lastTransitionTime"] = json!(wall);
    match pos {
        Some(i) => {
            if conds[i]["status"] == cond["status"] {
                cond["lastTransitionTime"] = conds[i]["lastTransitionTime"].clone();
            }
            conds[i] = cond;
        }
        None => conds.push(cond),
    }
}
