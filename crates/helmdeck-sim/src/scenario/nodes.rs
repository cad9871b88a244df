//! Scenario fields for the simulated nodes (capacity, labels, taints) and for storage (how
//! PersistentVolumeClaims bind).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::de_opt_duration;

/// What some of the simulated nodes have beyond the defaults: every rule whose `match` glob
/// fits a node's name (`node-1`, `node-2`, ...) applies, in order, later ones winning.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeRule {
    /// Glob over the node name; unset: every node.
    #[serde(default, rename = "match")]
    pub pattern: Option<String>,
    /// Capacity (and allocatable) entries set over the defaults, as Kubernetes quantities:
    /// `cpu: "2"`, `memory: 4Gi`, `pods: "110"`, `nvidia.com/gpu: "0"`.
    #[serde(default)]
    pub capacity: BTreeMap<String, String>,
    /// Labels added to these nodes (besides `node_labels`).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// `spec.taints` of these nodes.
    #[serde(default)]
    pub taints: Vec<NodeTaint>,
}

/// A node taint, as in `spec.taints`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeTaint {
    pub key: String,
    #[serde(default)]
    pub value: String,
    pub effect: TaintEffect,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

/// How claims bind: the default StorageClass `standard` provisions a volume for each new
/// claim after `bind_after`, except the claims `pending` names.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// Whether the cluster has the default StorageClass `standard` (claims without a class
    /// use it). False: such claims stay Pending, as on a cluster without a default class.
    #[serde(default = "yes")]
    pub default_class: bool,
    /// Time from a claim's creation until its volume is provisioned and bound (default 0:
    /// at the next controller pass).
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub bind_after: Option<Duration>,
    /// Globs over claim names (`data-*-db-0`, or `NAMESPACE/glob`) whose volume is never
    /// provisioned: they stay Pending while the provisioner is waited for.
    #[serde(default)]
    pub pending: Vec<String>,
}

impl Default for Storage {
    fn default() -> Self {
        Storage {
            default_class: true,
            bind_after: None,
            pending: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

impl Storage {
    /// Whether the scenario keeps the claim `ns/name` Pending.
    pub fn keeps_pending(&self, ns: &str, name: &str) -> bool {
        self.pending.iter().any(|g| {
            let (ns_glob, name_glob) = g.split_once('/').unwrap_or(("*", g.as_str()));
            glob_matches(ns_glob, ns) && glob_matches(name_glob, name)
        })
    }
}

impl NodeRule {
    pub fn matches(&self, node: &str) -> bool {
        self.pattern
            .as_deref()
            .is_none_or(|g| glob_matches(g, node))
    }
}

/// Whole-name globbing (`*`, `?`, classes) as every other scenario pattern matches; a pattern
/// that does not compile matches nothing.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    helmdeck_formats::glob::KindGlob::new(glob).is_ok_and(|g| g.matches("", text))
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_matches("data-*-db-?", "data-demo-db-0"));
        assert!(!glob_matches("data-*-db-?", "data-demo-db-10"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("node-1", "node-10"));
    }

    #[test]
    fn node_rules_and_storage_parse() {
        let s = Scenario::parse(
            "node_rules:\n  - match: node-1\n    capacity: {nvidia.com/gpu: \"0\", cpu: \"2\"}\n    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\nstorage:\n  bind_after: 2s\n  pending: [\"apps/data-*\"]\n",
            "t",
        )
        .unwrap();
        assert!(s.node_rules[0].matches("node-1"));
        assert!(!s.node_rules[0].matches("node-2"));
        assert_eq!(s.node_rules[0].taints[0].effect, TaintEffect::NoSchedule);
        assert_eq!(s.storage.bind_after, Some(Duration::from_secs(2)));
        assert!(s.storage.keeps_pending("apps", "data-x"));
        assert!(!s.storage.keeps_pending("default", "data-x"));
        assert!(s.storage.default_class);
        let err = Scenario::parse(
            "node_rules: [{taints: [{key: k, effect: Sometimes}]}]\n",
            "t",
        );
        assert!(err.is_err());
    }
}
