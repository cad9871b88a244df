//! The release records, decoded one by one: history rows, the inspected revision, the lock and
//! the hooks' execution order. Pure: the storage objects come in already listed.
//!
//! Each record is decoded on its own, so a broken one (bad base64, bad gzip, truncated or odd
//! JSON, too large) becomes an error on its row and every other revision still shows. Values
//! (`config`) are dropped from the decoded JSON before anything else reads it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cluster::releases::{self, Revision};
use crate::helm::hooks::{self, RunKind};
use crate::helm::release::{decode_release_configmap, decode_release_secret};
use crate::helm::status::{self, HistoryEntry, HookRecord, ReleaseStatus};
use crate::inspect::model::{HistoryRow, LockState, Operation, Storage};
use crate::text;

/// A Secret or ConfigMap labelled `owner=helm,name=REL`, as listed.
#[derive(Debug, Clone)]
pub struct StoredObject {
    pub storage: Storage,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// The object's JSON (at least its `data`), exactly as served.
    pub body: Value,
}

/// One record: its history row, and the decoded release when it could be read.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub row: HistoryRow,
    pub release: Option<ReleaseStatus>,
}

/// Decodes one storage object. Never fails: an unreadable record gives a row with `error`,
/// the revision from the `version` label (else the object name's `.vN`) and the label status.
pub fn decode(object: &StoredObject) -> Decoded {
    let label = |k: &str| object.labels.get(k).map(String::as_str);
    let label_int = |k: &str| label(k).and_then(|v| v.trim().parse::<i64>().ok());
    let fallback_revision = label_int("version")
        .or_else(|| revision_from_name(&object.name))
        .unwrap_or(0);
    let mut row = HistoryRow {
        entry: HistoryEntry {
            revision: fallback_revision,
            status: text::plain(label("status").unwrap_or_default()),
            ..HistoryEntry::default()
        },
        storage: object.storage,
        object: text::plain(&object.name),
        written_at: label_int("modifiedAt").or_else(|| label_int("createdAt")),
        error: None,
    };
    let decoded = match object.storage {
        Storage::Secret => decode_release_secret(&object.body),
        Storage::ConfigMap => decode_release_configmap(&object.body),
    };
    let mut value = match decoded {
        Ok(v) => v,
        Err(e) => {
            row.error = Some(text::plain(&e.to_string()));
            return Decoded { row, release: None };
        }
    };
    strip_values(&mut value);
    let (chart, app_version) = chart_columns(&value);
    let release = match status::from_release_json(&value) {
        Ok(r) => r,
        Err(e) => {
            row.error = Some(text::plain(&e.to_string()));
            return Decoded { row, release: None };
        }
    };
    if release.version > 0 {
        row.revision = release.version;
    }
    row.updated = text::plain(release.last_deployed.as_deref().unwrap_or_default());
    row.status = text::plain(&release.status);
    row.description = text::plain(&release.description);
    row.chart = text::plain(&chart);
    row.app_version = text::plain(&app_version);
    Decoded {
        row,
        release: Some(release),
    }
}

/// Every object decoded, oldest revision first (Secret before ConfigMap for the same revision).
pub fn decode_all(objects: &[StoredObject]) -> Vec<Decoded> {
    let mut all: Vec<Decoded> = objects.iter().map(decode).collect();
    all.sort_by(|a, b| {
        (a.row.revision, a.row.storage, &a.row.object).cmp(&(
            b.row.revision,
            b.row.storage,
            &b.row.object,
        ))
    });
    all
}

/// Values may hold secrets: they go before anything reads the record.
fn strip_values(release: &mut Value) {
    if let Some(obj) = release.as_object_mut() {
        obj.remove("config");
        if let Some(chart) = obj.get_mut("chart").and_then(Value::as_object_mut) {
            chart.remove("values");
        }
    }
}

/// `sh.helm.release.v1.demo.v7` → 7.
fn revision_from_name(name: &str) -> Option<i64> {
    name.rsplit_once(".v")?.1.parse().ok()
}

/// `helm history`'s chart and app version columns: `MISSING` when the chart or its metadata
/// is absent, else `<name>-<version>` and `appVersion` (empty strings when unset, as in Go).
pub fn chart_columns(release: &Value) -> (String, String) {
    let Some(meta) = release.pointer("/chart/metadata").filter(|m| m.is_object()) else {
        return ("MISSING".into(), "MISSING".into());
    };
    let field = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default();
    (
        format!("{}-{}", field("name"), field("version")),
        field("appVersion").to_string(),
    )
}

/// One record per revision: a readable one over an unreadable one, a Secret over a ConfigMap.
pub fn by_revision(all: &[Decoded]) -> Vec<&Decoded> {
    let mut best: BTreeMap<i64, &Decoded> = BTreeMap::new();
    for d in all {
        let better = match best.get(&d.row.revision) {
            None => true,
            Some(old) => old.release.is_none() && d.release.is_some(),
        };
        if better {
            best.insert(d.row.revision, d);
        }
    }
    best.into_values().collect()
}

/// The revision to inspect: `requested`, else the newest. `Err` carries the revision (when one
/// was meant) and why it cannot be shown.
pub fn choose<'a>(
    all: &'a [Decoded],
    requested: Option<i64>,
    release: &str,
    namespace: &str,
) -> Result<&'a Decoded, (Option<i64>, String)> {
    let revisions = by_revision(all);
    let Some(newest) = revisions.last() else {
        return Err((
            requested,
            format!(
                "release {release} has no records in namespace {namespace} (no Secret or ConfigMap labelled owner=helm,name={release})"
            ),
        ));
    };
    let chosen = match requested {
        None => *newest,
        Some(n) => match revisions.iter().find(|d| d.row.revision == n) {
            Some(d) => *d,
            None => {
                let stored: Vec<String> = revisions
                    .iter()
                    .map(|d| d.row.revision.to_string())
                    .collect();
                return Err((
                    Some(n),
                    format!(
                        "release {release} has no revision {n} (stored: {})",
                        stored.join(", ")
                    ),
                ));
            }
        },
    };
    match (&chosen.release, &chosen.row.error) {
        (Some(_), _) => Ok(chosen),
        (None, error) => Err((
            Some(chosen.row.revision),
            format!(
                "revision {} cannot be read ({} {}): {}",
                chosen.row.revision,
                chosen.row.storage.kubectl_name(),
                chosen.row.object,
                error.as_deref().unwrap_or("unreadable")
            ),
        )),
    }
}

/// The lock a `pending-*` newest revision holds, with the command that clears it.
/// `context` is the kube context inspect read with: the command must reach the same cluster.
pub fn lock_state(
    all: &[Decoded],
    release: &str,
    namespace: &str,
    context: Option<&str>,
    now: jiff::Timestamp,
) -> Option<LockState> {
    let rows = by_revision(all);
    let revisions: Vec<Revision> = rows
        .iter()
        .map(|d| Revision {
            version: d.row.revision,
            status: d.row.status.clone(),
            written_at: d.row.written_at,
            secret_name: d.row.object.clone(),
            ..Default::default()
        })
        .collect();
    let lock = releases::lock(&revisions, release, namespace, context)?;
    let pending = rows.last()?;
    let since = Some(pending.row.updated.clone())
        .filter(|s| !s.is_empty())
        .or_else(|| {
            pending
                .row
                .written_at
                .and_then(|s| jiff::Timestamp::from_second(s).ok())
                .map(|t| t.to_string())
        });
    let age_seconds = since
        .as_deref()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| now.as_second() - t.as_second());
    let (rev, status) = (lock.pending.version, &lock.pending.status);
    let (command, note) = match lock.last_deployed {
        Some(good) => (
            lock.fix.clone(),
            format!(
                "helm refuses every other operation on {release} while revision {rev} is {status}; if no helm process is still working on it, roll back to revision {good} (helmdeck never runs this)"
            ),
        ),
        None => (
            crate::advice::kubectl_delete(
                pending.row.storage.kubectl_name(),
                &pending.row.object,
                namespace,
                context,
            ),
            format!(
                "revision {rev} is {status} and no revision was ever deployed, so a rollback cannot help; if no helm process is still working on it, delete the stuck record (helmdeck never runs this)"
            ),
        ),
    };
    Some(LockState {
        revision: rev,
        status: status.clone(),
        since,
        age_seconds,
        last_deployed: lock.last_deployed,
        command,
        note,
    })
}

/// Which operation wrote `release`, from its own record and the revisions before it.
pub fn operation(release: &ReleaseStatus, all: &[Decoded]) -> Operation {
    if hooks::is_rollback(&release.status, &release.description) {
        return Operation::Rollback;
    }
    let before: Vec<HistoryEntry> = by_revision(all)
        .into_iter()
        .filter(|x| x.row.revision < release.version)
        .map(|x| x.row.entry.clone())
        .collect();
    match hooks::run_kind(&before) {
        RunKind::Install => Operation::Install,
        RunKind::Upgrade => Operation::Upgrade,
        RunKind::Rollback => Operation::Rollback,
    }
}

/// The hooks in helm's execution order for `op` (semantics §6.1): those with the pre event,
/// then those with the post event, each by weight then name (a stable sort, so equal weight
/// and name keep record order); hooks of other events follow in record order. The flag says
/// whether the hook belongs to this operation. Same order as `helm::hooks::judge`.
pub fn execution_order(hooks: &[HookRecord], op: Operation) -> Vec<(HookRecord, bool)> {
    let (pre, post) = op.events();
    let has = |h: &HookRecord, e: &str| h.events.iter().any(|x| x == e);
    let group = |h: &HookRecord| {
        if has(h, pre) {
            0
        } else if has(h, post) {
            1
        } else {
            2
        }
    };
    let mut sorted: Vec<&HookRecord> = hooks.iter().collect();
    sorted.sort_by(|a, b| {
        let (ga, gb) = (group(a), group(b));
        ga.cmp(&gb).then_with(|| {
            if ga == 2 {
                std::cmp::Ordering::Equal
            } else {
                a.weight.cmp(&b.weight).then_with(|| a.name.cmp(&b.name))
            }
        })
    });
    sorted
        .into_iter()
        .map(|h| (h.clone(), group(h) < 2))
        .collect()
}

#[cfg(test)]
mod tests;
