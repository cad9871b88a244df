//! The PersistentVolume controller and the StorageClasses' provisioner, as far as claims go:
//! a claim of an existing class gets a volume `pvc-<uid>` after the scenario's
//! `storage.bind_after` and becomes Bound; a claim the scenario keeps Pending waits for the
//! external provisioner (ExternalProvisioning events, repeated as the controller resyncs);
//! a claim naming a class that does not exist stays Pending with ProvisioningFailed; a claim
//! without a class on a cluster without a default class stays Pending with FailedBinding.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::{Controllers, Events, Involved, PVCS, Pass, meta};
use crate::resources::{self, ResourceId};
use crate::scenario::Storage;

pub(crate) static STORAGE_CLASSES: LazyLock<ResourceId> = LazyLock::new(|| {
    resources::by_path("storage.k8s.io", "v1", "storageclasses")
        .expect("storageclasses is in the table")
});
static PERSISTENT_VOLUMES: LazyLock<ResourceId> = LazyLock::new(|| {
    resources::by_path("", "v1", "persistentvolumes").expect("persistentvolumes is in the table")
});

/// The default StorageClass's name and provisioner (minikube's: it binds immediately, so an
/// unbound claim keeps its pod from scheduling).
pub(crate) const DEFAULT_CLASS: &str = "standard";
const DEFAULT_PROVISIONER: &str = "k8s.io/minikube-hostpath";
/// How often the PV controller repeats its event about a claim that stays Pending.
const RESYNC: Duration = Duration::from_secs(15);

/// Claims not yet bound, by uid: when first seen, and when their next event is due.
#[derive(Default)]
pub(crate) struct Binder {
    waiting: HashMap<String, (Instant, Instant)>,
}

/// What becomes of a Pending claim in this pass.
enum Step {
    /// Provision with this class and provisioner now.
    Provision(String, String),
    /// Not yet (or never): this event, if one is due.
    Wait(Option<(&'static str, &'static str, String, &'static str)>),
}

fn bound(pvc: &Value) -> bool {
    pvc.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
}

/// The default StorageClass seeded with the nodes.
pub(crate) fn default_class() -> Value {
    json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": {"name": DEFAULT_CLASS,
                        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
           "provisioner": DEFAULT_PROVISIONER, "reclaimPolicy": "Delete",
           "volumeBindingMode": "Immediate"})
}

impl Controllers {
    /// Binds the claims that are due, records the events of those that wait, and deletes the
    /// volumes of deleted claims (reclaim policy Delete).
    pub(super) fn bind_claims(&mut self, p: &Pass, cache: &mut Cache, dirty: &Dirty) {
        for pvc in dirty.changed(&dirty.pvcs, &cache.pvcs) {
            let uid = meta(pvc, "uid");
            if !bound(pvc) && !self.binder.waiting.contains_key(uid) {
                self.binder.waiting.insert(uid.to_string(), (p.now, p.now));
            }
        }
        for (uid, _, _, is_pod) in &dirty.gone {
            if !is_pod && self.binder.waiting.remove(uid).is_none() {
                let _ = p
                    .sim
                    .store
                    .delete_leaf(*PERSISTENT_VOLUMES, None, &format!("pvc-{uid}"));
            }
        }
        if self.binder.waiting.is_empty() {
            return;
        }
        let storage = &p.sim.scenario.storage;
        let mut done = Vec::new();
        for (uid, (since, next_event)) in &mut self.binder.waiting {
            let Some(pvc) = cache.pvcs.get(uid).filter(|c| !bound(c)) else {
                done.push(uid.clone());
                continue;
            };
            match step(p, pvc, *since, storage) {
                Step::Provision(class, provisioner) => {
                    provision(p, &mut self.events, pvc, &class, &provisioner);
                    let key = format!("{}/{}", meta(pvc, "namespace"), meta(pvc, "name"));
                    cache.sched.claim_bound(key);
                    done.push(uid.clone());
                }
                Step::Wait(Some((type_, reason, msg, component))) if p.now >= *next_event => {
                    *next_event = p.now + RESYNC;
                    let involved = Involved::of(pvc);
                    self.events
                        .record(p, &involved, type_, reason, &msg, component, None);
                }
                Step::Wait(_) => {}
            }
        }
        for uid in done {
            self.binder.waiting.remove(&uid);
        }
    }
}

/// The class a claim provisions from (its own, else the default one) and whether it binds now.
fn step(p: &Pass, pvc: &Value, since: Instant, storage: &Storage) -> Step {
    let controller = "persistentvolume-controller";
    let class = match pvc.pointer("/spec/storageClassName") {
        Some(Value::String(c)) if !c.is_empty() => c.clone(),
        Some(Value::String(_)) => String::new(),
        _ if storage.default_class => DEFAULT_CLASS.to_string(),
        _ => String::new(),
    };
    if class.is_empty() {
        let msg = "no persistent volumes available for this claim and no storage class is set";
        return Step::Wait(Some(("Normal", "FailedBinding", msg.into(), controller)));
    }
    let Ok(sc) = p.sim.store.get(*STORAGE_CLASSES, None, &class) else {
        let msg = format!("storageclass.storage.k8s.io \"{class}\" not found");
        return Step::Wait(Some(("Warning", "ProvisioningFailed", msg, controller)));
    };
    let provisioner = sc["provisioner"].as_str().unwrap_or("").to_string();
    let kept = storage.keeps_pending(meta(pvc, "namespace"), meta(pvc, "name"));
    if !kept && p.now >= since + storage.bind_after.unwrap_or_default() {
        return Step::Provision(class, provisioner);
    }
    let msg = format!(
        "Waiting for a volume to be created either by the external provisioner '{provisioner}' \
         or manually by the system administrator. If volume creation is delayed, please verify \
         that the provisioner is running and correctly registered."
    );
    Step::Wait(Some(("Normal", "ExternalProvisioning", msg, controller)))
}

/// Creates the claim's volume and binds the claim to it, as a dynamic provisioner and the
/// PV controller do, with the provisioner's events.
fn provision(p: &Pass, events: &mut Events, pvc: &Value, class: &str, provisioner: &str) {
    let (ns, name, uid) = (meta(pvc, "namespace"), meta(pvc, "name"), meta(pvc, "uid"));
    let volume = format!("pvc-{uid}");
    let storage = pvc
        .pointer("/spec/resources/requests/storage")
        .cloned()
        .unwrap_or(json!("1Gi"));
    let modes = pvc
        .pointer("/spec/accessModes")
        .cloned()
        .unwrap_or(json!(["ReadWriteOnce"]));
    let involved = Involved::of(pvc);
    let msg = format!("External provisioner is provisioning volume for claim \"{ns}/{name}\"");
    events.record(
        p,
        &involved,
        "Normal",
        "Provisioning",
        &msg,
        provisioner,
        None,
    );
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": volume, "annotations": {"pv.kubernetes.io/provisioned-by": provisioner}},
        "spec": {"capacity": {"storage": storage}, "accessModes": modes,
                 "persistentVolumeReclaimPolicy": "Delete", "storageClassName": class,
                 "volumeMode": "Filesystem",
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns,
                              "name": name, "uid": uid,
                              "resourceVersion": meta(pvc, "resourceVersion")},
                 "hostPath": {"path": format!("/tmp/hostpath-provisioner/{ns}/{name}"), "type": ""}},
        "status": {"phase": "Bound"}});
    let _ = p.sim.store.ensure(*PERSISTENT_VOLUMES, pv);
    p.sim.store.update_with(*PVCS, Some(ns), name, |o| {
        if !o["spec"].is_object() {
            return;
        }
        if o["spec"].get("volumeName").is_none() {
            o["spec"]["volumeName"] = json!(volume);
        }
        if o["spec"].get("storageClassName").is_none_or(Value::is_null) {
            o["spec"]["storageClassName"] = json!(class);
        }
        if !o["metadata"]["annotations"].is_object() {
            o["metadata"]["annotations"] = json!({});
        }
        let a = &mut o["metadata"]["annotations"];
        a["pv.kubernetes.io/bind-completed"] = json!("yes");
        a["pv.kubernetes.io/bound-by-controller"] = json!("yes");
        a["volume.beta.kubernetes.io/storage-provisioner"] = json!(provisioner);
        a["volume.kubernetes.io/storage-provisioner"] = json!(provisioner);
        o["status"] =
            json!({"phase": "Bound", "accessModes": modes, "capacity": {"storage": storage}});
    });
    let msg = format!("Successfully provisioned volume {volume}");
    events.record(
        p,
        &involved,
        "Normal",
        "ProvisioningSucceeded",
        &msg,
        provisioner,
        None,
    );
}
