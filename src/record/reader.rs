//! Reads a record back: the header, then every whole event line up to the first line that is
//! cut or unreadable (a killed deploy, a full disk). What comes after such a line is not trusted.

use std::path::Path;

use crate::engine::event::Event;
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
        match serde_json::from_slice::<Line>(&rest[..at]) {
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
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| ReadError::NotARecord(format!("line 1: {e}")))?;
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

    /// The state after every event: what the live run ended with.
    pub fn fold(&self) -> DeployState {
        let mut state = self.new_state();
        for i in 0..self.lines.len() {
            self.apply(&mut state, i);
        }
        state
    }
}
