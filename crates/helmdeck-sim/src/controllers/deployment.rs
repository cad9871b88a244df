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

/// What the Deployment controller reads of one Deployment's spec in a pass.
struct DepSpec {
    replicas: i64,
    rolling: bool,
    /// maxSurge, resolved (0 unless RollingUpdate).
    surge: i64,
    /// maxUnavailable, resolved (0 unless RollingUpdate).
    unavailable: i64,
    paused: bool,
    min: Duration,
    template: Value,
    hash: String,
}

impl DepSpec {
    fn of(dep: &Value) -> Self {
        let replicas = spec_replicas(dep);
        let rolling = is_rolling(dep, STRATEGY);
        let (surge, unavailable) = if rolling {
            surge_and_unavailable(dep, replicas)
        } else {
            (0, 0)
        };
        let (template, hash) = pod_template(dep);
        DepSpec {
            replicas,
            rolling,
            surge,
            unavailable,
            paused: is_paused(dep),
            min: min_ready(dep),
            template,
            hash,
        }
    }
}

/// `DeploymentComplete` on the stored status: every replica updated and available, none old,
/// and the status observed the current generation.
fn is_complete(dep: &Value) -> bool {
    let replicas = spec_replicas(dep);
    ["updatedReplicas", "replicas", "availableReplicas"]
        .iter()
        .all(|k| int_at(dep, &format!("/status/{k}")).unwrap_or(0) == replicas)
        && int_at(dep, "/status/observedGeneration").unwrap_or(0) >= generation(dep)
}

/// Whether a Deployment is paused (then it is not rolled out).
fn is_paused(dep: &Value) -> bool {
    dep.pointer("/spec/paused")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// One Deployment's ReplicaSets and the sizes phase A decides for them.
struct DepReplicaSets {
    /// Every ReplicaSet the Deployment owns (as the cache has them).
    owned: Vec<Arc<Value>>,
    /// The owned ReplicaSets of other templates, oldest revision first.
    olds: Vec<Arc<Value>>,
    /// The ReplicaSet of the current template (found, or created in this pass).
    new_rs: Option<Arc<Value>>,
    /// Whether this pass created `new_rs`.
    created_new: bool,
    /// The revision the new ReplicaSet has, or gets: above every old one.
    revision: i64,
    /// ReplicaSet uid → its spec.replicas before this pass.
    original: HashMap<String, i64>,
    /// ReplicaSet uid → the replicas this pass gives it.
    desired: HashMap<String, i64>,
}

impl DepReplicaSets {
    /// Sorts `owned` into the new ReplicaSet (the one labelled with `hash`) and the old ones.
    fn of(owned: Vec<Arc<Value>>, hash: &str) -> Self {
        let new_rs = owned
            .iter()
            .find(|rs| label(rs, HASH_LABEL) == Some(hash))
            .cloned();
        let mut olds: Vec<Arc<Value>> = owned
            .iter()
            .filter(|rs| label(rs, HASH_LABEL) != Some(hash))
            .cloned()
            .collect();
        olds.sort_by_key(|rs| (revision_of(rs), meta(rs, "creationTimestamp").to_string()));
        let max_old_rev = olds.iter().map(|rs| revision_of(rs)).max().unwrap_or(0);
        let revision = match &new_rs {
            Some(rs) if revision_of(rs) > max_old_rev => revision_of(rs),
            _ => max_old_rev + 1,
        };
        let desired: HashMap<String, i64> = owned
            .iter()
            .map(|rs| {
                (
                    meta(rs, "uid").to_string(),
                    int_at(rs, "/spec/replicas").unwrap_or(1),
                )
            })
            .collect();
        DepReplicaSets {
            original: desired.clone(),
            desired,
            owned,
            olds,
            new_rs,
            created_new: false,
            revision,
        }
    }

    /// The replicas decided so far for the old ReplicaSets together.
    fn desired_old_total(&self) -> i64 {
        self.olds
            .iter()
            .map(|rs| self.desired.get(meta(rs, "uid")).copied().unwrap_or(0))
            .sum()
    }
}

/// RollingUpdate, new side: the new ReplicaSet grows toward `replicas` while all ReplicaSets
/// stay within replicas + maxSurge (or shrinks to `replicas`). Returns the size to create it
/// with when it is missing.
fn rolling_new_size(spec: &DepSpec, sets: &mut DepReplicaSets) -> Option<i64> {
    let (replicas, max_total) = (spec.replicas, spec.replicas + spec.surge);
    match &sets.new_rs {
        None => {
            let current = sets.desired_old_total();
            Some(if current >= max_total {
                0
            } else {
                (max_total - current).min(replicas)
            })
        }
        Some(rs) => {
            let u = meta(rs, "uid").to_string();
            let cur = sets.desired[&u];
            if cur > replicas {
                sets.desired.insert(u, replicas);
            } else if cur < replicas {
                let current: i64 = sets.desired.values().sum();
                if current < max_total {
                    sets.desired
                        .insert(u, cur + (max_total - current).min(replicas - cur));
                }
            }
            None
        }
    }
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
            self.deployment_plan(p, snap, dep, &mut plans);
        }
        plans
    }

    /// Phase A for one Deployment: size the ReplicaSets for its strategy, create the new
    /// ReplicaSet when the template has none, scale old ones down within maxUnavailable, and
    /// record the result in `plans` (phases B and C act on it).
    fn deployment_plan(&mut self, p: &Pass, snap: &Cache, dep: &Arc<Value>, plans: &mut Plans) {
        let Some((id, rule_idx)) = self.observe(p, "Deployment", dep) else {
            return;
        };
        let spec = DepSpec::of(dep);
        let mut sets = DepReplicaSets::of(snap.rs_of(id.uid), &spec.hash);
        let create_with = if spec.paused {
            // A paused Deployment is not rolled out.
            None
        } else if !spec.rolling {
            self.recreate_sizes(snap, &spec, &mut sets)
        } else {
            rolling_new_size(&spec, &mut sets)
        };
        if let Some(n) = create_with
            && let Some(created) = self.create_new_rs(p, dep, &spec, sets.revision, n)
        {
            sets.created_new = true;
            sets.desired.insert(meta(&created, "uid").to_string(), n);
            plans.created.push(created.clone());
            sets.new_rs = Some(created);
        }
        if spec.rolling && !spec.paused {
            let params = Rolling {
                replicas: spec.replicas,
                unavailable: spec.unavailable,
                keep_one: p.rule(rule_idx).surge_never_terminates,
                min: spec.min,
            };
            let new_rs = sets.new_rs.as_ref();
            self.scale_down_old(p, snap, &params, &sets.olds, new_rs, &mut sets.desired);
        }
        if !spec.paused && is_complete(dep) {
            self.clean_up_history(p, snap, dep, &sets.olds);
        }
        let rs_uids = self.plan_replicasets(p, dep, &spec, &sets, &mut plans.rs);
        let new_rs = sets.new_rs.as_ref();
        plans.deps.push(DepPlan {
            dep: dep.clone(),
            rule: rule_idx,
            new_rs: new_rs.map(|rs| meta(rs, "name").to_string()),
            new_rs_uid: new_rs.map(|rs| meta(rs, "uid").to_string()),
            rs_uids,
            created_new: sets.created_new,
            revision: new_rs
                .filter(|_| !spec.paused)
                .map(|_| sets.revision.to_string()),
        });
    }

    /// The deployment controller's `cleanupDeployment`: once a Deployment is complete, its old
    /// ReplicaSets beyond `spec.revisionHistoryLimit` go, oldest revision first, each only when
    /// it is scaled to zero, its status caught up and no pod of it is left. Without it every
    /// upgrade left one more ReplicaSet (and a client that lists them read one more each time).
    fn clean_up_history(&mut self, p: &Pass, snap: &Cache, dep: &Value, olds: &[Arc<Value>]) {
        let Some(limit) = int_at(dep, "/spec/revisionHistoryLimit") else {
            return;
        };
        let excess = usize::try_from(olds.len() as i64 - limit.max(0)).unwrap_or(0);
        // `olds` is sorted oldest revision first.
        for rs in olds.iter().take(excess) {
            let idle = int_at(rs, "/spec/replicas") == Some(0)
                && int_at(rs, "/status/replicas").unwrap_or(0) == 0
                && int_at(rs, "/status/observedGeneration").unwrap_or(0) >= generation(rs)
                && snap.pods_of(meta(rs, "uid")).next().is_none();
            if idle {
                // It owns no pod, so no garbage-collector scan is needed.
                let _ = p.sim.store.delete_leaf(
                    *ids::REPLICASETS,
                    Some(meta(rs, "namespace")),
                    meta(rs, "name"),
                );
            }
        }
    }

    /// Recreate: every old ReplicaSet goes to 0 first; only once no old pod is left does the
    /// new ReplicaSet get all replicas. Returns the size to create it with when it is missing.
    fn recreate_sizes(
        &self,
        snap: &Cache,
        spec: &DepSpec,
        sets: &mut DepReplicaSets,
    ) -> Option<i64> {
        let old_pods: i64 = sets
            .olds
            .iter()
            .map(|rs| self.rs_pod_count(snap, meta(rs, "uid")))
            .sum();
        if sets.desired_old_total() > 0 {
            for rs in &sets.olds {
                sets.desired.insert(meta(rs, "uid").to_string(), 0);
            }
        } else if old_pods == 0 {
            match &sets.new_rs {
                None => return Some(spec.replicas),
                Some(rs) => {
                    sets.desired
                        .insert(meta(rs, "uid").to_string(), spec.replicas);
                }
            }
        }
        None
    }

    /// Creates the ReplicaSet of the Deployment's current template with `n` replicas and its
    /// revision and size annotations (plus the scaling event); `None` when the store refuses.
    fn create_new_rs(
        &mut self,
        p: &Pass,
        dep: &Value,
        spec: &DepSpec,
        revision: i64,
        n: i64,
    ) -> Option<Arc<Value>> {
        let (name, ns, hash) = (meta(dep, "name"), meta(dep, "namespace"), &spec.hash);
        let replicas = spec.replicas;
        let rs_name = format!("{name}-{hash}");
        let mut rs_template = spec.template.clone();
        rs_template["metadata"]["labels"][HASH_LABEL] = json!(hash);
        let mut labels = rs_template["metadata"]["labels"].clone();
        labels[HASH_LABEL] = json!(hash);
        let mut selector = dep
            .pointer("/spec/selector")
            .cloned()
            .unwrap_or_else(|| json!({}));
        selector["matchLabels"][HASH_LABEL] = json!(hash);
        let mut rs_spec = json!({"replicas": n, "selector": selector, "template": rs_template});
        if let Some(m) = dep.pointer("/spec/minReadySeconds") {
            rs_spec["minReadySeconds"] = m.clone();
        }
        let rs = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name, "namespace": ns, "labels": labels,
                "annotations": {REVISION: revision.to_string(),
                    "deployment.kubernetes.io/desired-replicas": replicas.to_string(),
                    "deployment.kubernetes.io/max-replicas": (replicas + spec.surge).to_string()},
                "ownerReferences": [owner_ref(dep)]},
            "spec": rs_spec,
        });
        let created = p.sim.store.create(*ids::REPLICASETS, Some(ns), rs).ok()?;
        if n > 0 {
            self.scaling_event(p, dep, &rs_name, 0, n);
        }
        Some(created)
    }

    /// Records every ReplicaSet's planned size in `out` (a scaling event when an existing one
    /// changes) and, for the new ReplicaSet of an unpaused Deployment, the revision and size
    /// annotations; returns the ReplicaSet uids in that order.
    fn plan_replicasets(
        &mut self,
        p: &Pass,
        dep: &Value,
        spec: &DepSpec,
        sets: &DepReplicaSets,
        out: &mut HashMap<String, RsPlan>,
    ) -> Vec<String> {
        let (replicas, revision) = (spec.replicas, sets.revision);
        let new_rs = sets.new_rs.as_ref();
        let mut rs_uids = Vec::new();
        for rs in sets.owned.iter().chain(new_rs.filter(|_| sets.created_new)) {
            let u = meta(rs, "uid").to_string();
            let want = sets.desired.get(&u).copied().unwrap_or(0);
            let was = sets.original.get(&u).copied().unwrap_or(want);
            if was != want && sets.original.contains_key(&u) {
                self.scaling_event(p, dep, meta(rs, "name"), was, want);
            }
            let mut annotations = Vec::new();
            if new_rs.is_some_and(|n| meta(n, "uid") == u) && !spec.paused {
                self.rs_gen.insert(u.clone(), generation(dep));
                annotations.push((REVISION, revision.to_string()));
                annotations.push((
                    "deployment.kubernetes.io/desired-replicas",
                    replicas.to_string(),
                ));
                annotations.push((
                    "deployment.kubernetes.io/max-replicas",
                    (replicas + spec.surge).to_string(),
                ));
            }
            out.insert(
                u.clone(),
                RsPlan {
                    replicas: want,
                    annotations,
                },
            );
            rs_uids.push(u);
        }
        rs_uids
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
        for rs in &replicasets_to_sync(self.work(&snap.replicasets, dirty), snap, plans) {
            let uid = meta(rs, "uid");
            let c = self.replicaset_sync(p, snap, rs, plans.rs.get(uid));
            counts.insert(uid.to_string(), c);
        }
        counts
    }

    /// Phase B for one ReplicaSet: create or delete pods toward the planned size, count
    /// them, and write the size, annotations and status the plan asks for. Returns the
    /// counts phase C sums per Deployment.
    fn replicaset_sync(
        &mut self,
        p: &Pass,
        snap: &Cache,
        rs: &Value,
        plan: Option<&RsPlan>,
    ) -> RsCounts {
        let uid = meta(rs, "uid");
        let spec_replicas = int_at(rs, "/spec/replicas").unwrap_or(1);
        let want = plan.map_or(spec_replicas, |pl| pl.replicas).max(0);
        let mut pods: Vec<Arc<Value>> = snap
            .pods_of(uid)
            .filter(|pod| !self.pod_terminal(pod))
            .cloned()
            .collect();
        let have = pods.len() as i64;
        if have < want {
            self.rs_create_pods(p, snap, rs, want - have, &mut pods);
        } else if have > want {
            self.rs_delete_pods(p, rs, (have - want) as usize, &mut pods);
        }
        let min = min_ready(rs);
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
        self.settle(uid, c.ready == c.available);
        write_rs_status(p, rs, plan, spec_replicas, want, c);
        c
    }

    /// Creates up to `missing` pods (at most 500 in a pass) from the ReplicaSet's template,
    /// under the scenario rule its Deployment had when it made the ReplicaSet.
    fn rs_create_pods(
        &mut self,
        p: &Pass,
        snap: &Cache,
        rs: &Value,
        missing: i64,
        pods: &mut Vec<Arc<Value>>,
    ) {
        let name = meta(rs, "name");
        let rule = self.pod_rule_for_rs(p, snap, rs);
        let template = rs
            .pointer("/spec/template")
            .cloned()
            .unwrap_or_else(|| json!({}));
        for _ in 0..missing.min(500) {
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
    }

    /// Deletes `excess` pods, the least useful first: unscheduled, not ready, newest.
    fn rs_delete_pods(&mut self, p: &Pass, rs: &Value, excess: usize, pods: &mut Vec<Arc<Value>>) {
        pods.sort_by_key(|pod| {
            let s = self.pods.get(meta(pod, "uid"));
            let scheduled =
                s.is_some_and(|s| !matches!(s.stage, Stage::Unscheduled | Stage::Unschedulable));
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
        let victims: Vec<Arc<Value>> = pods.drain(..excess).collect();
        for pod in victims {
            self.delete_pod(p, &pod);
            let msg = format!("Deleted pod: {}", meta(&pod, "name"));
            let component = "replicaset-controller";
            self.events
                .normal(p, rs, "SuccessfulDelete", &msg, component);
        }
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
            self.deployment_status(p, plan, plans, counts);
        }
    }

    /// Phase C for one Deployment: the replica counts, the Available and Progressing
    /// conditions (against the progress deadline), whether it is settled, and the write of
    /// the status and revision annotation when they changed.
    fn deployment_status(
        &mut self,
        p: &Pass,
        plan: &DepPlan,
        plans: &Plans,
        counts: &HashMap<String, RsCounts>,
    ) {
        let dep = &plan.dep;
        let id = Ident::of(dep);
        let t = DepTotals::of(dep, plan, plans, counts);
        let mut status = t.status(id.generation);
        let old_status = dep.get("status").cloned().unwrap_or_else(|| json!({}));
        let mut conds: Vec<Value> = old_status["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let wall = p.wall.as_str();
        set_condition(&mut conds, available_condition(dep, &t), wall, true);

        let deadline = p.rule(plan.rule).progress_deadline.or_else(|| {
            int_at(dep, "/spec/progressDeadlineSeconds")
                .map(|s| Duration::from_secs(s.max(0) as u64))
        });
        let sim = self
            .deployments
            .entry(id.uid.to_string())
            .or_insert(DepSim {
                last_progress: p.now,
            });
        let paused = is_paused(dep);
        if paused {
            if deadline.is_some() {
                let c = json!({"type": "Progressing", "status": "Unknown", "reason": "DeploymentPaused",
                               "message": "Deployment is paused"});
                set_condition(&mut conds, c, wall, true);
            }
        } else {
            update_progressing(&mut conds, sim, p, plan, &t, &old_status, deadline);
        }
        // Settled: nothing left that time alone could change (a deadline, minReadySeconds).
        let reason = conds
            .iter()
            .find(|c| c["type"] == "Progressing")
            .and_then(|c| c["reason"].as_str());
        let settled = paused
            || reason == Some("ProgressDeadlineExceeded")
            || (t.complete() && (reason == Some("NewReplicaSetAvailable") || deadline.is_none()));
        self.settle(id.uid, settled);
        if !conds.is_empty() {
            status["conditions"] = json!(conds);
        }
        write_deployment_status(p, plan, &id, status);
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

/// The ReplicaSets of phase B: the changed and unsettled ones, then those phase A planned
/// that are not among them, then those phase A created (not in the cache yet).
fn replicasets_to_sync(
    mut rs_list: Vec<Arc<Value>>,
    snap: &Cache,
    plans: &Plans,
) -> Vec<Arc<Value>> {
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
    rs_list
}

/// Writes a ReplicaSet's planned size (a new generation when it changes), the annotations
/// of its plan and its status, unless all of them are as they are already.
fn write_rs_status(
    p: &Pass,
    rs: &Value,
    plan: Option<&RsPlan>,
    spec_replicas: i64,
    want: i64,
    c: RsCounts,
) {
    let scaled = want != spec_replicas;
    let rs_gen = generation(rs);
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
        return;
    }
    let (name, ns) = (meta(rs, "name"), meta(rs, "namespace"));
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

/// A Deployment's pods summed over its ReplicaSets, against its spec.replicas.
struct DepTotals {
    /// spec.replicas.
    replicas: i64,
    total: i64,
    /// The pods of the new ReplicaSet.
    updated: i64,
    ready: i64,
    available: i64,
    /// The replicas phase A planned, summed.
    total_spec: i64,
}

impl DepTotals {
    fn of(dep: &Value, plan: &DepPlan, plans: &Plans, counts: &HashMap<String, RsCounts>) -> Self {
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
        DepTotals {
            replicas: spec_replicas(dep),
            total,
            updated,
            ready,
            available,
            total_spec,
        }
    }

    /// The status counts (zero ones left out, as the real controller does), no conditions.
    fn status(&self, observed_generation: i64) -> Value {
        let mut status = json!({"observedGeneration": observed_generation});
        put_nonzero(&mut status, "replicas", self.total);
        put_nonzero(&mut status, "updatedReplicas", self.updated);
        put_nonzero(&mut status, "readyReplicas", self.ready);
        put_nonzero(&mut status, "availableReplicas", self.available);
        put_nonzero(
            &mut status,
            "unavailableReplicas",
            (self.total_spec - self.available).max(0),
        );
        status
    }

    /// Every replica updated and available, and every ready pod available.
    fn complete(&self) -> bool {
        let r = self.replicas;
        self.updated == r && self.total == r && self.available == r && self.ready == self.available
    }
}

/// The Available condition: True once at least replicas - maxUnavailable are available.
fn available_condition(dep: &Value, t: &DepTotals) -> Value {
    if t.available >= t.replicas - max_unavailable(dep, t.replicas) {
        json!({"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
               "message": "Deployment has minimum availability."})
    } else {
        json!({"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
               "message": "Deployment does not have minimum availability."})
    }
}

/// The Progressing condition of an unpaused Deployment: NewReplicaSetCreated when this pass
/// made one; then, with a progress deadline and until the rollout has settled, complete,
/// progressing (compared with the old status) or timed out since the last progress. Progress
/// moves `sim.last_progress` to now.
fn update_progressing(
    conds: &mut Vec<Value>,
    sim: &mut DepSim,
    p: &Pass,
    plan: &DepPlan,
    t: &DepTotals,
    old_status: &Value,
    deadline: Option<Duration>,
) {
    let wall = p.wall.as_str();
    let subject = match &plan.new_rs {
        Some(rs) => format!("ReplicaSet \"{rs}\""),
        None => format!("Deployment \"{}\"", meta(&plan.dep, "name")),
    };
    let &DepTotals {
        replicas,
        total,
        updated,
        ready,
        available,
        ..
    } = t;
    if plan.created_new {
        let msg = format!(
            "Created new replica set \"{}\"",
            plan.new_rs.as_deref().unwrap_or("")
        );
        let c = json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetCreated", "message": msg});
        replace_condition(conds, c, wall);
        sim.last_progress = p.now;
    }
    let current = conds.iter().find(|c| c["type"] == "Progressing").cloned();
    let current_reason = current
        .as_ref()
        .and_then(|c| c["reason"].as_str())
        .unwrap_or("");
    let settled = total == updated && current_reason == "NewReplicaSetAvailable";
    let Some(deadline) = deadline.filter(|_| !settled) else {
        return;
    };
    let complete = updated == replicas && total == replicas && available == replicas;
    let old_n = |k: &str| old_status[k].as_i64().unwrap_or(0);
    let progressing = updated > old_n("updatedReplicas")
        || (total - updated) < (old_n("replicas") - old_n("updatedReplicas"))
        || ready > old_n("readyReplicas")
        || available > old_n("availableReplicas");
    if complete {
        let c = json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                       "message": format!("{subject} has successfully progressed.")});
        replace_condition(conds, c, wall);
        sim.last_progress = p.now;
    } else if progressing {
        let c = json!({"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                       "message": format!("{subject} is progressing.")});
        replace_condition(conds, c, wall);
        sim.last_progress = p.now;
    } else if current_reason != "ProgressDeadlineExceeded"
        && p.now.saturating_duration_since(sim.last_progress) > deadline
    {
        let c = json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                       "message": format!("{subject} has timed out progressing.")});
        replace_condition(conds, c, wall);
    }
}

/// Writes a Deployment's status and the revision of its new ReplicaSet, unless both are as
/// they are already.
fn write_deployment_status(p: &Pass, plan: &DepPlan, id: &Ident, status: Value) {
    let rev = plan.revision.as_deref();
    let rev_same = rev.is_none_or(|r| annotation(&plan.dep, REVISION) == Some(r));
    if rev_same && plan.dep.get("status") == Some(&status) {
        return;
    }
    p.sim
        .store
        .update_with(*ids::DEPLOYMENTS, Some(id.ns), id.name, |o| {
            if let Some(r) = rev {
                if !o["metadata"]["annotations"].is_object() {
                    o["metadata"]["annotations"] = json!({});
                }
                o["metadata"]["annotations"][REVISION] = json!(r);
            }
            o["status"] = status;
        });
}
