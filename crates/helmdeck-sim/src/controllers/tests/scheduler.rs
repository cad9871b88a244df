//! Scheduler tests: requests against allocatable, taints, pod anti-affinity, claims, and
//! retries when the cluster changes; the FailedScheduling messages in the scheduler's words.

use super::super::PVCS;
use super::*;

fn bare_pod(name: &str, requests: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
           "spec": {"containers": [{"name": "app", "image": "gpu:1", "resources": {"requests": requests}}]}})
}

fn scheduled(pod: &Value) -> Option<(&str, &str)> {
    let c = condition(pod, "PodScheduled")?;
    Some((c["status"].as_str()?, c["message"].as_str().unwrap_or("")))
}

const GPU_FULL: &str = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. no new claims to \
    deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";

#[test]
fn gpus_are_counted_per_node_and_a_freed_gpu_lets_the_waiting_pod_in() {
    let mut h = Harness::new("nodes: 3\n");
    for i in 1..=4 {
        h.create(
            *ids::PODS,
            bare_pod(&format!("train-{i}"), json!({"nvidia.com/gpu": 4})),
        );
        h.step();
    }
    h.run(Duration::from_secs(2));
    let nodes: Vec<String> = (1..=3)
        .map(|i| h.get(*ids::PODS, &format!("train-{i}"))["spec"]["nodeName"].to_string())
        .collect();
    assert_eq!(
        nodes.iter().collect::<std::collections::HashSet<_>>().len(),
        3,
        "one 4-GPU pod per node: {nodes:?}"
    );
    let last = h.get(*ids::PODS, "train-4");
    assert_eq!(scheduled(&last), Some(("False", GPU_FULL)));
    let ev = h.events("train-4", "FailedScheduling");
    assert_eq!(ev[0]["message"], GPU_FULL);
    h.sim
        .store
        .delete_leaf(*ids::PODS, Some(NS), "train-2")
        .unwrap();
    let runs = h.run_until(Duration::from_secs(5), |h| {
        h.get(*ids::PODS, "train-4")["status"]["phase"] == "Running"
    });
    assert!(runs, "the freed node takes the waiting pod");
}

#[test]
fn no_gpu_anywhere_is_not_helped_by_preemption_and_cpu_is_checked_too() {
    let mut h = Harness::new("nodes: 3\nnode_labels: {}\nnode_rules: [{capacity: {cpu: \"1\"}}]\n");
    h.create(*ids::PODS, bare_pod("gpu", json!({"nvidia.com/gpu": 1})));
    h.create(*ids::PODS, bare_pod("big", json!({"cpu": "1500m"})));
    h.create(*ids::PODS, bare_pod("fits", json!({"cpu": "900m"})));
    h.run(Duration::from_secs(2));
    assert_eq!(
        scheduled(&h.get(*ids::PODS, "gpu")).unwrap().1,
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. no new claims to deallocate, \
         preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        scheduled(&h.get(*ids::PODS, "big")).unwrap().1,
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, \
         preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert_eq!(h.get(*ids::PODS, "fits")["status"]["phase"], "Running");
}

#[test]
fn taints_keep_pods_without_a_toleration_off() {
    let mut h = Harness::new(
        "nodes: 3\nnode_rules:\n  - match: node-1\n    taints: [{key: dedicated, value: infra, effect: NoSchedule}]\n  - match: node-2\n    taints: [{key: dedicated, value: infra, effect: NoSchedule}]\n  - match: node-3\n    taints: [{key: gpu, effect: NoExecute}]\n  - taints: [{key: soft, effect: PreferNoSchedule}]\n",
    );
    h.create(*ids::PODS, bare_pod("plain", json!({})));
    let mut tolerant = bare_pod("tolerant", json!({}));
    tolerant["spec"]["tolerations"] = json!([{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]);
    h.create(*ids::PODS, tolerant);
    h.run(Duration::from_secs(2));
    assert_eq!(
        scheduled(&h.get(*ids::PODS, "plain")).unwrap().1,
        "0/3 nodes are available: 3 node(s) had untolerated taint(s). no new claims to deallocate, \
         preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    let t = h.get(*ids::PODS, "tolerant");
    assert_eq!(t["status"]["phase"], "Running");
    assert!(
        ["\"node-1\"", "\"node-2\""].contains(&t["spec"]["nodeName"].to_string().as_str()),
        "PreferNoSchedule does not filter, NoExecute does: {}",
        t["spec"]["nodeName"]
    );
    let node = h.sim.store.get(*ids::NODES, None, "node-1").unwrap();
    assert_eq!(node["spec"]["taints"][0]["key"], "dedicated");
}

#[test]
fn required_anti_affinity_leaves_the_replica_beyond_the_nodes_pending() {
    let mut h = Harness::new("nodes: 3\n");
    let mut d = deployment("spread", 4);
    d["spec"]["template"]["spec"]["affinity"] = json!({"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"app": "spread"}}}]}});
    h.create(*ids::DEPLOYMENTS, d);
    h.run(Duration::from_secs(3));
    let pods = h.list(*ids::PODS, "spread-");
    let mut nodes: Vec<&str> = pods
        .iter()
        .filter_map(|p| p["spec"]["nodeName"].as_str())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["node-1", "node-2", "node-3"]);
    let pending: Vec<_> = pods
        .iter()
        .filter(|p| p["status"]["phase"] == "Pending")
        .collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        scheduled(pending[0]).unwrap().1,
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. no new claims to \
         deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    );
}

fn pod_with_claim(name: &str, claim: &str) -> Value {
    let mut p = bare_pod(name, json!({}));
    p["spec"]["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]);
    p
}

fn claim(name: &str, class: Option<&str>) -> Value {
    let mut c = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    if let Some(class) = class {
        c["spec"]["storageClassName"] = json!(class);
    }
    c
}

#[test]
fn claims_must_exist_and_be_bound_before_the_pod_schedules() {
    let mut h = Harness::new("storage:\n  bind_after: 1s\n  pending: [\"stuck-*\"]\n");
    h.create(*ids::PODS, pod_with_claim("orphan", "missing"));
    h.create(*ids::PODS, pod_with_claim("waits", "stuck-data"));
    h.create(*PVCS, claim("stuck-data", None));
    h.create(*PVCS, claim("slow-data", None));
    h.create(*PVCS, claim("odd-data", Some("fast")));
    h.step();
    h.create(*ids::PODS, pod_with_claim("binds", "slow-data"));
    h.run(Duration::from_millis(500));
    assert_eq!(
        scheduled(&h.get(*ids::PODS, "orphan")).unwrap().1,
        "0/3 nodes are available: persistentvolumeclaim \"missing\" not found. no new claims to \
         deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    let unbound = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. no new \
        claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_eq!(scheduled(&h.get(*ids::PODS, "binds")).unwrap().1, unbound);
    let runs = h.run_until(Duration::from_secs(5), |h| {
        h.get(*ids::PODS, "binds")["status"]["phase"] == "Running"
    });
    assert!(runs, "the pod schedules once its claim is bound");
    let slow = h.get(*PVCS, "slow-data");
    assert_eq!(slow["status"]["phase"], "Bound");
    let volume = slow["spec"]["volumeName"].as_str().unwrap().to_string();
    assert_eq!(volume, format!("pvc-{}", meta(&slow, "uid")));
    assert_eq!(slow["spec"]["storageClassName"], "standard");
    let pv_res = crate::resources::by_path("", "v1", "persistentvolumes").unwrap();
    let pv = h.sim.store.get(pv_res, None, &volume).unwrap();
    assert_eq!(pv["spec"]["claimRef"]["name"], "slow-data");
    assert!(!h.events("slow-data", "ProvisioningSucceeded").is_empty());

    h.run(Duration::from_secs(20));
    assert_eq!(h.get(*PVCS, "stuck-data")["status"]["phase"], json!(null));
    assert_eq!(scheduled(&h.get(*ids::PODS, "waits")).unwrap().1, unbound);
    let waiting = h.events("stuck-data", "ExternalProvisioning");
    assert!(
        waiting[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Waiting for a volume to be created either by the external provisioner 'k8s.io/minikube-hostpath'"),
        "{waiting:?}"
    );
    assert!(
        waiting[0]["count"].as_i64().unwrap() >= 2,
        "repeated as the controller resyncs"
    );
    let failed = h.events("odd-data", "ProvisioningFailed");
    assert_eq!(
        failed[0]["message"],
        "storageclass.storage.k8s.io \"fast\" not found"
    );
    assert_eq!(failed[0]["type"], "Warning");

    h.sim
        .store
        .delete_leaf(*PVCS, Some(NS), "slow-data")
        .unwrap();
    h.run(Duration::from_millis(300));
    assert!(
        h.sim.store.get(pv_res, None, &volume).is_err(),
        "reclaim policy Delete"
    );
}

#[test]
fn statefulset_claims_bind_and_its_pods_roll_out_without_a_scheduling_failure() {
    let mut h = Harness::new("{}");
    h.create(*ids::STATEFULSETS, statefulset("db", 2));
    assert!(h.rolls_out(*ids::STATEFULSETS, "db", 10));
    assert!(h.events("db-0", "FailedScheduling").is_empty());
    assert_eq!(h.get(*PVCS, "data-db-1")["status"]["phase"], "Bound");
}

#[test]
fn the_default_nodes_show_capacity_and_gpus() {
    let h = Harness::new("nodes: 2\n");
    let node = h.sim.store.get(*ids::NODES, None, "node-2").unwrap();
    assert_eq!(node["status"]["allocatable"]["nvidia.com/gpu"], "4");
    assert_eq!(node["status"]["capacity"]["cpu"], "4");
    let sc = h
        .sim
        .store
        .get(
            *super::super::volume_binding::STORAGE_CLASSES,
            None,
            "standard",
        )
        .unwrap();
    assert_eq!(
        sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"],
        "true"
    );
}
