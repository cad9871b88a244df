//! Why a gating workload is not ready when the rollout wait ends, in the words the verdict
//! quotes: the Warning events of its pods and controllers (FailedCreate for a missing
//! ServiceAccount, quota or Pod Security admission; FailedScheduling; FailedMount; Failed for a
//! missing Secret key), deduplicated with a count and capped per workload, and the last log
//! lines of its crashing container (the previous instance after a restart, as `kubectl logs
//! --previous` shows it). Events come from the watch cache; logs cost one bounded request per
//! workload, for at most [`WORKLOADS_WITH_LOGS`] workloads, never one per pod.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::LogParams;

use crate::engine::event::{Event, WorkloadKey};
use crate::engine::steps::Ctx;
use crate::rollout::diagnosis;
use crate::rollout::objects::{
    ContainerStatusSummary as ContainerStatus, EventSummary as KubeEvent, PodSummary as Pod,
};
use crate::text;

use super::Emitted;
use super::cache::{World, uid};

/// Warning events quoted per workload; the rest are counted in one line.
pub const EVENTS_PER_WORKLOAD: usize = 5;
/// Log lines quoted from the crashing container.
pub const LOG_LINES: usize = 5;
/// Pods of one workload read for its events and its crashing container (a 3,000-pod release
/// must not cost 3,000 look-ups; the first not-ready ones tell the story).
pub const PODS_READ: usize = 20;
/// Workloads whose log is fetched (one request each).
pub const WORKLOADS_WITH_LOGS: usize = 5;
/// How long one log request may take before it is given up (the verdict waits for it).
const LOG_TIMEOUT: Duration = Duration::from_secs(3);
/// A log is read only this far back, so a container that logs megabytes costs little.
const LOG_BYTES: i64 = 64 * 1024;

/// The container whose log says why a workload's pods are not ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTarget {
    pub pod: String,
    pub container: String,
    /// The container restarted: its current instance has not failed yet (or is waiting to
    /// start), so the instance that failed is the previous one.
    pub previous: bool,
}

/// The container to read among `pods` (the first [`PODS_READ`] not ready): the one restarted
/// most (its previous instance), else one that ended with a non-zero exit (its current
/// instance); None when no container failed.
pub fn log_target<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Option<LogTarget> {
    let mut best: Option<(i32, LogTarget)> = None;
    for pod in pods
        .into_iter()
        .filter(|p| !diagnosis::is_pod_ready(p))
        .take(PODS_READ)
    {
        for c in diagnosis::container_statuses_in_run_order(pod) {
            let Some((score, previous)) = failed_instance(c) else {
                continue;
            };
            if best.as_ref().is_some_and(|(s, _)| *s >= score) {
                continue;
            }
            let target = LogTarget {
                pod: pod.metadata.name.clone().unwrap_or_default(),
                container: c.name.clone(),
                previous,
            };
            best = Some((score, target));
        }
    }
    best.map(|(_, t)| t)
}

/// Whether `c` has a failed instance to read, ranked (more restarts first), and whether it is
/// the previous one. A restarted container's current instance is the one running or waiting
/// in back-off: what it printed before failing is in the previous instance.
fn failed_instance(c: &ContainerStatus) -> Option<(i32, bool)> {
    if c.restart_count > 0 {
        return Some((c.restart_count.saturating_add(1), true));
    }
    let ended = c.state.as_ref().and_then(|s| s.terminated.as_ref());
    ended.filter(|t| t.exit_code != 0).map(|_| (0, false))
}

/// Reasons that name a cause come first; the rest (BackOff, Unhealthy) follow by count.
fn rank(reason: &str) -> u8 {
    match reason {
        "FailedCreate" => 0,
        "FailedScheduling" => 1,
        "FailedMount" | "FailedAttachVolume" => 2,
        "Failed" => 3,
        _ => 4,
    }
}

/// When `e` was last seen: its newest timestamp.
fn last_seen(e: &KubeEvent) -> Option<Timestamp> {
    e.time()
}

/// Whether `e` belongs to this deploy: last seen at or after `since` (an Event a controller
/// still repeats is seen again; a ReplicaSet's FailedCreate from an earlier run, fixed since,
/// is not). An Event without a time is kept.
pub fn recent(e: &KubeEvent, since: Timestamp) -> bool {
    last_seen(e).is_none_or(|t| t >= since)
}

/// One line per distinct Warning (reason and message), with the objects it was about and its
/// count summed; at most `cap`, then one line saying how many more and the cap. Plain text.
pub fn warning_lines(events: &[&KubeEvent], cap: usize) -> Vec<String> {
    struct Seen {
        objects: Vec<String>,
        count: i64,
        first: usize,
    }
    let mut seen: BTreeMap<(u8, String, String), Seen> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.type_.as_deref() != Some("Warning") {
            continue;
        }
        let reason = text::plain(e.reason.as_deref().unwrap_or(""));
        let message = text::plain(e.message.as_deref().unwrap_or(""));
        let object = text::plain(&format!(
            "{}/{}",
            e.involved_object
                .kind
                .as_deref()
                .unwrap_or("")
                .to_lowercase(),
            e.involved_object.name.as_deref().unwrap_or("")
        ));
        let entry = seen
            .entry((rank(&reason), reason, message))
            .or_insert(Seen {
                objects: Vec::new(),
                count: 0,
                first: i,
            });
        if !entry.objects.contains(&object) {
            entry.objects.push(object);
        }
        entry.count = entry
            .count
            .saturating_add(i64::from(e.count.unwrap_or(1).max(1)));
    }
    let mut ordered: Vec<((u8, String, String), Seen)> = seen.into_iter().collect();
    ordered.sort_by_key(|((rank, ..), s)| (*rank, -s.count, s.first));
    let total = ordered.len();
    let mut out: Vec<String> = ordered
        .into_iter()
        .take(cap)
        .map(|((_, reason, message), s)| {
            let objects = match s.objects.len() {
                1 => s.objects[0].clone(),
                n => format!("{} and {} more", s.objects[0], n - 1),
            };
            let times = if s.count > 1 {
                format!(" ×{}", s.count)
            } else {
                String::new()
            };
            format!("event {objects} {reason}{times}: {message}")
        })
        .collect();
    if total > cap {
        out.push(format!(
            "{} more Warning events not shown (at most {cap} per workload)",
            total - cap
        ));
    }
    out
}

/// The last [`LOG_LINES`] lines of `log`, each made plain, under what they were read from.
pub fn log_lines(target: &LogTarget, log: &str) -> Vec<String> {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(LOG_LINES);
    let instance = if target.previous {
        "previous instance"
    } else {
        "last instance"
    };
    lines[from..]
        .iter()
        .map(|l| {
            format!(
                "log {}/{} ({instance}): {}",
                text::plain(&target.pod),
                text::plain(&target.container),
                text::plain(l)
            )
        })
        .collect()
}

/// What the cache holds about one workload: its Warning lines and the container to read.
struct Found {
    namespace: String,
    warnings: Vec<String>,
    target: Option<LogTarget>,
}

/// Reads the cache for the not-ready gating workloads in `emitted` (by their key).
fn find(world: &World, emitted: &Emitted, since: Timestamp) -> BTreeMap<WorkloadKey, Found> {
    let mut out = BTreeMap::new();
    for (ns, w) in world.judge_where(|_| true) {
        let name = w.meta.name.clone().unwrap_or_default();
        let namespace = w
            .meta
            .namespace
            .clone()
            .unwrap_or_else(|| world.namespaces[ns].clone());
        let key = (w.kind.to_string(), namespace.clone(), name);
        let Some(view) = emitted.workloads.get(&key) else {
            continue;
        };
        if view.optional || view.ready {
            continue;
        }
        let rss = world.rss_owned_by(ns, uid(w.meta));
        let pods: Vec<&Pod> = w
            .current
            .iter()
            .copied()
            .filter(|p| !diagnosis::is_pod_ready(p))
            .take(PODS_READ)
            .collect();
        let uids = std::iter::once(uid(w.meta))
            .chain(rss.iter().map(|r| uid(&r.metadata)))
            .chain(pods.iter().map(|p| uid(&p.metadata)));
        let about = world.events_about(uids);
        let mut events: Vec<&KubeEvent> = about
            .values()
            .flatten()
            .copied()
            .filter(|e| recent(e, since))
            .collect();
        events.sort_by_key(|e| e.metadata.name.clone());
        out.insert(
            key,
            Found {
                namespace,
                warnings: warning_lines(&events, EVENTS_PER_WORKLOAD),
                target: log_target(pods),
            },
        );
    }
    out
}

/// Gathers each not-ready gating workload's evidence and emits the views that gained some,
/// before the step's end (the verdict is decided from them). Events last seen before `since`
/// are an earlier run's.
pub(super) async fn gather(ctx: &Ctx, world: &World, emitted: &mut Emitted, since: Timestamp) {
    let found = find(world, emitted, since);
    let mut logs_left = WORKLOADS_WITH_LOGS;
    for (key, f) in found {
        let mut lines = Vec::new();
        if let Some(target) = &f.target
            && logs_left > 0
        {
            logs_left -= 1;
            lines.extend(read_log(ctx, &f.namespace, target).await);
        }
        lines.extend(f.warnings);
        let Some(view) = emitted.workloads.get_mut(&key) else {
            continue;
        };
        if view.evidence != lines {
            view.evidence = lines;
            ctx.emit.send(Event::Workload(view.clone()));
        }
    }
}

/// The target's last lines, or one line saying why they could not be read.
async fn read_log(ctx: &Ctx, namespace: &str, target: &LogTarget) -> Vec<String> {
    let api: Api<k8s_openapi::api::core::v1::Pod> =
        Api::namespaced(ctx.cluster.client.clone(), namespace);
    let params = LogParams {
        container: Some(target.container.clone()),
        previous: target.previous,
        tail_lines: Some(LOG_LINES as i64),
        limit_bytes: Some(LOG_BYTES),
        ..LogParams::default()
    };
    let shown = format!(
        "log {}/{}",
        text::plain(&target.pod),
        text::plain(&target.container)
    );
    match tokio::time::timeout(LOG_TIMEOUT, api.logs(&target.pod, &params)).await {
        Ok(Ok(log)) => log_lines(target, &log),
        Ok(Err(e)) => vec![format!(
            "{shown} unreadable: {}",
            text::plain(&e.to_string())
        )],
        Err(_) => vec![format!(
            "{shown} unreadable: no answer within {}s",
            LOG_TIMEOUT.as_secs()
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, statuses: serde_json::Value, init: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "status": {"phase": "Running", "containerStatuses": statuses,
                       "initContainerStatuses": init},
        }))
        .unwrap()
    }

    fn status(name: &str, restarts: i32, state: serde_json::Value) -> serde_json::Value {
        json!({"name": name, "ready": false, "restartCount": restarts, "image": "i",
               "imageID": "", "state": state})
    }

    #[test]
    fn the_log_read_is_the_previous_instance_of_the_container_restarted_most() {
        let waiting = json!({"waiting": {"reason": "CrashLoopBackOff"}});
        let a = pod("a", json!([status("api", 2, waiting.clone())]), json!([]));
        let b = pod(
            "b",
            json!([status("api", 0, json!({"running": {}}))]),
            json!([status("wait-db", 5, waiting.clone())]),
        );
        let t = log_target([&a, &b]).unwrap();
        assert_eq!(
            t,
            LogTarget {
                pod: "b".into(),
                container: "wait-db".into(),
                previous: true
            }
        );
        // Never restarted but ended badly: its current (only) instance.
        let c = pod(
            "c",
            json!([status("api", 0, json!({"terminated": {"exitCode": 3}}))]),
            json!([]),
        );
        let t = log_target([&c]).unwrap();
        assert!(!t.previous, "{t:?}");
        // Running, never failed: nothing to read.
        let d = pod(
            "d",
            json!([status("api", 0, json!({"running": {}}))]),
            json!([]),
        );
        assert_eq!(log_target([&d]), None);
    }

    fn event(object: &str, reason: &str, message: &str, count: i32) -> KubeEvent {
        let (kind, name) = object.split_once('/').unwrap();
        serde_json::from_value(json!({
            "metadata": {"name": format!("{name}.{reason}")},
            "involvedObject": {"kind": kind, "name": name},
            "type": "Warning", "reason": reason, "message": message, "count": count,
        }))
        .unwrap()
    }

    #[test]
    fn warnings_are_deduplicated_with_a_count_causes_first_and_capped() {
        let mut events = vec![
            event("Pod/web-1", "BackOff", "Back-off restarting", 9),
            event("Pod/web-1", "Failed", "Error: secret \"s\" not found", 2),
            event("Pod/web-2", "Failed", "Error: secret \"s\" not found", 3),
            event(
                "ReplicaSet/web-1a",
                "FailedCreate",
                "Error creating: \u{1b}[31mforbidden",
                1,
            ),
        ];
        let mut normal = event("Pod/web-1", "Pulled", "pulled", 1);
        normal.type_ = Some("Normal".into());
        events.push(normal);
        let refs: Vec<&KubeEvent> = events.iter().collect();
        assert_eq!(
            warning_lines(&refs, 5),
            vec![
                "event replicaset/web-1a FailedCreate: Error creating: forbidden".to_string(),
                "event pod/web-1 and 1 more Failed ×5: Error: secret \"s\" not found".into(),
                "event pod/web-1 BackOff ×9: Back-off restarting".into(),
            ]
        );
        let many: Vec<KubeEvent> = (0..8)
            .map(|i| event("Pod/p", "Unhealthy", &format!("probe {i}"), 1))
            .collect();
        let refs: Vec<&KubeEvent> = many.iter().collect();
        let lines = warning_lines(&refs, EVENTS_PER_WORKLOAD);
        assert_eq!(lines.len(), EVENTS_PER_WORKLOAD + 1, "{lines:#?}");
        assert_eq!(
            lines.last().unwrap(),
            "3 more Warning events not shown (at most 5 per workload)"
        );
    }

    #[test]
    fn an_event_last_seen_before_this_deploy_is_an_earlier_runs() {
        let since: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
        let mut e = event("ReplicaSet/web-1a", "FailedCreate", "forbidden", 3);
        e.last_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-01-01T00:09:59Z".parse().unwrap(),
        ));
        assert!(!recent(&e, since));
        e.last_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-01-01T00:10:01Z".parse().unwrap(),
        ));
        assert!(recent(&e, since));
        e.last_timestamp = None;
        assert!(recent(&e, since), "no time: kept");
    }

    #[test]
    fn log_lines_keep_the_last_ones_plain_and_say_which_instance() {
        let t = LogTarget {
            pod: "p".into(),
            container: "c".into(),
            previous: true,
        };
        let log: String =
            (1..=8).map(|i| format!("line {i}\n")).collect::<String>() + "\u{1b}[2Jend\n";
        let lines = log_lines(&t, &log);
        assert_eq!(lines.len(), LOG_LINES);
        assert_eq!(lines.last().unwrap(), "log p/c (previous instance): end");
        assert_eq!(lines[0], "log p/c (previous instance): line 5");
    }
}
