//! The object store of the simulated API server: objects by resource, namespace and name, one
//! global resourceVersion counter, and the event log that watches resume from.
//!
//! Every write goes through [`Store::commit`], which stamps the resourceVersion, appends the
//! event to the log and broadcasts it; so a watch that starts from any retained rv sees every
//! later change exactly once.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use super::api_error::ApiError;
use super::resources::{self, ResourceId, ids};
use super::selector::Selector;
use super::{crd, defaults, patch, validate};
use helmdeck_formats::time::now_rfc3339;

mod create;
mod custom_kinds;
mod event_log;
pub mod managed;
mod page;
mod stored;

use event_log::{BROADCAST_CAPACITY, LOG_BYTES, LogEntry};
pub use event_log::{EventType, Subscription, WatchEvent};
pub use page::{Page, Paging};
pub use stored::{Index, Stored, slim_pod};

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Everything but `.status` (for resources with a status subresource).
    Main,
    /// Only `.status`.
    Status,
}

/// The patch formats the API server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/apply-patch+yaml` (server-side apply); creates when absent.
    Apply,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`, approximated: lists of named objects merge by name.
    Strategic,
    /// `application/json-patch+json` (RFC 6902).
    Json,
}

/// How a client's write is made: for real or as a dry run, and the field manager that owns
/// what it sets (`None`: the simulator's own writes, which keep no `managedFields`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOpts<'a> {
    pub dry_run: bool,
    pub manager: Option<&'a str>,
    /// Server-side apply's `force=true`: take conflicting fields over.
    pub force: bool,
    /// `scale` for a write through `/scale`: its own entry in `managedFields`.
    pub subresource: Option<&'a str>,
}

impl WriteOpts<'_> {
    /// A dry run or not, without a field manager.
    pub fn dry(dry_run: bool) -> Self {
        WriteOpts {
            dry_run,
            ..Self::default()
        }
    }
}

type Key = (String, String);

type Objects = BTreeMap<Key, Stored>;

/// What a custom id's map is read as before this store has one.
static EMPTY: Objects = BTreeMap::new();

struct Inner {
    rv: u64,
    /// One map per resource id; custom ids get theirs when their CRD is created.
    objects: Vec<Objects>,
    log: VecDeque<LogEntry>,
    /// The JSON bytes the log's entries hold, and the most it may hold.
    log_bytes: usize,
    log_limit: usize,
    uid_seq: u64,
    /// The custom kinds this simulator serves, each with the CRD (name) that defines it and
    /// that version's schema.
    custom: BTreeMap<ResourceId, (String, Option<Value>)>,
}

impl Inner {
    fn map(&self, res: ResourceId) -> &Objects {
        self.objects.get(res).unwrap_or(&EMPTY)
    }

    fn map_mut(&mut self, res: ResourceId) -> &mut Objects {
        if self.objects.len() <= res {
            self.objects.resize_with(res + 1, BTreeMap::new);
        }
        &mut self.objects[res]
    }
}

pub struct Store {
    inner: Mutex<Inner>,
    events: broadcast::Sender<Arc<WatchEvent>>,
    uid_seed: u64,
}

fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

impl Store {
    pub fn new() -> Self {
        let (events, _) = broadcast::channel(BROADCAST_CAPACITY);
        let uid_seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x5eed);
        Store {
            inner: Mutex::new(Inner {
                rv: 1000,
                objects: resources::RESOURCES
                    .iter()
                    .map(|_| BTreeMap::new())
                    .collect(),
                log: VecDeque::new(),
                log_bytes: 0,
                log_limit: LOG_BYTES,
                uid_seq: 0,
                custom: BTreeMap::new(),
            }),
            events,
            uid_seed,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every write is one insert);
        // keep serving rather than poisoning the whole simulator.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    fn new_uid(&self, inner: &mut Inner) -> String {
        inner.uid_seq += 1;
        let x = self.uid_seed ^ inner.uid_seq.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let y = x.rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (x >> 32) as u32,
            (x >> 16) as u16,
            (x & 0xfff) as u16,
            (y >> 52) as u16,
            y & 0xffff_ffff_ffff
        )
    }

    fn key(res: ResourceId, ns: Option<&str>, name: &str) -> Key {
        let ns = if resources::get(res).namespaced {
            ns.unwrap_or("")
        } else {
            ""
        };
        (ns.to_string(), name.to_string())
    }

    pub fn get(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        self.lock()
            .map(res)
            .get(&Self::key(res, ns, name))
            .map(|s| Arc::new(s.value()))
            .ok_or_else(|| ApiError::not_found(res, name))
    }

    /// An object's stored version (its bytes and index), unparsed.
    fn get_stored(inner: &Inner, res: ResourceId, ns: Option<&str>, name: &str) -> Option<Stored> {
        inner.map(res).get(&Self::key(res, ns, name)).cloned()
    }

    /// Objects of a resource (in one namespace, or all), in name order, with the list rv.
    pub fn list(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        filter: impl Fn(&Value) -> bool,
    ) -> (Vec<Arc<Value>>, u64) {
        let inner = self.lock();
        let items = Self::list_locked(&inner, res, ns, &filter);
        (items, inner.rv)
    }

    /// Objects of a resource (in one namespace, or all) that the selectors match, in name
    /// order, unparsed (a LIST copies their bytes), with the list rv.
    pub fn list_stored(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        labels: &Selector,
        fields: &Selector,
    ) -> (Vec<Stored>, u64) {
        let inner = self.lock();
        let items = Self::stored_locked(&inner, res, ns, &|s| s.selected(labels, fields));
        (items, inner.rv)
    }

    fn list_locked(
        inner: &Inner,
        res: ResourceId,
        ns: Option<&str>,
        filter: &dyn Fn(&Value) -> bool,
    ) -> Vec<Arc<Value>> {
        Self::in_scope(inner, res, ns)
            .map(|s| Arc::new(s.value()))
            .filter(|o| filter(o))
            .collect()
    }

    fn stored_locked(
        inner: &Inner,
        res: ResourceId,
        ns: Option<&str>,
        filter: &dyn Fn(&Stored) -> bool,
    ) -> Vec<Stored> {
        Self::in_scope(inner, res, ns)
            .filter(|s| filter(s))
            .cloned()
            .collect()
    }

    /// The stored objects of a resource in one namespace (or all), in name order.
    fn in_scope<'i>(
        inner: &'i Inner,
        res: ResourceId,
        ns: Option<&'i str>,
    ) -> Box<dyn Iterator<Item = &'i Stored> + 'i> {
        let map = inner.map(res);
        match ns {
            Some(ns) if resources::get(res).namespaced => Box::new(
                map.range((ns.to_string(), String::new())..)
                    .take_while(move |((n, _), _)| n == ns)
                    .map(|(_, v)| v),
            ),
            _ => Box::new(map.values()),
        }
    }

    /// Replaces an object (PUT) or its status. `metadata.resourceVersion` in the body, when
    /// set, must match the stored one (optimistic concurrency).
    pub fn replace(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
        obj: Value,
        part: Part,
    ) -> Result<Arc<Value>, ApiError> {
        self.replace_opt(res, ns, name, obj, part, WriteOpts::default())
    }

    /// [`Store::replace`], or with `dry_run` validated and answered, not written; with a
    /// field manager, what the write changed becomes its own.
    pub fn replace_opt(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
        obj: Value,
        part: Part,
        opts: WriteOpts<'_>,
    ) -> Result<Arc<Value>, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be an object",
            ));
        }
        if name_of(&obj) != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                name_of(&obj)
            )));
        }
        let mut inner = self.lock();
        let Some(old) = Self::get_stored(&inner, res, ns, name).map(|s| s.value()) else {
            return Err(ApiError::not_found(res, name));
        };
        if let Some(want) = obj
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
        {
            let have = old
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !want.is_empty() && want != have {
                return Err(ApiError::conflict(res, name));
            }
        }
        let asked = obj.pointer("/metadata/managedFields").cloned();
        let mut new = self.merge_update(res, &old, obj, part)?;
        Self::record_update(res, &old, &mut new, part, opts, asked.as_ref());
        Ok(self.write_update(&mut inner, res, new, opts.dry_run))
    }

    /// With a field manager, an update's changed fields become that manager's, on top of the
    /// `managedFields` the write `asked` for (see [`managed::record_write`]).
    fn record_update(
        res: ResourceId,
        old: &Value,
        new: &mut Value,
        part: Part,
        opts: WriteOpts<'_>,
        asked: Option<&Value>,
    ) {
        if let (Some(manager), Part::Main) = (opts.manager, part) {
            let api_version = resources::get(res).api_version();
            let now = now_rfc3339();
            let w = managed::Writer {
                manager,
                subresource: opts.subresource,
                api_version: &api_version,
                now: &now,
            };
            // A subresource's write never sets managedFields (the API ignores them there).
            let asked = asked.filter(|_| opts.subresource.is_none());
            managed::record_write(old, new, asked, &w);
        }
    }

    /// Commits an update (re-registering a CRD's kinds), or only previews it.
    fn write_update(
        &self,
        inner: &mut Inner,
        res: ResourceId,
        new: Value,
        dry_run: bool,
    ) -> Arc<Value> {
        if dry_run {
            return Self::preview(inner, new);
        }
        let stored = self.commit(inner, res, EventType::Modified, new);
        if res == *ids::CRDS
            && let Ok(served) = crd::served_versions(&stored)
        {
            Self::register(inner, name_of(&stored), served);
        }
        stored
    }

    /// What a dry-run write answers: the object as it would be stored, at the current rv.
    fn preview(inner: &Inner, mut obj: Value) -> Arc<Value> {
        obj["metadata"]["resourceVersion"] = json!(inner.rv.to_string());
        Arc::new(obj)
    }

    /// Applies a patch. With [`PatchKind::Apply`], an absent object is created
    /// (`Ok((obj, true))`).
    pub fn patch(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
        kind: PatchKind,
        body: &Value,
        part: Part,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        self.patch_opt(res, ns, name, kind, body, part, WriteOpts::default())
    }

    /// [`Store::patch`], or with `dry_run` validated and answered, not written. With a field
    /// manager an apply is a server-side apply (conflicts, ownership, fields it stops applying
    /// removed), and any other patch makes what it changed that manager's.
    #[allow(clippy::too_many_arguments)] // the patch's own arguments plus the write options
    pub fn patch_opt(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
        kind: PatchKind,
        body: &Value,
        part: Part,
        opts: WriteOpts<'_>,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        let ssa = kind == PatchKind::Apply && part == Part::Main;
        let existing = self.get(res, ns, name);
        let old = match existing {
            Ok(o) => o,
            Err(_) if ssa => {
                let mut obj = body.clone();
                if !obj.is_object() {
                    return Err(ApiError::bad_request("the apply body must be an object"));
                }
                obj["metadata"]["name"] = json!(name);
                return self
                    .create_as(res, ns, obj, opts, "Apply")
                    .map(|o| (o, true));
            }
            Err(e) => return Err(e),
        };
        let merged = self.patched(res, &old, kind, body, part, opts)?;
        // The body's rv (if any) is a precondition, as for PUT.
        if let Some(want) = body
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            && want
                != old
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("")
        {
            return Err(ApiError::conflict(res, name));
        }
        let mut inner = self.lock();
        // Re-check: a concurrent write between get and lock wins; the client retries on 409.
        let current = Self::get_stored(&inner, res, ns, name);
        match current {
            Some(c) if old["metadata"]["resourceVersion"].as_str() == Some(&*c.rv.to_string()) => {}
            Some(_) => return Err(ApiError::conflict(res, name)),
            None => return Err(ApiError::not_found(res, name)),
        }
        let mut merged = merged;
        merged["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
        let entries = merged
            .pointer("/metadata/managedFields")
            .cloned()
            .filter(|_| ssa && opts.manager.is_some());
        let asked = merged.pointer("/metadata/managedFields").cloned();
        let mut new = self.merge_update(res, &old, merged, part)?;
        match entries {
            Some(e) => new["metadata"]["managedFields"] = e,
            None if kind != PatchKind::Apply => {
                Self::record_update(res, &old, &mut new, part, opts, asked.as_ref())
            }
            None => {}
        }
        Ok((self.write_update(&mut inner, res, new, opts.dry_run), false))
    }

    /// The object a patch makes of `old`, before defaults and validation.
    fn patched(
        &self,
        res: ResourceId,
        old: &Value,
        kind: PatchKind,
        body: &Value,
        part: Part,
        opts: WriteOpts<'_>,
    ) -> Result<Value, ApiError> {
        let mut merged = old.clone();
        match (kind, opts.manager) {
            (PatchKind::Apply, Some(manager)) if part == Part::Main => {
                let mut applied = body.clone();
                defaults::drop_nulls(&mut applied);
                let api_version = resources::get(res).api_version();
                let now = now_rfc3339();
                let w = managed::Writer {
                    manager,
                    subresource: None,
                    api_version: &api_version,
                    now: &now,
                };
                merged = managed::apply(old, &applied, &w, opts.force)?;
            }
            (PatchKind::Apply | PatchKind::Merge, _) => patch::merge(&mut merged, body),
            (PatchKind::Strategic, _) => patch::strategic_merge(&mut merged, body),
            (PatchKind::Json, _) => {
                patch::json_patch(&mut merged, body).map_err(ApiError::unprocessable)?
            }
        }
        Ok(merged)
    }

    /// Builds the stored object for an update: keeps server-owned metadata, keeps the part
    /// the write may not touch, applies defaults, validates, bumps generation.
    fn merge_update(
        &self,
        res: ResourceId,
        old: &Value,
        mut new: Value,
        part: Part,
    ) -> Result<Value, ApiError> {
        let rt = resources::get(res);
        let name = name_of(old).to_string();
        defaults::drop_nulls(&mut new);
        if part == Part::Status {
            let mut out = old.clone();
            out["status"] = new.get("status").cloned().unwrap_or(Value::Null);
            if out["status"].is_null() {
                out.as_object_mut().map(|o| o.remove("status"));
            }
            return Ok(out);
        }
        defaults::apply(rt.kind, &mut new);
        if let Err(msg) = validate::on_update(rt.kind, old, &new) {
            return Err(ApiError::invalid(res, &name, &msg));
        }
        if res == *ids::CRDS {
            crd::served_versions(&new).map_err(|m| ApiError::invalid(res, &name, &m))?;
        }
        let new_meta = new["metadata"]
            .as_object_mut()
            .expect("metadata is an object after defaults");
        for field in [
            "uid",
            "creationTimestamp",
            "namespace",
            "name",
            "deletionTimestamp",
            "managedFields",
        ] {
            match old["metadata"].get(field) {
                Some(v) => {
                    new_meta.insert(field.into(), v.clone());
                }
                None => {
                    new_meta.remove(field);
                }
            }
        }
        if rt.has_generation {
            let old_gen = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let changed = old.get("spec") != new.get("spec");
            new["metadata"]["generation"] = json!(if changed { old_gen + 1 } else { old_gen });
        }
        if rt.has_status() {
            match old.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    new.as_object_mut().map(|o| o.remove("status"));
                }
            }
        }
        new["apiVersion"] = json!(rt.api_version());
        new["kind"] = json!(rt.kind);
        Ok(new)
    }

    /// Deletes an object and, in the background as the garbage collector would, every object
    /// whose ownerReferences name it.
    pub fn delete(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        let mut inner = self.lock();
        let deleted = self.remove_one(&mut inner, res, ns, name)?;
        if res == *ids::CRDS {
            self.unregister(&mut inner, name);
        }
        let mut owners = vec![
            deleted["metadata"]["uid"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        ];
        if res == *ids::NAMESPACES {
            // Namespace deletion takes everything in it.
            for r in 0..inner.objects.len() {
                let keys: Vec<Key> = inner
                    .map(r)
                    .keys()
                    .filter(|(n, _)| n == name)
                    .cloned()
                    .collect();
                for k in keys {
                    if let Some(o) = inner.map(r).get(&k).cloned() {
                        self.commit(&mut inner, r, EventType::Deleted, o.value());
                    }
                }
            }
        }
        // One scan builds owner uid -> dependants, then the cascade walks that index: a delete
        // costs one pass over the store, not one per object it takes with it.
        let mut dependants: HashMap<Box<str>, Vec<(ResourceId, Key)>> = HashMap::new();
        for (r, map) in inner.objects.iter().enumerate() {
            if r == *ids::EVENTS {
                continue; // Events are owned by nothing
            }
            for (key, o) in map {
                for owner in &o.idx.owners {
                    dependants
                        .entry(owner.clone())
                        .or_default()
                        .push((r, key.clone()));
                }
            }
        }
        while let Some(uid) = owners.pop() {
            for (r, key) in dependants.remove(uid.as_str()).unwrap_or_default() {
                // Already gone through another owner.
                let Some(d) = inner.map(r).get(&key).cloned() else {
                    continue;
                };
                owners.push(d.idx.uid.to_string());
                self.commit(&mut inner, r, EventType::Deleted, d.value());
            }
        }
        Ok(deleted)
    }

    /// Deletes one object that owns nothing (for controllers deleting pods): the same as
    /// [`Store::delete`] but without the garbage-collector scan, which walks every stored
    /// object and would make a rollout of thousands of pods quadratic.
    pub fn delete_leaf(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        let mut inner = self.lock();
        self.remove_one(&mut inner, res, ns, name)
    }

    /// Removes one object, stamping `deletionTimestamp` on the DELETED event's copy.
    fn remove_one(
        &self,
        inner: &mut Inner,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        let Some(old) = Self::get_stored(inner, res, ns, name) else {
            return Err(ApiError::not_found(res, name));
        };
        let mut gone = old.value();
        if gone["metadata"].get("deletionTimestamp").is_none() {
            gone["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
        }
        Ok(self.commit(inner, res, EventType::Deleted, gone))
    }

    /// For controllers: changes an object with `f` and writes it only if something changed.
    /// Returns the stored object after the write (or unchanged).
    pub fn update_with(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> Option<Arc<Value>> {
        let mut inner = self.lock();
        let old = Self::get_stored(&inner, res, ns, name)?;
        let mut new = old.value();
        f(&mut new);
        // Stamped and serialized once: compared as JSON against the stored version (cheaper
        // than keeping a parsed copy to compare against), and written as it is.
        let next = inner.rv + 1;
        new["metadata"]["resourceVersion"] = json!(next.to_string());
        let json = serde_json::to_vec(&new).unwrap_or_default();
        if old.same_but_rv(&json, next) {
            new["metadata"]["resourceVersion"] = json!(old.rv.to_string());
            return Some(Arc::new(new));
        }
        Some(self.commit_json(&mut inner, res, EventType::Modified, new, Some(json)))
    }

    /// For the simulator's own objects (nodes, namespaces, seeds): create or leave as is. A
    /// seed's `metadata.creationTimestamp` is kept: a seeded object can be older than the
    /// simulator, as the release records of a seeded history are.
    pub fn ensure(&self, res: ResourceId, obj: Value) -> Result<Arc<Value>, ApiError> {
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(String::from);
        let created = obj.pointer("/metadata/creationTimestamp").cloned();
        match self.create(res, ns.as_deref(), obj.clone()) {
            Err(e) if e.code == 409 => self.get(res, ns.as_deref(), name_of(&obj)),
            Ok(stored) => Ok(match created {
                Some(at) => self
                    .update_with(res, ns.as_deref(), name_of(&obj), |o| {
                        o["metadata"]["creationTimestamp"] = at;
                    })
                    .unwrap_or(stored),
                None => stored,
            }),
            other => other,
        }
    }

    /// Counts of stored objects per kind (for stats and benchmarks).
    pub fn counts(&self) -> Map<String, Value> {
        let inner = self.lock();
        let mut out = Map::new();
        for (i, map) in inner.objects.iter().enumerate() {
            if !map.is_empty() {
                out.insert(resources::get(i).kind.into(), json!(map.len()));
            }
        }
        out
    }
}

/// Kubernetes-style random name suffix (consonants and digits, no vowels).
pub fn suffix_from(mut x: u64, len: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut out = String::with_capacity(len);
    for _ in 0..len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push(ALPHABET[((x >> 33) % ALPHABET.len() as u64) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with_ns() -> Store {
        let s = Store::new();
        s.ensure(*ids::NAMESPACES, json!({"metadata": {"name": "apps"}}))
            .unwrap();
        s
    }

    fn deploy(name: &str, replicas: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}})
    }

    /// Creates the Deployment `name` in `apps`.
    fn create_deploy(s: &Store, name: &str, replicas: i64) -> Result<Arc<Value>, ApiError> {
        s.create(*ids::DEPLOYMENTS, Some("apps"), deploy(name, replicas))
    }

    /// Patches the Deployment `web` in `apps`.
    fn patch_web(s: &Store, kind: PatchKind, body: &Value) -> Result<(Arc<Value>, bool), ApiError> {
        s.patch(
            *ids::DEPLOYMENTS,
            Some("apps"),
            "web",
            kind,
            body,
            Part::Main,
        )
    }

    #[test]
    fn a_seed_keeps_its_creation_time_a_client_cannot_set_one() {
        let s = store_with_ns();
        let old = "2026-01-01T00:00:00Z";
        let secret = |name: &str| json!({"metadata": {"name": name, "namespace": "apps", "creationTimestamp": old}});
        let seeded = s.ensure(*ids::SECRETS, secret("seeded")).unwrap();
        assert_eq!(seeded["metadata"]["creationTimestamp"], old);
        let created = s
            .create(*ids::SECRETS, Some("apps"), secret("created"))
            .unwrap();
        assert_ne!(created["metadata"]["creationTimestamp"], old);
    }

    #[test]
    fn create_stamps_metadata_and_defaults() {
        let s = store_with_ns();
        let d = create_deploy(&s, "web", 2).unwrap();
        assert_eq!(d["metadata"]["generation"], 1);
        assert_eq!(d["metadata"]["namespace"], "apps");
        assert!(d["metadata"]["uid"].as_str().unwrap().len() == 36);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        let err = create_deploy(&s, "web", 2).unwrap_err();
        assert_eq!(err.code, 409);
        let err = s
            .create(*ids::DEPLOYMENTS, Some("nope"), deploy("web", 2))
            .unwrap_err();
        assert_eq!(err.code, 404);
    }

    #[test]
    fn a_created_pods_requests_default_to_its_limits() {
        let s = store_with_ns();
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu"},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"limits": {"nvidia.com/gpu": 1}}}]}});
        let created = s.create(*ids::PODS, Some("apps"), pod).unwrap();
        assert_eq!(
            created["spec"]["containers"][0]["resources"]["requests"],
            json!({"nvidia.com/gpu": 1})
        );
    }

    #[test]
    fn generation_bumps_only_on_spec_change_and_status_is_kept() {
        let s = store_with_ns();
        create_deploy(&s, "web", 2).unwrap();
        s.update_with(*ids::DEPLOYMENTS, Some("apps"), "web", |o| {
            o["status"] = json!({"replicas": 2})
        });
        let (d, created) = patch_web(
            &s,
            PatchKind::Merge,
            &json!({"metadata": {"labels": {"x": "y"}}}),
        )
        .unwrap();
        assert!(!created);
        assert_eq!(d["metadata"]["generation"], 1);
        let (d, _) = patch_web(
            &s,
            PatchKind::Apply,
            &json!({"spec": {"replicas": 3}, "status": {"replicas": 99}}),
        )
        .unwrap();
        assert_eq!(d["metadata"]["generation"], 2);
        assert_eq!(d["status"]["replicas"], 2, "main writes never touch status");
    }

    #[test]
    fn a_statefulset_rendered_with_null_templates_upgrades_by_server_side_apply() {
        let s = store_with_ns();
        let sts = |image: &str| {
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "nats"},
                "spec": {"serviceName": "nats", "volumeClaimTemplates": null,
                    "selector": {"matchLabels": {"app": "nats"}},
                    "template": {"metadata": {"labels": {"app": "nats"}},
                        "spec": {"containers": [{"name": "nats", "image": image}]}}}})
        };
        let helm = WriteOpts {
            manager: Some("helm"),
            ..WriteOpts::default()
        };
        let apply = |body: &Value| {
            s.patch_opt(
                *ids::STATEFULSETS,
                Some("apps"),
                "nats",
                PatchKind::Apply,
                body,
                Part::Main,
                helm,
            )
        };
        let (created, fresh) = apply(&sts("nats:1")).unwrap();
        assert!(fresh);
        assert!(created["spec"].get("volumeClaimTemplates").is_none());
        assert_eq!(
            created["metadata"]["managedFields"][0]["operation"],
            "Apply"
        );
        let mut upgrade = sts("nats:2");
        upgrade["spec"]
            .as_object_mut()
            .unwrap()
            .remove("volumeClaimTemplates");
        let (upgraded, _) = apply(&upgrade).unwrap();
        assert_eq!(
            upgraded["spec"]["template"]["spec"]["containers"][0]["image"],
            "nats:2"
        );
        // Another manager changing helm's image conflicts; the simulator's own writes keep
        // no managed fields at all.
        let mut other = upgrade.clone();
        other["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nats:3");
        let kubectl = WriteOpts {
            manager: Some("kubectl"),
            ..WriteOpts::default()
        };
        let err = s
            .patch_opt(
                *ids::STATEFULSETS,
                Some("apps"),
                "nats",
                PatchKind::Apply,
                &other,
                Part::Main,
                kubectl,
            )
            .unwrap_err();
        assert_eq!((err.code, err.reason), (409, "Conflict"));
        let internal = create_deploy(&s, "plain", 1).unwrap();
        assert!(internal["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn put_with_stale_rv_conflicts() {
        let s = store_with_ns();
        let d = create_deploy(&s, "web", 2).unwrap();
        let mut stale = (*d).clone();
        s.update_with(*ids::DEPLOYMENTS, Some("apps"), "web", |o| {
            o["metadata"]["labels"]["z"] = json!("1")
        });
        stale["spec"]["replicas"] = json!(5);
        let err = s
            .replace(*ids::DEPLOYMENTS, Some("apps"), "web", stale, Part::Main)
            .unwrap_err();
        assert_eq!(err.code, 409);
    }

    #[test]
    fn immutable_selector_is_invalid() {
        let s = store_with_ns();
        create_deploy(&s, "web", 2).unwrap();
        let err = patch_web(
            &s,
            PatchKind::Merge,
            &json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
        )
        .unwrap_err();
        assert_eq!(err.code, 422);
    }

    #[test]
    fn apply_creates_when_absent() {
        let s = store_with_ns();
        let (d, created) = patch_web(&s, PatchKind::Apply, &deploy("web", 1)).unwrap();
        assert!(created);
        assert_eq!(d["metadata"]["name"], "web");
    }

    #[test]
    fn watch_resumes_strictly_after_rv_and_gone_when_too_old() {
        let s = store_with_ns();
        let a = create_deploy(&s, "a", 1).unwrap();
        let rv_a: u64 = a["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        create_deploy(&s, "b", 1).unwrap();
        let sub = s
            .subscribe(*ids::DEPLOYMENTS, Some("apps"), Some(rv_a), None)
            .unwrap();
        assert_eq!(sub.backlog.len(), 1);
        assert_eq!(sub.backlog[0].stored.idx.name(), "b");
        assert!(s.subscribe(*ids::DEPLOYMENTS, None, Some(1), None).is_err());
    }

    #[test]
    fn delete_cascades_through_owner_references() {
        let s = store_with_ns();
        let d = create_deploy(&s, "web", 1).unwrap();
        let rs = json!({"metadata": {"name": "web-1", "ownerReferences": [{"uid": d["metadata"]["uid"], "kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}]},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {}}});
        let rs = s.create(*ids::REPLICASETS, Some("apps"), rs).unwrap();
        let pod = json!({"metadata": {"name": "web-1-abc", "ownerReferences": [{"uid": rs["metadata"]["uid"], "kind": "ReplicaSet", "name": "web-1", "apiVersion": "apps/v1"}]}, "spec": {"containers": []}});
        s.create(*ids::PODS, Some("apps"), pod).unwrap();
        s.delete(*ids::DEPLOYMENTS, Some("apps"), "web").unwrap();
        assert!(s.get(*ids::REPLICASETS, Some("apps"), "web-1").is_err());
        assert!(s.get(*ids::PODS, Some("apps"), "web-1-abc").is_err());
    }

    #[test]
    fn every_namespace_has_a_default_service_account_and_pods_need_theirs() {
        let s = Store::new();
        s.ensure(*ids::NAMESPACES, json!({"metadata": {"name": "apps"}}))
            .unwrap();
        let sa = s
            .get(*ids::SERVICEACCOUNTS, Some("apps"), "default")
            .unwrap();
        assert_eq!(sa["metadata"]["namespace"], "apps");
        let pod = |name: &str, spec: Value| json!({"metadata": {"name": name, "generateName": ""}, "spec": spec});
        let created = s
            .create(
                *ids::PODS,
                Some("apps"),
                pod("p", json!({"containers": [{"name": "c", "image": "x"}]})),
            )
            .unwrap();
        assert_eq!(created["spec"]["serviceAccountName"], "default");
        let refused = s
            .create(
                *ids::PODS,
                Some("apps"),
                pod("q", json!({"serviceAccountName": "ci", "containers": [{"name": "c", "image": "x"}]})),
            )
            .unwrap_err();
        assert_eq!((refused.code, refused.reason), (403, "Forbidden"));
        assert_eq!(
            refused.message,
            "pods \"q\" is forbidden: error looking up service account apps/ci: serviceaccount \"ci\" not found"
        );
    }

    #[test]
    fn list_filters_by_namespace() {
        let s = store_with_ns();
        s.ensure(*ids::NAMESPACES, json!({"metadata": {"name": "other"}}))
            .unwrap();
        create_deploy(&s, "a", 1).unwrap();
        s.create(*ids::DEPLOYMENTS, Some("other"), deploy("b", 1))
            .unwrap();
        let (items, _) = s.list(*ids::DEPLOYMENTS, Some("apps"), |_| true);
        assert_eq!(items.len(), 1);
        let (items, _) = s.list(*ids::DEPLOYMENTS, None, |_| true);
        assert_eq!(items.len(), 2);
    }
}
