//! Engine views built from Kubernetes objects: the one place a Pod or an Event becomes what the
//! screens and reports show, with every string from the cluster made plain.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Event, Pod};

use crate::engine::event::{KubeEventView, PodView};
use crate::rollout::diagnosis;
use crate::text;

fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or("")
}

pub fn pod_view(pod: &Pod, owner: String, current: bool, events: &[Event]) -> PodView {
    let status = pod.status.as_ref();
    let statuses = status.and_then(|s| s.container_statuses.as_ref());
    PodView {
        name: text::plain(pod.metadata.name.as_deref().unwrap_or("")),
        owner: text::plain(&owner),
        phase: text::plain(status.and_then(|s| s.phase.as_deref()).unwrap_or("Unknown")),
        ready: diagnosis::is_pod_ready(pod),
        restarts: statuses.map_or(0, |c| c.iter().map(|c| c.restart_count).sum()),
        node: pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .map(text::plain),
        current,
        causes: diagnosis::pod_causes(pod, events)
            .iter()
            .map(|c| text::plain(&c.summary()))
            .collect(),
        containers: pod
            .spec
            .as_ref()
            .map(|s| s.containers.iter().map(|c| text::plain(&c.name)).collect())
            .unwrap_or_default(),
    }
}

/// An Event as the views show it; `last_seen` is the newest timestamp it carries.
pub fn event_view(e: &Event) -> KubeEventView {
    let obj = &e.involved_object;
    let last_seen = e
        .last_timestamp
        .as_ref()
        .map(|t| t.0.to_string())
        .or_else(|| e.event_time.as_ref().map(|t| t.0.to_string()))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0.to_string()))
        .or_else(|| {
            e.metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string())
        });
    KubeEventView {
        object: text::plain(&format!(
            "{}/{}",
            obj.kind.as_deref().unwrap_or("").to_lowercase(),
            obj.name.as_deref().unwrap_or("")
        )),
        kind: text::plain(e.type_.as_deref().unwrap_or("Normal")),
        reason: text::plain(e.reason.as_deref().unwrap_or("")),
        message: text::plain(e.message.as_deref().unwrap_or("")),
        count: e.count.unwrap_or(1),
        last_seen,
    }
}

/// `pod NAME: CAUSE` for every cause of every not-ready pod, sorted, without repeats.
pub fn pod_cause_lines<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    events_by_uid: &HashMap<&str, Vec<Event>>,
) -> Vec<String> {
    let mut lines = Vec::new();
    for pod in pods {
        if diagnosis::is_pod_ready(pod) {
            continue;
        }
        let events = events_by_uid
            .get(uid(pod))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for cause in diagnosis::pod_causes(pod, events) {
            lines.push(format!(
                "pod {}: {}",
                text::plain(pod.metadata.name.as_deref().unwrap_or("")),
                text::plain(&cause.summary())
            ));
        }
    }
    lines.sort();
    lines.dedup();
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_plain_text() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-\u{1b}[31mx", "uid": "u1"},
            "spec": {"containers": [{"name": "web"}], "nodeName": "node-1"},
            "status": {"phase": "Running", "containerStatuses": [{"name": "web", "ready": false, "restartCount": 3, "image": "i", "imageID": "",
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}
        }))
        .unwrap();
        let v = pod_view(&pod, "Deployment/web".into(), true, &[]);
        assert_eq!((v.name.as_str(), v.restarts, v.ready), ("web-x", 3, false));
        let lines = pod_cause_lines([&pod], &HashMap::new());
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("pod web-x: CrashLoopBackOff"),
            "{lines:?}"
        );
        let e: Event = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "involvedObject": {"kind": "Pod", "name": "web-x"},
            "reason": "BackOff", "message": "\u{202e}evil", "type": "Warning"
        }))
        .unwrap();
        let v = event_view(&e);
        assert_eq!(
            (v.object.as_str(), v.message.as_str(), v.count),
            ("pod/web-x", "evil", 1)
        );
        assert_eq!(v.last_seen.as_deref(), Some("2026-01-01T00:00:00Z"));
    }
}
