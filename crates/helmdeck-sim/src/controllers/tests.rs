//! Controller tests on a fake clock: every pass is `reconcile(now)` with `now` moved 100ms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Controllers, meta, seed_nodes};
use crate::resources::{ResourceId, ids};
use crate::store::{Part, PatchKind};
use crate::{Scenario, SimState};

mod daemonset;
mod deployment;
mod job;
mod kubelet;
mod passes;
mod scheduler;
mod statefulset;

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
