//! Patch formats: JSON merge patch (RFC 7386, also used for server-side apply here), an
//! approximation of strategic merge patch, and JSON patch (RFC 6902).
//!
//! The two RFC formats come from the `json-patch` crate (the one kube uses). Strategic merge
//! stays hand-written: its rules are not a standard but Go struct tags on each Kubernetes type
//! (`patchStrategy`, `patchMergeKey`) that only apimachinery reads. Neither json-patch nor kube
//! applies it (kube only sends it to a server), so this keeps the one rule that the clients
//! here rely on: lists of named objects merge by `name`.

use serde_json::{Map, Value};

/// RFC 7386: objects merge key by key, `null` deletes, anything else replaces.
pub use json_patch::merge;

/// Strategic merge patch as far as clients here need it: like [`merge`], but lists of
/// objects that all carry `name` merge element by element, and `$`-directives are dropped.
pub fn strategic_merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let target_map = target.as_object_mut().expect("made an object above");
    for (k, v) in patch_map {
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            target_map.remove(k);
            continue;
        }
        let slot = target_map.entry(k.clone()).or_insert(Value::Null);
        match (slot.as_array_mut(), v.as_array()) {
            (Some(old), Some(new)) if named(old) && named(new) => {
                let mut merged = Vec::with_capacity(new.len());
                for item in new {
                    let name = &item["name"];
                    let mut base = old
                        .iter()
                        .find(|o| &o["name"] == name)
                        .cloned()
                        .unwrap_or(Value::Null);
                    strategic_merge(&mut base, item);
                    merged.push(base);
                }
                *slot = Value::Array(merged);
            }
            _ => strategic_merge(slot, v),
        }
    }
}

fn named(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("name").is_some_and(Value::is_string))
}

/// RFC 6902 JSON patch (add, remove, replace, test, move, copy). Atomic: on an error the
/// target is left as it was.
pub fn json_patch(target: &mut Value, ops: &Value) -> Result<(), String> {
    let ops: json_patch::Patch = serde_json::from_value(ops.clone())
        .map_err(|e| format!("not a JSON patch (an array of operations): {e}"))?;
    json_patch::patch(target, &ops).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_rfc7386() {
        let mut t = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        merge(&mut t, &json!({"a": "z", "c": {"f": null}, "l": [3]}));
        assert_eq!(t, json!({"a": "z", "c": {"d": "e"}, "l": [3]}));
    }

    #[test]
    fn strategic_merge_merges_named_lists() {
        let mut t = json!({"spec": {"containers": [{"name": "web", "image": "a:1", "ports": [{"containerPort": 80}]}]}});
        strategic_merge(
            &mut t,
            &json!({"$setElementOrder/containers": [{"name": "web"}],
            "spec": {"containers": [{"name": "web", "image": "a:2"}]}}),
        );
        assert_eq!(t["spec"]["containers"][0]["image"], "a:2");
        assert_eq!(t["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
        assert!(t.get("$setElementOrder/containers").is_none());
    }

    #[test]
    fn json_patch_ops() {
        let mut t = json!({"a": [1, 2], "b": {"c": 1}});
        json_patch(
            &mut t,
            &json!([{"op": "add", "path": "/a/-", "value": 3},
            {"op": "replace", "path": "/b/c", "value": 2}, {"op": "remove", "path": "/a/0"},
            {"op": "test", "path": "/b/c", "value": 2}]),
        )
        .unwrap();
        assert_eq!(t, json!({"a": [2, 3], "b": {"c": 2}}));
        assert!(json_patch(&mut t, &json!([{"op": "remove", "path": "/nope"}])).is_err());
        assert!(json_patch(&mut t, &json!({"op": "add"})).is_err());
    }

    #[test]
    fn json_patch_moves_copies_escapes_and_is_atomic() {
        let mut t = json!({"metadata": {"annotations": {"a/b": "1", "c~d": "2"}}, "l": [1]});
        json_patch(
            &mut t,
            &json!([{"op": "copy", "from": "/metadata/annotations/a~1b", "path": "/x"},
            {"op": "move", "from": "/metadata/annotations/c~0d", "path": "/l/0"}]),
        )
        .unwrap();
        assert_eq!(
            t,
            json!({"metadata": {"annotations": {"a/b": "1"}}, "l": ["2", 1], "x": "1"})
        );
        let before = t.clone();
        let failing =
            json!([{"op": "remove", "path": "/x"}, {"op": "test", "path": "/l/0", "value": 9}]);
        assert!(json_patch(&mut t, &failing).is_err());
        assert_eq!(t, before, "a failed patch changes nothing");
    }
}
