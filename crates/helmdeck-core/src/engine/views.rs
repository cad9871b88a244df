//! Engine views built from Kubernetes objects: the one place a workload, a Pod or an Event
//! becomes what the screens and reports show, with every string from the cluster made plain.
//! The deploy step (from its watches) and inspect (from one list) both build them here, so
//! they judge a workload the same way.

use std::collections::BTreeSet;

use foldhash::HashMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::engine::event::{ContainerView, KubeEventView, PodView, WorkloadKey, WorkloadView};
use crate::glob::KindGlob;
use crate::rollout::objects::{
    ContainerStatusSummary, EventSummary, PodSummary, ReplicaSetSummary,
};
use crate::rollout::optional::optional_because;
use crate::rollout::readiness::{self, Progress, Readiness};
use crate::rollout::{diagnosis, fail_fast};
use crate::text;

/// Events by the uid of the object they are about, borrowed from the watch that holds them.
pub type EventsByUid<'e> = HashMap<&'e str, Vec<&'e EventSummary>>;

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
    pub current: Vec<&'a PodSummary>,
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
        replicasets: &[ReplicaSetSummary],
        pods: impl IntoIterator<Item = &'a PodSummary>,
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
        pods: impl IntoIterator<Item = &'a PodSummary>,
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
        pods: impl IntoIterator<Item = &'a PodSummary>,
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

fn owned<'a>(
    pods: impl IntoIterator<Item = &'a PodSummary>,
    owner_uid: &str,
) -> Vec<&'a PodSummary> {
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
    /// `--failures-allowed-per-replica`: fail fast (opt-in; annotations override it per workload).
    pub failures_allowed: Option<u32>,
}

/// The workload as the deploy step and inspect report it: ready only on a Done verdict from
/// synced data; optional by `rollout::optional`; pod causes of its current pods (`events` by
/// the uid of the object they are about).
pub fn workload_view(
    w: &Observed<'_>,
    scope: &Scope<'_>,
    events: &EventsByUid<'_>,
) -> WorkloadView {
    let lines: Vec<String> = w
        .current
        .iter()
        .flat_map(|p| {
            let about = events.get(uid(&p.metadata)).map_or(&[][..], Vec::as_slice);
            cause_lines_of(p, about)
        })
        .collect();
    workload_view_with_causes(w, scope, events, first_cause_lines(&lines))
}

/// [`workload_view`] with its pod causes given: the [`first_cause_lines`] over the current
/// pods' [`cause_lines_of`] (the deploy step keeps each pod's lines until it changes).
pub fn workload_view_with_causes(
    w: &Observed<'_>,
    scope: &Scope<'_>,
    events: &EventsByUid<'_>,
    causes: Vec<String>,
) -> WorkloadView {
    let name = w.meta.name.clone().unwrap_or_default();
    let namespace = w
        .meta
        .namespace
        .clone()
        .unwrap_or_else(|| scope.namespace.to_string());
    let optional_because = optional_because(scope.optional, w.kind, w.meta);
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
    let (fail_fast, warning) = fail_fast_reason(w, scope, events, optional_because.is_some());
    notes.extend(warning);
    WorkloadView {
        kind: w.kind.into(),
        namespace: text::plain(&namespace),
        name: text::plain(&name),
        optional: optional_because.is_some(),
        optional_because,
        ready: w.readiness.progress == Progress::Done && w.synced,
        failed: w.readiness.progress == Progress::Failed || fail_fast.is_some(),
        message: fail_fast.unwrap_or_else(|| text::plain(&w.readiness.message)),
        desired: counts.desired,
        ready_replicas: counts.ready,
        updated: counts.updated,
        available: counts.available,
        generation: w.meta.generation.unwrap_or(0),
        created: w.meta.creation_timestamp.as_ref().map(|t| t.0.to_string()),
        pod_causes: causes,
        evidence: Vec::new(),
        notes,
    }
}

/// Fail fast's verdict on a workload not yet ready, and the warning about a bad annotation.
/// An optional workload never fails fast: it never gates. Only the current pods count.
fn fail_fast_reason(
    w: &Observed<'_>,
    scope: &Scope<'_>,
    events: &EventsByUid<'_>,
    optional: bool,
) -> (Option<String>, Option<String>) {
    if optional || w.readiness.progress == Progress::Done {
        return (None, None);
    }
    let (limit, warning) = fail_fast::allowed(scope.failures_allowed, w.meta);
    let pods: Vec<(&PodSummary, &[&EventSummary])> = w
        .current
        .iter()
        .map(|p| {
            let about = events.get(uid(&p.metadata)).map_or(&[][..], Vec::as_slice);
            (*p, about)
        })
        .collect();
    let reason = limit.and_then(|n| fail_fast::exceeded(n, w.readiness.counts.desired, &pods));
    (
        reason.as_deref().map(text::plain),
        warning.as_deref().map(text::plain),
    )
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

pub fn pod_view(
    pod: &PodSummary,
    owner: String,
    current: bool,
    events: &[&EventSummary],
) -> PodView {
    let status = pod.status.as_ref();
    let statuses = status.and_then(|s| s.container_statuses.as_ref());
    PodView {
        name: text::plain(pod.metadata.name.as_deref().unwrap_or("")),
        namespace: text::plain(pod.metadata.namespace.as_deref().unwrap_or("")),
        owner: text::plain(&owner),
        phase: text::plain(status.and_then(|s| s.phase.as_deref()).unwrap_or("Unknown")),
        ready: diagnosis::is_pod_ready(pod),
        // initContainers' restarts count too, as in kubectl's RESTARTS column.
        restarts: statuses
            .into_iter()
            .chain(status.and_then(|s| s.init_container_statuses.as_ref()))
            .flatten()
            .map(|c| c.restart_count)
            .sum(),
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
        container_states: container_views(pod),
    }
}

/// Every container of the pod from its spec, initContainers first (the order they run), each
/// with its state from the pod's status.
pub fn container_views(pod: &PodSummary) -> Vec<ContainerView> {
    let Some(spec) = pod.spec.as_ref() else {
        return Vec::new();
    };
    let status = pod.status.as_ref();
    let find = |list: Option<&Vec<ContainerStatusSummary>>, name: &str| {
        list.into_iter().flatten().find(|c| c.name == name).cloned()
    };
    let init = spec.init_containers.iter().flatten().map(|c| {
        let st = find(
            status.and_then(|s| s.init_container_statuses.as_ref()),
            &c.name,
        );
        (c.name.as_str(), true, st)
    });
    let main = spec.containers.iter().map(|c| {
        let st = find(status.and_then(|s| s.container_statuses.as_ref()), &c.name);
        (c.name.as_str(), false, st)
    });
    init.chain(main)
        .map(|(name, init, st)| ContainerView {
            name: text::plain(name),
            init,
            state: text::plain(&container_state(st.as_ref())),
            restarts: st.as_ref().map_or(0, |s| s.restart_count),
        })
        .collect()
}

/// A container's state in a few words, as `kubectl describe` names it.
fn container_state(st: Option<&ContainerStatusSummary>) -> String {
    let Some(state) = st.and_then(|s| s.state.as_ref()) else {
        return "not started".into();
    };
    if let Some(t) = &state.terminated {
        let reason = t.reason.as_deref().unwrap_or("Terminated");
        return if t.exit_code == 0 {
            "completed".into()
        } else {
            format!("terminated: {reason} (exit {})", t.exit_code)
        };
    }
    if let Some(w) = &state.waiting {
        let reason = w.reason.as_deref().unwrap_or("Waiting");
        // A restart back-off says how the last run ended: that is what failed.
        let last = st
            .and_then(|s| s.last_state.as_ref())
            .and_then(|l| l.terminated.as_ref());
        return match last {
            Some(t) if reason == "CrashLoopBackOff" => {
                format!("waiting: {reason} (exit {})", t.exit_code)
            }
            _ => format!("waiting: {reason}"),
        };
    }
    if state.running.is_some() {
        return "running".into();
    }
    "not started".into()
}

/// An Event as the views show it; `last_seen` is the newest timestamp it carries.
pub fn event_view(e: &EventSummary) -> KubeEventView {
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

/// `pod NAME: CAUSE` for each cause of `pod` given the Events about it; none when it is ready.
pub fn cause_lines_of(pod: &PodSummary, events: &[&EventSummary]) -> Vec<String> {
    if diagnosis::is_pod_ready(pod) {
        return Vec::new();
    }
    let name = text::plain(pod.metadata.name.as_deref().unwrap_or(""));
    diagnosis::pod_causes(pod, events)
        .into_iter()
        .map(|cause| format!("pod {name}: {}", text::plain(&cause.summary())))
        .collect()
}

/// The first [`CAUSES_PER_WORKLOAD`] distinct lines in sorted order, without sorting them all
/// (a workload of 3,000 pods not ready has thousands).
pub fn first_cause_lines<'a>(lines: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut first: BTreeSet<&str> = BTreeSet::new();
    for line in lines {
        if first.len() == CAUSES_PER_WORKLOAD && first.last().is_some_and(|l| line.as_str() >= *l) {
            continue;
        }
        first.insert(line);
        if first.len() > CAUSES_PER_WORKLOAD {
            first.pop_last();
        }
    }
    first.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::objects::{
        EventSummary as Event, PodSummary as Pod, ReplicaSetSummary as ReplicaSet,
    };
    use serde_json::json;

    fn pod(name: &str, owner_uid: &str, labels: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "uid": format!("uid-{name}"), "labels": labels,
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "X", "name": "o", "uid": owner_uid}]},
        }))
        .unwrap()
    }

    /// Every container from the spec, initContainers first in the order they run, each with
    /// its state; restarts count the initContainers' too.
    #[test]
    fn a_pod_view_lists_init_containers_first_with_their_state() {
        let p: Pod = serde_json::from_value(json!({
            "metadata": {"name": "job-x"},
            "spec": {
                "initContainers": [{"name": "wait-db"}, {"name": "configure"}],
                "containers": [{"name": "app"}]
            },
            "status": {
                "phase": "Pending",
                "initContainerStatuses": [
                    {"name": "wait-db", "image": "i", "imageID": "", "ready": true, "restartCount": 0,
                     "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                    {"name": "configure", "image": "i", "imageID": "", "ready": false, "restartCount": 3,
                     "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                     "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}
                ],
                "containerStatuses": [
                    {"name": "app", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                     "state": {"waiting": {"reason": "PodInitializing"}}}
                ]
            }
        }))
        .unwrap();
        let v = pod_view(&p, "Job/job".into(), true, &[]);
        let got: Vec<(&str, bool, &str, i32)> = v
            .container_states
            .iter()
            .map(|c| (c.name.as_str(), c.init, c.state.as_str(), c.restarts))
            .collect();
        assert_eq!(
            got,
            [
                ("wait-db", true, "completed", 0),
                ("configure", true, "waiting: CrashLoopBackOff (exit 1)", 3),
                ("app", false, "waiting: PodInitializing", 0),
            ]
        );
        assert_eq!(v.log_containers(), ["wait-db", "configure", "app"]);
        assert_eq!(v.failed_container(), Some("configure"));
        assert_eq!(v.restarts, 3);
        assert_eq!(v.containers, ["app"]);
    }

    /// A Pod as the API serves it, with what the summary drops (managed fields, annotations,
    /// volumes, env, resources, probe handlers, condition times) and what diagnosis reads
    /// (initContainerStatuses, a container's lastState, the readiness probe's timing).
    const FULL_POD: &str = r#"{
      "apiVersion": "v1", "kind": "Pod",
      "metadata": {
        "name": "api-7c9d8-abcde", "namespace": "shop", "uid": "pod-1", "resourceVersion": "4711",
        "creationTimestamp": "2026-12-01T10:00:00Z",
        "labels": {"app.kubernetes.io/instance": "shop", "pod-template-hash": "7c9d8"},
        "annotations": {"checksum/config": "0123456789abcdef0123456789abcdef", "kubectl.kubernetes.io/last-applied-configuration": "{\"big\": true}"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-7c9d8", "uid": "rs-1", "controller": true}],
        "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]
      },
      "spec": {
        "volumes": [{"name": "config", "configMap": {"name": "api-config"}}],
        "initContainers": [{"name": "migrate", "image": "registry.example.com/api-migrate:2", "command": ["/migrate"], "env": [{"name": "DB", "value": "postgres"}]}],
        "containers": [{"name": "api", "image": "registry.example.com/api:2",
                        "resources": {"limits": {"memory": "256Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 3},
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/api"}]}],
        "nodeName": "node-2", "restartPolicy": "Always", "serviceAccountName": "api"
      },
      "status": {
        "phase": "Pending", "hostIP": "10.0.0.2", "podIP": "10.1.0.7", "qosClass": "Burstable",
        "conditions": [
          {"type": "Initialized", "status": "False", "lastProbeTime": null, "lastTransitionTime": "2026-12-01T10:00:01Z", "reason": "ContainersNotInitialized", "message": "containers with incomplete status: [migrate]"},
          {"type": "Ready", "status": "False", "lastProbeTime": null, "lastTransitionTime": "2026-12-01T10:00:01Z", "reason": "ContainersNotReady"},
          {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-12-01T10:00:00Z"}
        ],
        "initContainerStatuses": [
          {"name": "migrate", "image": "registry.example.com/api-migrate:2", "imageID": "sha256:aaa", "containerID": "containerd://1",
           "ready": false, "restartCount": 2, "started": false,
           "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting failed container"}},
           "lastState": {"terminated": {"exitCode": 3, "reason": "Error", "message": "relation \"users\" already exists", "startedAt": "2026-12-01T10:00:30Z", "finishedAt": "2026-12-01T10:00:31Z"}}}
        ],
        "containerStatuses": [
          {"name": "api", "image": "registry.example.com/api:2", "imageID": "", "ready": false, "restartCount": 0, "started": false,
           "state": {"waiting": {"reason": "PodInitializing"}}}
        ]
      }
    }"#;

    /// The summary keeps everything diagnosis and the drill-down read: judged from it, the pod
    /// has the causes and container states the full Pod gives, and holds far less.
    #[test]
    fn a_pod_summary_keeps_what_diagnosis_and_the_drill_down_read() {
        let full: k8s_openapi::api::core::v1::Pod =
            serde_json::from_str(FULL_POD).expect("a full Pod");
        let summary: PodSummary = serde_json::from_str(FULL_POD).expect("a summary");
        assert_eq!(summary, PodSummary::of(&full), "one summary either way");
        let now: k8s_openapi::jiff::Timestamp = "2026-12-01T11:00:00Z".parse().unwrap();
        assert_eq!(
            diagnosis::pod_causes_at(&summary, &[], now),
            [diagnosis::PodCause::Init {
                container: "migrate".into(),
                waiting: Box::new(diagnosis::PodCause::CrashLoopBackOff {
                    container: "migrate".into(),
                    restarts: 2,
                    last_exit_code: Some(3),
                    last_reason: Some("Error".into()),
                }),
            }]
        );
        let v = pod_view(&summary, "Deployment/api".into(), true, &[]);
        let states: Vec<(&str, bool, &str, i32)> = v
            .container_states
            .iter()
            .map(|c| (c.name.as_str(), c.init, c.state.as_str(), c.restarts))
            .collect();
        assert_eq!(
            states,
            [
                ("migrate", true, "waiting: CrashLoopBackOff (exit 3)", 2),
                ("api", false, "waiting: PodInitializing", 0),
            ]
        );
        assert_eq!(
            (v.node.as_deref(), v.phase.as_str(), v.restarts, v.ready),
            (Some("node-2"), "Pending", 2, false)
        );
        assert_eq!(v.containers, ["api"]);
        let probe = summary.spec.as_ref().unwrap().containers[0]
            .readiness_probe
            .as_ref()
            .unwrap();
        assert_eq!(
            (probe.initial_delay_seconds, probe.period_seconds),
            (Some(5), Some(3))
        );
        let meta = &summary.metadata;
        assert!(meta.managed_fields.is_none() && meta.annotations.is_none());
        assert_eq!(
            meta.labels
                .as_ref()
                .and_then(|l| l.get("pod-template-hash"))
                .map(String::as_str),
            Some("7c9d8"),
            "the current revision is told by it"
        );
        assert_eq!(meta.owner_references.as_ref().map(Vec::len), Some(1));
        assert_eq!(
            meta.resource_version.as_deref(),
            Some("4711"),
            "the watch resumes from it"
        );
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
    fn fail_fast_counts_the_new_revisions_pods_only_and_never_an_optional_workload() {
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "api", "uid": "d1", "annotations": {"deployment.kubernetes.io/revision": "2"}},
            "spec": {"replicas": 1, "selector": {}, "template": {}},
        }))
        .unwrap();
        let rss: Vec<ReplicaSet> = [("rs-old", "1"), ("rs-new", "2")]
            .iter()
            .map(|(name, rev)| {
                serde_json::from_value(json!({
                    "metadata": {"name": name, "uid": name, "annotations": {"deployment.kubernetes.io/revision": rev},
                                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "uid": "d1"}]},
                }))
                .unwrap()
            })
            .collect();
        let crashing = |name: &str, owner: &str, restarts: i32| -> Pod {
            serde_json::from_value(json!({
                "metadata": {"name": name, "uid": name,
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": owner}]},
                "status": {"containerStatuses": [{"name": "api", "ready": false, "restartCount": restarts, "image": "i", "imageID": "",
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
            }))
            .unwrap()
        };
        let unlabelled = BTreeSet::new();
        let deny = [KindGlob::new("api").unwrap()];
        let plain = Scope {
            selector: "s",
            unlabelled: &unlabelled,
            optional: &[],
            namespace: "apps",
            failures_allowed: Some(1),
        };
        let denied = Scope {
            optional: &deny,
            ..plain
        };
        // The old revision crashed 9 times; the new one has not restarted yet.
        let pods = [crashing("old", "rs-old", 9), crashing("new", "rs-new", 0)];
        let w = Observed::deployment(&d, &rss, &pods, true);
        let v = workload_view(&w, &plain, &HashMap::default());
        assert!(!v.failed, "{v:?}");
        let pods = [crashing("old", "rs-old", 9), crashing("new", "rs-new", 2)];
        let w = Observed::deployment(&d, &rss, &pods, true);
        let v = workload_view(&w, &plain, &HashMap::default());
        assert!(v.failed, "{v:?}");
        assert_eq!(v.message, "fail fast: 2 restarts > 1 allowed × 1 replica");
        let v = workload_view(&w, &denied, &HashMap::default());
        assert!(v.optional && !v.failed, "{v:?}");
    }

    /// The first lines without sorting them all are those of sorting, deduplicating and
    /// taking the first: whatever the order and the repeats.
    #[test]
    fn the_first_cause_lines_are_the_sorted_distinct_first() {
        let words = ["pod c: x", "pod a: y", "pod e: z", "pod b: w", "pod d: v"];
        for n in 0..=words.len() {
            for rotate in 0..words.len() {
                let mut lines: Vec<String> = words.iter().map(|w| w.to_string()).collect();
                lines.rotate_left(rotate);
                lines.truncate(n);
                lines.extend(lines.clone());
                let mut naive = lines.clone();
                naive.sort();
                naive.dedup();
                naive.truncate(CAUSES_PER_WORKLOAD);
                assert_eq!(first_cause_lines(&lines), naive, "{lines:?}");
            }
        }
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
        let lines = cause_lines_of(&pod, &[]);
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
