//! StatefulSet controller tests: ordered rollouts, revisions that converge or, by scenario,
//! never do.

use super::*;

#[test]
fn statefulset_rolls_in_order_and_converges_revisions() {
    let mut h = Harness::new("{}");
    h.create(*ids::STATEFULSETS, statefulset("db", 3));
    h.run(Duration::from_millis(300));
    let names: Vec<String> = h
        .list(*ids::PODS, "db-")
        .iter()
        .map(|p| meta(p, "name").to_string())
        .collect();
    assert_eq!(names, ["db-0"], "OrderedReady: one at a time");
    assert!(h.rolls_out(*ids::STATEFULSETS, "db", 10));
    let s = h.get(*ids::STATEFULSETS, "db");
    assert_eq!(
        s["status"]["currentRevision"],
        s["status"]["updateRevision"]
    );
    let rev1 = s["status"]["updateRevision"].as_str().unwrap().to_string();
    assert!(rev1.starts_with("db-"));
    let pod = h.get(*ids::PODS, "db-2");
    assert_eq!(
        pod["metadata"]["labels"]["controller-revision-hash"],
        rev1.as_str()
    );
    assert_eq!(
        pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
        "db-2"
    );
    let pvc = h
        .sim
        .store
        .get(*super::super::PVCS, Some(NS), "data-db-2")
        .unwrap();
    assert_eq!(pvc["status"]["phase"], "Bound");

    h.set_image(*ids::STATEFULSETS, "db", "db:2");
    let converged = h.run_until(Duration::from_secs(30), |h| {
        let s = h.get(*ids::STATEFULSETS, "db");
        h.rollout(*ids::STATEFULSETS, "db") == Rollout::Done
            && s["status"]["currentRevision"] == s["status"]["updateRevision"]
    });
    assert!(converged);
    let s = h.get(*ids::STATEFULSETS, "db");
    let rev2 = s["status"]["updateRevision"].as_str().unwrap();
    assert_ne!(rev2, rev1);
    assert_eq!(
        (
            n(&s, "/status/currentReplicas"),
            n(&s, "/status/updatedReplicas")
        ),
        (3, 3)
    );
    for i in 0..3 {
        assert_eq!(
            h.get(*ids::PODS, &format!("db-{i}"))["metadata"]["labels"]["controller-revision-hash"],
            rev2
        );
    }
}

#[test]
fn statefulset_revision_never_converges() {
    let mut h = Harness::new(
        "workloads:\n  - match: StatefulSet/db\n    generation: 2\n    revision_never_converges: true\n",
    );
    h.create(*ids::STATEFULSETS, statefulset("db", 2));
    assert!(h.rolls_out(*ids::STATEFULSETS, "db", 10));
    h.set_image(*ids::STATEFULSETS, "db", "db:2");
    h.run(Duration::from_secs(15));
    let s = h.get(*ids::STATEFULSETS, "db");
    assert_eq!(
        (
            n(&s, "/status/updatedReplicas"),
            n(&s, "/status/readyReplicas")
        ),
        (2, 2)
    );
    assert_ne!(
        s["status"]["currentRevision"],
        s["status"]["updateRevision"]
    );
    // kubectl (partition 0 defaulted) says done; Helm legacy would wait on the revisions.
    assert_eq!(h.rollout(*ids::STATEFULSETS, "db"), Rollout::Done);
}
