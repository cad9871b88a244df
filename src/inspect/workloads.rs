//! The release's live workloads judged exactly as the deploy step judges them: `kubectl rollout
//! status` readiness (`rollout::readiness`) and pod-level causes of the current revision's
//! pods (`rollout::diagnosis`). Pure: the objects come in already listed.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::engine::event::{KubeEventView, PodView, WorkloadView};
pub use crate::engine::views::{self, event_view, pod_view};
use crate::rollout::diagnosis;
use crate::rollout::readiness::{self, Progress, Readiness};
use crate::text;

/// Pod causes shown per workload, as in the deploy step.
const CAUSES_PER_WORKLOAD: usize = 3;

/// The annotation that makes a workload optional (never gating) without `--optional`.
const OPTIONAL_ANNOTATION: &str = "helmdeck.io/optional";

/// What the cluster holds for the release.
#[derive(Debug, Default)]
pub struct Live {
    pub deployments: Vec<Deployment>,
    pub statefulsets: Vec<StatefulSet>,
    pub daemonsets: Vec<DaemonSet>,
    pub replicasets: Vec<ReplicaSet>,
    pub pods: Vec<Pod>,
    pub events: Vec<Event>,
    /// Manifest workloads found only by name (they lack the instance label): (kind, name).
    pub unlabelled: BTreeSet<(String, String)>,
    /// Manifest workloads the cluster does not have at all: (kind, name).
    pub missing: Vec<(String, String)>,
}

/// The judged workloads (gating first, then optional, each by name), their pods and the events
/// about them (oldest first).
pub struct Judged {
    pub workloads: Vec<WorkloadView>,
    pub pods: Vec<PodView>,
    pub events: Vec<KubeEventView>,
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

fn owned_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    !owner_uid.is_empty()
        && meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid)
}

struct One<'a> {
    kind: &'static str,
    meta: &'a ObjectMeta,
    readiness: Readiness,
    /// Pods of the current revision (their causes are the workload's).
    current: Vec<&'a Pod>,
    /// Every pod, old ReplicaSets' too.
    all: Vec<&'a Pod>,
    /// The workload, its ReplicaSets and pods: what events are about.
    uids: Vec<&'a str>,
}

pub fn judge(live: &Live, selector: &str) -> Judged {
    let pods_of = |owner: &str| -> Vec<&Pod> {
        live.pods
            .iter()
            .filter(|p| owned_by(&p.metadata, owner))
            .collect()
    };
    let mut ones: Vec<One<'_>> = Vec::new();
    for d in &live.deployments {
        let rss: Vec<ReplicaSet> = live
            .replicasets
            .iter()
            .filter(|r| owned_by(&r.metadata, uid(&d.metadata)))
            .cloned()
            .collect();
        let current = diagnosis::new_replicaset(d, &rss)
            .map(|rs| pods_of(uid(&rs.metadata)))
            .unwrap_or_default();
        let owned: Vec<&ReplicaSet> = live
            .replicasets
            .iter()
            .filter(|r| owned_by(&r.metadata, uid(&d.metadata)))
            .collect();
        let all: Vec<&Pod> = owned
            .iter()
            .flat_map(|rs| pods_of(uid(&rs.metadata)))
            .collect();
        let uids = std::iter::once(uid(&d.metadata))
            .chain(owned.iter().map(|r| uid(&r.metadata)))
            .collect();
        ones.push(One {
            kind: "Deployment",
            meta: &d.metadata,
            readiness: readiness::deployment(d),
            current,
            all,
            uids,
        });
    }
    for s in &live.statefulsets {
        let update = s
            .status
            .as_ref()
            .and_then(|st| st.update_revision.clone())
            .unwrap_or_default();
        let all = pods_of(uid(&s.metadata));
        let current = all
            .iter()
            .copied()
            .filter(|p| update.is_empty() || diagnosis::pod_is_current(p, &update))
            .collect();
        ones.push(One {
            kind: "StatefulSet",
            meta: &s.metadata,
            readiness: readiness::statefulset(s),
            current,
            all,
            uids: vec![uid(&s.metadata)],
        });
    }
    for d in &live.daemonsets {
        let all = pods_of(uid(&d.metadata));
        ones.push(One {
            kind: "DaemonSet",
            meta: &d.metadata,
            readiness: readiness::daemonset(d),
            current: all.clone(),
            all,
            uids: vec![uid(&d.metadata)],
        });
    }

    let mut events_by_uid: HashMap<&str, Vec<Event>> = HashMap::new();
    for e in &live.events {
        if let Some(u) = e.involved_object.uid.as_deref() {
            events_by_uid.entry(u).or_default().push(e.clone());
        }
    }
    let mut workloads = Vec::new();
    let mut pods = Vec::new();
    let mut related: BTreeSet<&str> = BTreeSet::new();
    for one in &ones {
        workloads.push(view(one, live, selector, &events_by_uid));
        let owner = format!("{}/{}", one.kind, one.meta.name.as_deref().unwrap_or(""));
        let current: BTreeSet<&str> = one.current.iter().map(|p| uid(&p.metadata)).collect();
        related.extend(one.uids.iter().copied());
        for pod in &one.all {
            related.insert(uid(&pod.metadata));
            let evs = events_by_uid
                .get(uid(&pod.metadata))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            pods.push(pod_view(
                pod,
                owner.clone(),
                current.contains(uid(&pod.metadata)),
                evs,
            ));
        }
    }
    for (kind, name) in &live.missing {
        workloads.push(missing_view(kind, name));
    }
    workloads.sort_by(|a, b| (a.optional, &a.name, &a.kind).cmp(&(b.optional, &b.name, &b.kind)));
    pods.sort_by(|a, b| (&a.owner, &a.name).cmp(&(&b.owner, &b.name)));
    related.remove("");
    let events = chronological(live.events.iter().filter(|e| {
        e.involved_object
            .uid
            .as_deref()
            .is_some_and(|u| related.contains(u))
    }));
    Judged {
        workloads,
        pods,
        events,
    }
}

fn view(
    one: &One<'_>,
    live: &Live,
    selector: &str,
    events: &HashMap<&str, Vec<Event>>,
) -> WorkloadView {
    let name = one.meta.name.clone().unwrap_or_default();
    let optional = one
        .meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(OPTIONAL_ANNOTATION))
        .is_some_and(|v| v == "true");
    let causes = views::pod_cause_lines(one.current.iter().copied(), events);
    let mut notes = Vec::new();
    if live
        .unlabelled
        .contains(&(one.kind.to_string(), name.clone()))
    {
        notes.push(format!(
            "in the release manifest but not labelled {selector}"
        ));
    }
    if one.readiness.message.contains(readiness::ON_DELETE_NOTE) {
        notes.push(readiness::ON_DELETE_NOTE.into());
    }
    let counts = &one.readiness.counts;
    WorkloadView {
        kind: one.kind.into(),
        name: text::plain(&name),
        optional,
        optional_because: optional.then(|| format!("annotation {OPTIONAL_ANNOTATION}")),
        ready: one.readiness.progress == Progress::Done,
        failed: one.readiness.progress == Progress::Failed,
        message: text::plain(&one.readiness.message),
        desired: counts.desired,
        ready_replicas: counts.ready,
        updated: counts.updated,
        available: counts.available,
        generation: one.meta.generation.unwrap_or(0),
        created: one
            .meta
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        pod_causes: causes.into_iter().take(CAUSES_PER_WORKLOAD).collect(),
        notes,
    }
}

fn missing_view(kind: &str, name: &str) -> WorkloadView {
    WorkloadView {
        kind: kind.into(),
        name: text::plain(name),
        optional: false,
        optional_because: None,
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
        notes: vec!["in the release manifest but missing from the cluster".into()],
    }
}

/// Events as the views show them, oldest first; writes in the same second keep their order
/// through the (numeric) resourceVersion.
pub fn chronological<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<KubeEventView> {
    let rv = |e: &Event| {
        e.metadata
            .resource_version
            .as_deref()
            .and_then(|r| r.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut keyed: Vec<(KubeEventView, u64)> =
        events.into_iter().map(|e| (event_view(e), rv(e))).collect();
    keyed.sort_by(|a, b| (&a.0.last_seen, a.1).cmp(&(&b.0.last_seen, b.1)));
    keyed.into_iter().map(|(v, _)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(name: &str, ready: i32, annotations: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": name, "uid": format!("uid-{name}"), "generation": 1, "annotations": annotations},
            "spec": {"replicas": 2, "selector": {}, "template": {}},
            "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": ready, "availableReplicas": ready},
        }))
        .unwrap()
    }

    #[test]
    fn workloads_are_judged_like_the_deploy_step_and_sorted_gating_first() {
        let live = Live {
            deployments: vec![
                deployment("demo-web", 1, json!({})),
                deployment("demo-api", 2, json!({})),
                deployment("demo-gpu", 0, json!({"helmdeck.io/optional": "true"})),
            ],
            unlabelled: [("Deployment".to_string(), "demo-web".to_string())].into(),
            missing: vec![("StatefulSet".into(), "demo-db".into())],
            ..Live::default()
        };
        let j = judge(&live, "app.kubernetes.io/instance=demo");
        let names: Vec<&str> = j.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["demo-api", "demo-db", "demo-web", "demo-gpu"]);
        let api = &j.workloads[0];
        assert!(api.ready, "{api:?}");
        assert_eq!(
            api.message,
            "deployment \"demo-api\" successfully rolled out"
        );
        let web = &j.workloads[2];
        assert!(!web.ready);
        assert_eq!(
            web.message,
            "Waiting for deployment \"demo-web\" rollout to finish: 1 of 2 updated replicas are available..."
        );
        assert_eq!(
            web.notes,
            ["in the release manifest but not labelled app.kubernetes.io/instance=demo"]
        );
        assert_eq!(j.workloads[1].message, "not found in the cluster");
        assert!(j.workloads[3].optional);
    }
}
