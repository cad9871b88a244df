//! Deploy records: every `deploy` and `demo` keeps its engine events as NDJSON, so a run can be
//! replayed in the same screen (and its report rebuilt) after the fact.
//!
//! Line 1 is a [`Header`]; every further line is one [`Line`]: an event and its offset in
//! seconds from the start. The shape is versioned by [`SCHEMA`]: a reader refuses a newer one
//! rather than guess at it.

pub mod clock;
pub mod list;
pub mod own;
pub mod reader;
pub mod writer;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::event::Event;
use crate::engine::state::PlanSummary;

/// The record format's version: bumped whenever a reader of the old shape would misread it.
pub const SCHEMA: u32 = 1;

/// Records kept per release; the oldest beyond this are deleted when a new one starts.
pub const KEEP_PER_RELEASE: usize = 100;

/// Line 1 of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `helmdeck-record`: a file that is not a record is told apart at once.
    pub record: String,
    pub schema: u32,
    pub helmdeck: String,
    /// The command as run, redacted as every printed command is (values never shown).
    pub command: String,
    /// RFC 3339 wall time of the start; events carry offsets from it.
    pub started: String,
    /// What the screen's header shows: the kube context (or server) and the demo's title.
    pub context: Option<String>,
    pub title: Option<String>,
    pub plan: PlanSummary,
    /// The kube context the run used: `--kube-context`, else the kubeconfig's current context
    /// (what the file name and `replay --list` go by: one release on two clusters is two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_context: Option<String>,
}

pub const MAGIC: &str = "helmdeck-record";

impl Header {
    pub fn new(
        command: String,
        context: Option<String>,
        title: Option<String>,
        plan: PlanSummary,
    ) -> Self {
        Header {
            record: MAGIC.into(),
            schema: SCHEMA,
            helmdeck: env!("CARGO_PKG_VERSION").into(),
            command,
            started: crate::time::now_rfc3339(),
            context,
            title,
            plan,
            kube_context: None,
        }
    }
}

/// One event of a record, `t` seconds after the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub t: f64,
    /// The wall time the engine stamped on a step transition (the report's step times), kept
    /// as stamped: recomputing it from `t` could land a second off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall: Option<String>,
    pub event: Event,
}

/// Where records go without `--record`: `$XDG_STATE_HOME/helmdeck`, else
/// `~/.local/state/helmdeck` (the XDG default). None without either variable.
pub fn default_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty());
    // The XDG spec says a relative value is to be ignored.
    if let Some(dir) = xdg.map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(dir.join("helmdeck"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(home).join(".local/state/helmdeck"))
}

/// A file-name part: anything but letters, digits, `.` and `-` becomes `-`, so `_` separates
/// the parts unambiguously (contexts such as `arn:aws:…/prod` or `kind_dev` included). A name
/// that had to change (or be cut to 60 characters) gets a hash of the original, so two contexts
/// that differ only there (`a/b`, `a:b`) never share a prefix, nor their pruning.
fn part(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if cleaned == s && !s.is_empty() && s.len() <= 60 {
        return cleaned.to_string();
    }
    let kept: String = cleaned.chars().take(50).collect();
    let kept = if kept.is_empty() { "none" } else { &kept };
    format!("{kept}-{:08x}", fnv1a(s.as_bytes()))
}

/// FNV-1a, 32 bits: stable across builds and versions (names on disk outlive one helmdeck).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The prefix every record of one release shares: `CONTEXT_NAMESPACE_RELEASE_`.
pub fn release_prefix(context: Option<&str>, namespace: &str, release: &str) -> String {
    format!(
        "{}_{}_{}_",
        part(context.unwrap_or("default")),
        part(namespace),
        part(release)
    )
}

/// `CONTEXT_NAMESPACE_RELEASE_20261201T101500Z_SUFFIX.ndjson`: sorted by name, the records of
/// one release are in start order.
pub fn file_name(prefix: &str, started: &jiff::Timestamp, suffix: &str) -> String {
    format!(
        "{prefix}{}_{suffix}.ndjson",
        started.strftime("%Y%m%dT%H%M%S%.3fZ")
    )
}

/// Whether `path` names a record file (by its extension).
pub fn is_record(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ndjson")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contexts become safe file-name parts: no separator, no path, no leading dot; names that
    /// differ only in what had to change still differ.
    #[test]
    fn a_context_is_a_safe_and_distinct_file_name_part() {
        assert_eq!(
            release_prefix(Some("helmdeck-sim"), "apps", "demo"),
            "helmdeck-sim_apps_demo_"
        );
        let prefixes: Vec<String> = [
            "arn:aws:eks:eu-west-1:123456789012:cluster/prod",
            "arn:aws:eks:eu-west-1:123456789012:cluster:prod",
            "kind_dev",
            "kind-dev",
            "../../etc",
            "..",
            "",
            &"x".repeat(200),
            &format!("{}y", "x".repeat(199)),
        ]
        .iter()
        .map(|c| release_prefix(Some(c), "apps", "demo"))
        .collect();
        for (i, p) in prefixes.iter().enumerate() {
            let context = p.strip_suffix("_apps_demo_").expect(p);
            assert!(
                !context.is_empty()
                    && !context.starts_with('.')
                    && context.len() <= 60
                    && context
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'),
                "{p}"
            );
            for q in &prefixes[i + 1..] {
                assert_ne!(p, q);
            }
        }
        assert_eq!(release_prefix(None, "apps", "demo"), "default_apps_demo_");
    }
}
