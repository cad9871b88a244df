//! Helm release records for scenario seeds, stored as Helm 4's Secret driver stores them.

use serde_json::{Value, json};

use super::scenario::SeedRelease;
use helmdeck_formats::release::release_secret;

/// One Secret per seeded revision, with timestamps `age` in the past.
pub fn release_secrets(release: &SeedRelease) -> Vec<Value> {
    let now = jiff::Timestamp::now();
    release
        .revisions
        .iter()
        .map(|rev| {
            let age = rev.age.unwrap_or_default();
            let when = now
                .checked_sub(jiff::SignedDuration::try_from(age).unwrap_or_default())
                .unwrap_or(now);
            let stamp = helmdeck_formats::time::rfc3339(when);
            let chart = rev.chart.clone().unwrap_or_else(|| "deckapp".into());
            let version = rev.chart_version.clone().unwrap_or_else(|| "0.4.2".into());
            let description =
                rev.description
                    .clone()
                    .unwrap_or_else(|| match rev.status.as_str() {
                        "pending-upgrade" => "Preparing upgrade".into(),
                        "pending-install" => "Initial install underway".into(),
                        "deployed" if rev.version == 1 => "Install complete".into(),
                        "failed" => format!("Upgrade \"{}\" failed: seeded failure", release.name),
                        _ => "Upgrade complete".into(),
                    });
            let record = json!({
                "name": release.name,
                "namespace": release.namespace,
                "version": rev.version,
                "info": {"first_deployed": stamp, "last_deployed": stamp, "status": rev.status,
                         "description": description},
                "chart": {"metadata": {"name": chart, "version": version, "apiVersion": "v2",
                                       "appVersion": "1.4.2"}},
                "manifest": "",
                "apply_method": "ssa",
            });
            let mut secret = release_secret(&record, when.as_second());
            // Written `age` ago, so the API server stamped it then.
            secret["metadata"]["creationTimestamp"] = json!(stamp);
            secret
        })
        .collect()
}

/// GPUs of a node labelled `nvidia.com/gpu.present: "true"` unless a node rule says otherwise.
const NODE_GPUS: &str = "4";

/// Gives a simulated node what the scenario says of it: the node rules' labels, capacity
/// (over the defaults: 4 cpu, ~16 GiB, 10,000 pods so the benchmarks' pods fit on few
/// nodes, and GPUs on GPU-labelled nodes) and taints. Allocatable equals capacity.
pub fn shape_node(scenario: &crate::scenario::Scenario, node: &mut Value) {
    let name = node["metadata"]["name"].as_str().unwrap_or("").to_string();
    let rules: Vec<_> = scenario
        .node_rules
        .iter()
        .filter(|r| r.matches(&name))
        .collect();
    for rule in &rules {
        for (k, v) in &rule.labels {
            node["metadata"]["labels"][k] = json!(v);
        }
    }
    let mut capacity = json!({"cpu": "4", "memory": "16393244Ki", "pods": "10000",
                              "ephemeral-storage": "102687672Ki"});
    if node.pointer("/metadata/labels/nvidia.com~1gpu.present") == Some(&json!("true")) {
        capacity["nvidia.com/gpu"] = json!(NODE_GPUS);
    }
    let mut taints = Vec::new();
    for rule in &rules {
        for (k, v) in &rule.capacity {
            capacity[k] = json!(v);
        }
        for t in &rule.taints {
            taints.push(json!({"key": t.key, "value": t.value, "effect": t.effect.as_str()}));
        }
    }
    if !taints.is_empty() && node["spec"].is_object() {
        node["spec"]["taints"] = json!(taints);
    }
    node["status"]["capacity"] = capacity.clone();
    node["status"]["allocatable"] = capacity;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
               "spec": {}, "status": {}})
    }

    #[test]
    fn nodes_get_capacity_gpus_and_taints_from_the_rules() {
        let s = crate::scenario::Scenario::parse(
            "node_rules:\n  - match: node-1\n    capacity: {nvidia.com/gpu: \"0\", pods: \"110\"}\n    labels: {zone: a}\n    taints: [{key: dedicated, value: infra, effect: NoSchedule}]\n",
            "t",
        )
        .unwrap();
        let mut n1 = node("node-1");
        shape_node(&s, &mut n1);
        assert_eq!(n1["status"]["allocatable"]["nvidia.com/gpu"], "0");
        assert_eq!(n1["status"]["capacity"]["pods"], "110");
        assert_eq!(n1["metadata"]["labels"]["zone"], "a");
        assert_eq!(n1["spec"]["taints"][0]["effect"], "NoSchedule");
        let mut n2 = node("node-2");
        shape_node(&s, &mut n2);
        assert_eq!(n2["status"]["allocatable"]["nvidia.com/gpu"], NODE_GPUS);
        assert!(n2["spec"].get("taints").is_none());
        let mut plain =
            json!({"metadata": {"name": "node-3", "labels": {}}, "spec": {}, "status": {}});
        shape_node(&s, &mut plain);
        assert!(plain["status"]["capacity"].get("nvidia.com/gpu").is_none());
    }
}
