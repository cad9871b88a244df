//! Structured release records and history rows: every field the parsers read, each either of
//! the right type (or absent, or null) or any JSON at all. Each value comes with whether it is
//! well typed, so a target can say "a well-typed record must parse".

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value};

use crate::inputs::{hostile_text, json_value};

/// A value and whether the parser must accept it.
pub type Typed = (Value, bool);

/// `right`, or any JSON (which the parser may refuse).
pub fn field(right: impl Strategy<Value = Value>) -> impl Strategy<Value = Typed> {
    prop_oneof![
        4 => right.prop_map(|v| (v, true)),
        1 => json_value().prop_map(|v| (v, false)),
    ]
}

fn string() -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), hostile_text().prop_map(Value::from),]
}

fn int() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        (-3i64..30).prop_map(Value::from),
    ]
}

fn strings() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        vec(hostile_text().prop_map(Value::from), 0..4).prop_map(Value::Array),
    ]
}

/// RFC 3339 times, Helm 3's `""`, and anything else a string may hold.
fn time() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from("")),
        "20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?Z"
            .prop_map(Value::from),
        string(),
    ]
}

fn phase() -> impl Strategy<Value = Value> {
    prop_oneof![
        select(&["", "Succeeded", "Failed", "Running", "Unknown"][..]).prop_map(Value::from),
        string(),
    ]
}

/// An object from optional fields; well typed when every present field is.
pub fn object(fields: Vec<(&'static str, Option<Typed>)>) -> Typed {
    let mut map = Map::new();
    let mut ok = true;
    for (key, value) in fields {
        if let Some((v, typed)) = value {
            ok &= typed;
            map.insert(key.to_string(), v);
        }
    }
    (Value::Object(map), ok)
}

/// A nested object as a field: absent, null, the object, or any JSON.
pub fn nested(inner: impl Strategy<Value = Typed>) -> impl Strategy<Value = Typed> {
    prop_oneof![
        1 => Just((Value::Null, true)),
        6 => inner,
        1 => json_value().prop_map(|v| (v, false)),
    ]
}

fn hook() -> impl Strategy<Value = Typed> {
    let last_run = (
        option::of(field(phase())),
        option::of(field(time())),
        option::of(field(time())),
    )
        .prop_map(|(p, s, c)| object(vec![("phase", p), ("started_at", s), ("completed_at", c)]));
    (
        option::of(field(string())),
        option::of(field(string())),
        option::of(field(string())),
        option::of(field(strings())),
        option::of(field(int())),
        option::of(nested(last_run)),
        option::of(field(strings())),
        option::of(json_value().prop_map(|v| (v, true))),
    )
        .prop_map(
            |(name, kind, path, events, weight, last_run, policies, manifest)| {
                object(vec![
                    ("name", name),
                    ("kind", kind),
                    ("path", path),
                    ("events", events),
                    ("weight", weight),
                    ("last_run", last_run),
                    ("delete_policies", policies),
                    // Not read by helmdeck: any value must do.
                    ("output_log_policies", manifest),
                ])
            },
        )
}

pub fn list_of(item: impl Strategy<Value = Typed>) -> impl Strategy<Value = Typed> {
    prop_oneof![
        1 => Just((Value::Null, true)),
        6 => vec(item, 0..4).prop_map(|items| {
            let ok = items.iter().all(|(_, t)| *t);
            (Value::Array(items.into_iter().map(|(v, _)| v).collect()), ok)
        }),
        1 => json_value().prop_map(|v| (v, false)),
    ]
}

/// A release as Helm stores it (and as `helm status -o json` prints it), fields possibly wrong.
pub fn release() -> impl Strategy<Value = Typed> {
    let info = (
        option::of(field(string())),
        option::of(field(string())),
        option::of(field(time())),
        option::of(field(time())),
        option::of(json_value().prop_map(|v| (v, true))),
    )
        .prop_map(|(status, description, first, last, notes)| {
            object(vec![
                ("status", status),
                ("description", description),
                ("first_deployed", first),
                ("last_deployed", last),
                ("notes", notes),
            ])
        });
    let metadata = (
        option::of(field(string())),
        option::of(field(string())),
        option::of(field(string())),
    )
        .prop_map(|(name, version, app)| {
            object(vec![
                ("name", name),
                ("version", version),
                ("appVersion", app),
            ])
        });
    let chart = (
        option::of(nested(metadata)),
        option::of(json_value().prop_map(|v| (v, true))),
    )
        .prop_map(|(metadata, templates)| {
            object(vec![("metadata", metadata), ("templates", templates)])
        });
    (
        (
            option::of(field(string())),
            option::of(field(string())),
            option::of(field(int())),
            option::of(nested(info)),
        ),
        (
            option::of(field(string())),
            option::of(list_of(hook())),
            option::of(nested(chart)),
            // The user's values: never read, any JSON must do.
            option::of(json_value().prop_map(|v| (v, true))),
        ),
    )
        .prop_map(
            |((name, namespace, version, info), (manifest, hooks, chart, config))| {
                object(vec![
                    ("name", name),
                    ("namespace", namespace),
                    ("version", version),
                    ("info", info),
                    ("manifest", manifest),
                    ("hooks", hooks),
                    ("chart", chart),
                    ("config", config),
                ])
            },
        )
}

/// `helm history -o json`: an array of rows, or null.
pub fn history() -> impl Strategy<Value = Typed> {
    let row = (
        option::of(field(int())),
        option::of(field(time())),
        option::of(field(string())),
        option::of(field(string())),
        option::of(field(string())),
        option::of(field(string())),
    )
        .prop_map(|(revision, updated, status, chart, app, description)| {
            object(vec![
                ("revision", revision),
                ("updated", updated),
                ("status", status),
                ("chart", chart),
                ("app_version", app),
                ("description", description),
            ])
        });
    list_of(row)
}

/// A string field of `v`, as the parsers default it.
pub fn text_at(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}
