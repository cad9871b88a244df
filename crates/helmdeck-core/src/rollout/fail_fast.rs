//! Fail fast, opt-in: a gating workload whose new pods keep failing ends the rollout before
//! `--timeout`. Off by default, since a pod that restarts while its database starts is normal.
//!
//! The limit N comes from `--failures-allowed-per-replica` (or `failures-allowed-per-replica`
//! in helmdeck.toml), overridden per workload by an annotation (helmdeck's first, then werf's,
//! so charts written for werf carry over). A workload fails fast once the restarts summed over
//! its new pods exceed N × desired replicas, or one pod has had more than N kubelet `BackOff`/
//! `Failed` events for an image pull or a container config error (an Event's `count` counts:
//! the kubelet folds repeats into one Event).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::diagnosis::{container_statuses_in_run_order, pod_restarts};
use super::objects::{EventSummary as Event, PodSummary as Pod};

/// The annotations that set the limit for one workload, the first present winning.
pub const ANNOTATIONS: [&str; 2] = [
    "helmdeck.io/failures-allowed-per-replica",
    "werf.io/failures-allowed-per-replica",
];

/// Waiting reasons whose kubelet events count against the limit (a crash loop counts by its
/// restarts instead).
const EVENT_REASONS: [&str; 3] = [
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
];

/// The limit for the workload `meta` describes: its annotation when it has one, else `flag`.
/// An annotation that is not a non-negative integer turns fail fast off for that workload
/// (the flag's N was not meant for it) and comes back as the warning to show. Both texts
/// hold cluster strings: the views make them plain before they are shown.
pub fn allowed(flag: Option<u32>, meta: &ObjectMeta) -> (Option<u32>, Option<String>) {
    let annotated = meta.annotations.as_ref().and_then(|a| {
        ANNOTATIONS
            .iter()
            .find_map(|key| a.get(*key).map(|v| (*key, v.as_str())))
    });
    let Some((key, value)) = annotated else {
        return (flag, None);
    };
    match value.trim().parse::<u32>() {
        Ok(n) => (Some(n), None),
        Err(_) => {
            let name = meta.name.as_deref().unwrap_or("");
            let warning = format!(
                "{name}: annotation {key}={value:?} is not a non-negative integer: fail fast is \
                 off for this workload"
            );
            (None, Some(warning))
        }
    }
}

/// Why the workload fails fast under `allowed` failures per replica, or `None`. `pods` are its
/// new pods only (an old revision's crashes say nothing about the new one), each with the
/// Events about it; `desired` is its desired replica count.
pub fn exceeded(allowed: u32, desired: i32, pods: &[(&Pod, &[&Event])]) -> Option<String> {
    let replicas = u64::try_from(desired.max(1)).unwrap_or(1);
    let restarts: u64 = pods.iter().map(|(p, _)| pod_restarts(p)).sum();
    if restarts > u64::from(allowed) * replicas {
        let noun = if replicas == 1 { "replica" } else { "replicas" };
        return Some(format!(
            "fail fast: {restarts} restarts > {allowed} allowed × {replicas} {noun}"
        ));
    }
    pods.iter().find_map(|(pod, events)| {
        let counted = counted_events(pod, events);
        let total: u64 = counted.values().sum();
        (total > u64::from(allowed)).then(|| {
            let what: Vec<&str> = counted.keys().copied().collect();
            format!(
                "fail fast: pod {} had {total} {} events > {allowed} allowed",
                pod.metadata.name.as_deref().unwrap_or(""),
                what.join("/")
            )
        })
    })
}

/// Restarts of every container of the pod, init containers included (a crashing
/// initContainer restarts under `restartPolicy: Always` too).
/// The pod's `BackOff`/`Failed` Events that count, summed by the waiting reason they are for.
fn counted_events(pod: &Pod, events: &[&Event]) -> BTreeMap<&'static str, u64> {
    let config_error = waiting_for(pod, "CreateContainerConfigError");
    let mut out = BTreeMap::new();
    for e in events {
        let reason = e.reason.as_deref().unwrap_or("");
        if !matches!(reason, "BackOff" | "Failed") {
            continue;
        }
        let message = e.message.as_deref().unwrap_or("");
        let Some(kind) = event_kind(message, config_error) else {
            continue;
        };
        let count = u64::try_from(e.count.unwrap_or(1).max(1)).unwrap_or(1);
        *out.entry(kind).or_insert(0) += count;
    }
    out
}

/// Which of [`EVENT_REASONS`] a `BackOff`/`Failed` message is about. The kubelet words a
/// config error as `Error: secret "x" not found`, naming no reason: such a message counts
/// only while a container of the pod waits in CreateContainerConfigError.
fn event_kind(message: &str, config_error: bool) -> Option<&'static str> {
    if let Some(named) = EVENT_REASONS.iter().find(|r| message.contains(**r)) {
        return Some(named);
    }
    let lower = message.to_ascii_lowercase();
    if lower.starts_with("back-off pulling image") {
        return Some("ImagePullBackOff");
    }
    if lower.contains("pull image") {
        return Some("ErrImagePull");
    }
    (config_error && message.starts_with("Error: ")).then_some("CreateContainerConfigError")
}

fn waiting_for(pod: &Pod, reason: &str) -> bool {
    container_statuses_in_run_order(pod)
        .filter_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.as_deref())
        .any(|r| r == reason)
}

#[cfg(test)]
mod tests;
