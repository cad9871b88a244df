//! CustomResourceDefinitions: reading the kinds a CRD defines, the status the API server gives
//! it (Established, NamesAccepted), and the strict unknown-field check its schema allows.

use serde_json::{Value, json};

use super::resources::CustomType;

/// One served version of a CRD: the kind it defines and that version's schema.
#[derive(Debug, Clone)]
pub struct Served {
    pub kind: CustomType,
    pub schema: Option<Value>,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// Validates a CRD as the apiextensions server does (the parts a chart can get wrong) and
/// returns its served versions. Errors are `field: message` causes for a 422.
pub fn served_versions(crd: &Value) -> Result<Vec<Served>, String> {
    let group = str_at(crd, "/spec/group");
    let plural = str_at(crd, "/spec/names/plural");
    let kind = str_at(crd, "/spec/names/kind");
    let name = str_at(crd, "/metadata/name");
    let mut causes = Vec::new();
    if group.is_empty() {
        causes.push("spec.group: Required value".to_string());
    }
    if plural.is_empty() {
        causes.push("spec.names.plural: Required value".to_string());
    }
    if kind.is_empty() {
        causes.push("spec.names.kind: Required value".to_string());
    }
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        causes.push(format!(
            "metadata.name: Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
        ));
    }
    let scope = str_at(crd, "/spec/scope");
    if !matches!(scope, "Namespaced" | "Cluster") {
        causes.push(format!(
            "spec.scope: Unsupported value: \"{scope}\": supported values: \"Cluster\", \"Namespaced\""
        ));
    }
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        causes.push("spec.versions: Invalid value: null: must have exactly one version marked as storage version".into());
    } else if versions.iter().filter(|v| v["storage"] == true).count() != 1 {
        causes.push(
            "spec.versions: Invalid value: must have exactly one version marked as storage version"
                .into(),
        );
    }
    if !causes.is_empty() {
        return Err(causes.join("; "));
    }
    let singular = match str_at(crd, "/spec/names/singular") {
        "" => kind.to_lowercase(),
        s => s.to_string(),
    };
    Ok(versions
        .iter()
        .filter(|v| v["served"] == true)
        .map(|v| {
            let mut subresources = Vec::new();
            if v.pointer("/subresources/status").is_some() {
                subresources.push("status");
            }
            if v.pointer("/subresources/scale").is_some() {
                subresources.push("scale");
            }
            Served {
                kind: CustomType {
                    group: group.into(),
                    version: str_at(v, "/name").into(),
                    plural: plural.into(),
                    singular: singular.clone(),
                    kind: kind.into(),
                    namespaced: scope == "Namespaced",
                    short_names: strings(crd, "/spec/names/shortNames"),
                    categories: strings(crd, "/spec/names/categories"),
                    subresources,
                },
                schema: v.pointer("/schema/openAPIV3Schema").cloned(),
            }
        })
        .collect())
}

/// The status the apiextensions controllers give an accepted CRD, at once (helm polls for
/// `Established` after installing `crds/`).
pub fn accepted_status(crd: &Value, now: &str) -> Value {
    let mut names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    if names.get("singular").is_none() {
        names["singular"] = json!(str_at(crd, "/spec/names/kind").to_lowercase());
    }
    let stored: Vec<&str> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["storage"] == true)
        .filter_map(|v| v["name"].as_str())
        .collect();
    let cond = |t: &str, reason: &str, message: &str| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message});
    json!({
        "conditions": [
            cond("NamesAccepted", "NoConflicts", "no conflicts found"),
            cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ],
        "acceptedNames": names,
        "storedVersions": stored,
    })
}

/// Fields of `obj` its schema does not declare, as `.spec.foo` paths. `apiVersion`, `kind` and
/// `metadata` are always known; `x-kubernetes-preserve-unknown-fields` and
/// `additionalProperties` open a subtree.
pub fn unknown_fields(schema: &Value, obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, obj, "", true, &mut out);
    out
}

fn walk(schema: &Value, obj: &Value, path: &str, top: bool, out: &mut Vec<String>) {
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return;
    }
    match obj {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (k, v) in map {
                if top && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child = format!("{path}.{k}");
                match (props.and_then(|p| p.get(k)), additional) {
                    (Some(s), _) => walk(s, v, &child, false, out),
                    (None, Some(Value::Bool(false)) | None) => {
                        // A schema with neither properties nor additionalProperties says
                        // nothing about its fields; only a declared set is closed.
                        if props.is_some() {
                            out.push(child);
                        }
                    }
                    (None, Some(s)) => walk(s, v, &child, false, out),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(s, v, &format!("{path}[{i}]"), false, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn widget_crd() -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"size": {"type": "integer"},
                            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                        "status": {"type": "object"}}}}},
                    {"name": "v1beta1", "served": false, "storage": false}]}})
    }

    #[test]
    fn served_versions_read_names_scope_and_subresources() {
        let v = served_versions(&widget_crd()).unwrap();
        assert_eq!(v.len(), 1, "v1beta1 is not served");
        let k = &v[0].kind;
        assert_eq!(
            (k.group.as_str(), k.version.as_str()),
            ("example.com", "v1")
        );
        assert_eq!((k.singular.as_str(), k.namespaced), ("widget", true));
        assert_eq!(k.short_names, vec!["wd"]);
        assert_eq!(k.subresources, vec!["status"]);
        assert!(v[0].schema.is_some());
    }

    #[test]
    fn a_crd_named_otherwise_than_plural_dot_group_is_invalid() {
        let mut crd = widget_crd();
        crd["metadata"]["name"] = json!("widgets");
        let err = served_versions(&crd).unwrap_err();
        assert!(err.starts_with("metadata.name: Invalid value"), "{err}");
        let mut crd = widget_crd();
        crd["spec"]["versions"][0]["storage"] = json!(false);
        assert!(
            served_versions(&crd)
                .unwrap_err()
                .contains("storage version")
        );
    }

    #[test]
    fn status_is_established_with_accepted_names() {
        let s = accepted_status(&widget_crd(), "2026-01-01T00:00:00Z");
        let types: Vec<&str> = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "True")
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, vec!["NamesAccepted", "Established"]);
        assert_eq!(s["acceptedNames"]["singular"], "widget");
        assert_eq!(s["storedVersions"], json!(["v1"]));
    }

    #[test]
    fn unknown_fields_only_where_the_schema_closes_the_set() {
        let schema = &served_versions(&widget_crd()).unwrap()[0]
            .schema
            .clone()
            .unwrap();
        let ok = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"},
            "spec": {"size": 1, "labels": {"any": "x"}, "extra": {"deep": {"x": 1}}}});
        assert!(unknown_fields(schema, &ok).is_empty());
        let bad = json!({"spec": {"size": 1, "colour": "red"}, "oops": 1});
        assert_eq!(unknown_fields(schema, &bad), vec![".oops", ".spec.colour"]);
    }
}
