//! The scheduler: picks a node for a pod, or leaves it Unschedulable with the scheduler's
//! FailedScheduling message.

use std::collections::HashMap;

use serde_json::Value;

use super::kubelet::{Counters, Plan, PodSim, Stage};
use super::{Events, Pass};

impl PodSim {
    /// The scheduler's step: a node for the pod (its preset node, else round robin over the
    /// fitting ones), or Unschedulable with a FailedScheduling event when the scenario says
    /// so or no node fits. Always a transition.
    pub(super) fn schedule(
        &mut self,
        p: &Pass,
        nodes: &Nodes,
        ev: &mut Events,
        ctr: &mut Counters,
    ) -> bool {
        let now = p.now;
        let fitting: Vec<&(String, String)> = nodes
            .list
            .iter()
            .filter(|(n, _)| node_fits(&self.placement, n, nodes.labels.get(n)))
            .collect();
        let unschedulable = match &self.plan {
            Plan::Serve { rule } if self.preset_node.is_none() => {
                p.rule(*rule).unschedulable.clone()
            }
            _ => None,
        };
        let unschedulable = unschedulable.or_else(|| {
            (self.preset_node.is_none() && fitting.is_empty())
                .then(|| unschedulable_message(nodes.list.len()))
        });
        if let Some(msg) = unschedulable {
            self.stage = Stage::Unschedulable;
            self.unschedulable = msg.clone();
            self.version += 1;
            ev.record(
                p,
                &self.involved(None),
                "Warning",
                "FailedScheduling",
                &msg,
                "default-scheduler",
                None,
            );
            return true;
        }
        let (node, ip) = match &self.preset_node {
            Some(n) => {
                let ip = nodes
                    .list
                    .iter()
                    .find(|(name, _)| name == n)
                    .map(|x| x.1.clone());
                (n.clone(), ip.unwrap_or_else(|| super::node_ip(0)))
            }
            None => {
                ctr.node_rr += 1;
                fitting[ctr.node_rr % fitting.len()].clone()
            }
        };
        self.node = node;
        self.host_ip = ip;
        self.t_scheduled = p.wall.clone();
        self.t_ready = p.wall.clone();
        self.enter(Stage::Creating, now);
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
        true
    }
}

/// The nodes the scheduler picks from: (name, InternalIP) and each one's labels.
pub(super) struct Nodes<'a> {
    pub list: &'a [(String, String)],
    pub labels: &'a HashMap<String, Value>,
}

/// The real scheduler's answer when no node passes its filters (here: only node
/// selection, the one filter the simulator models).
fn unschedulable_message(total: usize) -> String {
    if total == 0 {
        return "0/0 nodes are available: no nodes available to schedule pods.".to_string();
    }
    format!(
        "0/{total} nodes are available: {total} node(s) didn't match Pod's node affinity/selector. \
         preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
    )
}

/// Whether a node passes the pod's `nodeSelector` (every pair) and required node affinity
/// (any term, every expression of it), as the scheduler's NodeAffinity filter does.
fn node_fits(placement: &(Value, Value), node: &str, labels: Option<&Value>) -> bool {
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let selector_ok = placement.0.as_object().is_none_or(|sel| {
        sel.iter()
            .all(|(k, v)| v.as_str().is_some_and(|v| label(k) == Some(v)))
    });
    let Some(terms) = placement
        .1
        .get("nodeSelectorTerms")
        .and_then(Value::as_array)
    else {
        return selector_ok;
    };
    let matches = |req: &Value, value: Option<&str>| {
        let values: Vec<&str> = req["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match req["operator"].as_str().unwrap_or("") {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => {
                let (Some(v), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    values.first().and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if req["operator"] == "Gt" {
                    v > bound
                } else {
                    v < bound
                }
            }
            _ => false,
        }
    };
    let term_ok = |t: &Value| {
        let exprs = t["matchExpressions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let fields = t["matchFields"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        // A term with no requirement matches nothing, as in the API's NodeSelectorTerm.
        (!exprs.is_empty() || !fields.is_empty())
            && exprs
                .iter()
                .all(|r| matches(r, r["key"].as_str().and_then(label)))
            && fields.iter().all(|r| {
                let value = (r["key"] == "metadata.name").then_some(node);
                matches(r, value)
            })
    };
    selector_ok && terms.iter().any(term_ok)
}
