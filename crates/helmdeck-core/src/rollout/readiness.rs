//! Has a workload rolled out? `kubectl rollout status`'s checks, in its order and with its
//! messages (semantics.md §1.2–1.4, without the trailing `\n`), plus decisions.md's two
//! additions: a StatefulSet with partition 0 or unset also needs `currentRevision ==
//! updateRevision`, and OnDelete workloads (which kubectl refuses) are followed by readiness.
//!
//! Every field may be missing: unset counts read as 0, the way kubectl's Go structs see them.

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetStatus, Deployment, DeploymentStatus, StatefulSet, StatefulSetStatus,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Progress {
    Waiting,
    Done,
    /// Terminal: the controller gave up (ProgressDeadlineExceeded). Waiting longer won't help.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Readiness {
    pub progress: Progress,
    /// kubectl's wording, without its trailing newline.
    pub message: String,
    pub counts: Counts,
}

/// The numbers behind the UI's columns. `desired` uses the API default (1 replica) when
/// `spec.replicas` is unset, even where kubectl skips its replica checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub desired: i32,
    pub ready: i32,
    pub updated: i32,
    pub available: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum JobProgress {
    Running { active: i32, failed: i32 },
    Complete,
    Failed { reason: String, message: String },
}

/// Said for every OnDelete workload: it is ready without running the new template (decisions.md).
pub const ON_DELETE_NOTE: &str = "OnDelete: pods keep their old revision until deleted";

const SPEC_REPLICAS_DEFAULT: i32 = 1;

fn waiting(message: String) -> (Progress, String) {
    (Progress::Waiting, message)
}

fn done(message: String) -> (Progress, String) {
    (Progress::Done, message)
}

fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

/// Deployment, semantics.md §1.2 rows 1–6 (`--revision` is not ours to check).
pub fn deployment(d: &Deployment) -> Readiness {
    let name = name(&d.metadata);
    let replicas = d.spec.as_ref().and_then(|s| s.replicas);
    let empty = DeploymentStatus::default();
    let st = d.status.as_ref().unwrap_or(&empty);
    let (total, updated) = (st.replicas.unwrap_or(0), st.updated_replicas.unwrap_or(0));
    let available = st.available_replicas.unwrap_or(0);
    let counts = Counts {
        desired: replicas.unwrap_or(SPEC_REPLICAS_DEFAULT),
        ready: st.ready_replicas.unwrap_or(0),
        updated,
        available,
    };
    let rolling = format!("Waiting for deployment \"{name}\" rollout to finish");
    let (progress, message) =
        if d.metadata.generation.unwrap_or(0) > observed(st.observed_generation) {
            waiting("Waiting for deployment spec update to be observed...".into())
        } else if deadline_exceeded(st) {
            (
                Progress::Failed,
                format!("deployment \"{name}\" exceeded its progress deadline"),
            )
        } else if let Some(r) = replicas.filter(|&r| updated < r) {
            waiting(format!(
                "{rolling}: {updated} out of {r} new replicas have been updated..."
            ))
        } else if total > updated {
            let old = total.saturating_sub(updated);
            waiting(format!(
                "{rolling}: {old} old replicas are pending termination..."
            ))
        } else if available < updated {
            waiting(format!(
                "{rolling}: {available} of {updated} updated replicas are available..."
            ))
        } else {
            done(format!("deployment \"{name}\" successfully rolled out"))
        };
    Readiness {
        progress,
        message,
        counts,
    }
}

fn observed(observed_generation: Option<i64>) -> i64 {
    observed_generation.unwrap_or(0)
}

/// kubectl looks only at the first `Progressing` condition's reason; its status is not checked.
fn deadline_exceeded(st: &DeploymentStatus) -> bool {
    let conditions = st.conditions.as_deref().unwrap_or_default();
    let progressing = conditions.iter().find(|c| c.type_ == "Progressing");
    progressing.and_then(|c| c.reason.as_deref()) == Some("ProgressDeadlineExceeded")
}

/// An unset strategy type is RollingUpdate (the API default); anything else is OnDelete.
fn is_on_delete(strategy_type: Option<&str>) -> bool {
    strategy_type.is_some_and(|t| t != "RollingUpdate")
}

/// StatefulSet, semantics.md §1.3, with the revision rule and the OnDelete rule.
pub fn statefulset(s: &StatefulSet) -> Readiness {
    let spec = s.spec.as_ref();
    let strategy = spec.and_then(|sp| sp.update_strategy.as_ref());
    let empty = StatefulSetStatus::default();
    let st = s.status.as_ref().unwrap_or(&empty);
    let counts = Counts {
        desired: spec
            .and_then(|sp| sp.replicas)
            .unwrap_or(SPEC_REPLICAS_DEFAULT),
        ready: st.ready_replicas.unwrap_or(0),
        updated: st.updated_replicas.unwrap_or(0),
        available: st.available_replicas.unwrap_or(0),
    };
    // kubectl also treats observedGeneration 0 (no status yet) as not observed.
    let obs = observed(st.observed_generation);
    let unobserved = obs == 0 || s.metadata.generation.unwrap_or(0) > obs;
    let (progress, message) = if is_on_delete(strategy.and_then(|u| u.type_.as_deref())) {
        sts_on_delete(name(&s.metadata), unobserved, &counts)
    } else if unobserved {
        waiting("Waiting for statefulset spec update to be observed...".into())
    } else {
        sts_rolling(s, st, &counts)
    };
    Readiness {
        progress,
        message,
        counts,
    }
}

/// Rows 3–6, once the spec is observed.
fn sts_rolling(s: &StatefulSet, st: &StatefulSetStatus, counts: &Counts) -> (Progress, String) {
    let spec = s.spec.as_ref();
    let replicas = spec.and_then(|sp| sp.replicas);
    let strategy = spec.and_then(|sp| sp.update_strategy.as_ref());
    let rolling = strategy.and_then(|u| u.rolling_update.as_ref());
    let partition = rolling.and_then(|r| r.partition);
    let updated = counts.updated;
    let current_revision = st.current_revision.as_deref().unwrap_or_default();
    let update_revision = st.update_revision.as_deref().unwrap_or_default();
    let revision_wait = || {
        waiting(format!(
            "waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}..."
        ))
    };
    if let Some(r) = replicas.filter(|&r| counts.ready < r) {
        return waiting(format!(
            "Waiting for {} pods to be ready...",
            r.saturating_sub(counts.ready)
        ));
    }
    if rolling.is_none() {
        return if current_revision != update_revision {
            revision_wait()
        } else {
            let current = st.current_replicas.unwrap_or(0);
            done(format!(
                "statefulset rolling update complete {current} pods at revision {current_revision}..."
            ))
        };
    }
    // kubectl only checks the partition when both it and spec.replicas are set.
    if let (Some(r), Some(p)) = (replicas, partition) {
        let want = r.saturating_sub(p);
        if updated < want {
            return waiting(format!(
                "Waiting for partitioned roll out to finish: {updated} out of {want} new pods have been updated..."
            ));
        }
    }
    // Our stricter rule: with no partition every pod must run the update revision, which the
    // updated count alone can't prove while the controller is still catching up (semantics T6).
    if partition.unwrap_or(0) == 0 && current_revision != update_revision {
        return revision_wait();
    }
    done(format!(
        "partitioned roll out complete: {updated} new pods have been updated..."
    ))
}

/// kubectl refuses OnDelete; we wait for the observed generation and for every replica to be ready.
fn sts_on_delete(name: &str, unobserved: bool, counts: &Counts) -> (Progress, String) {
    let (progress, message) = if unobserved {
        waiting("Waiting for statefulset spec update to be observed...".into())
    } else if counts.ready < counts.desired {
        let missing = counts.desired.saturating_sub(counts.ready);
        waiting(format!("Waiting for {missing} pods to be ready..."))
    } else {
        let (ready, desired) = (counts.ready, counts.desired);
        done(format!(
            "statefulset \"{name}\": {ready} of {desired} pods ready"
        ))
    };
    (progress, format!("{message} ({ON_DELETE_NOTE})"))
}

/// DaemonSet, semantics.md §1.4, with the OnDelete rule.
pub fn daemonset(d: &DaemonSet) -> Readiness {
    let name = name(&d.metadata);
    let empty = DaemonSetStatus::default();
    let st = d.status.as_ref().unwrap_or(&empty);
    let desired = st.desired_number_scheduled;
    let counts = Counts {
        desired,
        ready: st.number_ready,
        updated: st.updated_number_scheduled.unwrap_or(0),
        available: st.number_available.unwrap_or(0),
    };
    let strategy = d.spec.as_ref().and_then(|sp| sp.update_strategy.as_ref());
    let on_delete = is_on_delete(strategy.and_then(|u| u.type_.as_deref()));
    let rolling = format!("Waiting for daemon set \"{name}\" rollout to finish");
    let (progress, message) =
        if d.metadata.generation.unwrap_or(0) > observed(st.observed_generation) {
            waiting("Waiting for daemon set spec update to be observed...".into())
        } else if on_delete {
            let ready = counts.ready;
            if ready < desired {
                waiting(format!("{rolling}: {ready} of {desired} pods are ready..."))
            } else {
                done(format!(
                    "daemon set \"{name}\": {ready} of {desired} pods ready"
                ))
            }
        } else if counts.updated < desired {
            let updated = counts.updated;
            waiting(format!(
                "{rolling}: {updated} out of {desired} new pods have been updated..."
            ))
        } else if counts.available < desired {
            let available = counts.available;
            waiting(format!(
                "{rolling}: {available} of {desired} updated pods are available..."
            ))
        } else {
            done(format!("daemon set \"{name}\" successfully rolled out"))
        };
    let message = if on_delete {
        format!("{message} ({ON_DELETE_NOTE})")
    } else {
        message
    };
    Readiness {
        progress,
        message,
        counts,
    }
}

/// A Job is finished only by its terminal conditions; the first one that is True wins, as in
/// kstatus. Anything else (including Suspended) is still running.
pub fn job(j: &Job) -> JobProgress {
    let st = j.status.as_ref();
    let conditions = st.and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    for c in conditions.iter().filter(|c| c.status == "True") {
        match c.type_.as_str() {
            "Complete" => return JobProgress::Complete,
            "Failed" => {
                return JobProgress::Failed {
                    reason: c.reason.clone().unwrap_or_default(),
                    message: c.message.clone().unwrap_or_default(),
                };
            }
            _ => {}
        }
    }
    JobProgress::Running {
        active: st.and_then(|s| s.active).unwrap_or(0),
        failed: st.and_then(|s| s.failed).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests;
