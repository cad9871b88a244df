//! Field ownership as server-side apply keeps it: `metadata.managedFields`, one entry per
//! manager and operation, each a FieldsV1 set (`{"f:spec": {"f:replicas": {}}}`).
//!
//! What is modelled: an apply conflicts on a field another manager owns when it would change
//! its value (409, unless forced, which takes the field over); a field an applier stops
//! applying is removed when no one else owns it; create, update and the non-apply patches
//! record the fields they set under their manager's `Update` entry and take those fields from
//! everyone else. Lists of objects that all carry `name` are keyed by it (`k:{"name":"c"}`),
//! as the API's common associative lists are; every other list is atomic.
//!
//! Only objects written through the HTTP API with a field manager get entries: what the
//! simulator's own controllers write (pods, ReplicaSets, Events) carries none.

use serde_json::{Map, Value, json};

use crate::api_error::ApiError;

/// Top-level fields no manager owns: identity and server-set metadata, and the status a main
/// write never touches.
const SERVER_METADATA: [&str; 9] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "managedFields",
    "selfLink",
];

/// A path in a field set: its FieldsV1 keys (`f:spec`, `k:{"name":"c"}`).
type Path = Vec<String>;

/// The FieldsV1 set of every field an object sets.
pub fn field_set(obj: &Value) -> Map<String, Value> {
    let mut set = Map::new();
    let Some(map) = obj.as_object() else {
        return set;
    };
    for (k, v) in map {
        match k.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                let mut meta = Map::new();
                for (mk, mv) in v.as_object().into_iter().flatten() {
                    if !SERVER_METADATA.contains(&mk.as_str()) {
                        meta.insert(format!("f:{mk}"), Value::Object(node(mv)));
                    }
                }
                if !meta.is_empty() {
                    set.insert("f:metadata".into(), Value::Object(meta));
                }
            }
            _ => {
                set.insert(format!("f:{k}"), Value::Object(node(v)));
            }
        }
    }
    set
}

/// The set under one value: its fields, its keyed list items, or nothing (a leaf).
fn node(v: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                out.insert(format!("f:{k}"), Value::Object(node(x)));
            }
        }
        Value::Array(items) if keyed(items) => {
            for item in items {
                let mut child = node(item);
                child.insert(".".into(), json!({}));
                out.insert(item_key(item), Value::Object(child));
            }
        }
        _ => {}
    }
    out
}

/// Whether a list merges by `name` (an associative list) rather than as a whole.
fn keyed(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("name").is_some_and(Value::is_string))
}

fn item_key(item: &Value) -> String {
    format!("k:{}", json!({"name": item["name"]}))
}

/// Every leaf path of a set (a `.` marks its keyed item as a leaf of its own).
fn leaves(set: &Map<String, Value>) -> Vec<Path> {
    let mut out = Vec::new();
    walk(set, &mut Vec::new(), &mut out);
    out
}

fn walk(set: &Map<String, Value>, prefix: &mut Path, out: &mut Vec<Path>) {
    for (k, v) in set {
        if k == "." {
            continue;
        }
        prefix.push(k.clone());
        match v.as_object() {
            Some(children) if !children.is_empty() => walk(children, prefix, out),
            _ => out.push(prefix.clone()),
        }
        prefix.pop();
    }
}

/// Whether `set` holds `path` (as a leaf or above one).
fn contains(set: &Map<String, Value>, path: &[String]) -> bool {
    let mut cur = set;
    for k in path {
        match cur.get(k).and_then(Value::as_object) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    true
}

fn insert(set: &mut Map<String, Value>, path: &[String]) {
    let mut cur = set;
    for k in path {
        let next = cur.entry(k.clone()).or_insert_with(|| json!({}));
        if !next.is_object() {
            *next = json!({});
        }
        cur = next.as_object_mut().expect("made an object above");
    }
}

/// Removes `path` and every node it leaves empty above it.
fn remove(set: &mut Map<String, Value>, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        set.remove(first);
        return;
    }
    if let Some(child) = set.get_mut(first).and_then(Value::as_object_mut) {
        remove(child, rest);
        if child.is_empty() || child.len() == 1 && child.contains_key(".") {
            set.remove(first);
        }
    }
}

/// The value at a set path in an object, if it has one.
fn value_at<'a>(obj: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut cur = obj;
    for k in path {
        cur = if let Some(field) = k.strip_prefix("f:") {
            cur.get(field)?
        } else if let Some(key) = k.strip_prefix("k:") {
            let key: Value = serde_json::from_str(key).ok()?;
            cur.as_array()?.iter().find(|i| i["name"] == key["name"])?
        } else {
            return None;
        };
    }
    Some(cur)
}

/// Removes the field (or keyed list item) at a set path from an object.
fn remove_value(obj: &mut Value, path: &[String]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    let mut cur = obj;
    for k in parent {
        let next = if let Some(field) = k.strip_prefix("f:") {
            cur.get_mut(field)
        } else if let Some(key) = k.strip_prefix("k:") {
            let Ok(key) = serde_json::from_str::<Value>(key) else {
                return;
            };
            cur.as_array_mut()
                .and_then(|items| items.iter_mut().find(|i| i["name"] == key["name"]))
        } else {
            None
        };
        let Some(next) = next else { return };
        cur = next;
    }
    if let Some(field) = last.strip_prefix("f:") {
        if let Some(map) = cur.as_object_mut() {
            map.remove(field);
        }
    } else if let Some(key) = last.strip_prefix("k:")
        && let Ok(key) = serde_json::from_str::<Value>(key)
        && let Some(items) = cur.as_array_mut()
    {
        items.retain(|i| i["name"] != key["name"]);
    }
}

/// A path as the API server prints it: `.spec.template.spec.containers[name="c"].image`.
fn show(path: &[String]) -> String {
    let mut out = String::new();
    for k in path {
        if let Some(field) = k.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(key) = k.strip_prefix("k:")
            && let Ok(Value::Object(key)) = serde_json::from_str::<Value>(key)
        {
            let parts: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        }
    }
    out
}

/// One `managedFields` entry.
struct Entry {
    manager: String,
    operation: String,
    /// `scale` for a write through `/scale`.
    subresource: Option<String>,
    api_version: String,
    time: Option<String>,
    set: Map<String, Value>,
}

impl Entry {
    fn parse(v: &Value) -> Option<Entry> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        Some(Entry {
            manager: text("manager")?,
            operation: text("operation")?,
            subresource: text("subresource"),
            api_version: text("apiVersion").unwrap_or_default(),
            time: text("time"),
            set: v.get("fieldsV1")?.as_object()?.clone(),
        })
    }

    fn to_json(&self) -> Value {
        let mut v = json!({"manager": self.manager, "operation": self.operation,
            "apiVersion": self.api_version, "fieldsType": "FieldsV1", "fieldsV1": self.set});
        if let Some(t) = &self.time {
            v["time"] = json!(t);
        }
        if let Some(sub) = &self.subresource {
            v["subresource"] = json!(sub);
        }
        v
    }

    /// The manager as a conflict names it (`printManager` in k8s.io/apiserver).
    fn describe(&self) -> String {
        let mut who = format!("{:?}", self.manager);
        if let Some(sub) = &self.subresource {
            who.push_str(&format!(" with subresource {sub:?}"));
        }
        match (&*self.operation, &self.time) {
            ("Update", Some(t)) => format!("{who} using {} at {t}", self.api_version),
            _ => format!("{who} using {}", self.api_version),
        }
    }

    /// Whether this is the entry of `manager`'s `operation` on the main resource.
    fn is(&self, manager: &str, operation: &str) -> bool {
        self.manager == manager && self.operation == operation && self.subresource.is_none()
    }
}

fn entries_of(obj: &Value) -> Vec<Entry> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Entry::parse)
        .collect()
}

fn store_entries(obj: &mut Value, entries: Vec<Entry>) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.set.is_empty())
        .map(Entry::to_json)
        .collect();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// Who writes, as the request names it.
pub struct Writer<'a> {
    pub manager: &'a str,
    /// `scale` when the write came through `/scale`.
    pub subresource: Option<&'a str>,
    pub api_version: &'a str,
    pub now: &'a str,
}

/// Records a create: the manager owns every field it sent (`operation` is `Update` for a
/// POST, `Apply` for an apply that created the object).
pub fn record_create(obj: &mut Value, sent: &Value, w: &Writer<'_>, operation: &str) {
    let entry = Entry {
        manager: w.manager.into(),
        operation: operation.into(),
        subresource: None,
        api_version: w.api_version.into(),
        time: Some(w.now.into()),
        set: field_set(sent),
    };
    store_entries(obj, vec![entry]);
}

/// Records an update (PUT or a non-apply patch) from `old` to `new`: the manager's `Update`
/// entry gains every field whose value changed, which no one else owns any more; fields that
/// are gone leave every entry.
pub fn record_update(old: &Value, new: &mut Value, w: &Writer<'_>) {
    let mut entries = entries_of(old);
    let now_set = field_set(new);
    let changed: Vec<Path> = leaves(&now_set)
        .into_iter()
        .filter(|p| value_at(old, p) != value_at(new, p))
        .collect();
    let gone: Vec<Path> = leaves(&field_set(old))
        .into_iter()
        .filter(|p| !contains(&now_set, p))
        .collect();
    if changed.is_empty() && gone.is_empty() {
        store_entries(new, entries);
        return;
    }
    for e in &mut entries {
        for p in changed.iter().chain(&gone) {
            remove(&mut e.set, p);
        }
    }
    let subresource = w.subresource.map(String::from);
    let mine = |e: &Entry| {
        e.manager == w.manager && e.operation == "Update" && e.subresource == subresource
    };
    let at = match entries.iter().position(mine) {
        Some(i) => i,
        None => {
            entries.push(Entry {
                manager: w.manager.into(),
                operation: "Update".into(),
                subresource: subresource.clone(),
                api_version: w.api_version.into(),
                time: None,
                set: Map::new(),
            });
            entries.len() - 1
        }
    };
    let mine = &mut entries[at];
    mine.time = Some(w.now.into());
    mine.api_version = w.api_version.into();
    for p in &changed {
        insert(&mut mine.set, p);
    }
    store_entries(new, entries);
}

/// What a write that is not an apply asks of `managedFields` (`decodeManagedFields` in
/// k8s.io/apiserver): `[]` or `[{}]` clears them, and nothing is tracked after (the API does
/// not start tracking an object on an update); a list of valid entries replaces them; anything
/// else (absent, or an entry the API cannot decode) keeps the live ones, so a client unaware
/// of managedFields never drops them. Then [`record_update`] gives the writer what it changed.
pub fn record_write(old: &Value, new: &mut Value, asked: Option<&Value>, w: &Writer<'_>) {
    let Some(list) = asked.and_then(Value::as_array) else {
        return record_update(old, new, w);
    };
    let reset = list.is_empty() || (list.len() == 1 && list[0] == json!({}));
    if reset {
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        return;
    }
    let valid = |e: &Value| {
        matches!(e["operation"].as_str(), Some("Apply" | "Update"))
            && e["apiVersion"].as_str().is_some_and(|v| !v.is_empty())
            && e["fieldsType"] == "FieldsV1"
            && Entry::parse(e).is_some()
    };
    if !list.iter().all(valid) {
        return record_update(old, new, w);
    }
    let mut base = old.clone();
    base["metadata"]["managedFields"] = Value::Array(list.clone());
    record_update(&base, new, w);
}

/// A server-side apply of `applied` (nulls dropped) onto `live`: the merged object with its
/// new `managedFields`, or the 409 that lists every conflict when not forced.
pub fn apply(
    live: &Value,
    applied: &Value,
    w: &Writer<'_>,
    force: bool,
) -> Result<Value, ApiError> {
    let mut entries = entries_of(live);
    let new_set = field_set(applied);
    let mut conflicts: Vec<(String, Path)> = Vec::new();
    for p in leaves(&new_set) {
        let Some(have) = value_at(live, &p) else {
            continue;
        };
        if value_at(applied, &p) == Some(have) {
            continue;
        }
        for e in entries.iter_mut().filter(|e| !e.is(w.manager, "Apply")) {
            if contains(&e.set, &p) {
                if force {
                    remove(&mut e.set, &p);
                } else {
                    conflicts.push((e.describe(), p.clone()));
                }
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(conflict_error(&conflicts));
    }
    let mut merged = live.clone();
    crate::patch::strategic_merge(&mut merged, applied);
    let old_set = entries
        .iter()
        .find(|e| e.is(w.manager, "Apply"))
        .map(|e| e.set.clone())
        .unwrap_or_default();
    for p in leaves(&old_set) {
        let still_applied = contains(&new_set, &p);
        let owned_elsewhere = entries
            .iter()
            .any(|e| !e.is(w.manager, "Apply") && contains(&e.set, &p));
        if !still_applied && !owned_elsewhere {
            remove_value(&mut merged, &p);
        }
    }
    entries.retain(|e| !e.is(w.manager, "Apply"));
    entries.push(Entry {
        manager: w.manager.into(),
        operation: "Apply".into(),
        subresource: None,
        api_version: w.api_version.into(),
        time: Some(w.now.into()),
        set: new_set,
    });
    store_entries(&mut merged, entries);
    Ok(merged)
}

/// The API server's 409 for apply conflicts (`NewConflictError` in k8s.io/apiserver).
fn conflict_error(conflicts: &[(String, Path)]) -> ApiError {
    let message = if let [(manager, path)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {manager}: {}",
            show(path)
        )
    } else {
        let mut managers: Vec<&String> = conflicts.iter().map(|(m, _)| m).collect();
        managers.sort();
        managers.dedup();
        let mut lines = Vec::new();
        for m in managers {
            lines.push(format!("conflicts with {m}:"));
            for (_, p) in conflicts.iter().filter(|(cm, _)| cm == m) {
                lines.push(format!("- {}", show(p)));
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(m, p)| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"),
                "field": show(p)})
        })
        .collect();
    ApiError::apply_conflict(message, json!({"causes": causes}))
}

#[cfg(test)]
mod tests;
