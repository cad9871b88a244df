//! The custom kinds the store serves: a CRD registers its served versions' kinds (with their
//! schemas) when it is created or updated, and deleting it removes them and their objects.

use serde_json::Value;

use super::{EventType, Inner, Store};
use crate::crd;
use crate::resources::{self, ResourceId};

impl Store {
    /// Serves the kinds of the CRD `crd_name` (replacing what it served before).
    pub(super) fn register(inner: &mut Inner, crd_name: &str, served: Vec<crd::Served>) {
        inner.custom.retain(|_, (owner, _)| owner != crd_name);
        for v in served {
            let id = resources::intern(&v.kind);
            inner.map_mut(id);
            inner.custom.insert(id, (crd_name.to_string(), v.schema));
        }
    }

    /// Stops serving the kinds of the CRD `crd_name` and deletes their objects, as the API
    /// server does once a CRD is gone.
    pub(super) fn unregister(&self, inner: &mut Inner, crd_name: &str) {
        let ids: Vec<ResourceId> = inner
            .custom
            .iter()
            .filter(|(_, (owner, _))| owner == crd_name)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            inner.custom.remove(&id);
            let objects: Vec<Value> = inner.map(id).values().map(|s| s.value()).collect();
            for o in objects {
                self.commit(inner, id, EventType::Deleted, o);
            }
        }
    }

    /// The resource a URL names, built-in or custom (only kinds this simulator serves).
    pub fn resolve_path(&self, group: &str, version: &str, plural: &str) -> Option<ResourceId> {
        resources::by_path(group, version, plural).or_else(|| {
            self.lock().custom.keys().copied().find(|&id| {
                let r = resources::get(id);
                r.group == group && r.version == version && r.plural == plural
            })
        })
    }

    /// The resource an object's `apiVersion`/`kind` names, built-in or custom.
    pub fn resolve_kind(&self, api_version: &str, kind: &str) -> Option<ResourceId> {
        resources::by_kind(api_version, kind).or_else(|| {
            self.lock().custom.keys().copied().find(|&id| {
                let r = resources::get(id);
                r.kind == kind && r.api_version() == api_version
            })
        })
    }

    /// Every resource this simulator serves: the built-ins, then its custom kinds.
    pub fn served(&self) -> Vec<ResourceId> {
        let custom: Vec<ResourceId> = self.lock().custom.keys().copied().collect();
        (0..resources::RESOURCES.len()).chain(custom).collect()
    }

    /// The name of the CRD that defines a custom kind this simulator serves.
    pub fn crd_of(&self, res: ResourceId) -> Option<String> {
        self.lock().custom.get(&res).map(|(crd, _)| crd.clone())
    }

    /// The OpenAPI v3 schema of a custom kind's version (from its CRD), if it has one.
    pub fn schema(&self, res: ResourceId) -> Option<Value> {
        self.lock().custom.get(&res).and_then(|(_, s)| s.clone())
    }
}
