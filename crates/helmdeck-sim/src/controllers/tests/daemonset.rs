//! DaemonSet controller tests: one pod per node and the rolling update.

use super::*;

#[test]
fn daemonset_runs_one_pod_per_node_and_rolls() {
    let mut h = Harness::new("nodes: 3\n");
    h.create(*ids::DAEMONSETS, daemonset("agent"));
    assert!(h.rolls_out(*ids::DAEMONSETS, "agent", 10));
    let pods = h.list(*ids::PODS, "agent-");
    let mut nodes: Vec<&str> = pods
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().unwrap())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["node-1", "node-2", "node-3"]);
    assert!(
        pods.iter()
            .all(|p| meta(p, "name").len() == "agent-".len() + 5)
    );
    let ds = h.get(*ids::DAEMONSETS, "agent");
    assert_eq!(
        (
            n(&ds, "/status/desiredNumberScheduled"),
            n(&ds, "/status/numberReady")
        ),
        (3, 3)
    );
    h.set_image(*ids::DAEMONSETS, "agent", "agent:2");
    assert!(matches!(
        h.rollout(*ids::DAEMONSETS, "agent"),
        Rollout::Waiting(_)
    ));
    assert!(h.rolls_out(*ids::DAEMONSETS, "agent", 20));
    let pods = h.list(*ids::PODS, "agent-");
    assert_eq!(pods.len(), 3);
    let hash = &pods[0]["metadata"]["labels"]["controller-revision-hash"];
    assert!(
        pods.iter()
            .all(|p| &p["metadata"]["labels"]["controller-revision-hash"] == hash)
    );
}
