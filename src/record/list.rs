//! The records in a directory: listed newest first with their verdicts, and pruned per release.

use std::path::{Path, PathBuf};

use crate::engine::event::Event;
use crate::record::reader;

/// One record, as `replay --list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub path: PathBuf,
    pub started: String,
    pub release: String,
    pub namespace: String,
    pub context: Option<String>,
    /// `LANDED (exit 0)`, `cut short`, or why it cannot be read.
    pub verdict: String,
}

/// The records of `dir` (of `release` only, when given), newest first.
pub fn entries(dir: &Path, release: Option<&str>) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<Entry> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| crate::record::is_record(p))
        .map(|path| match reader::read(&path) {
            Ok(r) => {
                let verdict = match r.lines.last().map(|l| &l.event) {
                    Some(Event::Verdict(v)) if r.cut.is_none() => {
                        format!("{} (exit {})", v.outcome.title(), v.code)
                    }
                    _ => "cut short (no verdict)".into(),
                };
                Entry {
                    path,
                    started: r.header.started,
                    release: r.header.plan.release,
                    namespace: r.header.plan.namespace,
                    context: r.header.kube_context.or(r.header.plan.context),
                    verdict,
                }
            }
            Err(e) => Entry {
                path,
                started: String::new(),
                release: String::new(),
                namespace: String::new(),
                context: None,
                verdict: format!("unreadable: {e}"),
            },
        })
        .filter(|e| release.is_none_or(|r| e.release == r))
        .collect();
    out.sort_by(|a, b| b.started.cmp(&a.started).then(b.path.cmp(&a.path)));
    out
}

/// One line per entry: when, which release, the verdict, the file.
pub fn line(e: &Entry) -> String {
    let context = e
        .context
        .as_deref()
        .map(|c| format!("{c} "))
        .unwrap_or_default();
    format!(
        "{}  {context}{}/{}  {}  {}",
        crate::text::plain(&e.started),
        crate::text::plain(&e.namespace),
        crate::text::plain(&e.release),
        crate::text::plain(&e.verdict),
        crate::text::plain(&e.path.display().to_string()),
    )
}

/// Deletes the oldest records whose names start with `prefix` beyond the newest `keep`. Names
/// sort in start order; a record that cannot be deleted stays (nothing else depends on it).
pub fn prune(dir: &Path, prefix: &str, keep: usize) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<String> = read
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix) && n.ends_with(".ndjson"))
        .collect();
    names.sort();
    let excess = names.len().saturating_sub(keep);
    for name in &names[..excess] {
        let _ = std::fs::remove_file(dir.join(name));
    }
}
