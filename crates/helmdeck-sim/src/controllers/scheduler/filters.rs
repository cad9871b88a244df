//! The scheduler's filters, in the default profile's order (NodeUnschedulable,
//! TaintToleration, NodeAffinity, NodeResourcesFit, VolumeBinding, InterPodAffinity), and the
//! FitError message assembled from their reasons as `pkg/scheduler/framework/types.go` does.

use std::collections::BTreeMap;

use serde_json::Value;

use super::affinity::Domains;
use super::book::NodeFacts;
use super::quantity::{GPU, Res};

/// Why one node was rejected: its reasons, and whether removing pods could not help
/// (UnschedulableAndUnresolvable) rather than might (Unschedulable).
pub(crate) struct Rejection {
    pub unresolvable: bool,
    pub reasons: Vec<String>,
}

fn unresolvable(reason: &str) -> Option<Rejection> {
    Some(Rejection {
        unresolvable: true,
        reasons: vec![reason.to_string()],
    })
}

/// Whether one of the pod's tolerations tolerates the taint, as `ToleratesTaint` decides.
pub(crate) fn tolerated(tolerations: &[Value], key: &str, value: &str, effect: &str) -> bool {
    tolerations.iter().any(|t| {
        let s = |k: &str| t[k].as_str().unwrap_or("");
        if !s("effect").is_empty() && s("effect") != effect {
            return false;
        }
        if !s("key").is_empty() && s("key") != key {
            return false;
        }
        match s("operator") {
            "Exists" => true,
            "" | "Equal" => s("value") == value,
            _ => false,
        }
    })
}

/// What the filters need of the pod, worked out once per attempt.
pub(crate) struct PodView<'v> {
    /// `spec.nodeSelector` and required node affinity.
    pub placement: (&'v Value, &'v Value),
    pub requests: Res,
    pub tolerations: &'v [Value],
    pub domains: Domains,
}

/// The first filter that rejects the node, or None when it fits. `free` is None for a node
/// the book has no facts for (its resources are not checked).
pub(crate) fn filter(
    pv: &PodView,
    node: &str,
    labels: Option<&Value>,
    facts: Option<&NodeFacts>,
    free: Option<Res>,
) -> Option<Rejection> {
    if let Some(f) = facts {
        if f.unschedulable
            && !tolerated(
                pv.tolerations,
                "node.kubernetes.io/unschedulable",
                "",
                "NoSchedule",
            )
        {
            return unresolvable("node(s) were unschedulable");
        }
        let untolerated = f.taints.iter().any(|(k, v, e)| {
            matches!(e.as_str(), "NoSchedule" | "NoExecute") && !tolerated(pv.tolerations, k, v, e)
        });
        if untolerated {
            return unresolvable("node(s) had untolerated taint(s)");
        }
    }
    if !node_fits(pv.placement, node, labels) {
        return unresolvable("node(s) didn't match Pod's node affinity/selector");
    }
    if let (Some(f), Some(free)) = (facts, free)
        && let Some(r) = insufficient(&pv.requests, &f.allocatable, &free)
    {
        return Some(r);
    }
    pv.domains
        .reject(labels)
        .map(|(unresolvable, reason)| Rejection {
            unresolvable,
            reasons: vec![reason.to_string()],
        })
}

/// NodeResourcesFit: every resource the pod asks more of than is free, in upstream's order;
/// unresolvable when the pod asks more than the node has at all.
fn insufficient(req: &Res, alloc: &Res, free: &Res) -> Option<Rejection> {
    let mut r = Rejection {
        unresolvable: false,
        reasons: Vec::new(),
    };
    if free.pods < 1 {
        r.reasons.push("Too many pods".into());
        r.unresolvable |= alloc.pods < 1;
    }
    let checks = [
        ("cpu", req.cpu, free.cpu, alloc.cpu),
        ("memory", req.memory, free.memory, alloc.memory),
        (
            "ephemeral-storage",
            req.storage,
            free.storage,
            alloc.storage,
        ),
        (GPU, req.gpu, free.gpu, alloc.gpu),
    ];
    for (name, want, free, total) in checks {
        if want > 0 && want > free {
            r.reasons.push(format!("Insufficient {name}"));
            r.unresolvable |= want > total;
        }
    }
    (!r.reasons.is_empty()).then_some(r)
}

/// The FitError message: the PreFilter message, or each filter reason counted over the nodes
/// and sorted as strings; then the PostFilter plugins' messages (DynamicResources, then
/// preemption with its own count per node).
pub(crate) fn fit_error(total: usize, prefilter: Option<&str>, rejected: &[Rejection]) -> String {
    let mut msg = format!("0/{total} nodes are available:");
    let mut preemption: BTreeMap<&str, usize> = BTreeMap::new();
    if let Some(pre) = prefilter {
        msg.push_str(&format!(" {pre}."));
        preemption.insert("Preemption is not helpful for scheduling", total);
    } else {
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for r in rejected {
            for reason in &r.reasons {
                *reasons.entry(reason).or_default() += 1;
            }
            let outcome = if r.unresolvable {
                "Preemption is not helpful for scheduling"
            } else {
                "No preemption victims found for incoming pod"
            };
            *preemption.entry(outcome).or_default() += 1;
        }
        msg.push_str(&format!(" {}.", histogram(&reasons)));
    }
    msg.push_str(&format!(
        " no new claims to deallocate, preemption: 0/{total} nodes are available: {}.",
        histogram(&preemption)
    ));
    msg
}

/// `N reason` for each reason, sorted as strings (so `10 x` sorts before `2 y`, as upstream).
fn histogram(counts: &BTreeMap<&str, usize>) -> String {
    let mut parts: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    parts.join(", ")
}

/// Whether a node passes the pod's `nodeSelector` (every pair) and required node affinity
/// (any term, every expression of it), as the scheduler's NodeAffinity filter does.
pub(crate) fn node_fits(placement: (&Value, &Value), node: &str, labels: Option<&Value>) -> bool {
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
    let term_ok = |t: &Value| {
        let list = |k: &str| t[k].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let (exprs, fields) = (list("matchExpressions"), list("matchFields"));
        // A term with no requirement matches nothing, as in the API's NodeSelectorTerm.
        (!exprs.is_empty() || !fields.is_empty())
            && exprs
                .iter()
                .all(|r| requirement(r, r["key"].as_str().and_then(label)))
            && fields.iter().all(|r| {
                let value = (r["key"] == "metadata.name").then_some(node);
                requirement(r, value)
            })
    };
    selector_ok && terms.iter().any(term_ok)
}

/// One NodeSelectorRequirement against a label's value.
fn requirement(req: &Value, value: Option<&str>) -> bool {
    let values: Vec<&str> = req["values"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match req["operator"].as_str().unwrap_or("") {
        "In" => value.is_some_and(|v| values.contains(&v)),
        "NotIn" => value.is_none_or(|v| !values.contains(&v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        op @ ("Gt" | "Lt") => {
            let (Some(v), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|b| b.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if op == "Gt" { v > bound } else { v < bound }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerations_match_as_upstream() {
        let t = [
            json!({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}),
        ];
        assert!(tolerated(&t, "dedicated", "gpu", "NoSchedule"));
        assert!(!tolerated(&t, "dedicated", "cpu", "NoSchedule"));
        assert!(!tolerated(&t, "dedicated", "gpu", "NoExecute"));
        let any = [json!({"operator": "Exists"})];
        assert!(tolerated(&any, "whatever", "x", "NoExecute"));
        let key_only = [json!({"key": "k", "operator": "Exists"})];
        assert!(tolerated(&key_only, "k", "v", "NoSchedule"));
        assert!(!tolerated(&key_only, "j", "v", "NoSchedule"));
        assert!(!tolerated(&[], "k", "", "NoSchedule"));
    }

    #[test]
    fn messages_count_and_sort_reasons_as_upstream() {
        let full = |r: &str| Rejection {
            unresolvable: false,
            reasons: vec![r.into()],
        };
        let gpu = [
            full("Insufficient nvidia.com/gpu"),
            full("Insufficient nvidia.com/gpu"),
            full("Insufficient nvidia.com/gpu"),
        ];
        assert_eq!(
            fit_error(3, None, &gpu),
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. no new claims to deallocate, \
             preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
        let mixed = [
            Rejection {
                unresolvable: true,
                reasons: vec!["node(s) had untolerated taint(s)".into()],
            },
            Rejection {
                unresolvable: false,
                reasons: vec!["Insufficient cpu".into(), "Insufficient memory".into()],
            },
            full("Insufficient cpu"),
        ];
        assert_eq!(
            fit_error(3, None, &mixed),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), \
             2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: \
             1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
        );
        assert_eq!(
            fit_error(
                2,
                Some("pod has unbound immediate PersistentVolumeClaims"),
                &[]
            ),
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. no new claims \
             to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn resources_name_each_shortfall() {
        let alloc = Res {
            cpu: 4000,
            memory: 1 << 30,
            storage: 0,
            gpu: 0,
            pods: 110,
        };
        let mut free = alloc;
        free.cpu = 100;
        let req = Res {
            cpu: 500,
            gpu: 1,
            pods: 1,
            ..Res::default()
        };
        let r = insufficient(&req, &alloc, &free).unwrap();
        assert_eq!(
            r.reasons,
            ["Insufficient cpu", "Insufficient nvidia.com/gpu"]
        );
        assert!(r.unresolvable, "no GPU at all: preemption cannot help");
        let small = Res {
            cpu: 50,
            pods: 1,
            ..Res::default()
        };
        assert!(insufficient(&small, &alloc, &free).is_none());
        free.pods = 0;
        let r = insufficient(&small, &alloc, &free).unwrap();
        assert_eq!(
            (r.reasons[0].as_str(), r.unresolvable),
            ("Too many pods", false)
        );
    }
}
