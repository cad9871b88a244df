//! Controller tests on a fake clock: every pass is `reconcile(now)` with `now` moved 100ms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Controllers, meta, seed_nodes};
use crate::resources::{ResourceId, ids};
use crate::store::{Part, PatchKind};
use crate::{Scenario, SimState};

const NS: &str = "apps";
const STEP: Duration = Duration::from_millis(100);

struct Harness {
    sim: Arc<SimState>,
    ctl: Controllers,
    t: Instant,
}

impl Harness {
    fn new(scenario_yaml: &str) -> Self {
        let sim =
            SimState::new(Scenario::parse(scenario_yaml, "test").expect("test scenario parses"));
        sim.store
            .ensure(*ids::NAMESPACES, json!({"metadata": {"name": NS}}))
            .unwrap();
        seed_nodes(&sim);
        let ctl = Controllers::new();
        Harness {
            sim,
            ctl,
            t: Instant::now(),
        }
    }

    fn step(&mut self) {
        self.t += STEP;
        self.ctl.reconcile(&self.sim, self.t);
    }

    fn run(&mut self, d: Duration) {
        let end = self.t + d;
        while self.t < end {
            self.step();
        }
    }

    /// Steps until `done` holds (true) or `max` of fake time passes (false).
    fn run_until(&mut self, max: Duration, done: impl Fn(&Self) -> bool) -> bool {
        let end = self.t + max;
        while self.t < end {
            self.step();
            if done(self) {
                return true;
            }
        }
        false
    }

    /// Steps until `name` is rolled out (true) or `secs` of fake time pass (false).
    fn rolls_out(&mut self, res: ResourceId, name: &str, secs: u64) -> bool {
        self.run_until(Duration::from_secs(secs), |h| {
            h.rollout(res, name) == Rollout::Done
        })
    }

    fn create(&self, res: ResourceId, obj: Value) -> Arc<Value> {
        self.sim.store.create(res, Some(NS), obj).unwrap()
    }

    fn get(&self, res: ResourceId, name: &str) -> Arc<Value> {
        self.sim.store.get(res, Some(NS), name).unwrap()
    }

    fn list(&self, res: ResourceId, prefix: &str) -> Vec<Arc<Value>> {
        self.sim
            .store
            .list(res, Some(NS), |o| meta(o, "name").starts_with(prefix))
            .0
    }

    /// A new pod template image: a spec change, so a new generation and a rollout.
    fn set_image(&self, res: ResourceId, name: &str, image: &str) {
        let body = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
        self.sim
            .store
            .patch(res, Some(NS), name, PatchKind::Merge, &body, Part::Main)
            .unwrap();
    }

    fn events(&self, object: &str, reason: &str) -> Vec<Arc<Value>> {
        self.sim
            .store
            .list(*ids::EVENTS, Some(NS), |e| {
                e["involvedObject"]["name"] == object && e["reason"] == reason
            })
            .0
    }

    fn rollout(&self, res: ResourceId, name: &str) -> Rollout {
        rollout_status(&self.get(res, name))
    }
}

fn template(app: &str, image: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "app", "image": image}]}})
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name, "web:1")}})
}

fn statefulset(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
           "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                    "template": template(name, "db:1"),
                    "volumeClaimTemplates": [{"metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})
}

fn daemonset(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": name}}, "template": template(name, "agent:1")}})
}

fn job(name: &str, backoff_limit: i64) -> Value {
    let mut t = template(name, "migrate:1");
    t["spec"]["restartPolicy"] = json!("Never");
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"backoffLimit": backoff_limit, "template": t}})
}

fn n(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn condition<'v>(obj: &'v Value, t: &str) -> Option<&'v Value> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
}

fn pod_ready(pod: &Value) -> bool {
    condition(pod, "Ready").is_some_and(|c| c["status"] == "True")
}

// ---------------------------------------------------------------------------------------------
// `kubectl rollout status` (semantics.md §1.2–1.4), on the status the controllers write.

#[derive(Debug, PartialEq)]
enum Rollout {
    Done,
    Waiting(String),
    Error(String),
}

fn rollout_status(obj: &Value) -> Rollout {
    use Rollout::*;
    let name = meta(obj, "name");
    let (generation, obs) = (
        n(obj, "/metadata/generation"),
        n(obj, "/status/observedGeneration"),
    );
    let spec_replicas = obj.pointer("/spec/replicas").and_then(Value::as_i64);
    let s = |k: &str| n(obj, &format!("/status/{k}"));
    let on_delete = obj
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        == Some("OnDelete");
    match obj["kind"].as_str().unwrap_or("") {
        "Deployment" => {
            let (u, total, avail) = (s("updatedReplicas"), s("replicas"), s("availableReplicas"));
            if generation > obs {
                Waiting("Waiting for deployment spec update to be observed...".into())
            } else if condition(obj, "Progressing")
                .is_some_and(|c| c["reason"] == "ProgressDeadlineExceeded")
            {
                Error(format!(
                    "deployment \"{name}\" exceeded its progress deadline"
                ))
            } else if let Some(r) = spec_replicas.filter(|r| u < *r) {
                Waiting(format!("{u} out of {r} new replicas have been updated..."))
            } else if total > u {
                Waiting(format!(
                    "{} old replicas are pending termination...",
                    total - u
                ))
            } else if avail < u {
                Waiting(format!("{avail} of {u} updated replicas are available..."))
            } else {
                Done
            }
        }
        "StatefulSet" => {
            let rolling_update = obj.pointer("/spec/updateStrategy/rollingUpdate");
            let partition = rolling_update.and_then(|r| r["partition"].as_i64());
            if on_delete {
                Error("rollout status is only available for RollingUpdate strategy type".into())
            } else if obs == 0 || generation > obs {
                Waiting("Waiting for statefulset spec update to be observed...".into())
            } else if let Some(r) = spec_replicas.filter(|r| s("readyReplicas") < *r) {
                Waiting(format!(
                    "Waiting for {} pods to be ready...",
                    r - s("readyReplicas")
                ))
            } else if rolling_update.is_some() {
                match (spec_replicas, partition) {
                    (Some(r), Some(p)) if s("updatedReplicas") < r - p => Waiting(format!(
                        "Waiting for partitioned roll out to finish: {} out of {} new pods have been updated...",
                        s("updatedReplicas"),
                        r - p
                    )),
                    _ => Done,
                }
            } else if obj.pointer("/status/updateRevision")
                != obj.pointer("/status/currentRevision")
            {
                Waiting("waiting for statefulset rolling update to complete".into())
            } else {
                Done
            }
        }
        "DaemonSet" => {
            let (d, us, a) = (
                s("desiredNumberScheduled"),
                s("updatedNumberScheduled"),
                s("numberAvailable"),
            );
            if on_delete {
                Error("rollout status is only available for RollingUpdate strategy type".into())
            } else if generation > obs {
                Waiting("Waiting for daemon set spec update to be observed...".into())
            } else if us < d {
                Waiting(format!("{us} out of {d} new pods have been updated..."))
            } else if a < d {
                Waiting(format!("{a} of {d} updated pods are available..."))
            } else {
                Done
            }
        }
        other => Error(format!("no status viewer has been implemented for {other}")),
    }
}

/// kstatus `Current` for a Deployment (semantics.md §2.3): the counts and both conditions.
fn kstatus_deployment_current(d: &Value) -> bool {
    let r = n(d, "/spec/replicas");
    let s = |k: &str| n(d, &format!("/status/{k}"));
    n(d, "/metadata/generation") == s("observedGeneration")
        && [
            s("replicas"),
            s("updatedReplicas"),
            s("readyReplicas"),
            s("availableReplicas"),
        ] == [r, r, r, r]
        && condition(d, "Progressing").is_some_and(|c| c["reason"] == "NewReplicaSetAvailable")
        && condition(d, "Available").is_some_and(|c| c["status"] == "True")
}

// ---------------------------------------------------------------------------------------------

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
        .get(*super::PVCS, Some(NS), "data-db-2")
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

#[test]
fn job_succeeds_with_logs() {
    let mut h = Harness::new(
        "jobs:\n  - match: \"*-migrate\"\n    after: 1s\n    logs: [\"migrating\", \"done\"]\n",
    );
    h.create(*ids::JOBS, job("demo-migrate", 6));
    let complete = h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "demo-migrate"), "Complete").is_some()
    });
    assert!(complete);
    let j = h.get(*ids::JOBS, "demo-migrate");
    assert_eq!(
        condition(&j, "SuccessCriteriaMet").unwrap()["status"],
        "True"
    );
    assert_eq!(condition(&j, "Complete").unwrap()["status"], "True");
    assert_eq!(
        (n(&j, "/status/succeeded"), n(&j, "/status/active")),
        (1, 0)
    );
    assert!(j["status"]["completionTime"].is_string() && j["status"]["startTime"].is_string());
    let pod = h.list(*ids::PODS, "demo-migrate-").pop().unwrap();
    assert_eq!(pod["status"]["phase"], "Succeeded");
    assert_eq!(pod["metadata"]["labels"]["job-name"], "demo-migrate");
    assert_eq!(
        pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"],
        meta(&j, "uid")
    );
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["reason"],
        "Completed"
    );
    let logs = h
        .sim
        .logs
        .read(NS, meta(&pod, "name"), "app", false)
        .unwrap();
    assert_eq!(
        logs.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
        ["migrating", "done"]
    );
    assert_eq!(h.events("demo-migrate", "Completed").len(), 1);
    assert_eq!(h.events("demo-migrate", "SuccessfulCreate").len(), 1);
}

#[test]
fn job_fails_after_the_backoff_limit() {
    let mut h = Harness::new(
        "jobs:\n  - match: \"*-seed\"\n    outcome: fail\n    exit_code: 2\n    after: 500ms\n    logs: [\"boom\"]\n",
    );
    h.create(*ids::JOBS, job("demo-seed", 2));
    let failed = h.run_until(Duration::from_secs(20), |h| {
        condition(&h.get(*ids::JOBS, "demo-seed"), "Failed").is_some()
    });
    assert!(failed);
    h.run(Duration::from_secs(2));
    let j = h.get(*ids::JOBS, "demo-seed");
    assert_eq!(n(&j, "/status/failed"), 3, "backoffLimit + 1");
    let c = condition(&j, "Failed").unwrap();
    assert_eq!(
        (c["reason"].as_str(), c["message"].as_str()),
        (
            Some("BackoffLimitExceeded"),
            Some("Job has reached the specified backoff limit")
        )
    );
    assert_eq!(condition(&j, "FailureTarget").unwrap()["status"], "True");
    let pods = h.list(*ids::PODS, "demo-seed-");
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        assert_eq!(pod["status"]["phase"], "Failed");
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            2
        );
        let logs = h
            .sim
            .logs
            .read(NS, meta(pod, "name"), "app", false)
            .unwrap();
        assert_eq!(logs[0].1, "boom");
    }
    assert_eq!(h.events("demo-seed", "BackoffLimitExceeded").len(), 1);
}

#[test]
fn a_job_whose_service_account_is_missing_reports_failed_create_until_it_exists() {
    let mut h = Harness::new("jobs:\n  - match: demo-init\n    after: 300ms\n");
    let mut j = job("demo-init", 6);
    j["spec"]["template"]["spec"]["serviceAccountName"] = json!("demo-init");
    h.create(*ids::JOBS, j);
    h.run(Duration::from_secs(3));
    assert!(
        h.list(*ids::PODS, "demo-init-").is_empty(),
        "the pod is refused"
    );
    let refused = h.events("demo-init", "FailedCreate");
    assert_eq!(refused.len(), 1, "one event, counted: {refused:?}");
    assert_eq!(
        refused[0]["message"],
        "Error creating: pods \"demo-init-\" is forbidden: error looking up service account apps/demo-init: serviceaccount \"demo-init\" not found"
    );
    assert_eq!(refused[0]["type"], "Warning");
    assert!(n(&refused[0], "/count") >= 2, "retried: {}", refused[0]);
    let sa = h.sim.store.create(
        *ids::SERVICEACCOUNTS,
        Some(NS),
        json!({"metadata": {"name": "demo-init"}}),
    );
    assert!(sa.is_ok());
    assert!(h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "demo-init"), "Complete").is_some()
    }));
    let pod = h.list(*ids::PODS, "demo-init-").pop().unwrap();
    assert_eq!(pod["spec"]["serviceAccountName"], "demo-init");
}

#[test]
fn flaky_job_fails_first_then_succeeds() {
    let mut h = Harness::new("jobs:\n  - match: flaky\n    fail_first: 1\n    after: 300ms\n");
    h.create(*ids::JOBS, job("flaky", 6));
    assert!(h.run_until(Duration::from_secs(10), |h| {
        condition(&h.get(*ids::JOBS, "flaky"), "Complete").is_some()
    }));
    let j = h.get(*ids::JOBS, "flaky");
    assert_eq!(
        (n(&j, "/status/failed"), n(&j, "/status/succeeded")),
        (1, 1)
    );
}

#[test]
fn deleting_a_deployment_forgets_its_pods_and_logs() {
    let mut h = Harness::new("workloads:\n  - match: web\n    logs: [\"hi\"]\n");
    h.create(*ids::DEPLOYMENTS, deployment("web", 2));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let pod = meta(&h.list(*ids::PODS, "web-")[0], "name").to_string();
    assert!(h.sim.logs.read(NS, &pod, "app", false).is_some());
    h.sim
        .store
        .delete(*ids::DEPLOYMENTS, Some(NS), "web")
        .unwrap();
    h.run(Duration::from_millis(300));
    assert!(h.list(*ids::PODS, "web-").is_empty());
    assert!(h.sim.logs.read(NS, &pod, "app", false).is_none());
    assert!(h.ctl.pods.is_empty());
}

#[test]
fn quiet_cluster_writes_nothing() {
    let mut h = Harness::new("{}");
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    h.create(*ids::STATEFULSETS, statefulset("db", 2));
    h.create(*ids::DAEMONSETS, daemonset("agent"));
    h.create(*ids::JOBS, job("init", 1));
    h.run(Duration::from_secs(15));
    let rv = h.sim.store.current_rv();
    h.run(Duration::from_secs(2));
    assert_eq!(
        h.sim.store.current_rv(),
        rv,
        "settled objects are not rewritten"
    );
}

/// Not a test of behaviour: prints how long passes take at the target scale
/// (`cargo test --release --lib controllers::tests::scale -- --ignored --nocapture`).
#[test]
#[ignore]
fn scale_1000_workloads_10000_pods() {
    let mut h = Harness::new("{}");
    for i in 0..1000 {
        h.create(*ids::DEPLOYMENTS, deployment(&format!("w{i}"), 10));
    }
    let started = Instant::now();
    h.run(Duration::from_secs(3));
    eprintln!("30 passes while rolling out: {:?}", started.elapsed());
    assert_eq!(h.sim.store.list(*ids::PODS, None, |_| true).0.len(), 10_000);
    let started = Instant::now();
    h.run(Duration::from_secs(3));
    eprintln!("30 settled passes: {:?}", started.elapsed());
    for i in 0..1000 {
        h.set_image(*ids::DEPLOYMENTS, &format!("w{i}"), "web:2");
    }
    let started = Instant::now();
    let done = h.run_until(Duration::from_secs(60), |h| {
        (0..1000)
            .step_by(97)
            .all(|i| h.rollout(*ids::DEPLOYMENTS, &format!("w{i}")) == Rollout::Done)
    });
    eprintln!(
        "rolling update of every Deployment (done: {done}): {:?}",
        started.elapsed()
    );
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
fn relisting_after_a_lagged_feed_changes_nothing() {
    let mut h = Harness::new("{}");
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    h.create(*ids::STATEFULSETS, statefulset("db", 2));
    assert!(h.run_until(Duration::from_secs(10), |h| {
        h.rollout(*ids::DEPLOYMENTS, "web") == Rollout::Done
            && h.rollout(*ids::STATEFULSETS, "db") == Rollout::Done
    }));
    h.run(Duration::from_secs(1));
    let rv = h.sim.store.current_rv();
    h.ctl.cache = super::cache::Cache::default();
    h.run(Duration::from_secs(1));
    assert_eq!(h.sim.store.current_rv(), rv);
    // Changes made while the feed was being rebuilt are still seen.
    h.ctl.cache = super::cache::Cache::default();
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    assert!(h.run_until(Duration::from_secs(10), |h| {
        let d = h.get(*ids::DEPLOYMENTS, "web");
        n(&d, "/status/observedGeneration") == 2
            && h.rollout(*ids::DEPLOYMENTS, "web") == Rollout::Done
    }));
    assert_eq!(h.list(*ids::PODS, "web-").len(), 3);
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
               preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
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

#[test]
fn a_shell_exit_command_ends_a_job_pod_with_that_code() {
    let mut h = Harness::new("nodes: 1\n");
    let mut failing = job("demo-init", 1);
    failing["spec"]["template"]["spec"]["containers"][0]["command"] = json!(["sh", "-c", "exit 3"]);
    h.create(*ids::JOBS, failing);
    let mut args_form = job("demo-args", 0);
    let c = &mut args_form["spec"]["template"]["spec"]["containers"][0];
    c["command"] = json!(["/bin/sh"]);
    c["args"] = json!(["-c", "echo migrating; exit 7"]);
    h.create(*ids::JOBS, args_form);
    let mut ok = job("demo-ok", 0);
    ok["spec"]["template"]["spec"]["containers"][0]["command"] = json!(["sh", "-c", "exit 0"]);
    h.create(*ids::JOBS, ok);
    let done = h.run_until(Duration::from_secs(20), |h| {
        ["demo-init", "demo-args", "demo-ok"].iter().all(|j| {
            let j = h.get(*ids::JOBS, j);
            condition(&j, "Failed").is_some() || condition(&j, "Complete").is_some()
        })
    });
    assert!(done);
    let j = h.get(*ids::JOBS, "demo-init");
    assert!(condition(&j, "Failed").is_some(), "{j}");
    assert_eq!(n(&j, "/status/failed"), 2, "backoffLimit + 1");
    for pod in h.list(*ids::PODS, "demo-init-") {
        let t = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(
            (t["exitCode"].as_i64(), t["reason"].as_str()),
            (Some(3), Some("Error"))
        );
    }
    let pod = h.list(*ids::PODS, "demo-args-").pop().unwrap();
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        7
    );
    assert!(condition(&h.get(*ids::JOBS, "demo-ok"), "Complete").is_some());
}
