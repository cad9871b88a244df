//! `helmdeck.toml` beside the chart (crates/helmdeck-core/src/config.rs), read through `DeployPlan::from_args` as a
//! deploy reads it: any file gives a plan or a usage error, never a panic, and a plan keeps the
//! promises the deploy relies on.

use std::path::Path;

use clap::Parser;
use helmdeck::cli::{Cli, Command, DeployArgs};
use helmdeck::config::DeployPlan;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;

use crate::fuzz;
use crate::inputs::{apply_text, edits, hostile_text};

/// A TOML basic string (control characters as `\u` escapes).
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn array(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// A TOML value of the wrong type for any key here.
fn wrong_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        Just("1e400".to_string()),
        Just("nan".to_string()),
        Just("1979-05-27T07:32:00Z".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("[1, \"two\"]".to_string()),
        Just("[[]]".to_string()),
    ]
}

/// One line of the file: a key, its TOML value, and whether the plan must accept it.
type Line = (String, bool);

fn string_key(
    key: &'static str,
    sane: impl Strategy<Value = String>,
) -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => sane.prop_map(move |v| (format!("{key} = {}", quoted(&v)), true)),
        2 => hostile_text().prop_map(move |v| (format!("{key} = {}", quoted(&v)), false)),
        1 => wrong_value().prop_map(move |v| (format!("{key} = {v}"), false)),
    ]
}

fn list_key(key: &'static str, sane: impl Strategy<Value = String>) -> impl Strategy<Value = Line> {
    prop_oneof![
        4 => vec(sane, 0..3).prop_map(move |v| (format!("{key} = {}", array(&v)), true)),
        2 => vec(hostile_text(), 0..3).prop_map(move |v| (format!("{key} = {}", array(&v)), false)),
        1 => wrong_value().prop_map(move |v| (format!("{key} = {v}"), false)),
    ]
}

fn durations() -> impl Strategy<Value = String> {
    prop_oneof![
        "[1-9][0-9]{0,3}(ms|s|m|h)?",
        "[0-9.]{0,30}(ms|s|m|h|d|)",
        "[0-9]{15,30}(\\.[0-9]{0,3})?(ms|s|m|h)?",
        " ?-?[0-9]{1,3}(e[0-9]{1,3})? ?",
    ]
}

fn sane_durations() -> impl Strategy<Value = String> {
    "[1-9][0-9]{0,3}(s|m|h)?"
}

/// Key lines in any order, unknown keys, duplicates; well typed when every line is.
fn file() -> impl Strategy<Value = (String, bool)> {
    // A DNS-1123 label, as a namespace must be (a letter or digit at both ends).
    let name = "[a-z]([a-z0-9-]{0,11}[a-z0-9])?";
    let lines = (
        (
            option::of(string_key("namespace", name)),
            option::of(list_key(
                "values",
                select(&["v.yaml", "./v.yaml"][..]).prop_map(str::to_string),
            )),
            option::of(list_key("set", "[a-z.]{1,8}=[a-z0-9]{0,4}")),
            option::of(string_key("kube-context", name)),
        ),
        (
            // The init toggle and the init Job go together: one strategy for both.
            option::of(prop_oneof![
                ("[a-z]{1,6}(\\.[a-z]{1,6}){0,2}", name).prop_map(|(k, j)| {
                    (
                        format!("init-toggle = {}\ninit-job = {}", quoted(&k), quoted(&j)),
                        true,
                    )
                }),
                // One without the other is a usage error.
                string_key("init-toggle", name).prop_map(|(l, _)| (l, false)),
                string_key("init-job", name).prop_map(|(l, _)| (l, false)),
            ]),
            // Only the kinds the rollout watches may prefix a deny-list pattern.
            option::of(list_key(
                "optional",
                "((Deployment|StatefulSet|DaemonSet|deployment)/)?[a-z*?-]{1,8}",
            )),
            option::of(prop_oneof![
                3 => string_key("timeout", sane_durations()),
                2 => durations().prop_map(|d| (format!("timeout = {}", quoted(&d)), false)),
            ]),
            option::of(string_key("helm", "/[a-z/]{1,12}")),
            option::of(list_key(
                "extra-args",
                select(&["--history-max", "3", "--debug", "--force"][..]).prop_map(str::to_string),
            )),
        ),
    );
    let unknown = option::of(prop_oneof![
        Just(("wait = true".to_string(), false)),
        Just(("[section]\nnamespace = \"x\"".to_string(), false)),
        Just(("extra-args = [\"--wait\"]".to_string(), false)),
        Just(("extra-args = [\"--atomic=true\"]".to_string(), false)),
        Just(("namespace = \"a\"\nnamespace = \"b\"".to_string(), false)),
    ]);
    (lines, unknown, any::<prop::sample::Index>()).prop_map(|((a, b), unknown, at)| {
        let (ns, values, set, ctx) = a;
        let (init, optional, timeout, helm, extra) = b;
        let mut lines: Vec<Line> = [ns, values, set, ctx, init, optional, timeout, helm, extra]
            .into_iter()
            .flatten()
            .collect();
        if let Some(u) = unknown {
            lines.insert(at.index(lines.len() + 1), u);
        }
        let ok = lines.iter().all(|(_, ok)| *ok);
        let text: Vec<String> = lines.into_iter().map(|(l, _)| l).collect();
        (text.join("\n") + "\n", ok)
    })
}

/// `helmdeck deploy rel DIR`: the file is the only source of settings.
fn deploy_args(chart: &Path) -> DeployArgs {
    let chart = chart
        .to_str()
        .expect("temporary directories have UTF-8 paths here");
    match Cli::try_parse_from(["helmdeck", "deploy", "rel", chart]) {
        Ok(Cli {
            command: Command::Deploy(args),
        }) => *args,
        other => panic!("deploy arguments did not parse: {other:?}"),
    }
}

/// The promises a plan keeps, however odd the file.
fn assert_plan(plan: &DeployPlan) -> Result<(), TestCaseError> {
    prop_assert!(!plan.timeout.is_zero());
    prop_assert!(plan.helm_timeout().ends_with('s'));
    prop_assert_eq!(plan.init_toggle.is_some(), plan.init_job.is_some());
    for arg in &plan.extra {
        let flag = arg.split('=').next().unwrap_or("");
        prop_assert!(
            ![
                "--wait",
                "--atomic",
                "--rollback-on-failure",
                "--wait-for-jobs"
            ]
            .contains(&flag),
            "{} passed through",
            arg
        );
    }
    Ok(())
}

fn with_chart_dir<S: Strategy<Value = (String, bool)>>(
    name: &str,
    files: impl FnOnce() -> S + Send,
) {
    let dir = tempfile::tempdir().expect("a temporary chart directory");
    std::fs::write(dir.path().join("v.yaml"), "a: 1\n").expect("writing v.yaml");
    let args = deploy_args(dir.path());
    let config = dir.path().join("helmdeck.toml");
    fuzz(name, files, |(text, must_parse)| {
        std::fs::write(&config, &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        match DeployPlan::from_args(&args) {
            Ok(plan) => assert_plan(&plan)?,
            Err(e) => {
                prop_assert!(!must_parse, "a sane file was refused: {:#}", e);
                let message = format!("{e:#}");
                prop_assert!(!message.is_empty());
            }
        }
        Ok(())
    });
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn config_structured() {
    with_chart_dir("config_structured", file);
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn config_any_text() {
    let text = || {
        prop_oneof![
            hostile_text(),
            (file(), edits()).prop_map(|((text, _), e)| apply_text(&text, &e)),
        ]
    };
    with_chart_dir("config_any_text", || text().prop_map(|t| (t, false)));
}
