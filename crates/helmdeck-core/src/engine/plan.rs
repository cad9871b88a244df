//! The plan: what `helm upgrade` would change, object by object. A pure function of the
//! release's current manifest, the manifest helm rendered with `--dry-run=server`, and the
//! live objects whose immutable fields matter. Hooks are not in either manifest (helm keeps
//! them apart), so they are left out by construction.

use std::collections::BTreeMap;

use serde_json::Value;

pub use crate::engine::model::plan::{Change, MASK, MASK_CHANGED, ObjectKey, Plan, PlanObject};

#[derive(Debug, thiserror::Error)]
#[error("the {which} manifest is not readable YAML: {message}")]
pub struct ManifestError {
    pub which: &'static str,
    pub message: String,
}

/// The objects of a manifest by key. `which` names the manifest in an error.
pub fn parse(
    manifest: &str,
    namespace: &str,
    which: &'static str,
) -> Result<BTreeMap<ObjectKey, Value>, ManifestError> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(manifest).map_err(|e| ManifestError {
        which,
        // The parser quotes the document, which may be a Secret.
        message: crate::text::file_error(&e.to_string()),
    })?;
    let mut out = BTreeMap::new();
    for doc in docs {
        if let Some(key) = key_of(&doc, namespace) {
            out.insert(key, doc);
        }
    }
    Ok(out)
}

fn key_of(doc: &Value, namespace: &str) -> Option<ObjectKey> {
    let text = |p: &str| doc.pointer(p).and_then(Value::as_str).map(str::to_string);
    let ns = text("/metadata/namespace")
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| namespace.to_string());
    Some((
        text("/apiVersion")?,
        text("/kind")?,
        ns,
        text("/metadata/name")?,
    ))
}

/// Compares the current revision's objects (`old`; `None` on a first install) with what
/// helm rendered (`new`). `live` holds the live objects the refusal rules read.
pub fn compare(
    old: Option<&BTreeMap<ObjectKey, Value>>,
    new: &BTreeMap<ObjectKey, Value>,
    live: &BTreeMap<ObjectKey, Value>,
) -> Plan {
    let empty = BTreeMap::new();
    let before = old.unwrap_or(&empty);
    let mut plan = Plan {
        first_install: old.is_none(),
        ..Plan::default()
    };
    for (key, rendered) in new {
        match before.get(key) {
            None => plan
                .objects
                .push(object(key, Change::Added, None, Some(rendered), live)),
            Some(current) if current == rendered => plan.unchanged += 1,
            Some(current) => plan.objects.push(object(
                key,
                Change::Changed,
                Some(current),
                Some(rendered),
                live,
            )),
        }
    }
    for (key, current) in before {
        if !new.contains_key(key) {
            plan.objects
                .push(object(key, Change::Removed, Some(current), None, live));
        }
    }
    plan.objects.sort_by(|a, b| {
        (&a.kind, &a.namespace, &a.name, &a.api_version).cmp(&(
            &b.kind,
            &b.namespace,
            &b.name,
            &b.api_version,
        ))
    });
    plan
}

fn object(
    key: &ObjectKey,
    change: Change,
    old: Option<&Value>,
    new: Option<&Value>,
    live: &BTreeMap<ObjectKey, Value>,
) -> PlanObject {
    let (api_version, kind, namespace, name) = key.clone();
    let (will_roll, refused) = match (old, new) {
        (Some(old), Some(new)) => (
            will_roll(&kind, old, new),
            refusal(&kind, old, new, live.get(key)),
        ),
        _ => (false, None),
    };
    PlanObject {
        diff: diff(key, old, new),
        api_version,
        kind,
        namespace,
        name,
        change,
        will_roll,
        refused,
        note: None,
    }
}

/// Workloads replace their pods when the pod template changes.
fn will_roll(kind: &str, old: &Value, new: &Value) -> bool {
    matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet")
        && old.pointer("/spec/template") != new.pointer("/spec/template")
}

/// Why the API server will refuse the update, when a field it holds immutable would change.
/// Template-like fields (volumeClaimTemplates, a Job's template) gain defaults on the server,
/// so they are compared between the manifests, and refused only when the live object exists;
/// a selector and a clusterIP have no defaults and are compared with the live object itself.
fn refusal(kind: &str, old: &Value, new: &Value, live: Option<&Value>) -> Option<String> {
    let live = live?;
    let differs_from_live = |path: &str| {
        let rendered = new.pointer(path);
        rendered.is_some() && rendered != live.pointer(path)
    };
    let changed = |path: &str| old.pointer(path) != new.pointer(path);
    match kind {
        "StatefulSet" if changed("/spec/volumeClaimTemplates") => {
            Some("StatefulSet spec.volumeClaimTemplates is immutable".into())
        }
        "StatefulSet" | "Deployment" | "DaemonSet" if differs_from_live("/spec/selector") => {
            Some(format!("{kind} spec.selector is immutable"))
        }
        "Service" => {
            let rendered = new.pointer("/spec/clusterIP").and_then(Value::as_str)?;
            let current = live.pointer("/spec/clusterIP").and_then(Value::as_str);
            (!rendered.is_empty() && current.is_some_and(|c| c != rendered))
                .then(|| "Service spec.clusterIP is immutable".into())
        }
        "Job" if changed("/spec/template") => Some("Job spec.template is immutable".into()),
        _ => None,
    }
}

/// The object as a diff shows it: YAML with sorted keys, Secret values masked. `other` is the
/// other side of the diff: a Secret value that differs from it is shown as changed.
fn shown(value: &Value, other: Option<&Value>, new_side: bool) -> String {
    let mut value = value.clone();
    if value.get("kind").and_then(Value::as_str) == Some("Secret") {
        for field in ["data", "stringData"] {
            let theirs = other.and_then(|o| o.get(field));
            match value.get_mut(field) {
                Some(Value::Object(map)) => {
                    for (k, v) in map.iter_mut() {
                        let differs = theirs.and_then(|t| t.get(k)).is_some_and(|t| t != v);
                        let mask = if differs && new_side {
                            MASK_CHANGED
                        } else {
                            MASK
                        };
                        *v = Value::String(mask.into());
                    }
                }
                Some(Value::Null) | None => {}
                Some(other) => *other = Value::String(MASK.into()),
            }
        }
    }
    let yaml = serde_saphyr::to_string(&value).unwrap_or_else(|_| "# (not shown)\n".into());
    yaml.lines()
        .map(|l| format!("{}\n", crate::text::plain(l)))
        .collect()
}

fn diff(key: &ObjectKey, old: Option<&Value>, new: Option<&Value>) -> String {
    let before = old.map(|o| shown(o, new, false)).unwrap_or_default();
    let after = new.map(|n| shown(n, old, true)).unwrap_or_default();
    let label = crate::text::plain(&format!("{}/{}/{}", key.1, key.2, key.3));
    similar::TextDiff::from_lines(&before, &after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{label}"), &format!("b/{label}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: 'web:1'}]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gone}
data: {a: '1'}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: same}
data: {a: '1'}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}}
  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}]
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: old-hunter2, user: admin}
";

    fn objects(text: &str) -> BTreeMap<ObjectKey, Value> {
        parse(text, "ns", "test").expect("valid YAML")
    }

    fn key(api: &str, kind: &str, name: &str) -> ObjectKey {
        (api.into(), kind.into(), "ns".into(), name.into())
    }

    fn find<'a>(plan: &'a Plan, name: &str) -> &'a PlanObject {
        plan.objects
            .iter()
            .find(|o| o.name == name)
            .unwrap_or_else(|| panic!("{name} not in {plan:?}"))
    }

    fn live_of(map: &BTreeMap<ObjectKey, Value>) -> BTreeMap<ObjectKey, Value> {
        map.clone()
    }

    #[test]
    fn added_removed_changed_and_unchanged_are_told_apart() {
        let old = objects(OLD);
        let new_text = OLD
            .replace("name: gone", "name: fresh")
            .replace("'web:1'", "'web:2'");
        let new = objects(&new_text);
        let plan = compare(Some(&old), &new, &BTreeMap::new());
        assert_eq!(find(&plan, "fresh").change, Change::Added);
        assert_eq!(find(&plan, "gone").change, Change::Removed);
        assert_eq!(find(&plan, "web").change, Change::Changed);
        assert!(plan.objects.iter().all(|o| o.name != "same"));
        assert_eq!(plan.unchanged, 3, "same, db, creds");
        assert!(!plan.first_install);
        assert_eq!(
            plan.summary(),
            "1 added, 1 removed, 1 changed (1 will roll), 3 unchanged"
        );
    }

    #[test]
    fn a_first_install_adds_everything() {
        let new = objects(OLD);
        let plan = compare(None, &new, &BTreeMap::new());
        assert!(plan.first_install);
        assert_eq!(plan.count(Change::Added), 5);
        assert!(
            plan.objects
                .iter()
                .all(|o| !o.will_roll && o.refused.is_none())
        );
    }

    #[test]
    fn a_pod_template_change_rolls_and_a_label_change_elsewhere_does_not() {
        let old = objects(OLD);
        let new = objects(&OLD.replace("'web:1'", "'web:2'"));
        let plan = compare(Some(&old), &new, &BTreeMap::new());
        let web = find(&plan, "web");
        assert!(web.will_roll);
        assert!(web.diff.contains("-      - image: web:1"), "{}", web.diff);
        assert!(web.diff.contains("+      - image: web:2"), "{}", web.diff);
        // A ConfigMap never rolls, even when it changes.
        let new = objects(&OLD.replace(
            "data: {a: '1'}\n---\napiVersion: apps/v1",
            "data: {a: '2'}\n---\napiVersion: apps/v1",
        ));
        let plan = compare(Some(&old), &new, &BTreeMap::new());
        assert!(!find(&plan, "same").will_roll);
    }

    #[test]
    fn volume_claim_templates_change_is_refused_only_when_the_object_is_live() {
        let old = objects(OLD);
        let new = objects(&OLD.replace("storage: 1Gi", "storage: 5Gi"));
        let plan = compare(Some(&old), &new, &BTreeMap::new());
        assert_eq!(
            find(&plan, "db").refused,
            None,
            "no live object, nothing to refuse"
        );
        let plan = compare(Some(&old), &new, &live_of(&old));
        assert_eq!(
            find(&plan, "db").refused.as_deref(),
            Some("StatefulSet spec.volumeClaimTemplates is immutable")
        );
        assert!(!find(&plan, "db").will_roll, "the pod template is the same");
    }

    #[test]
    fn a_selector_is_compared_with_the_live_object() {
        let old = objects(OLD);
        let new = objects(&OLD.replace("matchLabels: {app: web}", "matchLabels: {app: web2}"));
        let live = live_of(&old);
        let plan = compare(Some(&old), &new, &live);
        assert_eq!(
            find(&plan, "web").refused.as_deref(),
            Some("Deployment spec.selector is immutable")
        );
        // The same selector as live (the old manifest differs, the cluster does not): no refusal.
        let mut live = live_of(&new);
        live.remove(&key("v1", "Secret", "creds"));
        let plan = compare(Some(&old), &new, &live);
        assert_eq!(find(&plan, "web").refused, None);
    }

    #[test]
    fn a_service_cluster_ip_differing_from_the_live_one_is_refused() {
        let svc = |ip: &str| {
            format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\nspec: {{clusterIP: '{ip}', ports: [{{port: 80}}]}}\n"
            )
        };
        let old = objects(&svc(""));
        let new = objects(&svc("10.0.0.9"));
        let mut live = BTreeMap::new();
        let live_svc = objects(&svc("10.0.0.5"));
        live.extend(live_svc);
        let plan = compare(Some(&old), &new, &live);
        assert_eq!(
            find(&plan, "s").refused.as_deref(),
            Some("Service spec.clusterIP is immutable")
        );
        // The one the cluster assigned, or none rendered: helm keeps it, nothing refused.
        let plan = compare(Some(&old), &objects(&svc("10.0.0.5")), &live);
        assert_eq!(find(&plan, "s").refused, None);
        let plan = compare(Some(&objects(&svc("1.1.1.1"))), &old, &live);
        assert_eq!(find(&plan, "s").refused, None);
    }

    #[test]
    fn a_job_template_change_is_refused() {
        let job = |image: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec: {{template: {{spec: {{containers: [{{name: c, image: {image}}}]}}}}}}\n"
            )
        };
        let old = objects(&job("a"));
        let new = objects(&job("b"));
        let plan = compare(Some(&old), &new, &live_of(&old));
        assert_eq!(
            find(&plan, "j").refused.as_deref(),
            Some("Job spec.template is immutable")
        );
        assert!(!find(&plan, "j").will_roll, "a Job does not roll");
    }

    #[test]
    fn secret_values_never_appear_in_a_diff_but_their_change_does() {
        let old = objects(OLD);
        let new = objects(&OLD.replace("old-hunter2", "new-hunter3"));
        let plan = compare(Some(&old), &new, &BTreeMap::new());
        let creds = find(&plan, "creds");
        assert_eq!(creds.change, Change::Changed);
        assert!(!creds.diff.contains("hunter"), "{}", creds.diff);
        assert!(
            creds.diff.contains("+  password: '*** (changed)'")
                || creds.diff.contains("+  password: \"*** (changed)\""),
            "{}",
            creds.diff
        );
        assert!(
            !creds.diff.contains("+  user"),
            "unchanged values stay context: {}",
            creds.diff
        );
        // An added Secret is masked too.
        let plan = compare(None, &new, &BTreeMap::new());
        assert!(!find(&plan, "creds").diff.contains("hunter"));
    }

    #[test]
    fn objects_are_keyed_by_api_version_kind_namespace_and_name() {
        let a = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
        let b = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: other}\n";
        let plan = compare(Some(&objects(a)), &objects(b), &BTreeMap::new());
        assert_eq!(plan.count(Change::Added), 1);
        assert_eq!(plan.count(Change::Removed), 1);
        let explicit = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n";
        let plan = compare(Some(&objects(a)), &objects(explicit), &BTreeMap::new());
        // No namespace is the release's: the same object, only its text changed.
        assert_eq!(plan.count(Change::Changed), 1, "{plan:?}");
        assert_eq!(plan.objects.len(), 1, "{plan:?}");
    }

    #[test]
    fn an_unreadable_manifest_is_an_error_that_quotes_no_value() {
        let err = parse("a: \"s3cret\n  b: [", "ns", "rendered").expect_err("invalid");
        assert!(
            err.to_string().starts_with("the rendered manifest"),
            "{err}"
        );
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }
}
