//! Reads everything `inspect` shows from the cluster, read-only: the release records (Secrets
//! and ConfigMaps labelled `owner=helm,name=REL`), the live hook Jobs with their pods, logs and
//! events, and the release's workloads. A failing read becomes a warning (or, for the records,
//! the inspection's error); it never stops the rest.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
// Pods, ReplicaSets and Events are listed as the summaries the deploy step watches.
use crate::rollout::objects::{
    EventSummary as Event, PodSummary as Pod, ReplicaSetSummary as ReplicaSet,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ApiResource, DynamicObject, ListParams};
use kube::{Api, Client};
use serde::de::DeserializeOwned;

use crate::cluster::releases;
use crate::engine::event::{WorkloadKey, reference};
use crate::glob::KindGlob;
use crate::helm::status::{HookRecord, ReleaseStatus};
use crate::inspect::model::{InspectedHook, Inspection, RevisionInfo, Storage};
use crate::inspect::records::{self, StoredObject};
use crate::inspect::redact;
use crate::inspect::workloads::{self, Live};
use crate::inspect::{evidence, init_job};
use crate::text;

/// What to inspect.
#[derive(Debug, Clone)]
pub struct Request {
    pub release: String,
    pub namespace: String,
    pub revision: Option<i64>,
    pub show_manifest: bool,
    /// `--kube-context`, for the commands inspect prints.
    pub context: Option<String>,
    /// The deny list (`--optional`), as the deploy step takes it.
    pub optional: Vec<KindGlob>,
    /// `--init-job`: the init Job to show (default: the newest one helmdeck's init step made).
    pub init_job: Option<String>,
}

/// Collects the inspection. Never fails: what cannot be read is said in `error` / `warnings`.
pub async fn inspect(client: &Client, req: &Request) -> Inspection {
    let mut out = Inspection {
        release: text::plain(&req.release),
        namespace: text::plain(&req.namespace),
        requested: req.revision,
        ..Inspection::default()
    };
    let (objects, failed) = list_records(client, req).await;
    // A list that failed (RBAC denying Secrets) while the other found nothing: the records
    // cannot be read, which is the inspection's error, never "no records"; said there only.
    let unreadable = objects.is_empty() && !failed.is_empty();
    if !unreadable {
        out.warnings.extend(failed.iter().map(|(storage, error)| {
            format!(
                "cannot list {} release records (owner=helm,name={}): {error}",
                storage.kubectl_name(),
                out.release
            )
        }));
    }
    let decoded = records::decode_all(&objects);
    out.history = decoded.iter().map(|d| d.row.clone()).collect();
    out.lock = records::lock_state(
        &decoded,
        &out.release,
        &out.namespace,
        req.context.as_deref(),
        jiff::Timestamp::now(),
    );
    let events = list(
        Api::<Event>::namespaced(client.clone(), &req.namespace),
        ListParams::default(),
        "Events",
        &mut out.warnings,
    )
    .await;

    let mut manifest_workloads = Vec::new();
    match records::choose(&decoded, req.revision, &out.release, &out.namespace) {
        _ if unreadable => {
            out.revision = req.revision;
            let why: Vec<&str> = failed.iter().map(|(_, error)| error.as_str()).collect();
            out.error = Some(format!(
                "cannot read the release records of {} in {}: {}",
                out.release,
                out.namespace,
                why.join("; ")
            ));
        }
        Err((revision, error)) => {
            out.revision = revision;
            out.error = Some(error);
        }
        Ok(chosen) => {
            manifest_workloads =
                read_revision(client, req, chosen, &decoded, &events, &mut out).await;
        }
    }
    if out.revision_absent() {
        return out;
    }
    out.init_job = init_job::collect(
        client,
        &req.release,
        &req.namespace,
        req.init_job.as_deref(),
        &events,
        &out.hooks,
        &mut out.warnings,
    )
    .await;
    let live = live_workloads(client, req, &manifest_workloads, events, &mut out.warnings).await;
    let judged = workloads::judge(
        &live,
        &selector(&req.release),
        &req.optional,
        &req.namespace,
    );
    out.workloads = judged.workloads;
    out.pods = judged.pods;
    out.events = judged.events;
    out
}

/// What the chosen revision's record says (its info, hooks in execution order with live
/// evidence where they need it, its manifest when asked), into `out`; its workloads.
async fn read_revision(
    client: &Client,
    req: &Request,
    chosen: &records::Decoded,
    decoded: &[records::Decoded],
    events: &[Event],
    out: &mut Inspection,
) -> Vec<(String, String, String)> {
    let release = chosen
        .release
        .as_ref()
        .expect("choose returns readable records");
    let operation = records::operation(release, decoded);
    out.revision = Some(chosen.row.revision);
    out.info = Some(RevisionInfo {
        revision: chosen.row.revision,
        status: chosen.row.status.clone(),
        description: chosen.row.description.clone(),
        chart: chosen.row.chart.clone(),
        app_version: chosen.row.app_version.clone(),
        first_deployed: release.first_deployed.as_deref().map(text::plain),
        last_deployed: release.last_deployed.as_deref().map(text::plain),
        operation,
        storage: chosen.row.storage,
        object: chosen.row.object.clone(),
    });
    for (record, in_this_run) in records::execution_order(&release.hooks, operation) {
        let live = if evidence::needs_evidence(&record) {
            Some(evidence::hook_evidence(client, &req.namespace, &record, events).await)
        } else {
            None
        };
        out.hooks.push(InspectedHook {
            record: sanitized(record),
            in_this_run,
            live,
        });
    }
    if req.show_manifest {
        out.manifest = Some(manifest_text(release));
    }
    releases::manifest_workloads(&release.manifest, &req.namespace)
}

fn selector(release: &str) -> String {
    format!("app.kubernetes.io/instance={release}")
}

/// The manifest, Secrets masked, each line made inert for the terminal.
fn manifest_text(release: &ReleaseStatus) -> String {
    redact::manifest(&release.manifest)
        .lines()
        .map(|l| format!("{}\n", text::plain(l)))
        .collect()
}

fn sanitized(mut h: HookRecord) -> HookRecord {
    h.name = text::plain(&h.name);
    h.kind = text::plain(&h.kind);
    h.path = text::plain(&h.path);
    h.events = h.events.iter().map(|e| text::plain(e)).collect();
    h.started_at = h.started_at.as_deref().map(text::plain);
    h.completed_at = h.completed_at.as_deref().map(text::plain);
    h.delete_policies = h.delete_policies.iter().map(|e| text::plain(e)).collect();
    h
}

/// Lists the Secrets and ConfigMaps holding the release's records: what was found, and each
/// list that failed with why (one line each).
async fn list_records(
    client: &Client,
    req: &Request,
) -> (Vec<StoredObject>, Vec<(Storage, String)>) {
    let labels = format!("owner=helm,name={}", req.release);
    let mut out = Vec::new();
    let mut failed = Vec::new();
    for (storage, resource) in [
        (Storage::Secret, ApiResource::erase::<Secret>(&())),
        (Storage::ConfigMap, ApiResource::erase::<ConfigMap>(&())),
    ] {
        // Untyped, so one object with malformed data cannot spoil the whole list.
        let api: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), &req.namespace, &resource);
        match api.list(&ListParams::default().labels(&labels)).await {
            Ok(list) => {
                out.extend(list.items.into_iter().map(|o| StoredObject {
                    storage,
                    name: o.metadata.name.unwrap_or_default(),
                    labels: o.metadata.labels.unwrap_or_default(),
                    body: o.data,
                }));
            }
            Err(e) => failed.push((storage, crate::cluster::errors::describe(&e))),
        }
    }
    (out, failed)
}

/// A list call whose failure is a warning (and an empty list).
async fn list<K>(api: Api<K>, params: ListParams, what: &str, warnings: &mut Vec<String>) -> Vec<K>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.list(&params).await {
        Ok(l) => l.items,
        Err(e) => {
            warnings.push(format!(
                "cannot list {what}: {}",
                crate::cluster::errors::describe(&e)
            ));
            Vec::new()
        }
    }
}

/// The release's Deployments, StatefulSets and DaemonSets (by the instance label, plus manifest
/// workloads found by name), with their ReplicaSets, pods and events: in the release namespace
/// and in every other namespace the manifest names (`namespaceOverride` charts). `events` are
/// the release namespace's, already listed.
async fn live_workloads(
    client: &Client,
    req: &Request,
    manifest: &[WorkloadKey],
    events: Vec<Event>,
    warnings: &mut Vec<String>,
) -> Live {
    let mut live = Live {
        events,
        ..Live::default()
    };
    let mut namespaces: Vec<&str> = vec![req.namespace.as_str()];
    for (_, ns, _) in manifest {
        if !namespaces.contains(&ns.as_str()) {
            namespaces.push(ns);
        }
    }
    for (i, ns) in namespaces.iter().copied().enumerate() {
        list_labelled(client, req, ns, i == 0, &mut live, warnings).await;
    }
    for (kind, ns, name) in manifest {
        get_unlabelled(client, req, (kind, ns, name), &mut live, warnings).await;
    }
    live
}

/// Lists the release's labelled workloads, ReplicaSets and pods of namespace `ns` into `live`,
/// and its Events when `ns` is not the release namespace (`home`: those are listed already).
async fn list_labelled(
    client: &Client,
    req: &Request,
    ns: &str,
    home: bool,
    live: &mut Live,
    warnings: &mut Vec<String>,
) {
    let labelled = ListParams::default().labels(&selector(&req.release));
    // Named only outside the release namespace, so one-namespace warnings read as before.
    let what = |kind: &str| {
        if home {
            kind.to_string()
        } else {
            format!("{kind} in {}", text::plain(ns))
        }
    };
    live.deployments.extend(
        list(
            Api::<Deployment>::namespaced(client.clone(), ns),
            labelled.clone(),
            &what("Deployments"),
            warnings,
        )
        .await,
    );
    live.statefulsets.extend(
        list(
            Api::<StatefulSet>::namespaced(client.clone(), ns),
            labelled.clone(),
            &what("StatefulSets"),
            warnings,
        )
        .await,
    );
    live.daemonsets.extend(
        list(
            Api::<DaemonSet>::namespaced(client.clone(), ns),
            labelled.clone(),
            &what("DaemonSets"),
            warnings,
        )
        .await,
    );
    live.replicasets.extend(
        list(
            Api::<ReplicaSet>::namespaced(client.clone(), ns),
            labelled.clone(),
            &what("ReplicaSets"),
            warnings,
        )
        .await,
    );
    live.pods.extend(
        list(
            Api::<Pod>::namespaced(client.clone(), ns),
            labelled,
            &what("Pods"),
            warnings,
        )
        .await,
    );
    if !home {
        live.events.extend(
            list(
                Api::<Event>::namespaced(client.clone(), ns),
                ListParams::default(),
                &what("Events"),
                warnings,
            )
            .await,
        );
    }
}

/// A manifest workload the label lists did not find is read by name: found, it gates as
/// unlabelled; absent, it is missing (a blocker, not nothing at all).
async fn get_unlabelled(
    client: &Client,
    req: &Request,
    (kind, ns, name): (&str, &str, &str),
    live: &mut Live,
    warnings: &mut Vec<String>,
) {
    let in_ns = |meta: &ObjectMeta| {
        meta.name.as_deref() == Some(name)
            && meta.namespace.as_deref().unwrap_or(&req.namespace) == ns
    };
    let seen = match kind {
        "Deployment" => live.deployments.iter().any(|o| in_ns(&o.metadata)),
        "StatefulSet" => live.statefulsets.iter().any(|o| in_ns(&o.metadata)),
        _ => live.daemonsets.iter().any(|o| in_ns(&o.metadata)),
    };
    if seen {
        return;
    }
    let found = match kind {
        "Deployment" => get_into(client, ns, name, &mut live.deployments).await,
        "StatefulSet" => get_into(client, ns, name, &mut live.statefulsets).await,
        _ => get_into(client, ns, name, &mut live.daemonsets).await,
    };
    let key = (kind.to_string(), ns.to_string(), name.to_string());
    match found {
        Ok(true) => {
            live.unlabelled.insert(key);
        }
        Ok(false) => live.missing.push(key),
        Err(e) => warnings.push(format!(
            "cannot read {}: {}",
            text::plain(&reference(kind, ns, name, &req.namespace)),
            text::plain(&e.to_string())
        )),
    }
}

/// GETs one object by name into `into`; false when it does not exist.
async fn get_into<K>(client: &Client, ns: &str, name: &str, into: &mut Vec<K>) -> kube::Result<bool>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    match Api::<K>::namespaced(client.clone(), ns)
        .get_opt(name)
        .await?
    {
        Some(o) => {
            into.push(o);
            Ok(true)
        }
        None => Ok(false),
    }
}
