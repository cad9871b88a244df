//! What the watches keep of a Pod, a ReplicaSet and an Event: the fields readiness, diagnosis,
//! the drill-down and the report read, under the API's own field names, so serde skips the rest
//! (managed fields, volumes, env, resources, probes but their timing, ...) while deserializing.
//! A full Pod holds tens of KiB once typed; its summary a few hundred bytes plus its strings,
//! and a release of 3,000 pods is watched at that size. Each summary is a `kube::Resource` of
//! the same group, version, kind and plural as the full object, so `Api<PodSummary>` lists and
//! watches pods as `Api<Pod>` does.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ContainerState, Event, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use serde::{Deserialize, Deserializer, Serialize};

/// The ReplicaSet annotation `new_replicaset` compares: the only one a ReplicaSet keeps.
const REVISION: &str = "deployment.kubernetes.io/revision";

/// Metadata without managed fields and annotations (a pod's are often its largest part: the
/// rendered config checksums, `kubectl.kubernetes.io/last-applied-configuration`); labels and
/// owner references stay (selectors, current revision, ownership).
fn meta_without_annotations<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let mut meta = ObjectMeta::deserialize(d)?;
    meta.managed_fields = None;
    meta.annotations = None;
    Ok(meta)
}

/// A ReplicaSet keeps the revision annotation only: its Deployment's new one is found by it.
fn meta_with_revision<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let mut meta = ObjectMeta::deserialize(d)?;
    meta.managed_fields = None;
    meta.annotations = meta
        .annotations
        .and_then(|mut a| a.remove_entry(REVISION))
        .map(|(k, v)| BTreeMap::from([(k, v)]));
    Ok(meta)
}

/// An Event's metadata is only its name, namespace, uid, version and creation time.
fn meta_of_event<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let meta = ObjectMeta::deserialize(d)?;
    Ok(ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        creation_timestamp: meta.creation_timestamp,
        ..ObjectMeta::default()
    })
}

/// Implements `k8s_openapi::Resource` (and so `kube::Resource`) as the full type `$full` does.
macro_rules! resource_as {
    ($summary:ty, $full:ty) => {
        impl k8s_openapi::Resource for $summary {
            const API_VERSION: &'static str = <$full as k8s_openapi::Resource>::API_VERSION;
            const GROUP: &'static str = <$full as k8s_openapi::Resource>::GROUP;
            const KIND: &'static str = <$full as k8s_openapi::Resource>::KIND;
            const VERSION: &'static str = <$full as k8s_openapi::Resource>::VERSION;
            const URL_PATH_SEGMENT: &'static str =
                <$full as k8s_openapi::Resource>::URL_PATH_SEGMENT;
            type Scope = <$full as k8s_openapi::Resource>::Scope;
        }

        impl k8s_openapi::Metadata for $summary {
            type Ty = ObjectMeta;
            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// What is kept of a Pod.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct PodSummary {
    #[serde(default, deserialize_with = "meta_without_annotations")]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpecSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodStatusSummary>,
}
resource_as!(PodSummary, Pod);

impl PodSummary {
    /// The summary of a full Pod (one read by other means than a watch: a GET, a test).
    pub fn of(pod: &Pod) -> Self {
        serde_json::to_value(pod)
            .and_then(serde_json::from_value)
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpecSummary {
    #[serde(default)]
    pub containers: Vec<ContainerSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<ContainerSummary>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
}

/// A container of the spec: its name, its image (before the kubelet reports one) and when its
/// readiness probe is first due.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerSummary {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<ProbeTiming>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeTiming {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_delay_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_seconds: Option<i32>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatusSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(
        default,
        deserialize_with = "conditions_read",
        skip_serializing_if = "Option::is_none"
    )]
    pub conditions: Option<Vec<ConditionSummary>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_container_statuses: Option<Vec<ContainerStatusSummary>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_statuses: Option<Vec<ContainerStatusSummary>>,
}

/// The pod conditions anything reads: `Ready` (readiness, diagnosis) and `PodScheduled`
/// (unschedulable). A pod carries five; the other three, each with its strings, were a
/// quarter of what a running pod's summary held.
const CONDITIONS_READ: [&str; 2] = ["Ready", "PodScheduled"];

fn conditions_read<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<ConditionSummary>>, D::Error> {
    let all = Option::<Vec<ConditionSummary>>::deserialize(d)?;
    Ok(all.map(|all| {
        all.into_iter()
            .filter(|c| CONDITIONS_READ.contains(&c.type_.as_str()))
            .collect()
    }))
}

/// A pod condition without its times.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ConditionSummary {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A container's status: its state now and at the end of its last run (diagnosis reads both).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatusSummary {
    pub name: String,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub image: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_state: Option<ContainerState>,
}

/// What is kept of a ReplicaSet: ownership, revision, and the template hash its pods carry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ReplicaSetSummary {
    #[serde(default, deserialize_with = "meta_with_revision")]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ReplicaSetSpecSummary>,
}
resource_as!(ReplicaSetSummary, ReplicaSet);

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ReplicaSetSpecSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<TemplateSummary>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct TemplateSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMeta>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct TemplateMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

/// What is kept of an Event: what it is about, what it says, and when.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSummary {
    #[serde(default, deserialize_with = "meta_of_event")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub involved_object: ObjectReference,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
}
resource_as!(EventSummary, Event);

impl EventSummary {
    /// The summary of a full Event.
    pub fn of(e: &Event) -> Self {
        serde_json::to_value(e)
            .and_then(serde_json::from_value)
            .unwrap_or_default()
    }

    /// The newest time it carries: last seen, else its micro time, first seen, creation.
    pub fn time(&self) -> Option<k8s_openapi::jiff::Timestamp> {
        let last = self.last_timestamp.as_ref().map(|t| t.0);
        let micro = || self.event_time.as_ref().map(|t| t.0);
        let first = || self.first_timestamp.as_ref().map(|t| t.0);
        last.or_else(micro)
            .or_else(first)
            .or_else(|| self.metadata.creation_timestamp.as_ref().map(|t| t.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_keeps_the_conditions_that_are_read_only() {
        let pod: PodSummary = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "annotations": {"a": "b"}},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodReadyToStartContainers", "status": "False"},
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
                {"type": "ContainersReady", "status": "False"},
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": "0/3 nodes are available"},
            ]},
        }))
        .expect("a pod");
        let kept: Vec<&str> = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default()
            .iter()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(kept, ["Ready", "PodScheduled"]);
        assert_eq!(pod.metadata.annotations, None);
        let none: PodSummary =
            serde_json::from_value(serde_json::json!({"status": {"phase": "Pending"}}))
                .expect("a pod without conditions");
        assert_eq!(none.status.and_then(|s| s.conditions), None);
    }
}
