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

/// This machine's ended runs of `release` in `namespace` whose init step created a Job, with
/// the Job's run label and uid: a later run's init step attaches to such a Job that still runs
/// (a timeout left it) instead of refusing it as another run's. A record still being written
/// (no verdict: a run in progress) is another run's, never attached to.
pub fn earlier_init_runs(
    dir: &Path,
    release: &str,
    namespace: &str,
) -> Vec<crate::engine::prepared::EarlierRun> {
    entries(dir, Some(release))
        .into_iter()
        .filter(|e| e.namespace == namespace)
        .filter_map(|e| {
            let state = reader::read(&e.path).ok()?.fold();
            state.verdict.as_ref()?;
            Some(crate::engine::prepared::EarlierRun {
                run: state.init_run?,
                uid: state.init_uid?,
                started: e.started,
            })
        })
        .collect()
}

/// The records of `dir` (of `release` only, when given), newest first.
pub fn entries(dir: &Path, release: Option<&str>) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<Entry> = read
        .flatten()
        // Regular files only, by the entry's own type (a symlink is not followed): opening a
        // FIFO named like a record would block the listing forever.
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| crate::record::is_record(p))
        .map(|path| match reader::read(&path) {
            Ok(r) => {
                let verdict = match r.lines.last().map(|l| &l.event) {
                    Some(Event::Verdict(v)) if r.cut.is_none() => {
                        format!("{} (exit {})", v.outcome.title(), v.code())
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
    // The header's start has whole seconds; the file name's stamp has the milliseconds (two
    // releases started within one second are still told apart), the name itself last.
    out.sort_by(|a, b| {
        (b.started.as_str(), name_stamp(&b.path), &b.path).cmp(&(
            a.started.as_str(),
            name_stamp(&a.path),
            &a.path,
        ))
    });
    out
}

/// The start stamp in a record's file name (`…_20261201T101500.123Z_SUFFIX.ndjson`), if any.
fn name_stamp(path: &Path) -> &str {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut parts = name.rsplitn(3, '_');
    parts.next();
    parts
        .next()
        .filter(|s| s.len() == 20 && s.ends_with('Z') && s.as_bytes().get(8) == Some(&b'T'))
        .unwrap_or("")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::state::PlanSummary;
    use crate::engine::verdict::{Outcome, Verdict};
    use crate::record::{Header, Line};

    /// A record of `release` started at `started`, ending in `verdict` (or cut before it).
    fn write(dir: &Path, name: &str, release: &str, started: &str, verdict: Option<Outcome>) {
        let mut header = Header::new(
            "helmdeck deploy".into(),
            None,
            None,
            PlanSummary {
                release: release.into(),
                namespace: "apps".into(),
                ..PlanSummary::default()
            },
        );
        header.started = started.into();
        header.kube_context = Some("prod-eu".into());
        let mut text = serde_json::to_string(&header).unwrap() + "\n";
        let start = Line {
            t: 0.0,
            wall: None,
            event: Event::StepStarted {
                step: crate::engine::event::Step::Preflight,
            },
        };
        text += &(serde_json::to_string(&start).unwrap() + "\n");
        if let Some(outcome) = verdict {
            let line = Line {
                t: 1.0,
                wall: None,
                event: Event::Verdict(Verdict {
                    outcome,
                    reason: "r".into(),
                    evidence: vec![],
                    next: None,
                }),
            };
            text += &(serde_json::to_string(&line).unwrap() + "\n");
        }
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn names(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| e.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// Newest first (the header's second, then the name's milliseconds), each with its verdict
    /// or why it has none; the release filter; files that are not records are not listed.
    #[test]
    fn entries_are_newest_first_with_their_verdicts_and_filtered_by_release() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            "c_apps_web_20261201T100000.000Z_a.ndjson",
            "web",
            "2026-12-01T10:00:00Z",
            Some(Outcome::Landed),
        );
        write(
            d,
            "c_apps_web_20261201T100500.900Z_a.ndjson",
            "web",
            "2026-12-01T10:05:00Z",
            Some(Outcome::Failed),
        );
        // The same second as the one above, later by the name's milliseconds.
        write(
            d,
            "c_apps_api_20261201T100500.950Z_a.ndjson",
            "api",
            "2026-12-01T10:05:00Z",
            Some(Outcome::LiveInitIncomplete),
        );
        write(
            d,
            "c_apps_web_20261201T101000.000Z_a.ndjson",
            "web",
            "2026-12-01T10:10:00Z",
            None,
        );
        std::fs::write(d.join("c_apps_web_x.ndjson"), "not a record\n").unwrap();
        std::fs::write(d.join("notes.txt"), "").unwrap();

        let all = entries(d, None);
        assert_eq!(
            names(&all)[..4],
            [
                "c_apps_web_20261201T101000.000Z_a.ndjson",
                "c_apps_api_20261201T100500.950Z_a.ndjson",
                "c_apps_web_20261201T100500.900Z_a.ndjson",
                "c_apps_web_20261201T100000.000Z_a.ndjson",
            ]
        );
        let verdicts: Vec<&str> = all.iter().map(|e| e.verdict.as_str()).collect();
        assert_eq!(
            verdicts[..4],
            [
                "cut short (no verdict)",
                "LIVE — INIT INCOMPLETE (exit 3)",
                "FAILED (exit 1)",
                "LANDED (exit 0)",
            ]
        );
        assert_eq!(
            all.len(),
            5,
            "the unreadable record is listed, the text file not"
        );
        assert!(all[4].verdict.starts_with("unreadable: "), "{:?}", all[4]);
        assert_eq!(all[0].context.as_deref(), Some("prod-eu"));

        let web = entries(d, Some("web"));
        assert_eq!(web.len(), 3);
        assert!(web.iter().all(|e| e.release == "web"));
        assert!(entries(d, Some("nope")).is_empty());
        assert!(entries(&d.join("missing"), None).is_empty());
    }

    /// A listed line is inert, whatever a record's header says.
    #[test]
    fn a_line_is_inert_text() {
        let e = Entry {
            path: PathBuf::from("/s/r.ndjson"),
            started: "2026-12-01T10:00:00Z".into(),
            release: "demo\u{1b}[2J".into(),
            namespace: "apps".into(),
            context: Some("prod".into()),
            verdict: "LANDED (exit 0)".into(),
        };
        let line = line(&e);
        assert!(!line.contains('\u{1b}'), "{line:?}");
        assert!(
            line.starts_with("2026-12-01T10:00:00Z  prod apps/demo"),
            "{line}"
        );
        assert!(line.ends_with("LANDED (exit 0)  /s/r.ndjson"), "{line}");
    }

    /// Pruning keeps the newest of one prefix and touches nothing else.
    #[test]
    fn prune_keeps_the_newest_of_one_prefix_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for i in 0..5 {
            std::fs::write(
                d.join(format!("a_apps_web_2026120{i}T000000.000Z_x.ndjson")),
                "",
            )
            .unwrap();
        }
        std::fs::write(d.join("b_apps_web_20260101T000000.000Z_x.ndjson"), "").unwrap();
        std::fs::write(d.join("a_apps_web_old.txt"), "").unwrap();
        prune(d, "a_apps_web_", 2);
        let mut left: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "a_apps_web_20261203T000000.000Z_x.ndjson",
                "a_apps_web_20261204T000000.000Z_x.ndjson",
                "a_apps_web_old.txt",
                "b_apps_web_20260101T000000.000Z_x.ndjson",
            ]
        );
    }
}
