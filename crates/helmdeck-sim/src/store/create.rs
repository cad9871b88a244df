//! Creating objects (POST): naming (generateName), the namespace, admission, API defaults and
//! validation, and what the API server stamps on every new object.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{EventType, Inner, Store, WriteOpts, managed, name_of, suffix_from};
use crate::api_error::ApiError;
use crate::resources::{self, ResourceId, ids};
use crate::{crd, defaults, validate};
use helmdeck_formats::time::now_rfc3339;

impl Store {
    /// Creates an object (POST). Fills metadata, applies API defaults.
    pub fn create(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        obj: Value,
    ) -> Result<Arc<Value>, ApiError> {
        self.create_opt(res, ns, obj, WriteOpts::default())
    }

    /// [`Store::create`], or with `dry_run` everything but the write: validated and answered
    /// as if stored, no rv bump, no watch event (`?dryRun=All`). With a field manager, it
    /// owns every field it sent (an `Update` entry in `managedFields`).
    pub fn create_opt(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        obj: Value,
        opts: WriteOpts<'_>,
    ) -> Result<Arc<Value>, ApiError> {
        self.create_as(res, ns, obj, opts, "Update")
    }

    /// [`Store::create_opt`], recording the manager's fields under `operation` (`Apply` when
    /// a server-side apply creates the object).
    pub(super) fn create_as(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        mut obj: Value,
        opts: WriteOpts<'_>,
        operation: &str,
    ) -> Result<Arc<Value>, ApiError> {
        let dry_run = opts.dry_run;
        let rt = resources::get(res);
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be an object",
            ));
        }
        // Before the lock: a generated name takes it for its random suffix.
        let name = self.name_for_create(res, &mut obj)?;
        let mut inner = self.lock();
        let namespace = Self::namespace_for_create(&inner, res, ns, &obj)?;
        if inner
            .map(res)
            .contains_key(&Self::key(res, namespace.as_deref(), &name))
        {
            return Err(ApiError::already_exists(res, &name));
        }
        defaults::drop_nulls(&mut obj);
        // Only a client's writes keep managed fields: a pod a controller creates costs nothing.
        let sent = opts.manager.map(|_| obj.clone());
        // The uid first: a Job's generated selector needs it and is defaulted with the rest.
        let uid = self.new_uid(&mut inner);
        if rt.kind == "Job" {
            defaults::job_selector(&mut obj, &uid);
        }
        defaults::apply(rt.kind, &mut obj);
        if rt.kind == "Pod"
            && let Some(ns) = &namespace
        {
            Self::admit_service_account(&inner, ns, &mut obj)?;
        }
        if let Err(msg) = validate::on_create(rt.kind, &obj) {
            return Err(ApiError::invalid(res, &name, &msg));
        }
        Self::stamp_created(res, &mut obj, &uid, namespace.as_deref());
        if let (Some(manager), Some(sent)) = (opts.manager, &sent) {
            let api_version = rt.api_version();
            let now = now_rfc3339();
            let w = managed::Writer {
                manager,
                subresource: opts.subresource,
                api_version: &api_version,
                now: &now,
            };
            managed::record_create(&mut obj, sent, &w, operation);
        }
        let served = if res == *ids::CRDS {
            let served =
                crd::served_versions(&obj).map_err(|m| ApiError::invalid(res, &name, &m))?;
            obj["status"] = crd::accepted_status(&obj, &now_rfc3339());
            Some(served)
        } else {
            None
        };
        if dry_run {
            return Ok(Self::preview(&inner, obj));
        }
        let created = self.commit(&mut inner, res, EventType::Added, obj);
        if let Some(served) = served {
            Self::register(&mut inner, &name, served);
        }
        if rt.kind == "Namespace" {
            drop(inner);
            // The ServiceAccount controller gives every namespace its `default` account; here
            // at once, so a pod created right after its namespace is admitted.
            let _ = self.create(
                *ids::SERVICEACCOUNTS,
                Some(&name),
                json!({"metadata": {"name": "default"}}),
            );
        }
        Ok(created)
    }

    /// The name of an object to create: `metadata.name`, or `generateName` plus a random
    /// suffix (written into the object); invalid when neither is set or the name is not
    /// valid for the kind.
    fn name_for_create(&self, res: ResourceId, obj: &mut Value) -> Result<String, ApiError> {
        if name_of(obj).is_empty()
            && let Some(prefix) = obj
                .pointer("/metadata/generateName")
                .and_then(Value::as_str)
        {
            let suffix = self.random_suffix();
            obj["metadata"]["name"] = json!(format!("{prefix}{suffix}"));
        }
        let name = name_of(obj).to_string();
        if name.is_empty() {
            return Err(ApiError::invalid(
                res,
                "",
                "metadata.name: Required value: name or generateName is required",
            ));
        }
        validate::name(resources::get(res).kind, &name)
            .map_err(|m| ApiError::invalid(res, &name, &m))?;
        Ok(name)
    }

    /// The namespace a created object goes into (`None` for cluster-scoped kinds): the
    /// request's, else the body's, else `default`. A body namespace that differs from the
    /// request's is a bad request; a namespace that does not exist is NotFound.
    fn namespace_for_create(
        inner: &Inner,
        res: ResourceId,
        ns: Option<&str>,
        obj: &Value,
    ) -> Result<Option<String>, ApiError> {
        if !resources::get(res).namespaced {
            return Ok(None);
        }
        let body_ns = obj.pointer("/metadata/namespace").and_then(Value::as_str);
        let ns = ns.or(body_ns).unwrap_or("default").to_string();
        if body_ns.is_some_and(|b| !b.is_empty() && b != ns) {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if !inner
            .map(*ids::NAMESPACES)
            .contains_key(&(String::new(), ns.clone()))
        {
            return Err(ApiError::not_found(*ids::NAMESPACES, &ns));
        }
        Ok(Some(ns))
    }

    /// What the API server sets on every created object: uid, creation time, namespace,
    /// generation 1 (for kinds that have one), apiVersion and kind; and what it drops: a
    /// resourceVersion, a deletionTimestamp, and the status of kinds whose controllers own it
    /// (a Namespace starts Active).
    fn stamp_created(res: ResourceId, obj: &mut Value, uid: &str, namespace: Option<&str>) {
        let rt = resources::get(res);
        let meta = obj["metadata"]
            .as_object_mut()
            .expect("metadata is an object after defaults");
        meta.insert("uid".into(), json!(uid));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        meta.remove("resourceVersion");
        meta.remove("deletionTimestamp");
        meta.remove("managedFields");
        match namespace {
            Some(ns) => {
                meta.insert("namespace".into(), json!(ns));
            }
            None => {
                meta.remove("namespace");
            }
        }
        if rt.has_generation {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.remove("generation");
        }
        obj["apiVersion"] = json!(rt.api_version());
        obj["kind"] = json!(rt.kind);
        if rt.has_status() && rt.kind != "Namespace" && rt.kind != "Node" && rt.kind != "Pod" {
            // A client cannot set status on create; controllers own it.
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
        if rt.kind == "Namespace" {
            obj["status"] = json!({"phase": "Active"});
        }
    }

    /// The API server's ServiceAccount admission: a pod runs as `default` unless it names
    /// another account, and is refused (403) when that account does not exist in its namespace.
    fn admit_service_account(inner: &Inner, ns: &str, pod: &mut Value) -> Result<(), ApiError> {
        let named = |field: &str| {
            pod.pointer(&format!("/spec/{field}"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        let account = named("serviceAccountName")
            .or_else(|| named("serviceAccount"))
            .unwrap_or_else(|| "default".into());
        if inner.map(*ids::SERVICEACCOUNTS).contains_key(&Self::key(
            *ids::SERVICEACCOUNTS,
            Some(ns),
            &account,
        )) {
            pod["spec"]["serviceAccountName"] = json!(account);
            pod["spec"]["serviceAccount"] = json!(account);
            return Ok(());
        }
        // Admission runs before a generated name is chosen, so the real error names the
        // prefix; the simulator's controllers pick pod names themselves but set the prefix too.
        let shown = pod
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| name_of(pod));
        Err(ApiError::forbidden(
            *ids::PODS,
            shown,
            &format!(
                "error looking up service account {ns}/{account}: serviceaccount \"{account}\" not found"
            ),
        ))
    }

    fn random_suffix(&self) -> String {
        let mut inner = self.lock();
        inner.uid_seq += 1;
        suffix_from(
            self.uid_seed ^ inner.uid_seq.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            5,
        )
    }
}
