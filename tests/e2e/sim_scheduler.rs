//! The simulated scheduler as real kubectl shows it: requests against node allocatable,
//! taints, pod anti-affinity and claims, with FailedScheduling in the scheduler's words.

use std::time::Duration;

use crate::support::{Sim, text};

/// `kubectl apply -f` of `yaml` in namespace `apps`.
fn apply(sim: &Sim, name: &str, yaml: &str) {
    let path = sim.dir.path().join(name);
    std::fs::write(&path, yaml).expect("write manifest");
    let out = sim.kubectl(&["apply", "-n", "apps", "-f", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
}

fn kubectl_out(sim: &Sim, args: &[&str]) -> String {
    let out = sim.kubectl(args);
    assert!(out.status.success(), "kubectl {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The phase of pod `name` in `apps`.
fn phase(sim: &Sim, name: &str) -> String {
    let args = [
        "get",
        "pod",
        name,
        "-n",
        "apps",
        "-o",
        "jsonpath={.status.phase}",
    ];
    kubectl_out(sim, &args)
}

fn pod(name: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{app: {name}}}}}\nspec:\n  containers:\n  - name: app\n    image: app:1\n{extra_spec}---\n"
    )
}

#[test]
fn a_gpu_pod_on_a_full_cluster_shows_the_schedulers_message() {
    let sim = Sim::start_yaml(
        "nodes: 3\nnamespaces: [apps]\nnode_rules: [{capacity: {nvidia.com/gpu: \"1\"}}]\n",
    );
    let gpu = "    resources: {limits: {nvidia.com/gpu: 1}, requests: {nvidia.com/gpu: 1}}\n";
    let all: String = (1..=4).map(|i| pod(&format!("train-{i}"), gpu)).collect();
    apply(&sim, "gpu.yaml", &all);
    sim.wait_for("three GPU pods running", Duration::from_secs(20), |s| {
        (1..=4)
            .filter(|i| phase(s, &format!("train-{i}")) == "Running")
            .count()
            == 3
    });
    let pending = (1..=4)
        .map(|i| format!("train-{i}"))
        .find(|p| phase(&sim, p) == "Pending")
        .expect("one pod pending");
    let describe = kubectl_out(&sim, &["describe", "pod", &pending, "-n", "apps"]);
    assert!(
        describe.contains(
            "FailedScheduling  "
        ) && describe.contains(
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. no new claims to deallocate, \
             preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        ),
        "{describe}"
    );
    let node = kubectl_out(&sim, &["describe", "node", "node-1"]);
    assert!(node.contains("nvidia.com/gpu:     1"), "{node}");
}

#[test]
fn a_taint_without_a_toleration_keeps_the_pod_pending() {
    let sim = Sim::start_yaml(
        "nodes: 3\nnamespaces: [apps]\nnode_rules: [{taints: [{key: dedicated, value: infra, effect: NoSchedule}]}]\n",
    );
    let tolerates =
        "  tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]\n";
    apply(
        &sim,
        "pods.yaml",
        &format!("{}{}", pod("plain", ""), pod("tolerant", tolerates)),
    );
    sim.wait_for("the tolerant pod running", Duration::from_secs(20), |s| {
        phase(s, "tolerant") == "Running"
    });
    assert_eq!(phase(&sim, "plain"), "Pending");
    let describe = kubectl_out(&sim, &["describe", "pod", "plain", "-n", "apps"]);
    assert!(
        describe.contains(
            "0/3 nodes are available: 3 node(s) had untolerated taint(s). no new claims to deallocate, \
             preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        ),
        "{describe}"
    );
    let node = kubectl_out(&sim, &["describe", "node", "node-2"]);
    assert!(
        node.contains("Taints:             dedicated=infra:NoSchedule"),
        "{node}"
    );
}

#[test]
fn anti_affinity_with_more_replicas_than_nodes_leaves_one_pending() {
    let sim = Sim::start_yaml("nodes: 3\nnamespaces: [apps]\n");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: spread}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: spread}}\n  template:\n    metadata: {labels: {app: spread}}\n    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n          - topologyKey: kubernetes.io/hostname\n            labelSelector: {matchLabels: {app: spread}}\n      containers: [{name: app, image: app:1}]\n";
    apply(&sim, "spread.yaml", deployment);
    let statuses = |s: &Sim| {
        let args = [
            "get",
            "pods",
            "-n",
            "apps",
            "-l",
            "app=spread",
            "--no-headers",
        ];
        kubectl_out(s, &args)
    };
    sim.wait_for("three running, one pending", Duration::from_secs(20), |s| {
        let out = statuses(s);
        out.matches(" Running ").count() == 3 && out.matches(" Pending ").count() == 1
    });
    let events = kubectl_out(
        &sim,
        &[
            "get",
            "events",
            "-n",
            "apps",
            "--field-selector",
            "reason=FailedScheduling",
        ],
    );
    assert!(
        events.contains("0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."),
        "{events}"
    );
}

#[test]
fn a_claim_kept_pending_keeps_its_pod_pending_and_a_default_class_claim_binds() {
    let sim = Sim::start_yaml(
        "nodes: 3\nnamespaces: [apps]\nstorage:\n  bind_after: 1s\n  pending: [stuck]\n",
    );
    let claim = |name: &str| {
        format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: 1Gi}}}}\n---\n"
        )
    };
    let uses = |c: &str| {
        format!(
            "    volumeMounts: [{{name: data, mountPath: /data}}]\n  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {c}}}}}]\n"
        )
    };
    let all = [
        claim("stuck"),
        claim("data"),
        pod("waits", &uses("stuck")),
        pod("runs", &uses("data")),
    ]
    .concat();
    apply(&sim, "claims.yaml", &all);
    sim.wait_for(
        "the default-class claim's pod running",
        Duration::from_secs(20),
        |s| phase(s, "runs") == "Running",
    );
    let pvcs = kubectl_out(&sim, &["get", "pvc", "-n", "apps"]);
    let line = |name: &str| {
        pvcs.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {pvcs}"))
            .to_string()
    };
    assert!(
        line("data").contains("Bound") && line("data").contains("pvc-"),
        "{pvcs}"
    );
    assert!(line("data").contains("standard"), "{pvcs}");
    assert!(line("stuck").contains("Pending"), "{pvcs}");
    assert_eq!(phase(&sim, "waits"), "Pending");
    let describe = kubectl_out(&sim, &["describe", "pod", "waits", "-n", "apps"]);
    assert!(
        describe.contains(
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. no new claims \
             to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        ),
        "{describe}"
    );
    let claim_events = kubectl_out(&sim, &["describe", "pvc", "stuck", "-n", "apps"]);
    assert!(
        claim_events.contains("ExternalProvisioning"),
        "{claim_events}"
    );
    let sc = kubectl_out(&sim, &["get", "storageclass"]);
    assert!(sc.contains("standard (default)"), "{sc}");
}
