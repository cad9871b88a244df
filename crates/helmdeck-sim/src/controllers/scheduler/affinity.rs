//! Required inter-pod affinity and anti-affinity, as the InterPodAffinity filter checks them:
//! per topology domain (the value of the term's `topologyKey` on a node), which domains hold a
//! pod the term selects.

use std::collections::HashSet;

use serde_json::Value;

/// One required term of a pod: what it selects and over which topology key.
pub(crate) struct Term<'v> {
    topology_key: &'v str,
    selector: &'v Value,
    /// None: every namespace (an empty `namespaceSelector`).
    namespaces: Option<Vec<&'v str>>,
}

pub(crate) fn terms<'v>(pod: &'v Value, kind: &str) -> Vec<Term<'v>> {
    let own_ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    pod.pointer(&format!(
        "/spec/affinity/{kind}/requiredDuringSchedulingIgnoredDuringExecution"
    ))
    .and_then(Value::as_array)
    .into_iter()
    .flatten()
    .map(|t| {
        let listed: Vec<&str> = t["namespaces"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let all = t["namespaceSelector"]
            .as_object()
            .is_some_and(|s| s.values().all(|v| v.as_array().is_none_or(Vec::is_empty)));
        Term {
            topology_key: t["topologyKey"].as_str().unwrap_or(""),
            selector: &t["labelSelector"],
            namespaces: if all {
                None
            } else if listed.is_empty() {
                Some(vec![own_ns])
            } else {
                Some(listed)
            },
        }
    })
    .collect()
}

impl Term<'_> {
    /// Whether the term selects `pod` (its namespace and labels).
    pub fn selects(&self, pod: &Value) -> bool {
        let ns = pod
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        self.namespaces.as_ref().is_none_or(|l| l.contains(&ns))
            && selector_matches(self.selector, pod.pointer("/metadata/labels"))
    }
}

/// A LabelSelector against labels: a null selector selects nothing, `{}` everything.
pub(crate) fn selector_matches(selector: &Value, labels: Option<&Value>) -> bool {
    if !selector.is_object() {
        return false;
    }
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let labels_ok = selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let exprs_ok = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let value = e["key"].as_str().and_then(label);
            let values: Vec<&str> = e["values"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e["operator"].as_str().unwrap_or("") {
                "In" => value.is_some_and(|v| values.contains(&v)),
                "NotIn" => value.is_none_or(|v| !values.contains(&v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        });
    labels_ok && exprs_ok
}

/// The incoming pod's view of the bound pods: the domains its anti-affinity terms forbid, the
/// domains existing pods' anti-affinity forbids to it, and per affinity term the domains it
/// may go to (None: no pod matches anywhere and the pod matches its own term, so any node
/// with the key will do, as upstream allows the first pod of a group).
#[derive(Default)]
pub(crate) struct Domains {
    pub anti: HashSet<(String, String)>,
    pub existing_anti: HashSet<(String, String)>,
    pub affinity: Vec<(String, Option<HashSet<String>>)>,
}

impl Domains {
    /// `bound` yields every bound, unfinished pod with its node's labels; `with_terms` those
    /// of them with required terms of their own.
    pub fn collect<'a>(
        pod: &Value,
        bound: impl Iterator<Item = (&'a Value, Option<&'a Value>)>,
        with_terms: impl Iterator<Item = (&'a Value, Option<&'a Value>)>,
    ) -> Domains {
        let anti = terms(pod, "podAntiAffinity");
        let aff = terms(pod, "podAffinity");
        let mut d = Domains::default();
        let mut hits: Vec<HashSet<String>> = vec![HashSet::new(); aff.len()];
        let domain = |labels: Option<&Value>, key: &str| {
            labels
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(String::from)
        };
        if !anti.is_empty() || !aff.is_empty() {
            for (other, labels) in bound {
                for t in anti.iter().filter(|t| t.selects(other)) {
                    if let Some(v) = domain(labels, t.topology_key) {
                        d.anti.insert((t.topology_key.to_string(), v));
                    }
                }
                for (i, t) in aff.iter().enumerate().filter(|(_, t)| t.selects(other)) {
                    if let Some(v) = domain(labels, t.topology_key) {
                        hits[i].insert(v);
                    }
                }
            }
        }
        for (other, labels) in with_terms {
            for t in terms(other, "podAntiAffinity") {
                if t.selects(pod)
                    && let Some(v) = domain(labels, t.topology_key)
                {
                    d.existing_anti.insert((t.topology_key.to_string(), v));
                }
            }
        }
        for (t, hit) in aff.iter().zip(hits) {
            let first_of_group = hit.is_empty() && t.selects(pod);
            d.affinity
                .push((t.topology_key.to_string(), (!first_of_group).then_some(hit)));
        }
        d
    }

    /// The InterPodAffinity filter's reason for a node with these labels, and whether
    /// preemption could not help (affinity) or might (anti-affinity).
    pub fn reject(&self, labels: Option<&Value>) -> Option<(bool, &'static str)> {
        let value = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        let affinity_ok = self.affinity.iter().all(|(key, allowed)| match value(key) {
            None => false,
            Some(v) => allowed.as_ref().is_none_or(|a| a.contains(v)),
        });
        if !affinity_ok {
            return Some((true, "node(s) didn't match pod affinity rules"));
        }
        let hit =
            |set: &HashSet<(String, String)>| set.iter().any(|(k, v)| value(k) == Some(v.as_str()));
        if hit(&self.anti) {
            return Some((false, "node(s) didn't match pod anti-affinity rules"));
        }
        if hit(&self.existing_anti) {
            return Some((
                false,
                "node(s) didn't satisfy existing pods anti-affinity rules",
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(app: &str, anti: bool) -> Value {
        let mut p = json!({"metadata": {"namespace": "apps", "labels": {"app": app}}, "spec": {}});
        if anti {
            p["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": app}}}]}});
        }
        p
    }

    #[test]
    fn anti_affinity_blocks_the_domains_holding_a_selected_pod() {
        let n1 = json!({"kubernetes.io/hostname": "node-1", "zone": "a"});
        let n2 = json!({"kubernetes.io/hostname": "node-2", "zone": "a"});
        let web = pod("web", true);
        let other = pod("db", false);
        let bound = [(&web, Some(&n1)), (&other, Some(&n2))];
        let d = Domains::collect(&pod("web", true), bound.into_iter(), std::iter::empty());
        assert_eq!(
            d.reject(Some(&n1)),
            Some((false, "node(s) didn't match pod anti-affinity rules"))
        );
        assert_eq!(d.reject(Some(&n2)), None);
        // The bound pod's own anti-affinity keeps a pod it selects off its node too.
        let with_terms = [(&web, Some(&n1))];
        let plain = pod("web", false);
        let d = Domains::collect(&plain, std::iter::empty(), with_terms.into_iter());
        assert_eq!(
            d.reject(Some(&n1)).map(|r| r.1),
            Some("node(s) didn't satisfy existing pods anti-affinity rules")
        );
    }

    #[test]
    fn selectors() {
        let labels = json!({"app": "web", "tier": "front"});
        assert!(selector_matches(&json!({}), Some(&labels)));
        assert!(!selector_matches(&Value::Null, Some(&labels)));
        let sel = json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]},
                                              {"key": "gone", "operator": "DoesNotExist"}]});
        assert!(selector_matches(&sel, Some(&labels)));
        let sel = json!({"matchLabels": {"app": "db"}});
        assert!(!selector_matches(&sel, Some(&labels)));
    }
}
