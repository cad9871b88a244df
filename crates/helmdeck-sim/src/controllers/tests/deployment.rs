//! Deployment controller tests: rollouts, the Recreate strategy, rollbacks, the progress
//! deadline and the scenario rules that bend them (never observe, surge never terminates).

use super::*;

#[test]
fn deployment_rolls_out_then_rolls_to_a_new_replicaset() {
    let mut h =
        Harness::new("workloads:\n  - match: Deployment/web\n    logs: [\"listening on :3000\"]\n");
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    h.run(Duration::from_millis(300));
    let d = h.get(*ids::DEPLOYMENTS, "web");
    for k in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(n(&d, &format!("/status/{k}")), 3, "{k}");
    }
    assert_eq!(
        n(&d, "/status/observedGeneration"),
        n(&d, "/metadata/generation")
    );
    assert!(kstatus_deployment_current(&d), "{:#}", d["status"]);
    let progressing = condition(&d, "Progressing").unwrap();
    assert_eq!(progressing["reason"], "NewReplicaSetAvailable");
    let rs1 = h.list(*ids::REPLICASETS, "web-");
    assert_eq!(rs1.len(), 1);
    let rs1_name = meta(&rs1[0], "name").to_string();
    assert_eq!(
        progressing["message"],
        format!("ReplicaSet \"{rs1_name}\" has successfully progressed.")
    );
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(
        rs1[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(rs1[0]["metadata"]["ownerReferences"][0]["controller"], true);
    let hash = rs1_name.strip_prefix("web-").unwrap();
    assert_eq!(hash.len(), 10);
    let pods = h.list(*ids::PODS, &format!("{rs1_name}-"));
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        assert!(pod_ready(pod));
        assert_eq!(pod["metadata"]["labels"]["pod-template-hash"], hash);
        assert_eq!(pod["status"]["phase"], "Running");
        assert!(
            pod["spec"]["nodeName"]
                .as_str()
                .unwrap()
                .starts_with("node-")
        );
        assert!(pod["status"]["podIP"].is_string());
        let logs = h
            .sim
            .logs
            .read(NS, meta(pod, "name"), "app", false)
            .unwrap();
        assert_eq!(
            logs.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
            ["listening on :3000"]
        );
        for reason in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
            assert_eq!(h.events(meta(pod, "name"), reason).len(), 1, "{reason}");
        }
    }
    assert_eq!(
        h.events("web", "ScalingReplicaSet")[0]["message"],
        format!("Scaled up replica set {rs1_name} from 0 to 3")
    );

    // A template change rolls to a new ReplicaSet, never above replicas + maxSurge (25% of 3 → 1).
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    assert!(matches!(
        h.rollout(*ids::DEPLOYMENTS, "web"),
        Rollout::Waiting(_)
    ));
    let done = h.run_until(Duration::from_secs(20), |h| {
        assert!(h.list(*ids::PODS, "web-").len() <= 4, "maxSurge exceeded");
        h.rollout(*ids::DEPLOYMENTS, "web") == Rollout::Done
    });
    assert!(done);
    h.run(Duration::from_millis(300));
    let d = h.get(*ids::DEPLOYMENTS, "web");
    assert_eq!(n(&d, "/metadata/generation"), 2);
    assert!(kstatus_deployment_current(&d), "{:#}", d["status"]);
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let old = h.get(*ids::REPLICASETS, &rs1_name);
    assert_eq!(n(&old, "/spec/replicas"), 0);
    assert_eq!(n(&old, "/status/replicas"), 0);
    assert_eq!(
        n(&old, "/status/observedGeneration"),
        n(&old, "/metadata/generation")
    );
    assert!(
        h.list(*ids::PODS, &format!("{rs1_name}-")).is_empty(),
        "old pods are gone"
    );
    let rs = h.list(*ids::REPLICASETS, "web-");
    let new = rs.iter().find(|r| meta(r, "name") != rs1_name).unwrap();
    assert_eq!(n(new, "/status/readyReplicas"), 3);
    assert_eq!(
        new["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let scaled: Vec<String> = h
        .events("web", "ScalingReplicaSet")
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        scaled
            .iter()
            .any(|m| m == &format!("Scaled down replica set {rs1_name} from 3 to 2")),
        "{scaled:?}"
    );
}

#[test]
fn never_observe_keeps_observed_generation_behind_and_old_pods_ready() {
    let mut h = Harness::new(
        "workloads:\n  - match: Deployment/web\n    generation: 2\n    never_observe: true\n",
    );
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    h.run(Duration::from_secs(10));
    let d = h.get(*ids::DEPLOYMENTS, "web");
    assert_eq!(n(&d, "/metadata/generation"), 2);
    assert_eq!(n(&d, "/status/observedGeneration"), 1);
    assert_eq!(
        h.rollout(*ids::DEPLOYMENTS, "web"),
        Rollout::Waiting("Waiting for deployment spec update to be observed...".into())
    );
    assert_eq!(h.list(*ids::REPLICASETS, "web-").len(), 1);
    let pods = h.list(*ids::PODS, "web-");
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| pod_ready(p)));
}

#[test]
fn surge_never_terminates_leaves_an_old_replica() {
    let mut h = Harness::new(
        "workloads:\n  - match: Deployment/web\n    generation: 2\n    surge_never_terminates: true\n",
    );
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    h.run(Duration::from_secs(20));
    let d = h.get(*ids::DEPLOYMENTS, "web");
    assert_eq!(n(&d, "/status/updatedReplicas"), 3);
    assert!(
        n(&d, "/status/replicas") > n(&d, "/status/updatedReplicas"),
        "{:#}",
        d["status"]
    );
    assert_eq!(
        h.rollout(*ids::DEPLOYMENTS, "web"),
        Rollout::Waiting("1 old replicas are pending termination...".into())
    );
}

#[test]
fn crash_loop_exceeds_the_progress_deadline() {
    let mut h = Harness::new(
        "workloads:\n  - match: Deployment/web\n    crash_loop: 3\n    progress_deadline: 4s\n    logs: [\"starting\", \"Error: no config\"]\n",
    );
    h.create(*ids::DEPLOYMENTS, deployment("web", 1));
    let created = h.t;
    let failed = h.run_until(Duration::from_secs(30), |h| {
        matches!(h.rollout(*ids::DEPLOYMENTS, "web"), Rollout::Error(_))
    });
    assert!(failed);
    // Counted from the last progress (the pod's creation), so not before 4s.
    let after = h.t - created;
    assert!(
        after > Duration::from_secs(4) && after < Duration::from_secs(6),
        "{after:?}"
    );
    assert_eq!(
        h.rollout(*ids::DEPLOYMENTS, "web"),
        Rollout::Error("deployment \"web\" exceeded its progress deadline".into())
    );
    let d = h.get(*ids::DEPLOYMENTS, "web");
    let c = condition(&d, "Progressing").unwrap();
    assert_eq!(
        (c["status"].as_str(), c["reason"].as_str()),
        (Some("False"), Some("ProgressDeadlineExceeded"))
    );
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .ends_with("has timed out progressing.")
    );
    h.run(Duration::from_secs(5));
    let pod = h.list(*ids::PODS, "web-").pop().unwrap();
    let cs = &pod["status"]["containerStatuses"][0];
    assert!(n(cs, "/restartCount") >= 2, "{cs:#}");
    assert_eq!(cs["lastState"]["terminated"]["exitCode"], 3);
    assert_eq!(cs["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(cs["ready"], false);
    let name = meta(&pod, "name").to_string();
    let backoff = h.events(&name, "BackOff");
    assert_eq!(backoff[0]["type"], "Warning");
    assert!(n(&backoff[0], "/count") >= 2, "repeats bump the count");
    let prev = h.sim.logs.read(NS, &name, "app", true).unwrap();
    let prev: Vec<&str> = prev.iter().map(|l| l.1.as_str()).collect();
    assert_eq!(
        prev,
        ["starting", "Error: no config", "fatal: exit status 3"]
    );
    // Reach the back-off state and check the kubelet's wording.
    assert!(h.run_until(Duration::from_secs(10), |h| {
        let pod = h.get(*ids::PODS, &name);
        pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    }));
    let pod = h.get(*ids::PODS, &name);
    let msg = pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.starts_with("back-off ")
            && msg.contains(&format!("restarting failed container=app pod={name}_")),
        "{msg}"
    );
    assert_eq!(pod["status"]["phase"], "Running");
}

#[test]
fn recreate_strategy_replaces_all_pods() {
    let mut h = Harness::new("{}");
    let mut d = deployment("web", 2);
    d["spec"]["strategy"] = json!({"type": "Recreate"});
    h.create(*ids::DEPLOYMENTS, d);
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let old: Vec<String> = h
        .list(*ids::PODS, "web-")
        .iter()
        .map(|p| meta(p, "name").to_string())
        .collect();
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let now: Vec<String> = h
        .list(*ids::PODS, "web-")
        .iter()
        .map(|p| meta(p, "name").to_string())
        .collect();
    assert_eq!(now.len(), 2);
    assert!(now.iter().all(|p| !old.contains(p)));
}

#[test]
fn rollback_reuses_the_old_replicaset_with_a_new_revision() {
    let mut h = Harness::new("{}");
    h.create(*ids::DEPLOYMENTS, deployment("web", 2));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let rs1 = meta(&h.list(*ids::REPLICASETS, "web-")[0], "name").to_string();
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    h.set_image(*ids::DEPLOYMENTS, "web", "web:1");
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    h.run(Duration::from_millis(300));
    assert_eq!(
        h.list(*ids::REPLICASETS, "web-").len(),
        2,
        "no third ReplicaSet"
    );
    let rs = h.get(*ids::REPLICASETS, &rs1);
    assert_eq!(n(&rs, "/spec/replicas"), 2);
    assert_eq!(
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    let d = h.get(*ids::DEPLOYMENTS, "web");
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    assert!(kstatus_deployment_current(&d));
}

/// As the deployment controller's cleanup: once complete, a Deployment keeps only
/// `revisionHistoryLimit` old ReplicaSets (the newest ones); while it rolls, none goes.
#[test]
fn old_replicasets_beyond_the_revision_history_limit_are_deleted_once_complete() {
    let mut h = Harness::new("");
    let mut dep = deployment("web", 2);
    dep["spec"]["revisionHistoryLimit"] = json!(2);
    h.create(*ids::DEPLOYMENTS, dep);
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let revisions = |h: &Harness| {
        let mut r: Vec<i64> = h
            .list(*ids::REPLICASETS, "web-")
            .iter()
            .map(|rs| {
                rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        r.sort();
        r
    };
    let kept = [
        vec![1],
        vec![1, 2],
        vec![1, 2, 3],
        vec![2, 3, 4],
        vec![3, 4, 5],
    ];
    for image in 2..=5 {
        h.set_image(*ids::DEPLOYMENTS, "web", &format!("web:{image}"));
        h.step();
        // Rolling: nothing is deleted, the new revision is added.
        let mut rolling = kept[image - 2].clone();
        rolling.push(image as i64);
        assert_eq!(revisions(&h), rolling, "rolling to {image}");
        assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
        h.run(Duration::from_millis(300));
        assert_eq!(revisions(&h), kept[image - 1], "rolled out {image}");
    }
}
