//! Input strategies shared by the targets: hostile text, arbitrary JSON, mutations of valid
//! input.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value};

/// Pieces a terminal or a parser treats specially: escape sequences and their parts, C0/C1
/// controls, BiDi and zero-width characters, wide and combining characters, emoji sequences.
const FRAGMENTS: &[&str] = &[
    "\u{1b}",
    "\u{1b}[",
    "\u{1b}]",
    "\u{1b}\\",
    "\u{1b}P",
    "\u{1b}X",
    "\u{1b}^",
    "\u{1b}_",
    "\u{1b}(",
    "\u{1b}#",
    "\u{1b}[31m",
    "\u{1b}[0m",
    "\u{1b}[1;32m",
    "\u{1b}[2J",
    "\u{1b}[?1049h",
    "\u{1b}]0;title\u{7}",
    "\u{1b}]8;;http://x\u{1b}\\",
    "\u{9b}",
    "\u{9b}31m",
    "\u{85}",
    "\u{90}",
    "\u{9c}",
    "\u{9d}",
    "\u{7}",
    "\u{8}",
    "\u{0}",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{7f}",
    "\u{200b}",
    "\u{200d}",
    "\u{200e}",
    "\u{200f}",
    "\u{202a}",
    "\u{202e}",
    "\u{2066}",
    "\u{2069}",
    "\u{61c}",
    "\u{feff}",
    "\u{fe0f}",
    "\u{301}",
    "\u{2028}",
    "\u{2029}",
    "\u{ad}",
    "日本語",
    "한",
    "ｗ",
    "❤",
    "❤\u{fe0f}",
    "👩\u{200d}💻",
    "🇩🇪",
    "e\u{301}",
    "\u{1f1e6}",
    "☺\u{fe0f}",
    "#\u{fe0f}\u{20e3}",
    "👍\u{1f3fd}",
    "\u{1100}\u{1161}",
    "لا",
    "क्षि",
    "\u{fe0e}",
    "\u{e0041}",
    "…",
    ";",
    "m",
    "[",
    "]",
    "\\",
    "0",
    "9",
    " ",
    "\"",
    "'",
    "{",
    "}",
    ":",
    ",",
    "=",
    "#",
    "-",
    "*",
    "?",
];

/// One piece of hostile text.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(FRAGMENTS).prop_map(str::to_string),
        3 => "[ -~]{1,8}",
        2 => any::<char>().prop_map(String::from),
    ]
}

/// Text as it comes from a cluster or a terminal-writing process: mostly short, sometimes past
/// the sanitizer's line cap.
pub fn hostile_text() -> impl Strategy<Value = String> {
    let short = vec(fragment(), 0..24).prop_map(|parts| parts.concat());
    let long = (
        vec(fragment(), 0..8),
        4000usize..4200,
        vec(fragment(), 0..8),
    )
        .prop_map(|(head, n, tail)| format!("{}{}{}", head.concat(), "x".repeat(n), tail.concat()));
    prop_oneof![20 => short, 1 => long]
}

/// A JSON number that survives a text round trip exactly (serde_json's default float parser
/// may be one ulp off on long mantissas, which says nothing about our code).
fn exact_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (any::<i32>(), 0u32..10)
            .prop_map(|(m, e)| Value::from(f64::from(m) / f64::from(1u32 << e))),
    ]
}

/// Object keys: the ones the parsers look for, and anything else.
const KEYS: &[&str] = &[
    "name",
    "namespace",
    "version",
    "info",
    "status",
    "description",
    "first_deployed",
    "last_deployed",
    "hooks",
    "kind",
    "path",
    "events",
    "weight",
    "last_run",
    "phase",
    "started_at",
    "completed_at",
    "delete_policies",
    "manifest",
    "chart",
    "metadata",
    "appVersion",
    "config",
    "revision",
    "updated",
    "app_version",
    "data",
    "release",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(KEYS).prop_map(str::to_string),
        1 => hostile_text(),
    ]
}

/// Any JSON value, nested a few levels, with strings from [`hostile_text`].
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        exact_number(),
        hostile_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            json_object_of(inner),
        ]
    })
}

/// An object whose values come from `values`.
pub fn json_object_of(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    btree_map(key(), values, 0..6).prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

/// A small edit of a byte string: what corruption, truncation or a hostile writer does.
#[derive(Debug, Clone)]
pub enum Edit {
    Flip { at: usize, bit: u8 },
    Truncate { at: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
}

pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        any::<usize>().prop_map(|at| Edit::Truncate { at }),
        (any::<usize>(), vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), 1usize..32).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| Edit::Duplicate { at, len }),
    ];
    vec(edit, 1..4)
}

/// Applies `edits` (positions taken modulo the current length).
pub fn apply(mut data: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = data.len();
        let at = |i: usize| i.checked_rem(n + 1).unwrap_or(0);
        match e {
            Edit::Flip { at: i, bit } => {
                if n > 0 {
                    data[i % n] ^= 1 << bit;
                }
            }
            Edit::Truncate { at: i } => data.truncate(at(*i)),
            Edit::Insert { at: i, bytes } => {
                let i = at(*i);
                data.splice(i..i, bytes.iter().copied());
            }
            Edit::Delete { at: i, len } => {
                let i = at(*i);
                data.drain(i..(i + len).min(n));
            }
            Edit::Duplicate { at: i, len } => {
                let i = at(*i);
                let piece = data[i..(i + len).min(n)].to_vec();
                data.splice(i..i, piece);
            }
        }
    }
    data
}

/// The same edits on text: the result is made valid UTF-8 again (lossily), as a reader of a
/// text file would.
pub fn apply_text(text: &str, edits: &[Edit]) -> String {
    String::from_utf8_lossy(&apply(text.as_bytes().to_vec(), edits)).into_owned()
}
