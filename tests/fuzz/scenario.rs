//! Scenario files (crates/helmdeck-sim/src/scenario.rs): any text gives a validated scenario or an error that
//! names the file, never a panic. Inputs: hostile text, the shipped scenarios with edits, and
//! scenarios built field by field (as JSON, which is YAML) with sane or wrong values.

use helmdeck::sim::scenario::{EMBEDDED, FaultAction, RBAC_VERBS, Scenario};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::strategy::BoxedStrategy;
use serde_json::{Value, json};

use crate::fuzz;
use crate::inputs::{apply_text, edits, hostile_text, json_value};
use crate::records::{Typed, object};

const ORIGIN: &str = "fuzz.yaml";

/// The promises a parsed scenario keeps (those `validate` makes), and its lookups never panic.
fn assert_scenario(s: &Scenario, name: &str) -> Result<(), TestCaseError> {
    prop_assert!(!s.tick.is_zero());
    prop_assert!(s.defaults.pattern.is_none());
    prop_assert!(s.workloads.iter().all(|w| w.pattern.is_some()));
    for f in &s.faults {
        if matches!(
            f.action,
            FaultAction::Errors500 | FaultAction::Latency | FaultAction::RefuseConnections
        ) {
            prop_assert!(f.span.is_some(), "{:?} without `for`", f.action);
        }
        if f.action == FaultAction::Latency {
            prop_assert!(f.delay.is_some());
        }
    }
    for generation in [i64::MIN, 0, 1, 2, i64::MAX] {
        let _ = s.workload_rule("Deployment", name, generation);
    }
    let _ = s.job_rule(name);
    prop_assert!(
        s.time_scale.0 > 0.0 && s.time_scale.0 <= 1e6,
        "{:?}",
        s.time_scale
    );
    for r in &s.init_containers {
        prop_assert!(!(r.hang && (r.exit_code.is_some() || r.run_for.is_some())));
    }
    for f in &s.faults {
        if f.action == FaultAction::Forbidden {
            prop_assert!(!f.resources.is_empty(), "forbidden without resources");
        }
    }
    let _ = s.init_rule(name, "wait-for-db");
    let _ = s.storage.keeps_pending("apps", name);
    if let Some(paths) = &s.host_paths {
        let _ = paths.at("node-1", "/var/log");
    }
    Ok(())
}

fn check(text: &str, must_parse: bool) -> Result<(), TestCaseError> {
    match Scenario::parse(text, ORIGIN) {
        Ok(s) => assert_scenario(&s, "demo-web"),
        Err(e) => {
            prop_assert!(
                !must_parse,
                "a sane scenario was refused: {:#}\n{}",
                e,
                text
            );
            let message = format!("{e:#}");
            prop_assert!(
                message.contains(ORIGIN),
                "error does not name the file: {}",
                message
            );
            Ok(())
        }
    }
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn scenario_any_text() {
    let yamlish = || {
        vec(
            select(
                &[
                    "\n",
                    "  ",
                    "- ",
                    ": ",
                    "tick",
                    "nodes",
                    "workloads",
                    "jobs",
                    "faults",
                    "match",
                    "do",
                    "at",
                    "for",
                    "delay",
                    "seed",
                    "releases",
                    "objects",
                    "demo",
                    "timeout",
                    "time_scale",
                    "init_containers",
                    "container",
                    "run_for",
                    "hang",
                    "node_rules",
                    "capacity",
                    "taints",
                    "storage",
                    "pending",
                    "host_paths",
                    "forbidden",
                    "resources",
                    "verbs",
                    "&a ",
                    "*a",
                    "<<: *a",
                    "!!str ",
                    "!!binary ",
                    "~",
                    "[",
                    "]",
                    "{",
                    "}",
                    ",",
                    "\"",
                    "'",
                    "|",
                    ">",
                    "#",
                    "---",
                    "...",
                    "1e400",
                    "-1",
                    "99999999999999999999999h",
                    "0.5",
                    "latency",
                    "errors_500",
                    "Deployment/*",
                    "[",
                    "\t",
                    "\u{85}",
                    "\u{feff}",
                ][..],
            ),
            0..40,
        )
        .prop_map(|parts| parts.concat())
    };
    fuzz(
        "scenario_any_text",
        || prop_oneof![hostile_text(), yamlish()],
        |text| check(&text, false),
    );
}

/// Scalar values worth putting where a shipped scenario has one.
const ODD_VALUES: &[&str] = &[
    "",
    "~",
    "null",
    "0",
    "-1",
    "1e300",
    "-1e300",
    "1e400",
    ".inf",
    ".nan",
    "0x10",
    "99999999999999999999999h",
    "18446744073709551616",
    "4294967296",
    "-2147483649",
    "9223372036854775808",
    "\"\"",
    "[]",
    "{}",
    "*x",
    "&x 1",
    "!!binary aGk=",
    "!!int 3",
    "yes",
    "\"\u{1b}[31m\"",
    "3 weeks",
    "1.5.5s",
];

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn scenario_shipped_with_edits() {
    let edit = || {
        prop_oneof![
            // A byte-level edit anywhere.
            edits().prop_map(|e| (None, e)),
            // One value replaced with an odd one.
            (any::<Index>(), select(ODD_VALUES)).prop_map(|(i, v)| (Some((i, v)), Vec::new())),
        ]
    };
    fuzz(
        "scenario_shipped_with_edits",
        || (select(EMBEDDED), vec(edit(), 1..4)),
        |((_, text), changes)| {
            let mut text = text.to_string();
            for (replace, bytes) in changes {
                text = match replace {
                    Some((at, value)) => replace_value(&text, at, value),
                    None => apply_text(&text, &bytes),
                };
            }
            check(&text, false)
        },
    );
}

/// `text` with the value after the colon of one `key: value` line replaced.
fn replace_value(text: &str, at: Index, value: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let keyed: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(": "))
        .collect();
    if keyed.is_empty() {
        return text.to_string();
    }
    let target = keyed[at.index(keyed.len())];
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    if let Some((key, _)) = lines[target].split_once(": ") {
        out[target] = format!("{key}: {value}");
    }
    out.join("\n") + "\n"
}

// Built scenarios. Each field is sane (must parse) or wrong (may be refused).

type Field = BoxedStrategy<Typed>;

fn sane(s: impl Strategy<Value = Value> + 'static) -> Field {
    s.prop_map(|v| (v, true)).boxed()
}

/// `right` mostly, else a wrong value: any JSON, or `odd`.
fn either(
    right: impl Strategy<Value = Value> + 'static,
    odd: impl Strategy<Value = Value> + 'static,
) -> Field {
    prop_oneof![
        6 => right.prop_map(|v| (v, true)),
        1 => odd.prop_map(|v| (v, false)),
        1 => json_value().prop_map(|v| (v, false)),
    ]
    .boxed()
}

/// An object of optional fields (required ones always present).
fn obj(fields: Vec<(&'static str, bool, Field)>) -> Field {
    let parts: Vec<BoxedStrategy<(&'static str, Option<Typed>)>> = fields
        .into_iter()
        .map(|(key, required, s)| {
            if required {
                s.prop_map(move |v| (key, Some(v))).boxed()
            } else {
                option::of(s).prop_map(move |v| (key, v)).boxed()
            }
        })
        .collect();
    parts.prop_map(object).boxed()
}

fn list(item: Field) -> Field {
    vec(item, 0..3)
        .prop_map(|items| {
            let ok = items.iter().all(|(_, t)| *t);
            (
                Value::Array(items.into_iter().map(|(v, _)| v).collect()),
                ok,
            )
        })
        .boxed()
}

fn text() -> impl Strategy<Value = Value> {
    "[ -~]{0,16}".prop_map(Value::from)
}

fn texts() -> impl Strategy<Value = Value> {
    vec("[ -~]{0,16}", 0..3).prop_map(|v| json!(v))
}

fn glob() -> impl Strategy<Value = Value> {
    "([A-Z][a-z]{1,8}/)?[a-z*?-]{1,8}".prop_map(Value::from)
}

/// Durations, always more than zero when sane; wrong ones include overflowing and negative.
fn duration() -> Field {
    let right = prop_oneof![
        (1u32..5000).prop_map(|n| json!(n)),
        (1u32..5000, select(&["ms", "s", "m", "h"][..]))
            .prop_map(|(n, u)| json!(format!("{n}{u}"))),
        (0.001f64..1000.0).prop_map(|f| json!(f)),
    ];
    let odd = prop_oneof![
        "[0-9.]{0,30}(ms|s|m|h|d|)".prop_map(Value::from),
        "[0-9]{15,30}(\\.[0-9]{0,3})?(ms|s|m|h)?".prop_map(Value::from),
        select(&[1e300, -1.0, -0.0, 1.8e19, 1e20, f64::MAX, f64::MIN_POSITIVE][..])
            .prop_map(|f| json!(f)),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
    ];
    either(right, odd)
}

fn bool_field() -> Field {
    either(
        any::<bool>().prop_map(Value::from),
        hostile_text().prop_map(Value::from),
    )
}

fn int<T: Arbitrary + Into<Value> + 'static>() -> Field {
    either(
        any::<T>().prop_map(Into::into),
        any::<i64>().prop_map(Value::from),
    )
}

fn workload_rule(with_match: bool) -> Field {
    let pattern = if with_match {
        either(glob(), hostile_text().prop_map(Value::from))
    } else {
        // `defaults` takes no `match`.
        hostile_text().prop_map(|v| (Value::from(v), false)).boxed()
    };
    obj(vec![
        ("match", with_match, pattern),
        ("generation", false, int::<i64>()),
        ("start_after", false, duration()),
        ("ready_after", false, duration()),
        ("unschedulable", false, either(text(), json_value())),
        ("image_pull_backoff", false, bool_field()),
        ("crash_loop", false, int::<i32>()),
        ("oom_killed", false, bool_field()),
        ("readiness_never", false, bool_field()),
        ("logs", false, either(texts(), json_value())),
        ("never_observe", false, bool_field()),
        ("progress_deadline", false, duration()),
        ("surge_never_terminates", false, bool_field()),
        ("revision_never_converges", false, bool_field()),
    ])
}

fn job_rule() -> Field {
    obj(vec![
        (
            "match",
            true,
            either(glob(), hostile_text().prop_map(Value::from)),
        ),
        (
            "outcome",
            false,
            either(
                select(&["succeed", "fail", "hang"][..]).prop_map(Value::from),
                text(),
            ),
        ),
        ("after", false, duration()),
        ("exit_code", false, int::<i32>()),
        ("logs", false, either(texts(), json_value())),
        ("fail_first", false, int::<u32>()),
    ])
}

fn fault() -> Field {
    // `for` and `delay` are always given when sane: some actions need them.
    obj(vec![
        ("at", true, duration()),
        (
            "anchor",
            false,
            either(
                select(&["start", "apply"][..]).prop_map(Value::from),
                text(),
            ),
        ),
        (
            "do",
            true,
            either(
                select(
                    &[
                        "drop_watches",
                        "gone_next_watch",
                        "errors_500",
                        "latency",
                        "refuse_connections",
                    ][..],
                )
                .prop_map(Value::from),
                text(),
            ),
        ),
        ("count", false, int::<u32>()),
        ("for", true, duration()),
        ("delay", true, duration()),
    ])
}

/// A forbidden fault: `resources` always, the RBAC verbs or a wrong one, no span or delay.
fn forbidden_fault() -> Field {
    let verbs = vec(select(&RBAC_VERBS[..]), 0..4).prop_map(|v| json!(v));
    obj(vec![
        ("at", false, duration()),
        ("do", true, sane(Just(json!("forbidden")))),
        (
            "resources",
            true,
            either(
                vec(
                    select(&["secrets", "deployments.apps", "pods", "jobs.batch"][..]),
                    1..3,
                )
                .prop_map(|v| json!(v)),
                texts(),
            ),
        ),
        ("verbs", false, either(verbs, texts())),
        ("namespace", false, either(text(), json_value())),
        ("user", false, either(text(), json_value())),
        ("for", false, duration()),
    ])
}

/// An initContainer rule; `hang` only where `exit_code` and `run_for` are absent is sane.
fn init_rule() -> Field {
    let hang = prop_oneof![
        sane(Just(json!(false))),
        bool_field().prop_map(|(v, _)| (v, false)).boxed(),
    ]
    .boxed();
    obj(vec![
        (
            "match",
            true,
            either(glob(), hostile_text().prop_map(Value::from)),
        ),
        (
            "container",
            false,
            either(glob(), hostile_text().prop_map(Value::from)),
        ),
        ("start_after", false, duration()),
        ("run_for", false, duration()),
        ("exit_code", false, int::<i32>()),
        ("fail_first", false, int::<u32>()),
        ("hang", false, hang),
        ("logs", false, either(texts(), json_value())),
    ])
}

/// Simulated seconds per real second: more than 0, at most 1,000,000.
fn time_scale() -> Field {
    either(
        prop_oneof![
            (1u32..1000).prop_map(|n| json!(n)),
            (0.01f64..1e6).prop_map(|f| json!(f))
        ],
        prop_oneof![
            select(&[0.0, -1.0, 1e7, f64::MAX][..]).prop_map(|f| json!(f)),
            text(),
        ],
    )
}

fn quantities() -> impl Strategy<Value = Value> {
    vec(
        (
            select(
                &[
                    "cpu",
                    "memory",
                    "pods",
                    "nvidia.com/gpu",
                    "ephemeral-storage",
                ][..],
            ),
            select(&["0", "1", "2", "500m", "4Gi", "110", "64Mi"][..]),
        ),
        0..4,
    )
    .prop_map(|kv| json!(kv.into_iter().collect::<std::collections::BTreeMap<_, _>>()))
}

fn node_rule() -> Field {
    let taint = obj(vec![
        ("key", true, either(text(), json_value())),
        ("value", false, either(text(), json_value())),
        (
            "effect",
            true,
            either(
                select(&["NoSchedule", "PreferNoSchedule", "NoExecute"][..]).prop_map(Value::from),
                text(),
            ),
        ),
    ]);
    obj(vec![
        (
            "match",
            false,
            either(glob(), hostile_text().prop_map(Value::from)),
        ),
        ("capacity", false, either(quantities(), json_value())),
        ("labels", false, either(quantities(), json_value())),
        ("taints", false, list(taint)),
    ])
}

fn storage() -> Field {
    obj(vec![
        ("default_class", false, bool_field()),
        ("bind_after", false, duration()),
        ("pending", false, either(texts(), json_value())),
    ])
}

fn host_paths() -> Field {
    let kind = select(&["Directory", "File", "Socket", "CharDevice", "BlockDevice"][..]);
    let paths = vec(("/[a-z/]{1,12}", kind), 0..3)
        .prop_map(|kv| json!(kv.into_iter().collect::<std::collections::BTreeMap<_, _>>()));
    let nodes = vec((select(&["*", "node-1", "node-2"][..]), paths), 0..3)
        .prop_map(|kv| json!(kv.into_iter().collect::<std::collections::BTreeMap<_, _>>()));
    either(nodes, json_value())
}

fn seed() -> Field {
    let revision = obj(vec![
        ("version", true, int::<u32>()),
        ("status", true, either(text(), json_value())),
        ("description", false, either(text(), json_value())),
        ("age", false, duration()),
        ("chart", false, either(text(), json_value())),
        ("chart_version", false, either(text(), json_value())),
    ]);
    let release = obj(vec![
        ("name", true, either(text(), json_value())),
        ("namespace", true, either(text(), json_value())),
        ("revisions", true, list(revision)),
    ]);
    obj(vec![
        ("releases", false, list(release)),
        (
            "objects",
            false,
            sane(vec(json_value(), 0..3).prop_map(Value::Array)),
        ),
    ])
}

fn scenario() -> Field {
    let demo = obj(vec![
        ("preinstall", false, bool_field()),
        ("set", false, either(texts(), json_value())),
        ("optional", false, either(texts(), json_value())),
        ("timeout", false, duration()),
    ]);
    obj(vec![
        ("description", false, either(text(), json_value())),
        ("nodes", false, int::<u32>()),
        ("namespaces", false, either(texts(), json_value())),
        ("tick", false, duration()),
        ("defaults", false, workload_rule(false)),
        ("workloads", false, list(workload_rule(true))),
        ("jobs", false, list(job_rule())),
        ("seed", false, seed()),
        (
            "faults",
            false,
            list(prop_oneof![fault(), forbidden_fault()].boxed()),
        ),
        ("demo", false, demo),
        ("time_scale", false, time_scale()),
        ("init_containers", false, list(init_rule())),
        ("node_rules", false, list(node_rule())),
        ("storage", false, storage()),
        ("host_paths", false, host_paths()),
    ])
}

/// JSON is YAML, except that YAML allows fewer characters raw: DEL, C1 and U+FFFE/U+FFFF
/// (which serde_json leaves unescaped) must be written as escapes.
fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    for c in v.to_string().chars() {
        if matches!(c, '\u{7f}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}') {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// YAML limits an implicit key (every key of a flow mapping) to 1024 characters as written;
/// a longer one is refused by design, so such a scenario need not parse.
fn keys_fit(v: &Value) -> bool {
    match v {
        Value::Object(map) => map
            .iter()
            .all(|(k, v)| to_yaml(&Value::from(k.as_str())).chars().count() <= 1024 && keys_fit(v)),
        Value::Array(items) => items.iter().all(keys_fit),
        _ => true,
    }
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn scenario_structured() {
    fuzz("scenario_structured", scenario, |(scenario, must_parse)| {
        check(&to_yaml(&scenario), must_parse && keys_fit(&scenario))
    });
}
