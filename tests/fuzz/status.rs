//! `helm status -o json` and `helm history -o json` (crates/helmdeck-core/src/helm/status.rs): any bytes give a
//! typed value or a `StatusError`, never a panic; well-typed JSON always parses, and the byte
//! and the value parsers agree.

use helmdeck::helm::status::{from_release_json, parse_history, parse_status};
use proptest::collection::vec;
use proptest::prelude::*;

use crate::fuzz;
use crate::inputs::{apply, edits, hostile_text, json_value};
use crate::records::{self, text_at};

/// Bytes helm might print instead of JSON, JSON of every shape, and well-formed output with
/// bytes flipped, cut or repeated.
fn output() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..128),
        hostile_text().prop_map(String::into_bytes),
        json_value().prop_map(|v| v.to_string().into_bytes()),
        (records::release(), edits()).prop_map(|((v, _), e)| apply(v.to_string().into_bytes(), &e)),
        (records::history(), edits()).prop_map(|((v, _), e)| apply(v.to_string().into_bytes(), &e)),
    ]
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn status_any_bytes() {
    fuzz("status_any_bytes", output, |bytes| {
        match parse_status(&bytes) {
            Ok(s) => prop_assert!(s.hooks.len() <= bytes.len()),
            Err(e) => prop_assert!(e.to_string().starts_with("cannot read helm status JSON")),
        }
        match parse_history(&bytes) {
            Ok(h) => prop_assert!(h.len() <= bytes.len()),
            Err(e) => prop_assert!(e.to_string().starts_with("cannot read helm history JSON")),
        }
        Ok(())
    });
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn status_structured() {
    fuzz("status_structured", records::release, |(release, typed)| {
        let from_value = from_release_json(&release);
        let from_bytes = parse_status(release.to_string().as_bytes());
        prop_assert_eq!(
            from_value.as_ref().ok(),
            from_bytes.as_ref().ok(),
            "bytes and value parsers disagree"
        );
        if typed {
            let s = from_value.map_err(|e| TestCaseError::fail(format!("well typed, yet {e}")))?;
            prop_assert_eq!(&s.name, &text_at(&release, "/name"));
            prop_assert_eq!(&s.status, &text_at(&release, "/info/status"));
            prop_assert_eq!(s.version, release["version"].as_i64().unwrap_or(0));
            let hooks = release["hooks"].as_array().map_or(0, Vec::len);
            prop_assert_eq!(s.hooks.len(), hooks);
            for h in &s.hooks {
                // Helm 3's zero time `""` reads as "never".
                prop_assert!(h.started_at.as_deref() != Some(""), "empty time kept");
                prop_assert!(h.completed_at.as_deref() != Some(""), "empty time kept");
            }
        }
        Ok(())
    });
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn history_structured() {
    fuzz(
        "history_structured",
        records::history,
        |(history, typed)| {
            let parsed = parse_history(history.to_string().as_bytes());
            if typed {
                let rows =
                    parsed.map_err(|e| TestCaseError::fail(format!("well typed, yet {e}")))?;
                let raw = history.as_array().cloned().unwrap_or_default();
                prop_assert_eq!(rows.len(), raw.len());
                for (row, raw) in rows.iter().zip(&raw) {
                    prop_assert_eq!(row.revision, raw["revision"].as_i64().unwrap_or(0));
                    prop_assert_eq!(&row.status, &text_at(raw, "/status"));
                }
            }
            Ok(())
        },
    );
}
