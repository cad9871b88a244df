//! Scheduler and kubelet tests: crash, OOM and image-pull failures, readiness, scheduling and
//! node selection, bare pods.

use super::*;

#[test]
fn oom_killed_and_image_pull_backoff() {
    let mut h = Harness::new(
        "workloads:\n  - match: Deployment/api\n    oom_killed: true\n  - match: Deployment/img\n    image_pull_backoff: true\n",
    );
    h.create(*ids::DEPLOYMENTS, deployment("api", 1));
    h.create(*ids::DEPLOYMENTS, deployment("img", 1));
    h.run(Duration::from_secs(3));
    let api = h.list(*ids::PODS, "api-").pop().unwrap();
    assert_eq!(
        api["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"],
        "OOMKilled"
    );
    assert_eq!(
        api["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"],
        137
    );
    let img = h.list(*ids::PODS, "img-").pop().unwrap();
    assert_eq!(img["status"]["phase"], "Pending");
    assert_eq!(
        img["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "ImagePullBackOff"
    );
    let failed: Vec<String> = h
        .events(meta(&img, "name"), "Failed")
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        failed.contains(&"Error: ErrImagePull".to_string()),
        "{failed:?}"
    );
    assert!(
        failed.contains(&"Error: ImagePullBackOff".to_string()),
        "{failed:?}"
    );
    assert!(
        failed
            .iter()
            .any(|m| m.starts_with("Failed to pull image \"web:1\"")),
        "{failed:?}"
    );
    let msg = img["status"]["containerStatuses"][0]["state"]["waiting"]["message"]
        .as_str()
        .unwrap();
    assert!(
        msg.starts_with(
            "Back-off pulling image \"web:1\": ErrImagePull: rpc error: code = NotFound"
        ),
        "{msg}"
    );
    let backoff = h.events(meta(&img, "name"), "BackOff");
    assert_eq!(backoff[0]["message"], "Back-off pulling image \"web:1\"");
}

#[test]
fn readiness_never_runs_unready_with_unhealthy_events() {
    let mut h = Harness::new("workloads:\n  - match: Deployment/web\n    readiness_never: true\n");
    h.create(*ids::DEPLOYMENTS, deployment("web", 1));
    h.run(Duration::from_secs(3));
    let pod = h.list(*ids::PODS, "web-").pop().unwrap();
    assert_eq!(pod["status"]["phase"], "Running");
    assert!(!pod_ready(&pod));
    let ev = h.events(meta(&pod, "name"), "Unhealthy");
    assert_eq!(
        ev[0]["message"],
        "Readiness probe failed: HTTP probe failed with statuscode: 503"
    );
    assert_eq!(ev[0]["type"], "Warning");
    assert_eq!(
        h.rollout(*ids::DEPLOYMENTS, "web"),
        Rollout::Waiting("0 of 1 updated replicas are available...".into())
    );
}

#[test]
fn unschedulable_pod_stays_pending_with_a_failed_scheduling_event() {
    let msg = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.";
    let mut h = Harness::new(&format!(
        "workloads:\n  - match: Deployment/gpu\n    unschedulable: \"{msg}\"\n"
    ));
    h.create(*ids::DEPLOYMENTS, deployment("gpu", 1));
    h.run(Duration::from_secs(2));
    let pod = h.list(*ids::PODS, "gpu-").pop().unwrap();
    assert_eq!(pod["status"]["phase"], "Pending");
    let c = condition(&pod, "PodScheduled").unwrap();
    assert_eq!(
        (
            c["status"].as_str(),
            c["reason"].as_str(),
            c["message"].as_str()
        ),
        (Some("False"), Some("Unschedulable"), Some(msg))
    );
    assert!(pod["spec"].get("nodeName").is_none());
    let ev = h.events(meta(&pod, "name"), "FailedScheduling");
    assert_eq!(
        (ev[0]["type"].as_str(), ev[0]["message"].as_str()),
        (Some("Warning"), Some(msg))
    );
    assert_eq!(ev[0]["source"]["component"], "default-scheduler");
}

#[test]
fn bare_pods_run_or_complete() {
    let mut h = Harness::new(
        "jobs:\n  - match: hook-*\n    outcome: fail\n    exit_code: 4\n    after: 300ms\n",
    );
    let pod = |name: &str, restart: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"restartPolicy": restart, "containers": [{"name": "app", "image": "x:1"}]}})
    };
    h.create(*ids::PODS, pod("server", "Always"));
    h.create(*ids::PODS, pod("hook-test", "Never"));
    h.create(*ids::PODS, pod("smoke", "Never"));
    h.run(Duration::from_secs(2));
    assert!(pod_ready(&h.get(*ids::PODS, "server")));
    let hook = h.get(*ids::PODS, "hook-test");
    assert_eq!(hook["status"]["phase"], "Failed");
    assert_eq!(
        hook["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        4
    );
    assert_eq!(h.get(*ids::PODS, "smoke")["status"]["phase"], "Succeeded");
}

#[test]
fn a_node_selector_no_node_matches_leaves_the_pod_unschedulable() {
    let mut h = Harness::new("nodes: 2\nnode_labels: {}\n");
    let mut d = deployment("gpu", 1);
    d["spec"]["template"]["spec"]["nodeSelector"] = json!({"nvidia.com/gpu.present": "true"});
    h.create(*ids::DEPLOYMENTS, d);
    h.run(Duration::from_secs(2));
    let pod = h.list(*ids::PODS, "gpu-").pop().unwrap();
    assert_eq!(pod["status"]["phase"], "Pending");
    let msg = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. \
               no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    let c = condition(&pod, "PodScheduled").unwrap();
    assert_eq!(
        (c["reason"].as_str(), c["message"].as_str()),
        (Some("Unschedulable"), Some(msg))
    );
    assert!(pod["spec"].get("nodeName").is_none());
    let ev = h.events(meta(&pod, "name"), "FailedScheduling");
    assert_eq!(ev[0]["message"], msg);
}

#[test]
fn node_selection_places_pods_only_on_matching_nodes() {
    // Default node labels carry the GPU label: a GPU selector schedules.
    let mut h = Harness::new("nodes: 3\n");
    let mut gpu = deployment("gpu", 1);
    gpu["spec"]["template"]["spec"]["nodeSelector"] = json!({"nvidia.com/gpu.present": "true"});
    h.create(*ids::DEPLOYMENTS, gpu);
    // Required affinity: node-2 by hostname label, not node-3 by name.
    let mut pinned = deployment("pinned", 4);
    pinned["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2", "node-3"]}],
             "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-3"]}]}]}}});
    h.create(*ids::DEPLOYMENTS, pinned);
    let mut nowhere = deployment("nowhere", 1);
    nowhere["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]}}});
    h.create(*ids::DEPLOYMENTS, nowhere);
    h.run(Duration::from_secs(3));
    assert!(pod_ready(&h.list(*ids::PODS, "gpu-")[0]));
    let pinned = h.list(*ids::PODS, "pinned-");
    assert_eq!(pinned.len(), 4);
    for pod in &pinned {
        assert_eq!(pod["spec"]["nodeName"], "node-2", "{pod}");
    }
    let pod = h.list(*ids::PODS, "nowhere-").pop().unwrap();
    assert_eq!(pod["status"]["phase"], "Pending");
}

fn with_inits(mut d: Value, restart: &str) -> Value {
    let spec = &mut d["spec"]["template"]["spec"];
    spec["restartPolicy"] = json!(restart);
    spec["initContainers"] = json!([{"name": "wait-db", "image": "busybox:1"},
                                    {"name": "migrate", "image": "busybox:1"}]);
    d
}

#[test]
fn init_containers_run_in_order_with_their_own_logs_and_events() {
    let mut h = Harness::new(
        "init_containers:\n  - match: web-*\n    container: wait-db\n    run_for: 1s\n    logs: [\"waiting for db\"]\n",
    );
    h.create(
        *ids::DEPLOYMENTS,
        with_inits(deployment("web", 1), "Always"),
    );
    h.run(Duration::from_millis(700));
    let pod = h.list(*ids::PODS, "web-").pop().unwrap();
    let inits = &pod["status"]["initContainerStatuses"];
    assert!(inits[0]["state"]["running"].is_object(), "{inits}");
    assert_eq!(inits[1]["state"]["waiting"]["reason"], "PodInitializing");
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    assert_eq!(pod["status"]["phase"], "Pending");
    let c = condition(&pod, "Initialized").unwrap();
    assert_eq!(
        (
            c["status"].as_str(),
            c["reason"].as_str(),
            c["message"].as_str()
        ),
        (
            Some("False"),
            Some("ContainersNotInitialized"),
            Some("containers with incomplete status: [wait-db migrate]")
        )
    );
    let name = meta(&pod, "name").to_string();
    let log = h.sim.logs.read(NS, &name, "wait-db", false).unwrap();
    assert_eq!(log[0].1, "waiting for db");
    assert!(h.sim.logs.read(NS, &name, "migrate", false).is_none());
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let pod = h.get(*ids::PODS, &name);
    assert_eq!(condition(&pod, "Initialized").unwrap()["status"], "True");
    for i in 0..2 {
        let t = &pod["status"]["initContainerStatuses"][i]["state"]["terminated"];
        assert_eq!(
            (t["exitCode"].as_i64(), t["reason"].as_str()),
            (Some(0), Some("Completed"))
        );
    }
    let started = h.events(&name, "Started");
    let mut paths: Vec<&str> = started
        .iter()
        .map(|e| e["involvedObject"]["fieldPath"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "spec.containers{app}",
            "spec.initContainers{migrate}",
            "spec.initContainers{wait-db}",
        ]
    );
}

#[test]
fn a_failing_init_container_fails_a_never_pod_and_back_offs_an_always_pod() {
    let mut h = Harness::new(
        "init_containers:\n  - match: '*'\n    container: migrate\n    run_for: 200ms\n    exit_code: 3\n",
    );
    h.create(
        *ids::DEPLOYMENTS,
        with_inits(deployment("web", 1), "Always"),
    );
    let mut bare = with_inits(
        json!({"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "x:1"}]}}}}),
        "Never",
    )["spec"]["template"]
        .clone();
    bare["apiVersion"] = json!("v1");
    bare["kind"] = json!("Pod");
    bare["metadata"] = json!({"name": "once"});
    h.create(*ids::PODS, bare);
    h.run(Duration::from_secs(3));
    let once = h.get(*ids::PODS, "once");
    assert_eq!(once["status"]["phase"], "Failed");
    let t = &once["status"]["initContainerStatuses"][1]["state"]["terminated"];
    assert_eq!(
        (t["exitCode"].as_i64(), t["reason"].as_str()),
        (Some(3), Some("Error"))
    );
    assert_eq!(
        once["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    assert_eq!(condition(&once, "Ready").unwrap()["reason"], "PodFailed");
    assert_eq!(
        condition(&once, "Initialized").unwrap()["message"],
        "containers with incomplete status: [migrate]"
    );
    // Always: restarted at once, then after 1 s (10 s simulated), then 2 s...
    let pod = h.list(*ids::PODS, "web-").pop().unwrap();
    let st = &pod["status"]["initContainerStatuses"][1];
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(st["state"]["waiting"]["reason"], "CrashLoopBackOff", "{st}");
    let msg = st["state"]["waiting"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("back-off 20s restarting failed container=migrate pod=web-"),
        "{msg}"
    );
    assert_eq!(st["restartCount"], 2);
    assert_eq!(st["lastState"]["terminated"]["exitCode"], 3);
    let backoff = h.events(meta(&pod, "name"), "BackOff");
    assert_eq!(
        backoff[0]["involvedObject"]["fieldPath"],
        "spec.initContainers{migrate}"
    );
}

#[test]
fn crash_back_off_doubles_in_simulated_time() {
    let mut h = Harness::new("time_scale: 100\nworkloads:\n  - match: web\n    crash_loop: 1\n");
    h.create(*ids::DEPLOYMENTS, deployment("web", 1));
    // At 100x: runs of 0.1 s and back-offs of 0.1, 0.2, 0.4, 0.8, 1.6, 3, 3 ... s.
    h.run(Duration::from_secs(10));
    let pod = h.list(*ids::PODS, "web-").pop().unwrap();
    let cs = &pod["status"]["containerStatuses"][0];
    let restarts = cs["restartCount"].as_i64().unwrap();
    assert!((6..=9).contains(&restarts), "{cs}");
    let at_max = cs["state"]["waiting"]["message"].as_str().unwrap_or("");
    let running = cs["state"]["running"].is_object();
    assert!(
        running || at_max.starts_with("back-off 5m0s restarting"),
        "{cs}"
    );
}

#[test]
fn an_init_container_start_after_keeps_it_waiting_first() {
    let mut h = Harness::new(
        "init_containers:\n  - match: web-*\n    container: wait-db\n    start_after: 1s\n",
    );
    h.create(
        *ids::DEPLOYMENTS,
        with_inits(deployment("web", 1), "Always"),
    );
    h.run(Duration::from_millis(900));
    let pod = h.list(*ids::PODS, "web-").pop().unwrap();
    let st = &pod["status"]["initContainerStatuses"][0];
    assert_eq!(st["state"]["waiting"]["reason"], "PodInitializing", "{st}");
    assert!(h.events(meta(&pod, "name"), "Started").is_empty());
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 5));
}
