//! What the toggle adds, read from two renders of the chart (toggle on, toggle off): the init
//! Job, the hook objects beside it (its ServiceAccount, Role, RoleBinding, ConfigMap, Secret,
//! ...) with the delete policies helm would honour, and the plain objects of the kinds an init
//! Job reads (a ConfigMap it mounts), in the order helm would create them. Pure: the cluster
//! side is in `init_apply.rs`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::validate::LabelSelector;

/// The label naming the helmdeck run that created an object.
pub const RUN_LABEL: &str = "helmdeck.io/run";
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// The kinds of plain (non-hook) object the init step applies: what an init Job reads or runs
/// as. Anything else the toggle adds belongs in the release.
pub const PLAIN_KINDS: &[&str] = &[
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "Role",
    "RoleBinding",
];

/// The field manager of the init step's server-side applies.
pub const FIELD_MANAGER: &str = "helmdeck";
/// The field manager helm 4 applies with (its binary's name): the plain objects' fields are
/// handed to it once the init step ends, so a later plain `helm upgrade` that adopts them
/// applies without a conflict.
pub const HELM_MANAGER: &str = "helm";

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
    /// Not a hook: applied (server-side), kept after the init, never deleted by a policy.
    pub plain: bool,
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

/// Everything one init run creates: the hooks and the plain objects in creation order, then
/// the Job.
#[derive(Debug, Clone, PartialEq)]
pub struct InitObjects {
    pub objects: Vec<InitObject>,
    pub job: InitObject,
    /// What the toggle adds that this run leaves alone, each with why: hooks for other events
    /// (`test`, delete, rollback), plain objects `--init-selector` does not select.
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
        "--init-toggle {toggle} adds objects the init step does not apply (it applies hooks and \
         plain ConfigMap, Secret, ServiceAccount, Role, RoleBinding; the rest belongs in the \
         release): {names}"
    )]
    NotApplicable { toggle: String, names: String },
    #[error(
        "init Job {job} does not match --init-selector {selector}: the init step applies what \
         the selector selects, the Job included"
    )]
    JobNotSelected { job: String, selector: String },
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

/// A plain object as helm adopts it into the release on a later `helm upgrade` with the
/// toggle on (helm refuses to take over an object without this metadata).
pub fn adopt(mut obj: Value, release: &str, namespace: &str) -> Value {
    let meta = &mut obj["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = Value::Object(Default::default());
    }
    meta["labels"]["app.kubernetes.io/managed-by"] = Value::String("Helm".into());
    meta["annotations"]["meta.helm.sh/release-name"] = Value::String(release.into());
    meta["annotations"]["meta.helm.sh/release-namespace"] = Value::String(namespace.into());
    obj
}

/// `managedFields` with every entry of manager `from` on the main resource made one `Apply`
/// entry of manager `to` (merged with `to`'s own apply entry, as the API keeps one entry per
/// manager and operation); `None` when `from` owns nothing.
pub fn hand_over(entries: &[Value], from: &str, to: &str) -> Option<Vec<Value>> {
    let main = |e: &Value| {
        e.get("subresource")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    };
    let is = |e: &Value, manager: &str| e["manager"] == manager && main(e);
    let mut taken: Vec<&Value> = entries.iter().filter(|e| is(e, from)).collect();
    if taken.is_empty() {
        return None;
    }
    taken.extend(
        entries
            .iter()
            .filter(|e| is(e, to) && e["operation"] == "Apply"),
    );
    let mut fields = Map::new();
    for e in &taken {
        if let Some(set) = e["fieldsV1"].as_object() {
            union(&mut fields, set);
        }
    }
    let mut merged = taken[0].clone();
    merged["manager"] = Value::String(to.into());
    merged["operation"] = Value::String("Apply".into());
    merged["fieldsType"] = Value::String("FieldsV1".into());
    merged["fieldsV1"] = Value::Object(fields);
    let mut out: Vec<Value> = entries
        .iter()
        .filter(|e| !taken.iter().any(|t| std::ptr::eq(*t, *e)))
        .cloned()
        .collect();
    out.push(merged);
    Some(out)
}

/// Adds every path of the FieldsV1 set `more` to `set`.
fn union(set: &mut Map<String, Value>, more: &Map<String, Value>) {
    for (k, v) in more {
        let entry = set
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if let (Some(have), Some(add)) = (entry.as_object_mut(), v.as_object()) {
            union(have, add);
        }
    }
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
        plain: false,
        object: obj,
    }
}

/// A plain object: no weight (0, as helm reads a hook without one), no policy, kept.
fn plain_object(obj: Value) -> InitObject {
    InitObject {
        weight: 0,
        policies: vec![],
        plain: true,
        ..init_object(obj)
    }
}

fn labels(obj: &Value) -> Option<&Map<String, Value>> {
    obj.pointer("/metadata/labels").and_then(Value::as_object)
}

fn kind_rank(kind: &str) -> (usize, String) {
    match INSTALL_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, String::new()),
        None => (INSTALL_ORDER.len(), kind.to_string()),
    }
}

/// The init run of `job_name` from the two renders, or `None` when the toggle-on render has no
/// such Job. The hooks of an install or upgrade and the plain objects `selector` selects (all
/// without one) are created by weight (a plain object weighs 0), then helm's kind order, then
/// name; a plain object of a kind outside [`PLAIN_KINDS`] that would be applied is an error.
pub fn plan(
    on: &str,
    off: &str,
    toggle: &str,
    job_name: &str,
    selector: Option<&LabelSelector>,
) -> Result<Option<InitObjects>, InitObjectsError> {
    let is_job = |o: &Value| str_at(o, "/kind") == "Job" && name_of(o) == job_name;
    let Some(job) = parse(on)?.into_iter().find(is_job) else {
        return Ok(None);
    };
    if let Some(selector) = selector
        && !selector.matches(labels(&job))
    {
        return Err(InitObjectsError::JobNotSelected {
            job: job_name.to_string(),
            selector: selector.to_string(),
        });
    }
    let mut objects = Vec::new();
    let mut ignored = Vec::new();
    let mut refused = Vec::new();
    for obj in added(on, off)?.into_iter().filter(|o| !is_job(o)) {
        let label = format!("{}/{}", str_at(&obj, "/kind"), name_of(&obj));
        match annotation(&obj, "helm.sh/hook") {
            Some(events) if list(events).any(|e| RUN_EVENTS.contains(&e)) => {
                objects.push(init_object(obj))
            }
            Some(events) => ignored.push(format!(
                "{label} (hook {events}): not an install or upgrade hook"
            )),
            None => match selector {
                Some(s) if !s.matches(labels(&obj)) => {
                    ignored.push(format!("{label}: does not match --init-selector {s}"))
                }
                _ if PLAIN_KINDS.contains(&str_at(&obj, "/kind")) => {
                    objects.push(plain_object(obj))
                }
                _ => refused.push(label),
            },
        }
    }
    if !refused.is_empty() {
        return Err(InitObjectsError::NotApplicable {
            toggle: toggle.to_string(),
            names: refused.join(", "),
        });
    }
    objects.sort_by_cached_key(|h| (h.weight, kind_rank(&h.kind), h.name.clone()));
    Ok(Some(InitObjects {
        objects,
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
            .chain(objs.objects.iter().rev())
            .filter(succeeded)
            .collect(),
        JobEnd::Failed => std::iter::once(&objs.job)
            .filter(|j| j.has(DeletePolicy::HookFailed))
            .chain(objs.objects.iter().filter(succeeded))
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
        let plan = plan(&on, &off, "init.enabled", "demo-init", None)
            .unwrap()
            .expect("the Job is rendered");
        assert_eq!(
            labels(&plan.objects.iter().collect::<Vec<_>>()),
            [
                "Secret/demo-init-a",
                "ConfigMap/demo-init-b",
                "ServiceAccount/demo-init",
                "Role/demo-init",
                "RoleBinding/demo-init",
            ]
        );
        assert_eq!(plan.job.label(), "Job/demo-init");
        assert_eq!(
            plan.ignored,
            ["Pod/demo-init-test (hook test): not an install or upgrade hook"]
        );
        let policies = |name: &str| {
            plan.objects
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
        assert_eq!(plan.objects[0].weight, -10);
    }

    #[test]
    fn delete_policies_after_success_and_after_failure() {
        let (on, off) = renders();
        let plan = plan(&on, &off, "init.enabled", "demo-init", None)
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

    fn labelled(kind: &str, name: &str, component: &str) -> String {
        format!(
            "---\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  labels:\n    component: {component}\n"
        )
    }

    #[test]
    fn plain_objects_of_the_init_kinds_are_applied_in_kind_order_and_kept() {
        let (on, off) = renders();
        let on = format!(
            "{on}{}{}",
            doc("ConfigMap", "demo-init-settings", None),
            doc("Secret", "demo-init-creds", None)
        );
        let plan = plan(&on, &off, "init.enabled", "demo-init", None)
            .unwrap()
            .unwrap();
        // Weight 0: after the hooks of -10 and -5, Secret before ConfigMap as helm sorts.
        assert_eq!(
            labels(&plan.objects.iter().collect::<Vec<_>>())[5..],
            ["Secret/demo-init-creds", "ConfigMap/demo-init-settings"]
        );
        let settings = plan.objects.iter().find(|o| o.plain).unwrap();
        assert_eq!(settings.weight, 0);
        assert!(settings.policies.is_empty());
        // Never deleted by a policy: the Job reads them after the init too.
        for end in [JobEnd::Succeeded, JobEnd::Failed] {
            assert!(to_delete(&plan, end).iter().all(|o| !o.plain));
        }
    }

    #[test]
    fn a_plain_object_of_another_kind_is_named() {
        let (on, off) = renders();
        let on = format!(
            "{on}{}{}{}",
            doc("ConfigMap", "demo-init-settings", None),
            doc("Service", "demo-init", None),
            doc("Deployment", "demo-init-helper", None)
        );
        let err = plan(&on, &off, "init.enabled", "demo-init", None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--init-toggle init.enabled adds objects the init step does not apply (it applies hooks and plain ConfigMap, Secret, ServiceAccount, Role, RoleBinding; the rest belongs in the release): Service/demo-init, Deployment/demo-init-helper"
        );
    }

    #[test]
    fn the_selector_picks_the_plain_objects_and_must_pick_the_job() {
        let off = doc("Deployment", "demo-app", None);
        let on = [
            off.clone(),
            labelled("ConfigMap", "demo-init-cs", "init"),
            labelled("ConfigMap", "demo-other", "web"),
            // Not selected, so not refused either: the selector leaves it out.
            labelled("Service", "demo-web", "web"),
            labelled("Job", "demo-init", "init"),
        ]
        .concat();
        let selector = LabelSelector::parse("component=init").unwrap();
        let plan = plan(&on, &off, "t", "demo-init", Some(&selector))
            .unwrap()
            .unwrap();
        assert_eq!(
            labels(&plan.objects.iter().collect::<Vec<_>>()),
            ["ConfigMap/demo-init-cs"]
        );
        assert_eq!(
            plan.ignored,
            [
                "ConfigMap/demo-other: does not match --init-selector component=init",
                "Service/demo-web: does not match --init-selector component=init"
            ]
        );
        let web = LabelSelector::parse("component=web").unwrap();
        let err = super::plan(&on, &off, "t", "demo-init", Some(&web)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("init Job demo-init does not match --init-selector component=web"),
            "{err}"
        );
    }

    #[test]
    fn adopt_adds_the_metadata_helm_adopts_by() {
        let obj = adopt(
            serde_json::json!({"metadata": {"name": "c", "labels": {"a": "b"}}}),
            "demo",
            "apps",
        );
        assert_eq!(
            obj["metadata"],
            serde_json::json!({"name": "c",
                "labels": {"a": "b", "app.kubernetes.io/managed-by": "Helm"},
                "annotations": {"meta.helm.sh/release-name": "demo",
                                "meta.helm.sh/release-namespace": "apps"}})
        );
    }

    #[test]
    fn hand_over_makes_helmdecks_fields_one_helm_apply_entry() {
        let entry = |manager: &str, op: &str, fields: Value| {
            serde_json::json!({"manager": manager, "operation": op, "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": fields})
        };
        let entries = vec![
            entry(
                "kubectl-edit",
                "Update",
                serde_json::json!({"f:data": {"f:x": {}}}),
            ),
            entry(
                "helmdeck",
                "Apply",
                serde_json::json!({"f:data": {"f:a": {}}}),
            ),
            entry("helm", "Apply", serde_json::json!({"f:data": {"f:b": {}}})),
        ];
        let out = hand_over(&entries, FIELD_MANAGER, HELM_MANAGER).unwrap();
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0], entries[0], "other managers keep theirs");
        assert_eq!(out[1]["manager"], "helm");
        assert_eq!(out[1]["operation"], "Apply");
        assert_eq!(
            out[1]["fieldsV1"],
            serde_json::json!({"f:data": {"f:a": {}, "f:b": {}}})
        );
        assert!(hand_over(&out, FIELD_MANAGER, HELM_MANAGER).is_none());
    }

    #[test]
    fn no_such_job_is_none_and_a_job_that_is_not_a_hook_still_runs() {
        let (on, off) = renders();
        assert!(plan(&on, &off, "t", "demo-initt", None).unwrap().is_none());
        let on = doc("Job", "plain-init", None);
        let plan = plan(&on, "", "t", "plain-init", None).unwrap().unwrap();
        assert!(plan.objects.is_empty());
        assert_eq!(plan.job.policies, [DeletePolicy::BeforeHookCreation]);
        assert!(super::plan("a: [", "", "t", "x", None).is_err());
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
