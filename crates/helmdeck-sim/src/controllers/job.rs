//! The Job controller: pods until `completions` succeed or more than `backoffLimit` fail,
//! with the status and conditions Helm's hook watcher and kstatus read.

use std::time::Duration;

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::{Controllers, Involved, Pass, int_at, meta, put_nonzero, set_condition};
use crate::resources::ids;

const COMPLETE_MSG: &str = "Reached expected number of succeeded pods";
const BACKOFF_MSG: &str = "Job has reached the specified backoff limit";
/// How long after a refused pod creation the controller tries again (the real one backs off
/// too; once a second keeps the FailedCreate event's count moving without a write per pass).
const CREATE_RETRY: Duration = Duration::from_secs(1);

fn condition_true(job: &Value, t: &str) -> bool {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == t && c["status"] == "True"))
}

/// The labels the API server puts on a Job's pod template (its selector uses the first).
fn job_labels(uid: &str, name: &str) -> [(&'static str, String); 4] {
    [
        ("batch.kubernetes.io/controller-uid", uid.to_string()),
        ("batch.kubernetes.io/job-name", name.to_string()),
        ("controller-uid", uid.to_string()),
        ("job-name", name.to_string()),
    ]
}

/// What the API server does when it creates a Job (it needs the uid, which the store assigns
/// after defaulting): `spec.selector` on `batch.kubernetes.io/controller-uid` and the job
/// labels on the pod template. `kubectl logs job/NAME` finds the pods through that selector.
fn default_selector(p: &Pass, job: &Value) {
    let manual = job.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true);
    if manual || job.pointer("/spec/selector").is_some() {
        return;
    }
    let (name, uid) = (meta(job, "name").to_string(), meta(job, "uid").to_string());
    p.sim
        .store
        .update_with(*ids::JOBS, Some(meta(job, "namespace")), &name, |o| {
            if meta(o, "uid") != uid
                || o.pointer("/spec/selector").is_some()
                || !o["spec"].is_object()
            {
                return;
            }
            o["spec"]["selector"] =
                json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
            if !o["spec"]["template"].is_object() {
                o["spec"]["template"] = json!({});
            }
            let template = &mut o["spec"]["template"];
            if !template["metadata"].is_object() {
                template["metadata"] = json!({});
            }
            if !template["metadata"]["labels"].is_object() {
                template["metadata"]["labels"] = json!({});
            }
            for (k, v) in job_labels(&uid, &name) {
                template["metadata"]["labels"][k] = json!(v);
            }
        });
}

impl Controllers {
    pub(super) fn jobs_sync(&mut self, p: &Pass, snap: &Cache, dirty: &Dirty) {
        for job in &self.work(&snap.jobs, dirty) {
            if condition_true(job, "Complete") || condition_true(job, "Failed") {
                self.settle(meta(job, "uid"), true);
                continue;
            }
            let (name, uid, ns) = (meta(job, "name"), meta(job, "uid"), meta(job, "namespace"));
            default_selector(p, job);
            let parallelism = int_at(job, "/spec/parallelism").unwrap_or(1).max(0);
            let completions = int_at(job, "/spec/completions").unwrap_or(1).max(1);
            let backoff_limit = int_at(job, "/spec/backoffLimit").unwrap_or(6).max(0);
            let suspended = job
                .pointer("/spec/suspend")
                .and_then(Value::as_bool)
                .unwrap_or(false);

            let pods: Vec<_> = snap.pods_of(uid).cloned().collect();
            let (mut active, mut ready, mut succeeded, mut failed) = (Vec::new(), 0, 0, 0);
            for pod in &pods {
                match self
                    .pods
                    .get(meta(pod, "uid"))
                    .map(|s| (s.phase(), s.ready))
                {
                    Some(("Succeeded", _)) => succeeded += 1,
                    Some(("Failed", _)) => failed += 1,
                    Some((_, r)) => {
                        ready += i64::from(r);
                        active.push(pod.clone());
                    }
                    None => active.push(pod.clone()),
                }
            }
            let old = job.get("status").cloned().unwrap_or_else(|| json!({}));
            let mut conds: Vec<Value> = old["conditions"].as_array().cloned().unwrap_or_default();
            let wall = p.wall.as_str();
            let cond = |conds: &mut Vec<Value>, t: &str, status: &str, reason: &str, msg: &str| {
                let c = json!({"type": t, "status": status, "reason": reason, "message": msg, "lastProbeTime": wall});
                set_condition(conds, c, wall, false);
            };
            let mut completion_time = None;
            let involved = Involved::of(job);
            if suspended {
                cond(
                    &mut conds,
                    "Suspended",
                    "True",
                    "JobSuspended",
                    "Job suspended",
                );
                for pod in active.drain(..) {
                    self.delete_pod(p, &pod);
                }
                ready = 0;
            } else if succeeded >= completions {
                cond(
                    &mut conds,
                    "SuccessCriteriaMet",
                    "True",
                    "CompletionsReached",
                    COMPLETE_MSG,
                );
                cond(
                    &mut conds,
                    "Complete",
                    "True",
                    "CompletionsReached",
                    COMPLETE_MSG,
                );
                completion_time = Some(wall.to_string());
                self.events.record(
                    p,
                    &involved,
                    "Normal",
                    "Completed",
                    "Job completed",
                    "job-controller",
                    None,
                );
            } else if failed > backoff_limit {
                cond(
                    &mut conds,
                    "FailureTarget",
                    "True",
                    "BackoffLimitExceeded",
                    BACKOFF_MSG,
                );
                cond(
                    &mut conds,
                    "Failed",
                    "True",
                    "BackoffLimitExceeded",
                    BACKOFF_MSG,
                );
                for pod in active.drain(..) {
                    self.delete_pod(p, &pod);
                }
                ready = 0;
                self.events.record(
                    p,
                    &involved,
                    "Warning",
                    "BackoffLimitExceeded",
                    BACKOFF_MSG,
                    "job-controller",
                    None,
                );
            } else {
                if conds.iter().any(|c| c["type"] == "Suspended") {
                    cond(
                        &mut conds,
                        "Suspended",
                        "False",
                        "JobResumed",
                        "Job resumed",
                    );
                }
                let want = parallelism.min(completions - succeeded);
                let rule = self.job_rule_index(p.sim, name);
                let template = job
                    .pointer("/spec/template")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let extra = job_labels(uid, name);
                let mut ordinal = pods.len() as u32;
                let waiting = self.create_retry.get(uid).is_some_and(|at| p.now < *at);
                let mut refused = false;
                while !waiting && (active.len() as i64) < want {
                    let plan = self.run_plan(p.sim, rule, ordinal);
                    ordinal += 1;
                    let created = self.create_pod(
                        p,
                        job,
                        &template,
                        None,
                        &format!("{name}-"),
                        &extra,
                        |_| {},
                        plan,
                    );
                    let Some(pod) = created else {
                        refused = true;
                        break;
                    };
                    let msg = format!("Created pod: {}", meta(&pod, "name"));
                    self.events.record(
                        p,
                        &involved,
                        "Normal",
                        "SuccessfulCreate",
                        &msg,
                        "job-controller",
                        None,
                    );
                    active.push(pod);
                }
                if refused {
                    self.create_retry
                        .insert(uid.to_string(), p.now + CREATE_RETRY);
                } else if !waiting {
                    self.create_retry.remove(uid);
                }
                // A refused creation waits on time, not on a change: look again every pass.
                self.settle(uid, !(refused || waiting));
            }
            let start = old["startTime"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| wall.to_string());
            let mut status = json!({"startTime": start});
            put_nonzero(&mut status, "active", active.len() as i64);
            status["ready"] = json!(ready);
            put_nonzero(&mut status, "succeeded", succeeded);
            put_nonzero(&mut status, "failed", failed);
            status["terminating"] = json!(0);
            status["uncountedTerminatedPods"] = json!({});
            if !conds.is_empty() {
                status["conditions"] = json!(conds);
            }
            if let Some(t) = completion_time {
                status["completionTime"] = json!(t);
            }
            if job.get("status") != Some(&status) {
                p.sim
                    .store
                    .update_with(*ids::JOBS, Some(ns), name, |o| o["status"] = status);
            }
        }
    }
}
