//! Reads a record back: the header, then every whole event line up to the first line that is
//! cut or unreadable (a killed deploy, a full disk). What comes after such a line is not trusted.

use std::path::Path;

use crate::engine::event::{Event, Step};
use crate::engine::model::event::RollbackStatus;
use crate::engine::state::DeployState;
use crate::record::{Header, Line, MAGIC, SCHEMA};

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(String),
    #[error("not a helmdeck record ({0})")]
    NotARecord(String),
    #[error(
        "written by a newer helmdeck (record schema {found}; this helmdeck {version} reads up to {SCHEMA}): replay it with that version"
    )]
    NewerSchema { found: u64, version: &'static str },
}

/// A record as read.
#[derive(Debug, Clone)]
pub struct Record {
    pub header: Header,
    pub lines: Vec<Line>,
    /// Set when the record ends before the verdict: where and why it stops.
    pub cut: Option<String>,
}

pub fn read(path: &Path) -> Result<Record, ReadError> {
    // Checked before opening: opening a FIFO (or a device) would block or never end.
    let meta =
        std::fs::metadata(path).map_err(|e| ReadError::Io(format!("{}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(ReadError::Io(format!(
            "{}: not a regular file",
            path.display()
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| ReadError::Io(format!("{}: {e}", path.display())))?;
    parse(&bytes)
}

pub fn parse(bytes: &[u8]) -> Result<Record, ReadError> {
    let mut rest = bytes;
    let first = match rest.iter().position(|b| *b == b'\n') {
        Some(at) => {
            let line = &rest[..at];
            rest = &rest[at + 1..];
            line
        }
        None => return Err(ReadError::NotARecord("no complete header line".into())),
    };
    let header = header(first)?;
    let mut lines = Vec::new();
    let mut cut = None;
    while !rest.is_empty() {
        let Some(at) = rest.iter().position(|b| *b == b'\n') else {
            cut = Some(format!("its last line is cut after {} events", lines.len()));
            break;
        };
        let line = serde_json::from_slice::<serde_json::Value>(&rest[..at]).and_then(|mut v| {
            inert(&mut v);
            serde_json::from_value::<Line>(v)
        });
        match line {
            Ok(line) => lines.push(line),
            Err(e) => {
                cut = Some(format!(
                    "line {} is unreadable ({e}); read up to it",
                    lines.len() + 2
                ));
                break;
            }
        }
        rest = &rest[at + 1..];
    }
    let ended = lines
        .last()
        .is_some_and(|l| matches!(l.event, Event::Verdict(_)));
    if cut.is_none() && !ended {
        cut = Some(format!(
            "it ends after {} events, before the verdict",
            lines.len()
        ));
    }
    Ok(Record { header, lines, cut })
}

/// The header, refusing a newer schema before its shape is trusted (a future header may not
/// even parse as this one).
fn header(line: &[u8]) -> Result<Header, ReadError> {
    let mut value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| ReadError::NotARecord(format!("line 1: {e}")))?;
    inert(&mut value);
    if value.get("record").and_then(|v| v.as_str()) != Some(MAGIC) {
        return Err(ReadError::NotARecord(format!(
            "line 1 is not a {MAGIC} header"
        )));
    }
    let schema = value.get("schema").and_then(|v| v.as_u64()).unwrap_or(0);
    if schema > u64::from(SCHEMA) {
        return Err(ReadError::NewerSchema {
            found: schema,
            version: env!("CARGO_PKG_VERSION"),
        });
    }
    serde_json::from_value(value).map_err(|e| ReadError::NotARecord(format!("line 1: {e}")))
}

/// A record is untrusted text (anyone who can write the file can write escape sequences into
/// it), so every string in it is made inert here, once, before any output (headless lines,
/// screen, report, list) can see it. Line breaks and tabs stay (multi-line messages render as
/// live); every other control and escape sequence goes. Strings without one are left as they
/// are, byte for byte, so a clean record replays exactly as it ran.
fn inert(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) if needs_cleaning(s) => *s = clean(s),
        Value::Array(items) => items.iter_mut().for_each(inert),
        // Keys too: a map keyed by names (containers, objects) shows its keys.
        Value::Object(map) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    inert(&mut v);
                    let k = if needs_cleaning(&k) { clean(&k) } else { k };
                    (k, v)
                })
                .collect();
        }
        _ => {}
    }
}

fn needs_cleaning(s: &str) -> bool {
    s.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || crate::text::is_bidi_or_invisible(c))
}

/// `s` made plain line by line and cell by cell (the sanitiser turns breaks and tabs into
/// spaces; here they are kept).
fn clean(s: &str) -> String {
    s.split('\n')
        .map(|l| {
            l.split('\t')
                .map(crate::text::plain)
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Record {
    /// The wall time `t` seconds after the start (the record keeps offsets only).
    pub fn wall(&self, t: f64) -> String {
        match self.header.started.parse::<jiff::Timestamp>() {
            Ok(start) => {
                let nanos = (t.max(0.0) * 1e9).round() as i64;
                let at = start
                    .checked_add(jiff::SignedDuration::from_nanos(nanos))
                    .unwrap_or(start);
                crate::time::rfc3339(at)
            }
            Err(_) => String::new(),
        }
    }

    pub fn new_state(&self) -> DeployState {
        DeployState::new(self.header.plan.clone())
    }

    /// Applies line `i` to `state`, as the engine applied it.
    pub fn apply(&self, state: &mut DeployState, i: usize) {
        if let Some(line) = self.lines.get(i) {
            let wall = line.wall.clone().unwrap_or_else(|| self.wall(line.t));
            state.apply(&line.event, line.t, &wall);
        }
    }

    /// For a record with no verdict (helmdeck was killed, or is still running): whether helm
    /// may have been running when the record stops, and where to see what it did. helm is
    /// started so that helmdeck's death sends it SIGTERM (as a cancel), but a killed helmdeck
    /// never saw how helm ended, nor whether it left the release `pending-*`.
    pub fn unfinished_helm(&self) -> Option<String> {
        if self
            .lines
            .iter()
            .any(|l| matches!(l.event, Event::Verdict(_)))
        {
            return None;
        }
        let state = self.fold();
        let open = |step: Step| {
            state
                .steps
                .get(&step)
                .is_some_and(|s| s.started_at.is_some() && s.outcome.is_none())
        };
        let helm_step = [Step::Preflight, Step::Plan, Step::Upgrade, Step::Test]
            .into_iter()
            .find(|s| open(*s))
            .map(|s| s.name().to_string());
        let rolling_back = state
            .rollback
            .as_ref()
            .is_some_and(|r| r.status == RollbackStatus::Running)
            .then(|| "helmdeck's rollback".to_string());
        let during = rolling_back.or(helm_step)?;
        let plan = &state.plan;
        Some(format!(
            "the run ended without a verdict during {during} (helmdeck killed?): helm may still \
             have been running then, and how it ended is not recorded; see where the release \
             stands with: {}",
            crate::engine::advice::history(plan)
        ))
    }

    /// The state after every event: what the live run ended with.
    pub fn fold(&self) -> DeployState {
        let mut state = self.new_state();
        for i in 0..self.lines.len() {
            self.apply(&mut state, i);
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(schema: u64) -> String {
        format!(
            "{{\"record\":\"{MAGIC}\",\"schema\":{schema},\"helmdeck\":\"0\",\"command\":\"c\",\"started\":\"2026-12-01T10:00:00Z\",\"context\":null,\"title\":null,\"plan\":{}}}\n",
            serde_json::to_string(&crate::engine::state::PlanSummary::default()).unwrap()
        )
    }

    #[test]
    fn a_newer_schema_is_refused_naming_both_versions() {
        let e = parse(header(u64::from(SCHEMA) + 1).as_bytes()).unwrap_err();
        assert!(
            matches!(e, ReadError::NewerSchema { found, .. } if found == u64::from(SCHEMA) + 1)
        );
        assert!(
            e.to_string().contains(&format!("reads up to {SCHEMA}")),
            "{e}"
        );
        assert!(parse(header(u64::from(SCHEMA)).as_bytes()).is_ok());
    }

    #[test]
    fn a_file_that_is_not_a_record_is_told_apart() {
        for text in [
            "",
            "{}\n",
            "{\"record\":\"other\",\"schema\":1}\n",
            "not json\n",
            "{\"record\"",
        ] {
            assert!(
                matches!(parse(text.as_bytes()), Err(ReadError::NotARecord(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn a_record_without_its_verdict_is_cut_and_a_bad_line_ends_the_reading() {
        let ok = r#"{"t":0.5,"event":{"type":"step_started","step":"preflight"}}"#;
        let text = format!("{}{ok}\n", header(1));
        let r = parse(text.as_bytes()).unwrap();
        assert_eq!(r.lines.len(), 1);
        assert!(
            r.cut
                .as_deref()
                .is_some_and(|c| c.contains("before the verdict"))
        );
        let text = format!("{}{ok}\n{{bad\n{ok}\n", header(1));
        let r = parse(text.as_bytes()).unwrap();
        assert_eq!(
            r.lines.len(),
            1,
            "nothing after an unreadable line is trusted"
        );
        assert!(r.cut.as_deref().is_some_and(|c| c.contains("line 3")));
    }

    /// A record that stops while helm may run says so; one that stops after helm's step, or
    /// ends with its verdict, says nothing of helm.
    #[test]
    fn a_killed_run_says_helm_may_still_have_been_running_only_during_a_helm_step() {
        let start = |step: &str| {
            format!(r#"{{"t":0.5,"event":{{"type":"step_started","step":"{step}"}}}}"#)
        };
        let end = |step: &str| {
            format!(
                r#"{{"t":0.6,"event":{{"type":"step_ended","step":"{step}","outcome":{{"status":"succeeded"}}}}}}"#
            )
        };
        let read = |lines: &[String]| {
            let text = format!("{}{}\n", header(1), lines.join("\n"));
            parse(text.as_bytes()).unwrap().unfinished_helm()
        };
        let during_upgrade = read(&[start("preflight"), end("preflight"), start("upgrade")]);
        assert!(
            during_upgrade.as_deref().is_some_and(|t| t
                .contains("during upgrade (helmdeck killed?): helm may still have been running")
                && t.ends_with("helm history '' -n ''")),
            "{during_upgrade:?}"
        );
        let upgraded = [start("upgrade"), end("upgrade"), start("rollout")];
        assert_eq!(read(&upgraded), None, "helm had exited before the rollout");
        let verdict = serde_json::to_string(&Line {
            t: 1.0,
            wall: None,
            event: Event::Verdict(crate::engine::model::Verdict::new(
                crate::engine::model::Outcome::Failed,
                "r",
                vec![],
                None,
            )),
        })
        .unwrap();
        assert_eq!(
            read(&[start("upgrade"), verdict]),
            None,
            "a verdict: helm was waited for"
        );
    }

    /// Every string read from a record is inert, the header's and the events' alike, while the
    /// visible text (and a message's line breaks) stays.
    #[test]
    fn hostile_strings_in_a_record_are_made_inert_when_read() {
        let evil = "\u{1b}]0;pwned\u{7}x\u{1b}[2J\u{1b}]52;c;ZXZpbA==\u{7}y";
        let mut h: serde_json::Value = serde_json::from_str(header(1).trim_end()).unwrap();
        h["title"] = evil.into();
        let line = serde_json::json!({"t": 0.5, "event": {"type": "note", "step": "preflight", "level": "info", "text": format!("a\n{evil}")}});
        let text = format!("{h}\n{line}\n");
        let r = parse(text.as_bytes()).unwrap();
        assert_eq!(r.header.title.as_deref(), Some("xy"));
        let event = serde_json::to_string(&r.lines[0].event).unwrap();
        assert!(
            !event.contains("\\u001b") && !event.contains("\\u0007"),
            "{event}"
        );
        assert!(event.contains("a\\nxy"), "{event}");
    }

    /// Records hold only offsets; the wall time of a line is the start plus its offset.
    #[test]
    fn wall_times_are_the_start_plus_the_offset() {
        let r = parse(header(1).as_bytes()).unwrap();
        assert_eq!(r.wall(61.4), "2026-12-01T10:01:01Z");
    }
}
