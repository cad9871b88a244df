//! The cluster side of an init run: it never replaces a Job that runs another run's pod,
//! creates the hook objects the toggle adds (replacing earlier ones as `before-hook-creation`
//! says) and applies its plain objects (server-side, forced: they replace an earlier run's),
//! deletes the hooks once the Job ended as `hook-succeeded` / `hook-failed` say, and hands the
//! plain objects' fields to helm.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Event as KubeEvent;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::discovery::{self, Scope};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::engine::event::Step;
use crate::engine::prepared::EarlierRun;
use crate::engine::steps::Ctx;
use crate::engine::steps::init_objects::{
    self, DeletePolicy, FIELD_MANAGER, HELM_MANAGER, InitObject, InitObjects, JobEnd, RUN_LABEL,
    adopt, prepare,
};
use crate::rollout::readiness::{self, JobProgress};
use crate::text;
use crate::time::{self, AgeStyle};

const DELETE_POLL: Duration = Duration::from_millis(250);
/// A Job this young without an active pod may be another run's that its controller has not
/// given a pod yet; older and podless, it is a stuck leftover and may be replaced.
const FRESH_JOB_SECS: i64 = 10;

/// A label value naming this run: its start second and a random part.
pub fn run_id() -> String {
    let random = std::collections::hash_map::RandomState::new()
        .hash_one((std::process::id(), std::time::SystemTime::now()));
    format!(
        "{}-{:08x}",
        jiff::Timestamp::now().as_second(),
        random as u32
    )
}

/// Deletes this run's Job (its pods go with it) after a cancel. Only a Job carrying this run's
/// label, and only by its uid, so a Job another run created meanwhile is never touched.
pub async fn stop_own_job(jobs: &Api<Job>, name: &str, run: &str, ctx: &Ctx) {
    let Ok(Some(job)) = jobs.get_opt(name).await else {
        return;
    };
    if job.labels().get(RUN_LABEL).map(String::as_str) != Some(run) {
        return;
    }
    let params = DeleteParams {
        preconditions: job.uid().map(|uid| kube::api::Preconditions {
            uid: Some(uid),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    match jobs.delete(name, &params).await {
        Ok(_) => ctx.emit.info(
            Step::Init,
            format!("cancelled: deleted this run's Job {name} (its pods stop)"),
        ),
        Err(e) => ctx.emit.warn(
            Step::Init,
            format!("cancelled: cannot delete this run's Job {name}: {e}"),
        ),
    }
}

/// Why an existing Job must not be replaced: it still runs (or is about to run) a pod for
/// another run. `None` when it ended, or is a podless leftover.
pub fn running_for_another_run(job: &Job, now_secs: i64) -> Option<String> {
    if !matches!(readiness::job(job), JobProgress::Running { .. }) {
        return None;
    }
    let status = job.status.as_ref();
    let active = status.and_then(|s| s.active).unwrap_or(0);
    let created = job
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| t.0.as_second());
    let fresh = created.is_some_and(|c| now_secs - c < FRESH_JOB_SECS);
    if active == 0 && !fresh {
        return None;
    }
    let started = status
        .and_then(|s| s.start_time.as_ref())
        .map(|t| t.0.as_second())
        .or(created);
    Some(match started {
        Some(at) => format!("started {} ago", time::age(now_secs - at, AgeStyle::Short)),
        None => "start unknown".into(),
    })
}

/// The ended run of this machine whose Job this is: its run label and its uid both match a
/// recorded run's.
pub fn earlier_run<'a>(job: &Job, earlier: &'a [EarlierRun]) -> Option<&'a EarlierRun> {
    let label = job.labels().get(RUN_LABEL)?;
    let uid = job.uid()?;
    earlier.iter().find(|r| &r.run == label && r.uid == uid)
}

/// Refuses when a Job of that name runs another run's pod: replacing it would kill that run's
/// init half way and leave it following a pod that is not its own; the refusal names the
/// command that clears it. A Job that this machine's own ended run left running (a timeout,
/// or a run that went away) is handed back to be followed to its end instead, with that run.
pub async fn guard_job(
    ctx: &Ctx,
    jobs: &Api<Job>,
    name: &str,
) -> Result<Option<(Job, EarlierRun)>, String> {
    let existing = jobs
        .get_opt(name)
        .await
        .map_err(|e| format!("cannot read Job {name}: {e}"))?;
    let now = jiff::Timestamp::now().as_second();
    let Some((job, started)) =
        existing.and_then(|j| running_for_another_run(&j, now).map(|s| (j, s)))
    else {
        return Ok(None);
    };
    // Read only now, when a running Job needs telling apart (the records are local files).
    let recorded = ctx
        .earlier_runs
        .as_ref()
        .map(|read| read())
        .unwrap_or_default();
    if let Some(earlier) = earlier_run(&job, &recorded) {
        let earlier = earlier.clone();
        return Ok(Some((job, earlier)));
    }
    let clear =
        crate::advice::kubectl_delete("job", name, ctx.namespace(), ctx.plan.context.as_deref());
    Err(format!(
        "init Job {name} is running for another run ({started}); not replaced: wait for it to \
         end, or clear it with: {clear}"
    ))
}

/// Deletes `name` (with its dependants) if it is there, and waits until it is gone.
pub async fn delete_and_wait<K>(
    api: &Api<K>,
    kind: &str,
    name: &str,
    ctx: &Ctx,
    deadline: tokio::time::Instant,
) -> Result<(), String>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => ctx
            .emit
            .info(Step::Init, format!("deleted the previous {kind} {name}")),
        Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
        Err(e) => return Err(format!("cannot delete the previous {kind} {name}: {e}")),
    }
    loop {
        match api.get_opt(name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(DELETE_POLL).await
            }
            Ok(Some(_)) => return Err(format!("the previous {kind} {name} is still there")),
            Err(e) => return Err(format!("cannot read {kind} {name}: {e}")),
        }
    }
}

/// Creates and deletes the hook objects of one run, each through the API its kind is served
/// by (found once per kind).
pub struct Applier<'a> {
    ctx: &'a Ctx,
    apis: HashMap<(String, String), (ApiResource, Scope)>,
}

impl<'a> Applier<'a> {
    pub fn new(ctx: &'a Ctx) -> Self {
        Applier {
            ctx,
            apis: HashMap::new(),
        }
    }

    async fn api(&mut self, obj: &InitObject) -> Result<(Api<DynamicObject>, Scope), String> {
        let key = (obj.api_version.clone(), obj.kind.clone());
        if !self.apis.contains_key(&key) {
            let (group, version) = match obj.api_version.split_once('/') {
                Some((g, v)) => (g, v),
                None => ("", obj.api_version.as_str()),
            };
            let gvk = GroupVersionKind::gvk(group, version, &obj.kind);
            let (ar, caps) = discovery::pinned_kind(&self.ctx.cluster.client, &gvk)
                .await
                .map_err(|e| format!("the cluster does not serve {}: {e}", obj.label()))?;
            self.apis.insert(key.clone(), (ar, caps.scope));
        }
        let (ar, scope) = &self.apis[&key];
        let client = self.ctx.cluster.client.clone();
        let api = match scope {
            Scope::Namespaced => Api::namespaced_with(client, self.ctx.namespace(), ar),
            Scope::Cluster => Api::all_with(client, ar),
        };
        Ok((api, scope.clone()))
    }

    /// Creates every hook and applies every plain object, in order. A hook goes after its
    /// earlier copy is gone when its policies say `before-hook-creation` (otherwise an earlier
    /// copy makes the creation fail, as in helm); a plain object is applied over an earlier
    /// run's.
    pub async fn create_objects(
        &mut self,
        objs: &InitObjects,
        release: &str,
        run: &str,
        deadline: tokio::time::Instant,
    ) -> Result<(), String> {
        for obj in &objs.objects {
            let (api, scope) = self.api(obj).await?;
            if obj.has(DeletePolicy::BeforeHookCreation) {
                delete_and_wait(&api, &obj.kind, &obj.name, self.ctx, deadline).await?;
            }
            let mut body = prepare(obj.object.clone(), release, run);
            match scope {
                Scope::Namespaced => body["metadata"]["namespace"] = self.ctx.namespace().into(),
                Scope::Cluster => {
                    if let Some(meta) = body["metadata"].as_object_mut() {
                        meta.remove("namespace");
                    }
                }
            }
            if obj.plain {
                let body = adopt(body, release, self.ctx.namespace());
                // Forced: the fields are helm's since the last run handed them over.
                let params = PatchParams::apply(FIELD_MANAGER).force();
                api.patch(&obj.name, &params, &Patch::Apply(&body))
                    .await
                    .map_err(|e| format!("cannot apply {} {}: {e}", obj.kind, obj.name))?;
                self.ctx
                    .emit
                    .info(Step::Init, format!("applied {} {}", obj.kind, obj.name));
                continue;
            }
            let created: DynamicObject = serde_json::from_value(body)
                .map_err(|e| format!("the rendered {} is not valid: {e}", obj.label()))?;
            api.create(&PostParams::default(), &created)
                .await
                .map_err(|e| format!("cannot create {} {}: {e}", obj.kind, obj.name))?;
            self.ctx
                .emit
                .info(Step::Init, format!("created {} {}", obj.kind, obj.name));
        }
        Ok(())
    }

    /// Once the init step ended, every plain object's fields become helm's own applied ones,
    /// so a later plain `helm upgrade` with the toggle on adopts the object and changes it
    /// without an apply conflict. A failure is a warning: the init's result stands.
    pub async fn hand_over(&mut self, objs: &InitObjects) {
        for obj in objs.objects.iter().filter(|o| o.plain) {
            let done = match self.api(obj).await {
                Ok((api, _)) => hand_over_one(&api, &obj.name).await,
                Err(e) => Err(e),
            };
            if let Err(e) = done {
                self.ctx.emit.warn(
                    Step::Init,
                    format!(
                        "could not hand {} {} over to helm (a later plain helm upgrade that \
                         changes it may conflict with helmdeck): {e}",
                        obj.kind, obj.name
                    ),
                );
            }
        }
    }

    /// Deletes what the delete policies say once the Job ended. A failed delete is a warning:
    /// the init run's result stands.
    pub async fn delete_by_policy(&mut self, objs: &InitObjects, end: JobEnd) {
        let why = match end {
            JobEnd::Succeeded => "hook-succeeded",
            JobEnd::Failed => "hook-failed",
        };
        for obj in super::init_objects::to_delete(objs, end) {
            let policy = if std::ptr::eq(obj, &objs.job) {
                why
            } else {
                "hook-succeeded"
            };
            let deleted = match self.api(obj).await {
                Ok((api, _)) => api
                    .delete(&obj.name, &DeleteParams::background())
                    .await
                    .map(|_| ())
                    .or_else(|e| match e {
                        kube::Error::Api(s) if s.code == 404 => Ok(()),
                        e => Err(e.to_string()),
                    }),
                Err(e) => Err(e),
            };
            match deleted {
                Ok(()) => self.ctx.emit.info(
                    Step::Init,
                    format!("deleted {} {} ({policy})", obj.kind, obj.name),
                ),
                Err(e) => self.ctx.emit.warn(
                    Step::Init,
                    format!("could not delete {} {} ({policy}): {e}", obj.kind, obj.name),
                ),
            }
        }
    }
}

/// Rewrites one object's `managedFields` (a merge patch guarded by its resourceVersion, as
/// the API takes managedFields set by a write that is not an apply), again if it changed
/// meanwhile.
async fn hand_over_one(api: &Api<DynamicObject>, name: &str) -> Result<(), String> {
    for _ in 0..3 {
        let live = api
            .get(name)
            .await
            .map_err(|e| format!("cannot read it: {e}"))?;
        let entries = serde_json::to_value(live.metadata.managed_fields.unwrap_or_default())
            .map_err(|e| format!("cannot read its managedFields: {e}"))?;
        let Some(entries) = entries
            .as_array()
            .and_then(|e| init_objects::hand_over(e, FIELD_MANAGER, HELM_MANAGER))
        else {
            return Ok(());
        };
        let patch = serde_json::json!({"metadata": {
            "resourceVersion": live.metadata.resource_version,
            "managedFields": entries,
        }});
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("it kept changing".into())
}

/// The newest Warning events of the Job, as `Reason: message`: why it has no pod (a refused
/// ServiceAccount, a quota) when it timed out.
pub async fn job_warnings(ctx: &Ctx, job: &Job) -> Vec<String> {
    let Some(uid) = job.uid() else {
        return vec![];
    };
    let events: Api<KubeEvent> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    let params = ListParams::default().fields(&format!("involvedObject.uid={uid}"));
    let Ok(list) = events.list(&params).await else {
        return vec![];
    };
    let mut warnings: Vec<_> = list
        .items
        .into_iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .collect();
    warnings.sort_by_key(|e| e.last_timestamp.as_ref().map(|t| t.0));
    warnings
        .iter()
        .rev()
        .take(2)
        .map(|e| {
            format!(
                "{}: {}",
                text::plain(e.reason.as_deref().unwrap_or("")),
                text::plain(e.message.as_deref().unwrap_or(""))
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(created: i64, active: Option<i32>, condition: Option<&str>) -> Job {
        let mut v = serde_json::json!({
            "metadata": {"name": "demo-init",
                         "creationTimestamp": time::unix_rfc3339(created).unwrap()},
            "status": {"startTime": time::unix_rfc3339(created + 1).unwrap()}
        });
        if let Some(a) = active {
            v["status"]["active"] = a.into();
        }
        if let Some(c) = condition {
            v["status"]["conditions"] = serde_json::json!([{"type": c, "status": "True"}]);
        }
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_job_with_a_running_pod_or_just_created_is_not_replaced() {
        let now = 1_000_000;
        assert_eq!(
            running_for_another_run(&job(now - 61, Some(1), None), now).as_deref(),
            Some("started 60s ago")
        );
        // Created a moment ago: its pod is on the way.
        assert!(running_for_another_run(&job(now - 2, None, None), now).is_some());
        // A podless leftover, or a Job that ended: replaced.
        assert!(running_for_another_run(&job(now - 600, None, None), now).is_none());
        assert!(running_for_another_run(&job(now - 5, Some(1), Some("Complete")), now).is_none());
        assert!(running_for_another_run(&job(now - 5, None, Some("Failed")), now).is_none());
    }

    #[test]
    fn run_ids_are_label_values_and_differ() {
        let (a, b) = (run_id(), run_id());
        assert_ne!(a, b);
        assert!(a.len() <= 63);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }
}
