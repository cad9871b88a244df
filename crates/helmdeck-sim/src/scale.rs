//! The `scale` subresource: an `autoscaling/v1 Scale` view of a workload's replica count, as
//! `kubectl scale` and autoscalers read and write it. Built-in kinds keep their replicas at
//! fixed places; a custom kind says where in its CRD (`subresources.scale`).

use serde_json::{Value, json};

use super::Store;
use super::api_error::ApiError;
use super::patch;
use super::resources::{self, ResourceId};
use super::selector::Selector;
use super::store::PatchKind;

/// Where the selector a Scale reports comes from.
#[derive(Debug, Clone, PartialEq)]
enum SelectorAt {
    /// A `LabelSelector` object (`matchLabels`, `matchExpressions`).
    LabelSelector(String),
    /// A plain label map (ReplicationController's `spec.selector`).
    Map(String),
    /// A string the custom resource keeps itself (`labelSelectorPath`).
    Text(String),
    Absent,
}

/// Where one kind keeps what its Scale shows, as JSON pointers.
#[derive(Debug, Clone, PartialEq)]
pub struct Paths {
    spec: String,
    status: String,
    selector: SelectorAt,
}

/// A CRD's `.spec.replicas` path as a JSON pointer (`/spec/replicas`); the API server allows
/// only dotted field names there, no indexes.
fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .map(|seg| format!("/{}", seg.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The scale paths of a kind this simulator serves with a `scale` subresource (`None` if it
/// has none, or its CRD is gone or declares no `specReplicasPath`).
pub fn paths(store: &Store, res: ResourceId) -> Option<Paths> {
    let rt = resources::get(res);
    if !rt.subresources.contains(&"scale") {
        return None;
    }
    if !resources::is_custom(res) {
        let selector = match rt.kind {
            "ReplicationController" => SelectorAt::Map("/spec/selector".into()),
            _ => SelectorAt::LabelSelector("/spec/selector".into()),
        };
        return Some(Paths {
            spec: "/spec/replicas".into(),
            status: "/status/replicas".into(),
            selector,
        });
    }
    let crd = store
        .get(*resources::ids::CRDS, None, &store.crd_of(res)?)
        .ok()?;
    let scale = crd
        .pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v["name"] == rt.version)?
        .pointer("/subresources/scale")?
        .clone();
    let text = |key: &str| {
        scale
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    Some(Paths {
        spec: pointer(text("specReplicasPath")?),
        status: pointer(text("statusReplicasPath").unwrap_or(".status.replicas")),
        selector: text("labelSelectorPath")
            .map_or(SelectorAt::Absent, |p| SelectorAt::Text(pointer(p))),
    })
}

/// The Scale of `obj`. Counts it does not have yet read 0, as the API server reads them.
pub fn scale_of(obj: &Value, paths: &Paths) -> Value {
    let count = |p: &str| obj.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    let selector = match &paths.selector {
        SelectorAt::LabelSelector(p) => obj
            .pointer(p)
            .map(|s| Selector::from_label_selector(s).to_text())
            .unwrap_or_default(),
        SelectorAt::Map(p) => obj
            .pointer(p)
            .map(|m| Selector::from_label_selector(&json!({"matchLabels": m})).to_text())
            .unwrap_or_default(),
        SelectorAt::Text(p) => obj
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        SelectorAt::Absent => String::new(),
    };
    let mut metadata = json!({});
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = obj["metadata"].get(field) {
            metadata[field] = v.clone();
        }
    }
    let mut status = json!({"replicas": count(&paths.status)});
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata,
        "spec": {"replicas": count(&paths.spec)}, "status": status})
}

/// The Scale a PATCH asks for: the current one with the patch applied. Scale is a built-in
/// type, so strategic merge is accepted even for a custom kind's Scale.
pub fn patched(current: &Value, kind: PatchKind, body: &Value) -> Result<Value, ApiError> {
    let mut out = current.clone();
    match kind {
        PatchKind::Apply | PatchKind::Merge => patch::merge(&mut out, body),
        PatchKind::Strategic => patch::strategic_merge(&mut out, body),
        PatchKind::Json => patch::json_patch(&mut out, body).map_err(ApiError::unprocessable)?,
    }
    Ok(out)
}

/// The replica count a written Scale asks for; an absent count is 0 (the field is not
/// optional in the type, as for a PUT of a Scale without one).
pub fn wanted_replicas(scale: &Value, name: &str) -> Result<i64, ApiError> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_i64()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "Scale in version \"v1\" cannot be handled as a Scale: spec.replicas: {v} is not an int32"
                ))
            })?,
    };
    if replicas < 0 {
        return Err(ApiError {
            code: 422,
            reason: "Invalid",
            message: format!(
                "Scale.autoscaling \"{name}\" is invalid: spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
            ),
            details: json!({"name": name, "group": "autoscaling", "kind": "Scale",
                "causes": [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                    "message": format!("Invalid value: {replicas}: must be greater than or equal to 0")}]}),
            list_continue: None,
        });
    }
    Ok(replicas)
}

/// `obj` with its desired replicas set to `replicas` (intermediate objects created).
pub fn with_replicas(obj: &Value, paths: &Paths, replicas: i64) -> Value {
    let mut out = obj.clone();
    let mut slot = &mut out;
    for seg in paths.spec.trim_start_matches('/').split('/') {
        let key = seg.replace("~1", "/").replace("~0", "~");
        if !slot.is_object() {
            *slot = json!({});
        }
        slot = slot
            .as_object_mut()
            .expect("made an object above")
            .entry(key)
            .or_insert(Value::Null);
    }
    *slot = json!(replicas);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deploy_paths() -> Paths {
        Paths {
            spec: "/spec/replicas".into(),
            status: "/status/replicas".into(),
            selector: SelectorAt::LabelSelector("/spec/selector".into()),
        }
    }

    #[test]
    fn a_scale_shows_counts_selector_and_only_identity_metadata() {
        let d = json!({"metadata": {"name": "web", "namespace": "apps", "uid": "u1",
            "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z",
            "generation": 3, "labels": {"a": "b"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"replicas": 1}});
        let s = scale_of(&d, &deploy_paths());
        assert_eq!(s["apiVersion"], "autoscaling/v1");
        assert_eq!(s["metadata"]["resourceVersion"], "7");
        assert!(s["metadata"].get("labels").is_none());
        assert!(s["metadata"].get("generation").is_none());
        assert_eq!(s["spec"]["replicas"], 2);
        assert_eq!(s["status"], json!({"replicas": 1, "selector": "app=web"}));
    }

    #[test]
    fn crd_paths_become_pointers_and_replicas_are_set_where_absent() {
        assert_eq!(pointer(".spec.size.count"), "/spec/size/count");
        let paths = Paths {
            spec: pointer(".spec.size.count"),
            status: pointer(".status.count"),
            selector: SelectorAt::Text(pointer(".status.selector")),
        };
        let cr = json!({"metadata": {"name": "w"}, "status": {"selector": "app=w"}});
        assert_eq!(
            scale_of(&cr, &paths)["status"],
            json!({"replicas": 0, "selector": "app=w"})
        );
        let set = with_replicas(&cr, &paths, 4);
        assert_eq!(set.pointer("/spec/size/count"), Some(&json!(4)));
        assert_eq!(scale_of(&set, &paths)["spec"]["replicas"], 4);
    }

    #[test]
    fn written_replicas_must_be_a_non_negative_int32() {
        let s = |r: Value| json!({"spec": {"replicas": r}});
        assert_eq!(wanted_replicas(&s(json!(3)), "w").unwrap(), 3);
        assert_eq!(wanted_replicas(&json!({}), "w").unwrap(), 0);
        assert_eq!(wanted_replicas(&s(json!(-1)), "w").unwrap_err().code, 422);
        assert_eq!(wanted_replicas(&s(json!("3")), "w").unwrap_err().code, 400);
        assert_eq!(
            wanted_replicas(&s(json!(1_i64 << 40)), "w")
                .unwrap_err()
                .code,
            400
        );
    }

    #[test]
    fn every_patch_format_changes_the_scale() {
        let cur =
            json!({"metadata": {"name": "w", "resourceVersion": "5"}, "spec": {"replicas": 1}});
        for (kind, body) in [
            (PatchKind::Merge, json!({"spec": {"replicas": 3}})),
            (PatchKind::Strategic, json!({"spec": {"replicas": 3}})),
            (PatchKind::Apply, json!({"spec": {"replicas": 3}})),
            (
                PatchKind::Json,
                json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]),
            ),
        ] {
            let out = patched(&cur, kind, &body).unwrap();
            assert_eq!(wanted_replicas(&out, "w").unwrap(), 3, "{kind:?}");
            assert_eq!(out["metadata"]["resourceVersion"], "5");
        }
    }
}
