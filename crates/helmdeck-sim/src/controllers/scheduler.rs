//! The scheduler: picks a node for a pod, or leaves it Unschedulable with the scheduler's
//! FailedScheduling message, and tries again when the cluster changes.
//!
//! What it knows of the nodes and bound pods lives in the cache ([`NodeBook`], kept from the
//! change feed); the pods it binds during a pass are "assumed" ([`Assumed`], `view.rs`) until
//! the next drain of the feed shows them bound, as the real scheduler's cache assumes pods.

mod affinity;
pub(crate) mod book;
mod filters;
mod quantity;
pub(crate) mod view;

use std::time::Duration;

use serde_json::Value;

use book::{NodeBook, holder};
use filters::{PodView, Rejection, filter, fit_error};
use quantity::pod_requests;
use view::{Assumed, Nodes};

use super::kubelet::{Counters, Plan, PodSim, Stage};
use super::{Events, Pass};

/// An Unschedulable pod is tried again at the latest after this long, as the scheduling
/// queue flushes pods that stayed unschedulable for 5 minutes.
const RETRY_PERIOD: Duration = Duration::from_secs(300);
/// The back-off between attempts: 1 s doubling to 10 s (the queue's defaults).
const BACKOFF_MIN: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

impl PodSim {
    /// The message of a scenario rule that keeps this pod from ever scheduling.
    fn rule_unschedulable(&self, p: &Pass) -> Option<String> {
        match &self.plan {
            Plan::Serve { rule } if self.preset_node.is_none() => {
                p.rule(*rule).unschedulable.clone()
            }
            _ => None,
        }
    }

    /// The scheduler's step: a node for the pod (its preset node, else round robin over the
    /// fitting ones), or Unschedulable with a FailedScheduling event when the scenario says so
    /// or no node fits. False only while the pod is not yet in the cache.
    pub(super) fn schedule(
        &mut self,
        p: &Pass,
        nodes: &Nodes,
        ev: &mut Events,
        ctr: &mut Counters,
    ) -> bool {
        if let Some(msg) = self.rule_unschedulable(p) {
            self.fail(p, ev, msg);
            return true;
        }
        if let Some(n) = self.preset_node.clone() {
            let ip = nodes.list.iter().find(|(name, _)| *name == n);
            let ip = ip.map_or_else(|| super::node_ip(0), |x| x.1.clone());
            self.bind(p, ev, n, ip);
            return true;
        }
        let Some(pod) = nodes.pods.get(&self.uid).cloned() else {
            return false;
        };
        let sched = &mut ctr.sched;
        sched.sync(nodes.book.drains, nodes.pods);
        let placement = (&self.placement.0, &self.placement.1);
        match choose(&pod, placement, nodes, sched) {
            Ok(fitting) => {
                ctr.node_rr += 1;
                let (node, ip) = nodes.list[fitting[ctr.node_rr % fitting.len()]].clone();
                let sched = &mut ctr.sched;
                sched.tried.remove(&self.uid);
                sched.assume(&node, &pod);
                self.bind(p, ev, node, ip);
            }
            Err(msg) => {
                let attempts = sched.tried.get(&self.uid).map_or(0, |t| t.2);
                let entry = (nodes.book.changes, p.now, attempts + 1);
                sched.tried.insert(self.uid.clone(), entry);
                self.fail(p, ev, msg);
            }
        }
        true
    }

    /// An Unschedulable pod is tried again after its back-off when the cluster changed, or
    /// after [`RETRY_PERIOD`]; never when a scenario rule keeps it unschedulable.
    pub(super) fn retry_schedule(
        &mut self,
        p: &Pass,
        nodes: &Nodes,
        ev: &mut Events,
        ctr: &mut Counters,
    ) -> bool {
        if self.rule_unschedulable(p).is_some() {
            return false;
        }
        let due = ctr
            .sched
            .tried
            .get(&self.uid)
            .is_none_or(|(changes, at, n)| {
                let backoff = (BACKOFF_MIN * 2u32.pow(n.saturating_sub(1).min(4))).min(BACKOFF_MAX);
                p.now >= *at + backoff
                    && (*changes != nodes.book.changes || p.now >= *at + RETRY_PERIOD)
            });
        if !due {
            return false;
        }
        let was = self.version;
        self.schedule(p, nodes, ev, ctr);
        self.version != was
    }

    /// Unschedulable with `msg`: the PodScheduled condition and a FailedScheduling event
    /// (a repeat bumps its count, as the scheduler's recorder does).
    fn fail(&mut self, p: &Pass, ev: &mut Events, msg: String) {
        ev.record(
            p,
            &self.involved(None),
            "Warning",
            "FailedScheduling",
            &msg,
            "default-scheduler",
            None,
        );
        if self.stage != Stage::Unschedulable || self.unschedulable != msg {
            self.stage = Stage::Unschedulable;
            self.unschedulable = msg;
            self.version += 1;
        }
    }

    fn bind(&mut self, p: &Pass, ev: &mut Events, node: String, ip: String) {
        self.node = node;
        self.host_ip = ip;
        self.t_scheduled = p.wall.clone();
        self.t_ready = p.wall.clone();
        self.enter(Stage::Creating, p.now);
        let msg = format!(
            "Successfully assigned {}/{} to {}",
            self.ns, self.name, self.node
        );
        ev.record(
            p,
            &self.involved(None),
            "Normal",
            "Scheduled",
            &msg,
            "default-scheduler",
            None,
        );
    }
}

/// The indexes of the nodes that pass every filter, or the FitError message.
fn choose(
    pod: &Value,
    placement: (&Value, &Value),
    nodes: &Nodes,
    assumed: &Assumed,
) -> Result<Vec<usize>, String> {
    let total = nodes.list.len();
    if total == 0 {
        return Err("0/0 nodes are available: no nodes available to schedule pods.".to_string());
    }
    if let Some(pre) = volume_prefilter(pod, nodes.book) {
        return Err(fit_error(total, Some(&pre), &[]));
    }
    let pv = PodView {
        placement,
        requests: pod_requests(pod),
        tolerations: pod
            .pointer("/spec/tolerations")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice),
        domains: domains(pod, nodes, assumed),
    };
    let mut fitting = Vec::new();
    let mut rejected: Vec<Rejection> = Vec::new();
    for (i, (name, _)) in nodes.list.iter().enumerate() {
        let facts = nodes.book.nodes.get(name);
        let free = nodes.book.free(name, assumed.used.get(name));
        match filter(&pv, name, nodes.labels.get(name), facts, free) {
            None => fitting.push(i),
            Some(r) => rejected.push(r),
        }
    }
    if fitting.is_empty() {
        Err(fit_error(total, None, &rejected))
    } else {
        Ok(fitting)
    }
}

/// The inter-pod affinity domains for `pod`, from the bound pods and the ones assumed.
fn domains(pod: &Value, nodes: &Nodes, assumed: &Assumed) -> affinity::Domains {
    let labels = |n: &str| nodes.labels.get(n);
    let bound = nodes
        .pods
        .values()
        .filter_map(|o| holder(o).map(|n| (o.as_ref(), labels(n))))
        .chain(assumed.pods.iter().map(|(n, o)| (o, labels(n))));
    let with_terms = nodes
        .book
        .affine
        .iter()
        .filter_map(|u| nodes.pods.get(u))
        .filter_map(|o| holder(o).map(|n| (o.as_ref(), labels(n))))
        .chain(assumed.affine.iter().map(|(n, o)| (o, labels(n))));
    affinity::Domains::collect(pod, bound, with_terms)
}

/// VolumeBinding's PreFilter: every claim the pod names must exist and be bound (the
/// simulated StorageClasses bind immediately, none waits for the first consumer).
fn volume_prefilter(pod: &Value, book: &NodeBook) -> Option<String> {
    let ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let mut unbound = false;
    let volumes = pod.pointer("/spec/volumes").and_then(Value::as_array);
    for v in volumes.into_iter().flatten() {
        let Some(name) = v
            .pointer("/persistentVolumeClaim/claimName")
            .and_then(Value::as_str)
        else {
            continue;
        };
        match book.claims.get(&format!("{ns}/{name}")) {
            None => return Some(format!("persistentvolumeclaim \"{name}\" not found")),
            Some(false) => unbound = true,
            Some(true) => {}
        }
    }
    unbound.then(|| "pod has unbound immediate PersistentVolumeClaims".to_string())
}
