//! The simulated cluster's controllers: the Deployment, ReplicaSet, StatefulSet, DaemonSet and
//! Job controllers, the scheduler and the kubelet, plus a PVC binder. They move objects' status
//! over time as the scenario says, so that `kubectl rollout status`, kstatus (Helm 4's watcher)
//! and Helm's legacy readiness checks judge the simulated workloads as they would real ones.
//!
//! One [`Controllers::reconcile`] pass drains the store's change feed into a cache (see
//! `cache.rs`), advances every pod's simulated lifecycle, then runs each controller over the
//! workloads that changed (or still wait on time) and writes only what changed. Timing (when a
//! pod was created, started, became ready; when a Deployment last progressed) lives here in
//! memory, never in the JSON, and is measured with the `now` the caller passes, so tests drive
//! whole rollouts with a fake clock.
//!
//! Start it with [`spawn`] (which also creates the simulated nodes).

mod cache;
mod daemonset;
mod deployment;
mod job;
mod kubelet;
mod refs;
mod scheduler;
mod statefulset;
#[cfg(test)]
mod tests;
mod volume_binding;

use std::collections::{HashMap, HashSet};

use cache::{Cache, Dirty};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::SimState;
use super::resources::{self, ResourceId, ids};
use super::scenario::{JobRule, WorkloadRule};
use super::store::suffix_from;

pub(crate) static CONTROLLER_REVISIONS: LazyLock<ResourceId> = LazyLock::new(|| {
    resources::by_path("apps", "v1", "controllerrevisions")
        .expect("controllerrevisions is in the table")
});
pub(crate) static PVCS: LazyLock<ResourceId> = LazyLock::new(|| {
    resources::by_path("", "v1", "persistentvolumeclaims")
        .expect("persistentvolumeclaims is in the table")
});

/// Creates the simulated nodes `node-1..node-N` (N = `scenario.nodes`), Ready, with
/// allocatable resources. Idempotent.
pub fn seed_nodes(sim: &SimState) {
    for i in 1..=sim.scenario.nodes {
        let name = format!("node-{i}");
        let ip = node_ip(i as usize - 1);
        let now = helmdeck_formats::time::now_rfc3339();
        let cond = |t: &str, s: &str, reason: &str, msg: &str| {
            json!({"type": t, "status": s, "reason": reason, "message": msg,
                   "lastHeartbeatTime": now, "lastTransitionTime": now})
        };
        let resources = json!({"cpu": "4", "memory": "16393244Ki", "pods": "110", "ephemeral-storage": "102687672Ki"});
        let node = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "sim.large"}},
            "spec": {"podCIDR": format!("10.244.{}.0/24", i - 1), "podCIDRs": [format!("10.244.{}.0/24", i - 1)]},
            "status": {
                "capacity": resources, "allocatable": resources,
                "conditions": [
                    cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                ],
                "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "architecture": "amd64", "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)",
                    "kernelVersion": "6.8.0-sim", "containerRuntimeVersion": "containerd://2.1.4",
                    "kubeletVersion": "v1.35.2", "kubeProxyVersion": "v1.35.2",
                    "machineID": format!("{:032x}", fnv(name.as_bytes())),
                    "systemUUID": format!("{:032x}", fnv(ip.as_bytes())), "bootID": "", "containerRuntime": ""},
            },
        });
        let mut node = node;
        for (k, v) in &sim.scenario.node_labels {
            node["metadata"]["labels"][k] = json!(v);
        }
        super::seed::shape_node(&sim.scenario, &mut node);
        let _ = sim.store.ensure(*ids::NODES, node);
    }
    if sim.scenario.storage.default_class {
        let class = volume_binding::default_class();
        let _ = sim.store.ensure(*volume_binding::STORAGE_CLASSES, class);
    }
}

/// Seeds the nodes (again: idempotent, for callers that did not), then runs
/// [`Controllers::reconcile`] every `scenario.tick` until aborted.
/// Each pass runs on the blocking pool so a large pass never stalls the API server's workers.
pub fn spawn(sim: Arc<SimState>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        seed_nodes(&sim);
        let mut ctl = Controllers::new();
        let tick = sim.scenario.tick.max(Duration::from_millis(5));
        let mut interval = tokio::time::interval(tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let s = sim.clone();
            let joined = tokio::task::spawn_blocking(move || {
                // A bug in one pass must not stop the cluster: keep the state and go on.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    ctl.reconcile(&s, Instant::now())
                }));
                ctl
            })
            .await;
            match joined {
                Ok(c) => ctl = c,
                Err(_) => return,
            }
        }
    })
}

/// Controller-owned memory: simulated timing per object, rule caches, event de-duplication.
pub struct Controllers {
    base_instant: Instant,
    base_wall: jiff::Timestamp,
    seq: u64,
    pods: HashMap<String, kubelet::PodSim>,
    deployments: HashMap<String, deployment::DepSim>,
    /// ReplicaSet uid → the Deployment generation it was last the new ReplicaSet for (its pods
    /// take the scenario rule of that generation).
    rs_gen: HashMap<String, i64>,
    events: Events,
    rule_cache: HashMap<(String, String, i64), Option<usize>>,
    job_rule_cache: HashMap<String, Option<usize>>,
    counters: kubelet::Counters,
    cache: Cache,
    /// Workloads to look at on every pass until they settle (they wait on time, not on changes).
    unsettled: HashSet<String>,
    /// Job uid → when a refused pod creation may be tried again.
    create_retry: HashMap<String, Instant>,
    binder: volume_binding::Binder,
    /// The kubelet's checks of what pods refer to (issue 21).
    refs: refs::Refs,
}

/// The Job behaviour when no scenario rule matches: succeed after 500ms, no logs.
static DEFAULT_JOB: LazyLock<JobRule> = LazyLock::new(|| JobRule {
    after: Some(Duration::from_millis(500)),
    ..JobRule::default()
});

impl Default for Controllers {
    fn default() -> Self {
        Self::new()
    }
}

impl Controllers {
    pub fn new() -> Self {
        Controllers {
            base_instant: Instant::now(),
            base_wall: jiff::Timestamp::now(),
            seq: 0,
            pods: HashMap::new(),
            deployments: HashMap::new(),
            rs_gen: HashMap::new(),
            events: Events::default(),
            rule_cache: HashMap::new(),
            job_rule_cache: HashMap::new(),
            counters: kubelet::Counters::default(),
            cache: Cache::default(),
            unsettled: HashSet::new(),
            create_retry: HashMap::new(),
            binder: volume_binding::Binder::default(),
            refs: refs::Refs::default(),
        }
    }

    /// One pass of every controller, as of `now`.
    pub fn reconcile(&mut self, sim: &SimState, now: Instant) {
        let mut cache = std::mem::take(&mut self.cache);
        let mut dirty = Dirty::default();
        cache.drain(sim, &mut dirty);
        let p = Pass {
            sim,
            now,
            wall: self.wall(now),
        };
        self.forget_gone(&p, &cache, &dirty);
        self.bind_claims(&p, &mut cache, &dirty);
        self.kubelet_pass(&p, &cache, &mut dirty);
        let plans = self.deployments_plan(&p, &cache, &dirty);
        let counts = self.replicasets_sync(&p, &cache, &dirty, &plans);
        self.deployments_status(&p, &plans, &counts);
        self.statefulsets_sync(&p, &cache, &dirty);
        self.daemonsets_sync(&p, &cache, &dirty);
        self.jobs_sync(&p, &cache, &dirty);
        self.events.expire(&p);
        self.cache = cache;
    }

    /// The objects of one kind to reconcile in this pass: the changed ones and the unsettled
    /// ones (or all after a re-list), in namespace/name order.
    fn work(&self, map: &HashMap<String, Arc<Value>>, dirty: &Dirty) -> Vec<Arc<Value>> {
        let mut out: Vec<Arc<Value>> = if dirty.all {
            map.values().cloned().collect()
        } else {
            let extra = self.unsettled.iter().filter(|u| !dirty.objs.contains(*u));
            dirty
                .objs
                .iter()
                .chain(extra)
                .filter_map(|u| map.get(u))
                .cloned()
                .collect()
        };
        out.sort_by(|a, b| {
            (meta(a, "namespace"), meta(a, "name")).cmp(&(meta(b, "namespace"), meta(b, "name")))
        });
        out
    }

    /// A workload of this pass and its scenario rule, or `None` when the rule has the controller
    /// never observe this generation: then nothing changes, status included, and the workload
    /// is settled (only a change brings it back).
    fn observe<'v>(
        &mut self,
        p: &Pass,
        kind: &str,
        obj: &'v Value,
    ) -> Option<(Ident<'v>, Option<usize>)> {
        let id = Ident::of(obj);
        let rule = self.rule_index(p.sim, kind, id.name, id.generation);
        if p.rule(rule).never_observe {
            self.settle(id.uid, true);
            return None;
        }
        Some((id, rule))
    }

    /// Whether the kubelet has finished with `pod` (it succeeded or failed).
    fn pod_terminal(&self, pod: &Value) -> bool {
        self.pods
            .get(meta(pod, "uid"))
            .is_some_and(|s| s.terminal())
    }

    /// Records whether a workload needs looking at again without a change (it waits on time).
    fn settle(&mut self, uid: &str, settled: bool) {
        if settled {
            self.unsettled.remove(uid);
        } else if !self.unsettled.contains(uid) {
            self.unsettled.insert(uid.to_string());
        }
    }

    /// The wall-clock time matching `now` (so fake clocks give consistent timestamps).
    fn wall(&self, now: Instant) -> String {
        let d = now.saturating_duration_since(self.base_instant);
        let ts = self.base_wall.checked_add(d).unwrap_or(self.base_wall);
        helmdeck_formats::time::rfc3339(ts)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Index of the scenario rule for a workload (None = `defaults`), cached: matching
    /// compiles globs.
    fn rule_index(
        &mut self,
        sim: &SimState,
        kind: &str,
        name: &str,
        generation: i64,
    ) -> Option<usize> {
        let key = (kind.to_string(), name.to_string(), generation);
        if let Some(hit) = self.rule_cache.get(&key) {
            return *hit;
        }
        if self.rule_cache.len() > 100_000 {
            self.rule_cache.clear();
        }
        let rule = sim.scenario.workload_rule(kind, name, generation);
        let idx = sim
            .scenario
            .workloads
            .iter()
            .position(|r| std::ptr::eq(r, rule));
        self.rule_cache.insert(key, idx);
        idx
    }

    fn job_rule_index(&mut self, sim: &SimState, name: &str) -> Option<usize> {
        if let Some(hit) = self.job_rule_cache.get(name) {
            return *hit;
        }
        if self.job_rule_cache.len() > 100_000 {
            self.job_rule_cache.clear();
        }
        let idx = sim
            .scenario
            .job_rule(name)
            .and_then(|rule| sim.scenario.jobs.iter().position(|r| std::ptr::eq(r, rule)));
        self.job_rule_cache.insert(name.to_string(), idx);
        idx
    }

    /// Forgets the memory of deleted objects (pods: their logs too).
    fn forget_gone(&mut self, p: &Pass, cache: &Cache, dirty: &Dirty) {
        for (uid, ns, name, is_pod) in &dirty.gone {
            if *is_pod {
                if self.pods.remove(uid).is_some() {
                    p.sim.logs.forget_pod(ns, name);
                }
            } else {
                self.deployments.remove(uid);
                self.rs_gen.remove(uid);
                self.unsettled.remove(uid);
                self.create_retry.remove(uid);
            }
            self.events.forget(uid);
        }
        if dirty.all {
            // After a re-list: drop whatever is no longer there.
            let gone: Vec<String> = self
                .pods
                .keys()
                .filter(|u| !cache.pods.contains_key(*u))
                .cloned()
                .collect();
            for uid in gone {
                if let Some(pod) = self.pods.remove(&uid) {
                    p.sim.logs.forget_pod(&pod.ns, &pod.name);
                }
                self.events.forget(&uid);
            }
            self.deployments
                .retain(|uid, _| cache.owners.contains_key(uid));
            self.rs_gen.retain(|uid, _| cache.owners.contains_key(uid));
            self.unsettled.retain(|uid| cache.owners.contains_key(uid));
        }
    }

    /// Deletes a pod through the store and forgets it.
    fn delete_pod(&mut self, p: &Pass, pod: &Value) {
        let (ns, name, uid) = (meta(pod, "namespace"), meta(pod, "name"), meta(pod, "uid"));
        // Pods own nothing here, so no garbage-collector scan.
        let _ = p.sim.store.delete_leaf(*ids::PODS, Some(ns), name);
        self.pods.remove(uid);
        self.events.forget(uid);
        p.sim.logs.forget_pod(ns, name);
    }

    /// Creates a pod from a template for an owner; `name` None means `{prefix}{5 chars}`.
    /// Registers the pod with the kubelet simulation at once (its timers start now).
    #[allow(clippy::too_many_arguments)]
    fn create_pod(
        &mut self,
        p: &Pass,
        owner: &Value,
        template: &Value,
        name: Option<String>,
        prefix: &str,
        extra_labels: &[(&str, String)],
        mutate_spec: impl Fn(&mut Value),
        plan: kubelet::Plan,
    ) -> Option<Arc<Value>> {
        let ns = meta(owner, "namespace").to_string();
        let mut labels = template
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if !labels.is_object() {
            labels = json!({});
        }
        for (k, v) in extra_labels {
            labels[*k] = json!(v);
        }
        let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
        mutate_spec(&mut spec);
        let qos = kubelet::qos_class(&spec);
        let mut metadata = json!({
            "namespace": ns,
            "labels": labels,
            "ownerReferences": [owner_ref(owner)],
        });
        if let Some(a) = template
            .pointer("/metadata/annotations")
            .filter(|a| a.is_object())
        {
            metadata["annotations"] = a.clone();
        }
        let fixed = name.is_some();
        if !fixed {
            metadata["generateName"] = json!(prefix);
        }
        for attempt in 0..5 {
            let pod_name = match &name {
                Some(n) => n.clone(),
                None => {
                    let seed = fnv(meta(owner, "uid").as_bytes())
                        ^ self.next_seq().wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    format!("{prefix}{}", suffix_from(seed, 5))
                }
            };
            metadata["name"] = json!(pod_name);
            let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec,
                             "status": {"phase": "Pending", "qosClass": qos}});
            match p.sim.store.create(*ids::PODS, Some(&ns), obj) {
                Ok(created) => {
                    let sim_pod = kubelet::PodSim::new(&created, plan, p.now);
                    self.pods.insert(meta(&created, "uid").to_string(), sim_pod);
                    return Some(created);
                }
                Err(e) if e.code == 409 && !fixed && attempt < 4 => continue,
                Err(e) => {
                    // As the real controllers report a refused pod: a Warning on the owner.
                    let component = match owner["kind"].as_str() {
                        Some("Job") => "job-controller",
                        Some("StatefulSet") => "statefulset-controller",
                        Some("DaemonSet") => "daemonset-controller",
                        _ => "replicaset-controller",
                    };
                    let msg = format!("Error creating: {}", e.message);
                    let involved = Involved::of(owner);
                    self.events.record(
                        p,
                        &involved,
                        "Warning",
                        "FailedCreate",
                        &msg,
                        component,
                        None,
                    );
                    return None;
                }
            }
        }
        None
    }

    /// Plan for a pod that the simulation has not seen before, found from its owner chain.
    fn plan_for_unknown_pod(&mut self, sim: &SimState, snap: &Cache, pod: &Value) -> kubelet::Plan {
        let name = meta(pod, "name");
        let owner_uid = controller_uid(pod).unwrap_or_default();
        let owner = snap.owners.get(owner_uid);
        // A Deployment's pod: the Deployment's rule at the generation its ReplicaSet is for.
        if let Some(o) = owner.filter(|o| o.kind == "ReplicaSet")
            && let Some(dep) = o
                .owner
                .as_deref()
                .and_then(|u| snap.owners.get(u))
                .filter(|d| d.kind == "Deployment")
        {
            let generation = self
                .rs_gen
                .get(owner_uid)
                .copied()
                .unwrap_or(dep.generation);
            let (kind, n) = (dep.kind, dep.name.clone());
            return kubelet::Plan::Serve {
                rule: self.rule_index(sim, kind, &n, generation),
            };
        }
        match owner {
            Some(o) if o.kind == "Job" => {
                let n = o.name.clone();
                let rule = self.job_rule_index(sim, &n);
                let ordinal = controller_uid(pod)
                    .and_then(|u| snap.pods_by_owner.get(u))
                    .map_or(0, Vec::len);
                self.run_plan(sim, rule, ordinal.saturating_sub(1) as u32)
            }
            Some(o) => {
                let (kind, n, g) = (o.kind, o.name.clone(), o.generation);
                kubelet::Plan::Serve {
                    rule: self.rule_index(sim, kind, &n, g),
                }
            }
            None => {
                let restart = pod
                    .pointer("/spec/restartPolicy")
                    .and_then(Value::as_str)
                    .unwrap_or("Always");
                if restart == "Always" {
                    kubelet::Plan::Serve {
                        rule: self.rule_index(sim, "Pod", name, 1),
                    }
                } else {
                    let rule = self.job_rule_index(sim, name);
                    self.run_plan(sim, rule, 0)
                }
            }
        }
    }

    /// How the `ordinal`-th (0-based) pod of a run-to-completion workload ends.
    fn run_plan(&self, sim: &SimState, rule: Option<usize>, ordinal: u32) -> kubelet::Plan {
        let r = rule
            .and_then(|i| sim.scenario.jobs.get(i))
            .unwrap_or(&DEFAULT_JOB);
        let (exit, hang) = kubelet::run_outcome(r, ordinal);
        kubelet::Plan::Run {
            rule,
            exit,
            hang,
            ordinal,
            fixed: false,
        }
    }
}

/// Per-pass context.
pub(crate) struct Pass<'a> {
    sim: &'a SimState,
    now: Instant,
    wall: String,
}

impl<'a> Pass<'a> {
    fn rule(&self, idx: Option<usize>) -> &'a WorkloadRule {
        idx.and_then(|i| self.sim.scenario.workloads.get(i))
            .unwrap_or(&self.sim.scenario.defaults)
    }

    fn job_rule(&self, idx: Option<usize>) -> &'a JobRule {
        idx.and_then(|i| self.sim.scenario.jobs.get(i))
            .unwrap_or(&DEFAULT_JOB)
    }
}

// ---------------------------------------------------------------------------------------------
// Events

/// The object an Event is about.
pub(crate) struct Involved<'a> {
    pub kind: &'a str,
    pub api_version: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
    pub uid: &'a str,
    pub field_path: Option<String>,
}

impl<'a> Involved<'a> {
    fn of(obj: &'a Value) -> Self {
        Involved {
            kind: obj["kind"].as_str().unwrap_or(""),
            api_version: obj["apiVersion"].as_str().unwrap_or(""),
            name: meta(obj, "name"),
            namespace: meta(obj, "namespace"),
            uid: meta(obj, "uid"),
            field_path: None,
        }
    }
}

/// With a scenario's `event_ttl`: the Event `name` about `involved`, just written, expires
/// that long from now. A TTL past what the clock can hold never expires.
fn renew(expiry: &mut EventExpiry, p: &Pass, involved: &Involved, name: &str) {
    let Some(at) = p
        .sim
        .scenario
        .event_ttl
        .and_then(|ttl| p.now.checked_add(ttl))
    else {
        return;
    };
    let key = (involved.namespace.to_string(), name.to_string());
    expiry.insert(key, (at, involved.uid.to_string()));
}

/// When each Event expires and the uid it is about, by (namespace, name).
type EventExpiry = HashMap<(String, String), (Instant, String)>;

struct EventMemo {
    reason: String,
    message: String,
    name: String,
}

/// Event recorder: core/v1 Events through the store, a repeat bumps `count`.
#[derive(Default)]
struct Events {
    by_uid: HashMap<String, Vec<EventMemo>>,
    seq: u64,
    /// With a scenario's `event_ttl`: when each Event written expires, by (namespace, name);
    /// a repeat pushes it on, as the API server renews an Event's lease at each write.
    expiry: EventExpiry,
}

impl Events {
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        p: &Pass,
        involved: &Involved,
        type_: &str,
        reason: &str,
        message: &str,
        component: &str,
        host: Option<&str>,
    ) {
        let store = &p.sim.store;
        let memos = self.by_uid.entry(involved.uid.to_string()).or_default();
        if let Some(m) = memos
            .iter()
            .find(|m| m.reason == reason && m.message == message)
        {
            let bumped = store.update_with(*ids::EVENTS, Some(involved.namespace), &m.name, |e| {
                let count = e["count"].as_i64().unwrap_or(1);
                e["count"] = json!(count + 1);
                e["lastTimestamp"] = json!(p.wall);
            });
            if bumped.is_some() {
                renew(&mut self.expiry, p, involved, &m.name);
                return;
            }
            memos.retain(|m| !(m.reason == reason && m.message == message));
        }
        self.seq += 1;
        let h = fnv(format!("{}/{reason}/{message}/{}", involved.uid, self.seq).as_bytes());
        let name = format!("{}.{h:016x}", involved.name);
        let mut obj = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": involved.namespace},
            "involvedObject": {"kind": involved.kind, "namespace": involved.namespace, "name": involved.name,
                               "uid": involved.uid, "apiVersion": involved.api_version},
            "reason": reason, "message": message, "type": type_,
            "source": {"component": component},
            "firstTimestamp": p.wall, "lastTimestamp": p.wall, "count": 1,
            "eventTime": null,
            "reportingComponent": component, "reportingInstance": host.unwrap_or(""),
        });
        if let Some(fp) = &involved.field_path {
            obj["involvedObject"]["fieldPath"] = json!(fp);
        }
        if let Some(h) = host {
            obj["source"]["host"] = json!(h);
        }
        if store
            .create(*ids::EVENTS, Some(involved.namespace), obj)
            .is_ok()
        {
            renew(&mut self.expiry, p, involved, &name);
            memos.push(EventMemo {
                reason: reason.into(),
                message: message.into(),
                name,
            });
        }
    }

    /// A `Normal` Event about `obj` from a control-plane `component` (no host).
    fn normal(&mut self, p: &Pass, obj: &Value, reason: &str, message: &str, component: &str) {
        let involved = Involved::of(obj);
        self.record(p, &involved, "Normal", reason, message, component, None);
    }

    fn forget(&mut self, uid: &str) {
        self.by_uid.remove(uid);
    }

    /// Deletes the Events whose time to live has run out (watchers see them DELETED).
    fn expire(&mut self, p: &Pass) {
        if self.expiry.is_empty() {
            return;
        }
        let due: Vec<(String, String)> = self
            .expiry
            .iter()
            .filter(|(_, (at, _))| *at <= p.now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            let Some((_, uid)) = self.expiry.remove(&key) else {
                continue;
            };
            let (ns, name) = &key;
            let _ = p.sim.store.delete_leaf(*ids::EVENTS, Some(ns), name);
            if let Some(memos) = self.by_uid.get_mut(&uid) {
                memos.retain(|m| &m.name != name);
                if memos.is_empty() {
                    self.by_uid.remove(&uid);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the controllers

/// `metadata.<field>` as a string ("" when absent).
pub(crate) fn meta<'v>(obj: &'v Value, field: &str) -> &'v str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Who a workload is: what every controller reads of it first.
pub(crate) struct Ident<'v> {
    pub name: &'v str,
    pub uid: &'v str,
    pub ns: &'v str,
    pub generation: i64,
}

impl<'v> Ident<'v> {
    pub fn of(obj: &'v Value) -> Self {
        Ident {
            name: meta(obj, "name"),
            uid: meta(obj, "uid"),
            ns: meta(obj, "namespace"),
            generation: generation(obj),
        }
    }
}

pub(crate) fn generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

pub(crate) fn int_at(obj: &Value, pointer: &str) -> Option<i64> {
    obj.pointer(pointer).and_then(Value::as_i64)
}

/// The array at `pointer`, copied (empty when absent).
pub(crate) fn array_at(obj: &Value, pointer: &str) -> Vec<Value> {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `spec.replicas` (1 when absent, never negative).
pub(crate) fn spec_replicas(obj: &Value) -> i64 {
    int_at(obj, "/spec/replicas").unwrap_or(1).max(0)
}

/// `spec.minReadySeconds` (0 when absent or negative).
pub(crate) fn min_ready(obj: &Value) -> Duration {
    Duration::from_secs(int_at(obj, "/spec/minReadySeconds").unwrap_or(0).max(0) as u64)
}

/// Whether the strategy at `pointer` (`/spec/strategy/type`, `/spec/updateStrategy/type`) is
/// RollingUpdate, its default.
pub(crate) fn is_rolling(obj: &Value, pointer: &str) -> bool {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("RollingUpdate")
        == "RollingUpdate"
}

/// The pod template (`{}` when absent) and its hash.
pub(crate) fn pod_template(obj: &Value) -> (Value, String) {
    let template = obj
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let hash = template_hash(&template);
    (template, hash)
}

pub(crate) fn label<'v>(obj: &'v Value, key: &str) -> Option<&'v str> {
    obj.pointer("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

pub(crate) fn annotation<'v>(obj: &'v Value, key: &str) -> Option<&'v str> {
    obj.pointer("/metadata/annotations")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

/// The uid of the owner with `controller: true` (or the only owner).
pub(crate) fn controller_uid(obj: &Value) -> Option<&str> {
    let refs = obj.pointer("/metadata/ownerReferences")?.as_array()?;
    refs.iter()
        .find(|r| r["controller"].as_bool() == Some(true))
        .or_else(|| if refs.len() == 1 { refs.first() } else { None })
        .and_then(|r| r["uid"].as_str())
}

/// An ownerReference to `owner` as its controller.
pub(crate) fn owner_ref(owner: &Value) -> Value {
    json!({"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta(owner, "name"),
           "uid": meta(owner, "uid"), "controller": true, "blockOwnerDeletion": true})
}

/// Resolves an int-or-percent (`1`, `"25%"`) against `total`, rounding up or down.
pub(crate) fn int_or_percent(v: Option<&Value>, total: i64, round_up: bool) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => match s.strip_suffix('%').map(str::parse::<i64>) {
            Some(Ok(pct)) => {
                let x = pct * total;
                if round_up {
                    (x + 99).div_euclid(100)
                } else {
                    x.div_euclid(100)
                }
            }
            _ => s.parse().unwrap_or(0),
        },
        _ => 0,
    }
}

/// FNV-1a state, fed piecewise.
struct Fnv(u64);

impl Fnv {
    fn feed(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// A JSON value with object keys sorted, so key order never changes the hash.
    fn feed_value(&mut self, v: &Value) {
        match v {
            Value::Object(map) => {
                self.feed(b"{");
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for k in keys {
                    self.feed(k.as_bytes());
                    self.feed(b":");
                    self.feed_value(&map[k]);
                    self.feed(b",");
                }
                self.feed(b"}");
            }
            Value::Array(items) => {
                self.feed(b"[");
                for item in items {
                    self.feed_value(item);
                    self.feed(b",");
                }
                self.feed(b"]");
            }
            other => self.feed(other.to_string().as_bytes()),
        }
    }
}

/// FNV-1a, 64 bit.
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.feed(bytes);
    h.0
}

/// A pod template's hash as Kubernetes shows it: 10 characters of `bcdf…789`.
pub(crate) fn template_hash(template: &Value) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.feed_value(template);
    suffix_from(h.0, 10)
}

fn node_ip(index: usize) -> String {
    format!("10.0.0.{}", 10 + index)
}

/// Adds `value` at `key` only when it is worth writing (Kubernetes omits zero counts).
pub(crate) fn put_nonzero(status: &mut Value, key: &str, value: i64) {
    if value != 0 {
        status[key] = json!(value);
    }
}

/// Sets a condition in a conditions array the way Kubernetes' helpers do: an unchanged
/// status keeps `lastTransitionTime`; an unchanged status, reason and message keeps everything.
pub(crate) fn set_condition(
    conds: &mut Vec<Value>,
    mut cond: Value,
    wall: &str,
    with_update_time: bool,
) {
    let t = cond["type"].clone();
    let pos = conds.iter().position(|c| c["type"] == t);
    if let Some(i) = pos {
        let old = &conds[i];
        if old["status"] == cond["status"]
            && old["reason"] == cond["reason"]
            && old["message"] == cond["message"]
        {
            return;
        }
        let transition = if old["status"] == cond["status"] {
            old["lastTransitionTime"].clone()
        } else {
            json!(wall)
        };
        cond["lastTransitionTime"] = transition;
        if with_update_time {
            cond["lastUpdateTime"] = json!(wall);
        }
        conds[i] = cond;
    } else {
        cond["lastTransitionTime"] = json!(wall);
        if with_update_time {
            cond["lastUpdateTime"] = json!(wall);
        }
        conds.push(cond);
    }
}
