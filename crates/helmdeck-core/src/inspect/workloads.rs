//! The release's live workloads judged exactly as the deploy step judges them: the same
//! builder (`engine::views::workload_view`: `kubectl rollout status` readiness, pod-level
//! causes of the current revision's pods, the deny list and optional annotations). Pure: the
//! objects come in already listed.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};

use crate::rollout::objects::{
    EventSummary as Event, PodSummary as Pod, ReplicaSetSummary as ReplicaSet,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::engine::event::{KubeEventView, PodView, WorkloadKey, WorkloadView};
pub use crate::engine::views::{self, event_view, pod_view};
use crate::engine::views::{Observed, Scope, missing_view, owned_by};
use crate::glob::KindGlob;

/// What the cluster holds for the release, in every namespace its manifest names.
#[derive(Debug, Default)]
pub struct Live {
    pub deployments: Vec<Deployment>,
    pub statefulsets: Vec<StatefulSet>,
    pub daemonsets: Vec<DaemonSet>,
    pub replicasets: Vec<ReplicaSet>,
    pub pods: Vec<Pod>,
    pub events: Vec<Event>,
    /// Manifest workloads found only by name (they lack the instance label).
    pub unlabelled: BTreeSet<WorkloadKey>,
    /// Manifest workloads the cluster does not have at all.
    pub missing: Vec<WorkloadKey>,
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

struct One<'a> {
    /// The workload with the pods of its current revision, as the deploy step sees it.
    observed: Observed<'a>,
    /// Every pod, old ReplicaSets' too.
    all: Vec<&'a Pod>,
    /// The workload, its ReplicaSets and pods: what events are about.
    uids: Vec<&'a str>,
}

/// Judges `live` for a release in `namespace` whose workloads carry `selector`, with the deny
/// list `optional`. Pods and ReplicaSets belong to a workload by owner uid, so each is found in
/// its workload's namespace.
pub fn judge(live: &Live, selector: &str, optional: &[KindGlob], namespace: &str) -> Judged {
    let pods_of = |owner: &str| -> Vec<&Pod> {
        live.pods
            .iter()
            .filter(|p| owned_by(&p.metadata, owner))
            .collect()
    };
    let mut ones: Vec<One<'_>> = Vec::new();
    for d in &live.deployments {
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
            observed: Observed::deployment(d, &live.replicasets, &live.pods, true),
            all,
            uids,
        });
    }
    for s in &live.statefulsets {
        ones.push(One {
            observed: Observed::statefulset(s, &live.pods, true),
            all: pods_of(uid(&s.metadata)),
            uids: vec![uid(&s.metadata)],
        });
    }
    for d in &live.daemonsets {
        ones.push(One {
            observed: Observed::daemonset(d, &live.pods, true),
            all: pods_of(uid(&d.metadata)),
            uids: vec![uid(&d.metadata)],
        });
    }

    let mut events_by_uid: views::EventsByUid<'_> = views::EventsByUid::default();
    for e in &live.events {
        if let Some(u) = e.involved_object.uid.as_deref() {
            events_by_uid.entry(u).or_default().push(e);
        }
    }
    let scope = Scope {
        selector,
        unlabelled: &live.unlabelled,
        optional,
        namespace,
        // Inspect reads one moment: fail fast is about a rollout being waited for.
        failures_allowed: None,
    };
    let mut workloads = Vec::new();
    let mut pods = Vec::new();
    let mut related: BTreeSet<&str> = BTreeSet::new();
    for one in &ones {
        let w = &one.observed;
        workloads.push(views::workload_view(w, &scope, &events_by_uid));
        let owner = format!("{}/{}", w.kind, w.meta.name.as_deref().unwrap_or(""));
        let current: BTreeSet<&str> = w.current.iter().map(|p| uid(&p.metadata)).collect();
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
    for key in &live.missing {
        workloads.push(missing_view(key, optional));
    }
    workloads.sort_by(|a, b| {
        (a.optional, &a.name, &a.kind, &a.namespace).cmp(&(
            b.optional,
            &b.name,
            &b.kind,
            &b.namespace,
        ))
    });
    pods.sort_by(|a, b| (&a.owner, &a.namespace, &a.name).cmp(&(&b.owner, &b.namespace, &b.name)));
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

    fn key(kind: &str, namespace: &str, name: &str) -> WorkloadKey {
        (kind.into(), namespace.into(), name.into())
    }

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
            unlabelled: [key("Deployment", "apps", "demo-web")].into(),
            missing: vec![key("StatefulSet", "apps", "demo-db")],
            ..Live::default()
        };
        let j = judge(&live, "app.kubernetes.io/instance=demo", &[], "apps");
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
        assert_eq!(
            j.workloads[3].optional_because.as_deref(),
            Some("annotation helmdeck.io/optional")
        );
    }

    #[test]
    fn a_missing_manifest_workload_is_optional_only_by_the_deny_list() {
        let live = Live {
            missing: vec![
                key("StatefulSet", "apps", "demo-db"),
                key("Deployment", "apps", "demo-gpu-client"),
            ],
            ..Live::default()
        };
        let deny = [KindGlob::new("Deployment/*-gpu-client").expect("glob")];
        let j = judge(&live, "sel", &deny, "apps");
        let got: Vec<(&str, Option<&str>)> = j
            .workloads
            .iter()
            .map(|w| (w.name.as_str(), w.optional_because.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("demo-db", None),
                (
                    "demo-gpu-client",
                    Some("--optional Deployment/*-gpu-client")
                )
            ]
        );
    }
}
