//! What the init toggle adds, read from two renders of the chart (toggle on, toggle off): the
//! init Job and the hook objects beside it (its ServiceAccount, Role, RoleBinding, ConfigMap,
//! Secret, ...), in the order helm would create them, with the delete policies helm would
//! honour. Pure: the cluster side is in `init_apply.rs`.

use std::collections::HashSet;

use serde_json::Value;

/// The label naming the helmdeck run that created an object.
pub const RUN_LABEL: &str = "helmdeck.io/run";
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// Helm's install order of kinds (`InstallOrder` in helm's kind sorter); other kinds come after
/// these, by kind name.
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The hook events of an install or upgrade: hooks with none of them (`test`, the delete and
/// rollback hooks) are not part of an init run.
const RUN_EVENTS: &[&str] = &["pre-install", "post-install", "pre-upgrade", "post-upgrade"];

/// `helm.sh/hook-delete-policy` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletePolicy {
    BeforeHookCreation,
    HookSucceeded,
    HookFailed,
}

/// One object of the init run, ready to create (hook annotations off, labels on; its namespace
/// is set when it is created, from the API's scope).
#[derive(Debug, Clone, PartialEq)]
pub struct InitObject {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub weight: i64,
    pub policies: Vec<DeletePolicy>,
    pub object: Value,
}

impl InitObject {
    /// `Kind/name`, as messages name an object.
    pub fn label(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }

    pub fn has(&self, policy: DeletePolicy) -> bool {
        self.policies.contains(&policy)
    }
}

/// Everything one init run creates: the hooks in creation order, then the Job.
#[derive(Debug, Clone, PartialEq)]
pub struct InitObjects {
    pub hooks: Vec<InitObject>,
    pub job: InitObject,
    /// Hooks the toggle adds for other events (`test`, delete, rollback): left alone.
    pub ignored: Vec<String>,
}

/// How the Job ended, for the delete policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    Succeeded,
    Failed,
}

#[derive(Debug, thiserror::Error)]
pub enum InitObjectsError {
    #[error("cannot parse helm template output: {0}")]
    Parse(String),
    #[error(
        "--init-toggle {toggle} adds objects that are not hooks (they belong in the release, not in the init step): {names}"
    )]
    NotHooks { toggle: String, names: String },
}

fn parse(rendered: &str) -> Result<Vec<Value>, InitObjectsError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(rendered)
        .map_err(|e| InitObjectsError::Parse(e.to_string()))?;
    Ok(docs
        .into_iter()
        .filter(|d| d.get("kind").and_then(Value::as_str).is_some() && !name_of(d).is_empty())
        .collect())
}

fn str_at<'v>(obj: &'v Value, pointer: &str) -> &'v str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn name_of(obj: &Value) -> &str {
    str_at(obj, "/metadata/name")
}

fn key(obj: &Value) -> (String, String, String) {
    (
        str_at(obj, "/kind").to_string(),
        str_at(obj, "/metadata/namespace").to_string(),
        name_of(obj).to_string(),
    )
}

fn annotation<'v>(obj: &'v Value, name: &str) -> Option<&'v str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(name))
        .and_then(Value::as_str)
}

fn list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// The objects in the toggle-on render that the toggle-off render lacks, in render order.
pub fn added(on: &str, off: &str) -> Result<Vec<Value>, InitObjectsError> {
    let before: HashSet<_> = parse(off)?.iter().map(key).collect();
    Ok(parse(on)?
        .into_iter()
        .filter(|o| !before.contains(&key(o)))
        .collect())
}

/// The object as this run creates it: without helm's hook annotations (helm does not own it),
/// with the release's instance label and this run's label.
pub fn prepare(mut obj: Value, release: &str, run: &str) -> Value {
    if !obj["metadata"].is_object() {
        obj["metadata"] = Value::Object(Default::default());
    }
    let meta = &mut obj["metadata"];
    if let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        ann.retain(|k, _| !k.starts_with("helm.sh/hook"));
    }
    if !meta["labels"].is_object() {
        meta["labels"] = Value::Object(Default::default());
    }
    meta["labels"][INSTANCE_LABEL] = Value::String(release.into());
    meta["labels"][RUN_LABEL] = Value::String(run.into());
    obj
}

/// One rendered object as an [`InitObject`] (before [`prepare`]).
fn init_object(obj: Value) -> InitObject {
    let policies: Vec<DeletePolicy> = annotation(&obj, "helm.sh/hook-delete-policy")
        .map(|p| {
            list(p)
                .filter_map(|p| match p {
                    "before-hook-creation" => Some(DeletePolicy::BeforeHookCreation),
                    "hook-succeeded" => Some(DeletePolicy::HookSucceeded),
                    "hook-failed" => Some(DeletePolicy::HookFailed),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    InitObject {
        api_version: str_at(&obj, "/apiVersion").to_string(),
        kind: str_at(&obj, "/kind").to_string(),
        name: name_of(&obj).to_string(),
        // As helm reads it: a weight that is not a number is 0.
        weight: annotation(&obj, "helm.sh/hook-weight")
            .and_then(|w| w.trim().parse().ok())
            .unwrap_or(0),
        // Helm's default when a hook names no policy.
        policies: if policies.is_empty() {
            vec![DeletePolicy::BeforeHookCreation]
        } else {
            policies
        },
        object: obj,
    }
}

fn kind_rank(kind: &str) -> (usize, String) {
    match INSTALL_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, String::new()),
        None => (INSTALL_ORDER.len(), kind.to_string()),
    }
}

/// The init run of `job_name` from the two renders, or `None` when the toggle-on render has no
/// such Job. Every other object the toggle adds must be a hook; the hooks of an install or
/// upgrade are created by weight, then helm's kind order, then name.
pub fn plan(
    on: &str,
    off: &str,
    toggle: &str,
    job_name: &str,
) -> Result<Option<InitObjects>, InitObjectsError> {
    let is_job = |o: &Value| str_at(o, "/kind") == "Job" && name_of(o) == job_name;
    let Some(job) = parse(on)?.into_iter().find(is_job) else {
        return Ok(None);
    };
    let mut hooks = Vec::new();
    let mut ignored = Vec::new();
    let mut not_hooks = Vec::new();
    for obj in added(on, off)?.into_iter().filter(|o| !is_job(o)) {
        let Some(events) = annotation(&obj, "helm.sh/hook") else {
            not_hooks.push(format!("{}/{}", str_at(&obj, "/kind"), name_of(&obj)));
            continue;
        };
        let label = format!("{}/{}", str_at(&obj, "/kind"), name_of(&obj));
        if list(events).any(|e| RUN_EVENTS.contains(&e)) {
            hooks.push(init_object(obj));
        } else {
            ignored.push(format!("{label} (hook {events})"));
        }
    }
    if !not_hooks.is_empty() {
        return Err(InitObjectsError::NotHooks {
            toggle: toggle.to_string(),
            names: not_hooks.join(", "),
        });
    }
    hooks.sort_by_cached_key(|h| (h.weight, kind_rank(&h.kind), h.name.clone()));
    Ok(Some(InitObjects {
        hooks,
        job: init_object(job),
        ignored,
    }))
}

/// What to delete once the Job ended, in order, as helm does after a hook run: on success every
/// object with `hook-succeeded`, last created first; on failure the Job if it has
/// `hook-failed`, then the hooks before it (which succeeded) with `hook-succeeded`.
pub fn to_delete(objs: &InitObjects, end: JobEnd) -> Vec<&InitObject> {
    let succeeded = |o: &&InitObject| o.has(DeletePolicy::HookSucceeded);
    match end {
        JobEnd::Succeeded => std::iter::once(&objs.job)
            .chain(objs.hooks.iter().rev())
            .filter(succeeded)
            .collect(),
        JobEnd::Failed => std::iter::once(&objs.job)
            .filter(|j| j.has(DeletePolicy::HookFailed))
            .chain(objs.hooks.iter().filter(succeeded))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(kind: &str, name: &str, hook: Option<(&str, &str, &str)>) -> String {
        let mut s = format!("---\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n");
        if let Some((events, weight, policy)) = hook {
            s.push_str(&format!(
                "  annotations:\n    helm.sh/hook: {events}\n    helm.sh/hook-weight: \"{weight}\"\n"
            ));
            if !policy.is_empty() {
                s.push_str(&format!("    helm.sh/hook-delete-policy: {policy}\n"));
            }
        }
        s
    }

    const POST: &str = "post-install,post-upgrade";

    fn renders() -> (String, String) {
        let off = [
            doc("Deployment", "demo-app", None),
            doc("Job", "demo-migrate", Some(("pre-upgrade", "0", ""))),
        ]
        .concat();
        let on = [
            off.clone(),
            doc(
                "RoleBinding",
                "demo-init",
                Some((POST, "-5", "hook-succeeded")),
            ),
            doc(
                "Job",
                "demo-init",
                Some((POST, "1", "before-hook-creation")),
            ),
            doc("ServiceAccount", "demo-init", Some((POST, "-5", ""))),
            doc(
                "Role",
                "demo-init",
                Some((POST, "-5", "hook-failed,hook-succeeded")),
            ),
            doc("ConfigMap", "demo-init-b", Some((POST, "-10", "nonsense"))),
            doc("Secret", "demo-init-a", Some((POST, "-10", "hook-failed"))),
            doc("Pod", "demo-init-test", Some(("test", "0", ""))),
        ]
        .concat();
        (on, off)
    }

    fn labels(objs: &[&InitObject]) -> Vec<String> {
        objs.iter().map(|o| o.label()).collect()
    }

    #[test]
    fn hooks_in_weight_then_kind_then_name_order_and_the_job_apart() {
        let (on, off) = renders();
        let plan = plan(&on, &off, "init.enabled", "demo-init")
            .unwrap()
            .expect("the Job is rendered");
        assert_eq!(
            labels(&plan.hooks.iter().collect::<Vec<_>>()),
            [
                "Secret/demo-init-a",
                "ConfigMap/demo-init-b",
                "ServiceAccount/demo-init",
                "Role/demo-init",
                "RoleBinding/demo-init",
            ]
        );
        assert_eq!(plan.job.label(), "Job/demo-init");
        assert_eq!(plan.ignored, ["Pod/demo-init-test (hook test)"]);
        let policies = |name: &str| {
            plan.hooks
                .iter()
                .find(|h| h.label() == name)
                .map(|h| h.policies.clone())
                .unwrap()
        };
        // No policy, or none helm knows: before-hook-creation, as helm defaults.
        assert_eq!(
            policies("ServiceAccount/demo-init"),
            [DeletePolicy::BeforeHookCreation]
        );
        assert_eq!(
            policies("ConfigMap/demo-init-b"),
            [DeletePolicy::BeforeHookCreation]
        );
        assert_eq!(plan.hooks[0].weight, -10);
    }

    #[test]
    fn delete_policies_after_success_and_after_failure() {
        let (on, off) = renders();
        let plan = plan(&on, &off, "init.enabled", "demo-init")
            .unwrap()
            .unwrap();
        assert_eq!(
            labels(&to_delete(&plan, JobEnd::Succeeded)),
            ["RoleBinding/demo-init", "Role/demo-init"]
        );
        // The Job keeps no hook-failed here; the hooks before it succeeded.
        assert_eq!(
            labels(&to_delete(&plan, JobEnd::Failed)),
            ["Role/demo-init", "RoleBinding/demo-init"]
        );
        let mut failing = plan.clone();
        failing.job.policies = vec![DeletePolicy::HookFailed];
        assert_eq!(
            labels(&to_delete(&failing, JobEnd::Failed))[0],
            "Job/demo-init"
        );
    }

    #[test]
    fn an_added_object_that_is_not_a_hook_is_named() {
        let (on, off) = renders();
        let on = format!(
            "{on}{}{}",
            doc("ConfigMap", "demo-init-settings", None),
            doc("Service", "demo-init", None)
        );
        let err = plan(&on, &off, "init.enabled", "demo-init").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--init-toggle init.enabled adds objects that are not hooks (they belong in the release, not in the init step): ConfigMap/demo-init-settings, Service/demo-init"
        );
    }

    #[test]
    fn no_such_job_is_none_and_a_job_that_is_not_a_hook_still_runs() {
        let (on, off) = renders();
        assert!(plan(&on, &off, "t", "demo-initt").unwrap().is_none());
        let on = doc("Job", "plain-init", None);
        let plan = plan(&on, "", "t", "plain-init").unwrap().unwrap();
        assert!(plan.hooks.is_empty());
        assert_eq!(plan.job.policies, [DeletePolicy::BeforeHookCreation]);
        assert!(super::plan("a: [", "", "t", "x").is_err());
    }

    #[test]
    fn prepare_strips_hook_annotations_and_labels_release_and_run() {
        let obj: Value =
            serde_saphyr::from_str(&doc("Role", "r", Some((POST, "1", "hook-failed")))).unwrap();
        let mut obj = obj;
        obj["metadata"]["annotations"]["keep"] = Value::String("me".into());
        let prepared = prepare(obj, "demo", "run-1");
        assert_eq!(
            prepared["metadata"]["annotations"],
            serde_json::json!({"keep": "me"})
        );
        assert_eq!(prepared["metadata"]["labels"][INSTANCE_LABEL], "demo");
        assert_eq!(prepared["metadata"]["labels"][RUN_LABEL], "run-1");
    }
}
