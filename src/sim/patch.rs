//! Patch formats: JSON merge patch (RFC 7386, also used for server-side apply here), an
//! approximation of strategic merge patch, and JSON patch (RFC 6902).

use serde_json::{Map, Value};

/// RFC 7386: objects merge key by key, `null` deletes, anything else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let target_map = target.as_object_mut().expect("made an object above");
    for (k, v) in patch_map {
        if v.is_null() {
            target_map.remove(k);
        } else {
            merge(target_map.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

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

/// RFC 6902 JSON patch (add, remove, replace, test; move and copy too).
pub fn json_patch(target: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("a JSON patch must be an array of operations")?;
    for op in ops {
        let kind = op["op"].as_str().ok_or("operation without \"op\"")?;
        let path = op["path"].as_str().ok_or("operation without \"path\"")?;
        match kind {
            "add" => add(target, path, op["value"].clone())?,
            "remove" => {
                remove(target, path)?;
            }
            "replace" => {
                remove(target, path)?;
                add(target, path, op["value"].clone())?;
            }
            "test" => {
                if target.pointer(path) != Some(&op["value"]) {
                    return Err(format!("test failed at {path}"));
                }
            }
            "move" | "copy" => {
                let from = op["from"].as_str().ok_or("move/copy without \"from\"")?;
                let value = if kind == "move" {
                    remove(target, from)?
                } else {
                    target
                        .pointer(from)
                        .cloned()
                        .ok_or_else(|| format!("no value at {from}"))?
                };
                add(target, path, value)?;
            }
            other => return Err(format!("unknown JSON patch op {other:?}")),
        }
    }
    Ok(())
}

fn split(path: &str) -> Result<(&str, String), String> {
    let i = path
        .rfind('/')
        .ok_or_else(|| format!("bad path {path:?}"))?;
    Ok((
        &path[..i],
        path[i + 1..].replace("~1", "/").replace("~0", "~"),
    ))
}

fn add(target: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    let (parent, key) = split(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(key, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let i = if key == "-" {
                a.len()
            } else {
                key.parse().map_err(|_| format!("bad index in {path}"))?
            };
            if i > a.len() {
                return Err(format!("index out of range in {path}"));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!("no parent for {path}")),
    }
}

fn remove(target: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, key) = split(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(&key).ok_or_else(|| format!("no value at {path}")),
        Some(Value::Array(a)) => {
            let i: usize = key.parse().map_err(|_| format!("bad index in {path}"))?;
            if i >= a.len() {
                return Err(format!("index out of range in {path}"));
            }
            Ok(a.remove(i))
        }
        _ => Err(format!("no value at {path}")),
    }
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
}
