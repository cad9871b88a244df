//! Engine views built from Kubernetes objects: the one place a workload, a Pod or an Event
//! becomes what the screens and reports show, with every string from the cluster made plain.
//! The deploy step (from its watches) and inspect (from one list) both build them here, so
//! they judge a workload the same way.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::engine::event::{KubeEventView, PodView, WorkloadKey, WorkloadView};
use crate::glob::KindGlob;
use crate::rollout::diagnosis;
use crate::rollout::optional::optional_because;
use crate::rollout::readiness::{self, Progress, Readiness};
use crate::text;

/// Pod causes shown per workload (the rest are in the drill-down).
pub const CAUSES_PER_WORKLOAD: usize = 3;

/// Whether `meta` names `owner_uid` among its owners (an empty uid owns nothing).
pub fn owned_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    !owner_uid.is_empty()
        && meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid)
}

/// One workload of the release as it was read, judged by `kubectl rollout status` rules,
/// with the pods of its current revision.
#[derive(Debug, Clone)]
pub struct Observed<'a> {
    pub kind: &'static str,
    pub meta: &'a ObjectMeta,
    pub readiness: Readiness,
    /// Pods of the current revision: their causes are the workload's.
    pub current: Vec<&'a Pod>,
    /// False while the watch that holds it is failing; a Done verdict on stale data does not
    /// count as ready.
    pub synced: bool,
}

impl<'a> Observed<'a> {
    /// A Deployment: its current pods are those of its new ReplicaSet (found among
    /// `replicasets`, which may hold other owners' too); ReplicaSets and pods feed diagnosis
    /// only, readiness comes from the Deployment.
    pub fn deployment(
        d: &'a Deployment,
        replicasets: &[ReplicaSet],
        pods: impl IntoIterator<Item = &'a Pod>,
        synced: bool,
    ) -> Self {
        let current = match diagnosis::new_replicaset(d, replicasets) {
            Some(rs) => owned(pods, uid(&rs.metadata)),
            None => Vec::new(),
        };
        Observed {
            kind: "Deployment",
            meta: &d.metadata,
            readiness: readiness::deployment(d),
            current,
            synced,
        }
    }

    /// A StatefulSet: its current pods are those at its update revision (all of them while
    /// it has none).
    pub fn statefulset(
        s: &'a StatefulSet,
        pods: impl IntoIterator<Item = &'a Pod>,
        synced: bool,
    ) -> Self {
        let update = s
            .status
            .as_ref()
            .and_then(|st| st.update_revision.as_deref())
            .unwrap_or_default();
        let current = owned(pods, uid(&s.metadata))
            .into_iter()
            .filter(|p| update.is_empty() || diagnosis::pod_is_current(p, update))
            .collect();
        Observed {
            kind: "StatefulSet",
            meta: &s.metadata,
            readiness: readiness::statefulset(s),
            current,
            synced,
        }
    }

    /// A DaemonSet: every pod it owns is current.
    pub fn daemonset(
        d: &'a DaemonSet,
        pods: impl IntoIterator<Item = &'a Pod>,
        synced: bool,
    ) -> Self {
        Observed {
            kind: "DaemonSet",
            meta: &d.metadata,
            readiness: readiness::daemonset(d),
            current: owned(pods, uid(&d.metadata)),
            synced,
        }
    }
}

fn owned<'a>(pods: impl IntoIterator<Item = &'a Pod>, owner_uid: &str) -> Vec<&'a Pod> {
    pods.into_iter()
        .filter(|p| owned_by(&p.metadata, owner_uid))
        .collect()
}

/// What a workload is judged against besides itself: the release's label selector, the
/// manifest workloads that lack it, the deny list, and the release namespace (for an object
/// that does not say its own).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub selector: &'a str,
    pub unlabelled: &'a BTreeSet<WorkloadKey>,
    pub optional: &'a [KindGlob],
    pub namespace: &'a str,
}

/// The workload as the deploy step and inspect report it: ready only on a Done verdict from
/// synced data; optional by `rollout::optional`; pod causes of its current pods (`events` by
/// the uid of the object they are about).
pub fn workload_view(
    w: &Observed<'_>,
    scope: &Scope<'_>,
    events: &HashMap<&str, Vec<Event>>,
) -> WorkloadView {
    let name = w.meta.name.clone().unwrap_or_default();
    let namespace = w
        .meta
        .namespace
        .clone()
        .unwrap_or_else(|| scope.namespace.to_string());
    let optional_because = optional_because(scope.optional, w.kind, w.meta);
    let causes = pod_cause_lines(w.current.iter().copied(), events);
    let mut notes = Vec::new();
    if scope
        .unlabelled
        .contains(&(w.kind.to_string(), namespace.clone(), name.clone()))
    {
        notes.push(format!(
            "in the release manifest but not labelled {}",
            scope.selector
        ));
    }
    if w.readiness.message.contains(readiness::ON_DELETE_NOTE) {
        notes.push(readiness::ON_DELETE_NOTE.into());
    }
    if !w.synced {
        notes.push("evidence stale: its watch is failing".into());
    }
    let counts = &w.readiness.counts;
    WorkloadView {
        kind: w.kind.into(),
        namespace: text::plain(&namespace),
        name: text::plain(&name),
        optional: optional_because.is_some(),
        optional_because,
        ready: w.readiness.progress == Progress::Done && w.synced,
        failed: w.readiness.progress == Progress::Failed,
        message: text::plain(&w.readiness.message),
        desired: counts.desired,
        ready_replicas: counts.ready,
        updated: counts.updated,
        available: counts.available,
        generation: w.meta.generation.unwrap_or(0),
        created: w.meta.creation_timestamp.as_ref().map(|t| t.0.to_string()),
        pod_causes: causes.into_iter().take(CAUSES_PER_WORKLOAD).collect(),
        evidence: Vec::new(),
        notes,
    }
}

/// A manifest workload the cluster does not have (`key` is its kind, namespace and name). Only
/// the deny list can make it optional: its annotations are in the manifest, not read here.
pub fn missing_view(key: &WorkloadKey, optional: &[KindGlob]) -> WorkloadView {
    let (kind, namespace, name) = key;
    let meta = ObjectMeta {
        name: Some(name.clone()),
        ..ObjectMeta::default()
    };
    let optional_because = optional_because(optional, kind, &meta);
    WorkloadView {
        kind: text::plain(kind),
        namespace: text::plain(namespace),
        name: text::plain(name),
        optional: optional_because.is_some(),
        optional_because,
        ready: false,
        failed: false,
        message: "not found in the cluster".into(),
        desired: 0,
        ready_replicas: 0,
        updated: 0,
        available: 0,
        generation: 0,
        created: None,
        pod_causes: Vec::new(),
        evidence: vec![],
        notes: vec!["in the release manifest but missing from the cluster".into()],
    }
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

pub fn pod_view(pod: &Pod, owner: String, current: bool, events: &[Event]) -> PodView {
    let status = pod.status.as_ref();
    let statuses = status.and_then(|s| s.container_statuses.as_ref());
    PodView {
        name: text::plain(pod.metadata.name.as_deref().unwrap_or("")),
        namespace: text::plain(pod.metadata.namespace.as_deref().unwrap_or("")),
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

/// Whether `e` is about one of `uids` (an Event without a uid is about none of them).
pub fn is_about(e: &Event, uids: &BTreeSet<String>) -> bool {
    e.involved_object
        .uid
        .as_deref()
        .is_some_and(|u| uids.contains(u))
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
        namespace: text::plain(
            obj.namespace
                .as_deref()
                .or(e.metadata.namespace.as_deref())
                .unwrap_or(""),
        ),
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
            .get(uid(&pod.metadata))
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
    use serde_json::json;

    fn pod(name: &str, owner_uid: &str, labels: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "uid": format!("uid-{name}"), "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "X", "name": "o", "uid": owner_uid}]},
        }))
        .unwrap()
    }

    fn names(w: &Observed<'_>) -> Vec<String> {
        w.current
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect()
    }

    #[test]
    fn current_pods_are_the_new_revisions_for_each_kind() {
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "web", "uid": "d1", "annotations": {"deployment.kubernetes.io/revision": "2"}},
        }))
        .unwrap();
        let rs = |name: &str, revision: &str| -> ReplicaSet {
            serde_json::from_value(json!({
                "metadata": {"name": name, "uid": name, "annotations": {"deployment.kubernetes.io/revision": revision},
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d1"}]},
            }))
            .unwrap()
        };
        let s: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "db", "uid": "s1"}, "status": {"replicas": 2, "updateRevision": "db-new"},
        }))
        .unwrap();
        let ds: DaemonSet =
            serde_json::from_value(json!({"metadata": {"name": "agent", "uid": "a1"}})).unwrap();
        let pods = [
            pod("web-old", "rs-old", json!({})),
            pod("web-new", "rs-new", json!({})),
            pod("db-0", "s1", json!({"controller-revision-hash": "db-old"})),
            pod("db-1", "s1", json!({"controller-revision-hash": "db-new"})),
            pod("agent-x", "a1", json!({})),
            pod("stray", "", json!({})),
        ];
        let rss = [rs("rs-old", "1"), rs("rs-new", "2")];
        let w = Observed::deployment(&d, &rss, &pods, true);
        assert_eq!((w.kind, names(&w)), ("Deployment", vec!["web-new".into()]));
        let w = Observed::statefulset(&s, &pods, true);
        assert_eq!((w.kind, names(&w)), ("StatefulSet", vec!["db-1".into()]));
        let w = Observed::daemonset(&ds, &pods, false);
        assert_eq!((w.kind, names(&w)), ("DaemonSet", vec!["agent-x".into()]));
        assert!(!w.synced);
        assert!(
            !owned_by(&pods[5].metadata, ""),
            "an empty uid owns nothing"
        );
    }

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
