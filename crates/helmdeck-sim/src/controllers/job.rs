//! The Job controller: pods until `completions` succeed or more than `backoffLimit` fail,
//! with the status and conditions Helm's hook watcher and kstatus read.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::{Controllers, Involved, Pass, int_at, meta, put_nonzero, set_condition};
use crate::defaults;
use crate::resources::ids;

const COMPLETE_MSG: &str = "Reached expected number of succeeded pods";
const BACKOFF_MSG: &str = "Job has reached the specified backoff limit";
const DEADLINE_MSG: &str = "Job was active longer than specified deadline";
/// How long after a refused pod creation the controller tries again (the real one backs off
/// too; once a second keeps the FailedCreate event's count moving without a write per pass).
const CREATE_RETRY: Duration = Duration::from_secs(1);

fn condition_true(job: &Value, t: &str) -> bool {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == t && c["status"] == "True"))
}

/// A Job's pods by what the kubelet says of them.
struct JobPods {
    /// How many pods the Job owns, finished ones included (the next pod's ordinal).
    owned: usize,
    /// The pods not finished (unknown to the kubelet included).
    active: Vec<Arc<Value>>,
    ready: i64,
    succeeded: i64,
    failed: i64,
    /// Container restarts (app and init) in the pods not finished, which the controller
    /// counts against `backoffLimit` under restartPolicy OnFailure.
    restarts: i64,
}

/// Sets a Job condition; the job controller also stamps `lastProbeTime`.
fn put_condition(
    conds: &mut Vec<Value>,
    wall: &str,
    t: &str,
    status: &str,
    reason: &str,
    msg: &str,
) {
    let c = json!({"type": t, "status": status, "reason": reason, "message": msg, "lastProbeTime": wall});
    set_condition(conds, c, wall, false);
}

impl Controllers {
    pub(super) fn jobs_sync(&mut self, p: &Pass, snap: &Cache, dirty: &Dirty) {
        for job in &self.work(&snap.jobs, dirty) {
            self.job_sync(p, snap, job);
        }
    }

    /// One Job that has not finished: suspended (pods deleted), complete, failed past the
    /// backoff limit (pods deleted), or running (pods created up to parallelism); then its
    /// status. A finished Job is only marked settled.
    fn job_sync(&mut self, p: &Pass, snap: &Cache, job: &Value) {
        if condition_true(job, "Complete") || condition_true(job, "Failed") {
            self.settle(meta(job, "uid"), true);
            return;
        }
        let parallelism = int_at(job, "/spec/parallelism").unwrap_or(1).max(0);
        let completions = int_at(job, "/spec/completions").unwrap_or(1).max(1);
        let backoff_limit = int_at(job, "/spec/backoffLimit").unwrap_or(6).max(0);
        let suspended = job
            .pointer("/spec/suspend")
            .and_then(Value::as_bool)
            .unwrap_or(false);

        let mut pods = self.job_pods(snap, meta(job, "uid"));
        let old = job.get("status").cloned().unwrap_or_else(|| json!({}));
        let mut conds: Vec<Value> = old["conditions"].as_array().cloned().unwrap_or_default();
        let wall = p.wall.as_str();
        let mut completion_time = None;
        if suspended {
            put_condition(
                &mut conds,
                wall,
                "Suspended",
                "True",
                "JobSuspended",
                "Job suspended",
            );
            self.job_delete_active(p, &mut pods);
        } else if pods.succeeded >= completions {
            self.job_complete(p, job, &mut conds);
            completion_time = Some(wall.to_string());
        } else if pods.failed > backoff_limit || past_backoff_limit_on_failure(job, &pods) {
            self.job_fail(p, job, &mut conds, &mut pods, "BackoffLimitExceeded");
        } else if past_deadline(p, job, &old) == Some(true) {
            self.job_fail(p, job, &mut conds, &mut pods, "DeadlineExceeded");
        } else {
            if conds.iter().any(|c| c["type"] == "Suspended") {
                put_condition(
                    &mut conds,
                    wall,
                    "Suspended",
                    "False",
                    "JobResumed",
                    "Job resumed",
                );
            }
            let want = parallelism.min(completions - pods.succeeded);
            self.job_create_pods(p, job, &mut pods, want);
            if past_deadline(p, job, &old).is_some() {
                // The deadline comes with time, not with a change: look again every pass.
                self.settle(meta(job, "uid"), false);
            }
        }
        write_job_status(p, job, &old, conds, &pods, completion_time);
    }

    /// The Job's pods counted by phase (as the kubelet simulation has them).
    fn job_pods(&self, snap: &Cache, uid: &str) -> JobPods {
        let mut out = JobPods {
            owned: 0,
            active: Vec::new(),
            ready: 0,
            succeeded: 0,
            failed: 0,
            restarts: 0,
        };
        for pod in snap.pods_of(uid) {
            out.owned += 1;
            match self
                .pods
                .get(meta(pod, "uid"))
                .map(|s| (s.phase(), s.ready, s.restarts_all()))
            {
                Some(("Succeeded", ..)) => out.succeeded += 1,
                Some(("Failed", ..)) => out.failed += 1,
                Some((_, r, restarts)) => {
                    out.ready += i64::from(r);
                    out.restarts += i64::from(restarts);
                    out.active.push(pod.clone());
                }
                None => out.active.push(pod.clone()),
            }
        }
        out
    }

    /// Deletes every active pod (a suspended or failed Job runs none).
    fn job_delete_active(&mut self, p: &Pass, pods: &mut JobPods) {
        for pod in pods.active.drain(..) {
            self.delete_pod(p, &pod);
        }
        pods.ready = 0;
    }

    /// Enough pods succeeded: SuccessCriteriaMet and Complete, and the Completed event.
    fn job_complete(&mut self, p: &Pass, job: &Value, conds: &mut Vec<Value>) {
        let wall = p.wall.as_str();
        let reason = "CompletionsReached";
        put_condition(
            conds,
            wall,
            "SuccessCriteriaMet",
            "True",
            reason,
            COMPLETE_MSG,
        );
        put_condition(conds, wall, "Complete", "True", reason, COMPLETE_MSG);
        let involved = Involved::of(job);
        self.events.record(
            p,
            &involved,
            "Normal",
            "Completed",
            "Job completed",
            "job-controller",
            None,
        );
    }

    /// The Job failed (`reason`: BackoffLimitExceeded or DeadlineExceeded): FailureTarget
    /// and Failed, the active pods deleted (and counted as failed, as the real controller
    /// counts a pod it terminates), and a Warning event with the condition's words.
    fn job_fail(
        &mut self,
        p: &Pass,
        job: &Value,
        conds: &mut Vec<Value>,
        pods: &mut JobPods,
        reason: &str,
    ) {
        let wall = p.wall.as_str();
        let msg = if reason == "DeadlineExceeded" {
            DEADLINE_MSG
        } else {
            BACKOFF_MSG
        };
        put_condition(conds, wall, "FailureTarget", "True", reason, msg);
        put_condition(conds, wall, "Failed", "True", reason, msg);
        pods.failed += pods.active.len() as i64;
        self.job_delete_active(p, pods);
        let involved = Involved::of(job);
        self.events
            .record(p, &involved, "Warning", reason, msg, "job-controller", None);
    }

    /// Creates pods until `want` are active, each with the scenario's plan for its ordinal.
    /// A refused creation is retried after CREATE_RETRY, and the Job stays unsettled until
    /// then (it waits on time, not on a change).
    fn job_create_pods(&mut self, p: &Pass, job: &Value, pods: &mut JobPods, want: i64) {
        let (name, uid) = (meta(job, "name"), meta(job, "uid"));
        let involved = Involved::of(job);
        let rule = self.job_rule_index(p.sim, name);
        let template = job
            .pointer("/spec/template")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let extra = defaults::job_labels(uid, name);
        let mut ordinal = pods.owned as u32;
        let waiting = self.create_retry.get(uid).is_some_and(|at| p.now < *at);
        let mut refused = false;
        while !waiting && (pods.active.len() as i64) < want {
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
            pods.active.push(pod);
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
}

/// The Job controller's `pastBackoffLimitOnFailure`: under restartPolicy OnFailure, the
/// container restarts of its unfinished pods reach `backoffLimit` (any restart when it is 0).
fn past_backoff_limit_on_failure(job: &Value, pods: &JobPods) -> bool {
    let on_failure = job
        .pointer("/spec/template/spec/restartPolicy")
        .and_then(Value::as_str)
        == Some("OnFailure");
    let limit = int_at(job, "/spec/backoffLimit").unwrap_or(6).max(0);
    on_failure
        && (if limit == 0 {
            pods.restarts > 0
        } else {
            pods.restarts >= limit
        })
}

/// Whether the Job has been active longer than `spec.activeDeadlineSeconds` (real seconds,
/// from `status.startTime`); None when it has no deadline.
fn past_deadline(p: &Pass, job: &Value, old_status: &Value) -> Option<bool> {
    let deadline = int_at(job, "/spec/activeDeadlineSeconds")?;
    let Some(start) = old_status["startTime"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    else {
        return Some(false);
    };
    let now = p.wall.parse::<jiff::Timestamp>().ok()?;
    Some(now.as_second() - start.as_second() >= deadline.max(0))
}

/// Writes the Job's status (counts, conditions, start and completion times) when it changed.
fn write_job_status(
    p: &Pass,
    job: &Value,
    old: &Value,
    conds: Vec<Value>,
    pods: &JobPods,
    completion_time: Option<String>,
) {
    let wall = p.wall.as_str();
    let start = old["startTime"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| wall.to_string());
    let mut status = json!({"startTime": start});
    put_nonzero(&mut status, "active", pods.active.len() as i64);
    status["ready"] = json!(pods.ready);
    put_nonzero(&mut status, "succeeded", pods.succeeded);
    put_nonzero(&mut status, "failed", pods.failed);
    status["terminating"] = json!(0);
    status["uncountedTerminatedPods"] = json!({});
    if !conds.is_empty() {
        status["conditions"] = json!(conds);
    }
    if let Some(t) = completion_time {
        status["completionTime"] = json!(t);
    }
    if job.get("status") != Some(&status) {
        let (name, ns) = (meta(job, "name"), meta(job, "namespace"));
        p.sim
            .store
            .update_with(*ids::JOBS, Some(ns), name, |o| o["status"] = status);
    }
}
