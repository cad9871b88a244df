//! Typed views of `helm status -o json`, a decoded release record, and `helm history -o json`.
//!
//! Tolerant by design: every field may be missing or null (Helm 4 leaves out zero times and
//! zero weights, Helm 3 wrote zero times as `""`), and unknown fields are ignored. The release's
//! `config` (the user-supplied values, which may hold secrets) is not a field here, so serde
//! skips it without ever building it.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::helm::phase::HookPhase;

/// One release revision, as much of it as helmdeck needs.
///
/// Not `Serialize` on purpose: `manifest` is rendered YAML and may contain Secret data, so this
/// struct is not something to dump into a report or an event log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReleaseStatus {
    pub name: String,
    pub namespace: String,
    /// The revision number.
    pub version: i64,
    /// `deployed`, `failed`, `pending-upgrade`, ... (empty when the record has none).
    pub status: String,
    pub description: String,
    pub first_deployed: Option<String>,
    pub last_deployed: Option<String>,
    /// In record order.
    pub hooks: Vec<HookRecord>,
    /// The rendered non-hook manifest. May contain Secret data: never print it.
    pub manifest: String,
    /// From `chart.metadata`; `helm status` output carries no chart, so these are `None` there.
    pub chart: Option<String>,
    pub chart_version: Option<String>,
    pub app_version: Option<String>,
}

/// One hook as the record stores it (its manifest is left out: it may hold rendered values).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct HookRecord {
    /// The hook object's `metadata.name`.
    pub name: String,
    pub kind: String,
    /// Chart-relative template path, e.g. `demo/templates/hook-job.yaml`.
    pub path: String,
    /// `pre-install`, `post-upgrade`, `test`, ...
    pub events: Vec<String>,
    pub weight: i64,
    pub phase: HookPhase,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub delete_policies: Vec<String>,
}

/// One row of `helm history -o json`.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct HistoryEntry {
    pub revision: i64,
    /// RFC 3339.
    pub updated: String,
    pub status: String,
    /// `<name>-<version>`, or `MISSING` when the record has no chart metadata.
    pub chart: String,
    pub app_version: String,
    pub description: String,
}

/// Why helm's JSON could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusError {
    /// Not JSON of the expected shape; `what` names the input, `detail` is serde's message
    /// (with line and column for byte input).
    Json { what: &'static str, detail: String },
}

impl fmt::Display for StatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatusError::Json { what, detail } => write!(f, "cannot read {what}: {detail}"),
        }
    }
}

impl std::error::Error for StatusError {}

/// Parses `helm status -o json` (or any release JSON: a record's `chart` is read when present).
pub fn parse_status(json: &[u8]) -> Result<ReleaseStatus, StatusError> {
    let raw: RawRelease = serde_json::from_slice(json).map_err(|e| StatusError::Json {
        what: "helm status JSON",
        detail: e.to_string(),
    })?;
    Ok(raw.into_status())
}

/// The same from a decoded release record (see `release::decode_release_secret`). Reads through
/// the borrowed value, so nothing of `config` is copied.
pub fn from_release_json(v: &Value) -> Result<ReleaseStatus, StatusError> {
    let raw = RawRelease::deserialize(v).map_err(|e| StatusError::Json {
        what: "release record",
        detail: e.to_string(),
    })?;
    Ok(raw.into_status())
}

/// Parses `helm history -o json` (oldest first, as helm prints it). `null` reads as empty.
pub fn parse_history(json: &[u8]) -> Result<Vec<HistoryEntry>, StatusError> {
    let raw: Option<Vec<RawHistory>> =
        serde_json::from_slice(json).map_err(|e| StatusError::Json {
            what: "helm history JSON",
            detail: e.to_string(),
        })?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .map(|h| HistoryEntry {
            revision: h.revision.unwrap_or(0),
            updated: h.updated.unwrap_or_default(),
            status: h.status.unwrap_or_default(),
            chart: h.chart.unwrap_or_default(),
            app_version: h.app_version.unwrap_or_default(),
            description: h.description.unwrap_or_default(),
        })
        .collect())
}

/// A `pending-*` status: an operation holds the release lock (or died holding it).
pub fn is_pending(status: &str) -> bool {
    matches!(
        status,
        "pending-install" | "pending-upgrade" | "pending-rollback"
    )
}

// The wire shapes. Every field is an Option so that both "missing" and `null` read as absent;
// the public structs then carry plain defaults.

#[derive(Deserialize)]
struct RawRelease {
    name: Option<String>,
    namespace: Option<String>,
    version: Option<i64>,
    info: Option<RawInfo>,
    manifest: Option<String>,
    hooks: Option<Vec<RawHook>>,
    chart: Option<RawChart>,
    // `config` is deliberately absent (see the module doc).
}

#[derive(Deserialize, Default)]
struct RawInfo {
    status: Option<String>,
    description: Option<String>,
    first_deployed: Option<String>,
    last_deployed: Option<String>,
}

#[derive(Deserialize)]
struct RawChart {
    metadata: Option<RawChartMetadata>,
}

#[derive(Deserialize)]
struct RawChartMetadata {
    name: Option<String>,
    version: Option<String>,
    #[serde(rename = "appVersion")]
    app_version: Option<String>,
}

#[derive(Deserialize)]
struct RawHook {
    name: Option<String>,
    kind: Option<String>,
    path: Option<String>,
    events: Option<Vec<String>>,
    weight: Option<i64>,
    last_run: Option<RawLastRun>,
    delete_policies: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct RawLastRun {
    phase: Option<String>,
    started_at: Option<String>,
    completed_at: Option<String>,
}

#[derive(Deserialize)]
struct RawHistory {
    revision: Option<i64>,
    updated: Option<String>,
    status: Option<String>,
    chart: Option<String>,
    app_version: Option<String>,
    description: Option<String>,
}

/// Helm 3 wrote zero times as `""`; Helm 4 leaves them out. Both mean "never".
fn time(t: Option<String>) -> Option<String> {
    t.filter(|t| !t.is_empty())
}

impl RawRelease {
    fn into_status(self) -> ReleaseStatus {
        let info = self.info.unwrap_or_default();
        let meta = self.chart.and_then(|c| c.metadata);
        let (chart, chart_version, app_version) = match meta {
            Some(m) => (m.name, m.version, m.app_version),
            None => (None, None, None),
        };
        ReleaseStatus {
            name: self.name.unwrap_or_default(),
            namespace: self.namespace.unwrap_or_default(),
            version: self.version.unwrap_or(0),
            status: info.status.unwrap_or_default(),
            description: info.description.unwrap_or_default(),
            first_deployed: time(info.first_deployed),
            last_deployed: time(info.last_deployed),
            hooks: self
                .hooks
                .unwrap_or_default()
                .into_iter()
                .map(RawHook::into_record)
                .collect(),
            manifest: self.manifest.unwrap_or_default(),
            chart,
            chart_version,
            app_version,
        }
    }
}

impl RawHook {
    fn into_record(self) -> HookRecord {
        let (phase, started_at, completed_at) = match self.last_run {
            Some(r) => (
                HookPhase::from_helm(r.phase.as_deref().unwrap_or("")),
                time(r.started_at),
                time(r.completed_at),
            ),
            None => (HookPhase::NeverRan, None, None),
        };
        HookRecord {
            name: self.name.unwrap_or_default(),
            kind: self.kind.unwrap_or_default(),
            path: self.path.unwrap_or_default(),
            events: self.events.unwrap_or_default(),
            weight: self.weight.unwrap_or(0),
            phase,
            started_at,
            completed_at,
            delete_policies: self.delete_policies.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Shaped like `helm status demo -o json` from helm v4.1.4 after a failed post-upgrade hook
    /// (no `chart`; `config` present; zero weights and times left out).
    const STATUS: &str = r#"{
      "name": "demo",
      "info": {
        "first_deployed": "2026-12-01T00:58:50.617170225Z",
        "last_deployed": "2026-12-01T01:10:02.1Z",
        "description": "Upgrade \"demo\" failed: post-upgrade hooks failed: resource Job/default/demo-seed not ready. status: Failed, message: Job Failed. failed: 1/1",
        "status": "failed",
        "notes": "deckapp is deployed",
        "resources": {"v1/Deployment": [{"kind": "Deployment"}]}
      },
      "config": {"db": {"password": "hunter2"}},
      "manifest": "---\n# Source: deckapp/templates/api.yaml\nkind: Service\n",
      "hooks": [
        {"name": "demo-init", "kind": "Job", "path": "deckapp/templates/init-job.yaml",
         "manifest": "kind: Job", "events": ["post-install", "post-upgrade"],
         "last_run": {"started_at": "2026-12-01T01:09:00Z", "completed_at": "2026-12-01T01:09:30Z", "phase": "Succeeded"},
         "delete_policies": ["before-hook-creation"]},
        {"name": "demo-migrate", "kind": "Job", "path": "deckapp/templates/migrate-job.yaml",
         "events": ["pre-install", "pre-upgrade"], "last_run": {"phase": "Succeeded"}, "weight": -5},
        {"name": "demo-seed", "kind": "Job", "path": "deckapp/templates/seed-job.yaml",
         "events": ["post-install", "post-upgrade"], "last_run": {"started_at": "2026-12-01T01:09:31Z", "phase": "Failed"},
         "weight": 5, "output_log_policies": ["hook-failed"]}
      ],
      "version": 2,
      "namespace": "default",
      "apply_method": "ssa"
    }"#;

    #[test]
    fn parses_status_output() {
        let s = parse_status(STATUS.as_bytes()).expect("parse");
        assert_eq!(s.name, "demo");
        assert_eq!(s.namespace, "default");
        assert_eq!(s.version, 2);
        assert_eq!(s.status, "failed");
        assert!(
            s.description
                .starts_with("Upgrade \"demo\" failed: post-upgrade")
        );
        assert_eq!(
            s.first_deployed.as_deref(),
            Some("2026-12-01T00:58:50.617170225Z")
        );
        assert!(s.manifest.contains("# Source: deckapp/templates/api.yaml"));
        assert_eq!(s.chart, None, "helm status strips the chart");
        let names: Vec<&str> = s.hooks.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["demo-init", "demo-migrate", "demo-seed"]);
        let seed = &s.hooks[2];
        assert_eq!(seed.phase, HookPhase::Failed);
        assert_eq!(seed.weight, 5);
        assert_eq!(seed.started_at.as_deref(), Some("2026-12-01T01:09:31Z"));
        assert_eq!(seed.completed_at, None);
        assert!(seed.delete_policies.is_empty());
        assert_eq!(s.hooks[1].weight, -5);
        assert_eq!(s.hooks[0].delete_policies, ["before-hook-creation"]);
    }

    #[test]
    fn config_values_are_never_kept() {
        let s = parse_status(STATUS.as_bytes()).expect("parse");
        assert!(!format!("{s:?}").contains("hunter2"));
    }

    #[test]
    fn release_record_gives_chart_metadata_and_never_ran_hooks() {
        let record = json!({
            "name": "demo", "version": 1, "namespace": "apps",
            "info": {"status": "pending-install", "description": "Initial install underway",
                     "first_deployed": "", "last_deployed": ""},
            "chart": {"metadata": {"name": "deckapp", "version": "0.4.2", "appVersion": "1.4.2",
                                   "apiVersion": "v2"},
                      "templates": [{"name": "templates/x.yaml", "data": "a2luZDogSm9i"}]},
            "config": {"token": "s3cret"},
            "hooks": [{"name": "demo-migrate", "events": ["pre-install"], "last_run": {"phase": ""}},
                      {"name": "old", "events": ["post-install"]}]
        });
        let s = from_release_json(&record).expect("parse");
        assert_eq!(s.chart.as_deref(), Some("deckapp"));
        assert_eq!(s.chart_version.as_deref(), Some("0.4.2"));
        assert_eq!(s.app_version.as_deref(), Some("1.4.2"));
        assert_eq!(s.namespace, "apps");
        assert!(is_pending(&s.status));
        // Helm 3 wrote zero times as "".
        assert_eq!(s.first_deployed, None);
        assert_eq!(s.hooks[0].phase, HookPhase::NeverRan);
        assert_eq!(s.hooks[1].phase, HookPhase::NeverRan, "no last_run at all");
        assert!(!format!("{s:?}").contains("s3cret"));
    }

    #[test]
    fn missing_and_null_fields_default() {
        let s = parse_status(br#"{"name": null, "hooks": null, "info": null}"#).expect("parse");
        assert_eq!(s, ReleaseStatus::default());
        let s =
            parse_status(br#"{"hooks": [{"last_run": {"phase": "Exploded"}}]}"#).expect("parse");
        assert_eq!(s.hooks[0].phase, HookPhase::Unknown);
    }

    #[test]
    fn errors_say_what_was_being_read() {
        let err = parse_status(b"Error: release: not found").expect_err("not JSON");
        assert!(
            err.to_string()
                .starts_with("cannot read helm status JSON: "),
            "{err}"
        );
        let err = parse_status(b"[]").expect_err("not an object");
        assert!(err.to_string().contains("helm status JSON"), "{err}");
        let err = from_release_json(&json!({"version": "two"})).expect_err("wrong type");
        assert!(
            err.to_string().starts_with("cannot read release record: "),
            "{err}"
        );
        let err = parse_history(b"{}").expect_err("not an array");
        assert!(err.to_string().contains("helm history JSON"), "{err}");
    }

    #[test]
    fn parses_history() {
        let json = br#"[
          {"revision": 1, "updated": "2026-12-01T00:58:50Z", "status": "superseded",
           "chart": "deckapp-0.4.2", "app_version": "1.4.2", "description": "Install complete"},
          {"revision": 2, "updated": "2026-12-01T01:10:02Z", "status": "failed",
           "chart": "MISSING", "app_version": "MISSING",
           "description": "Upgrade \"rel1\" failed: pre-upgrade hooks failed: boom"}
        ]"#;
        let h = parse_history(json).expect("parse");
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].revision, 1);
        assert_eq!(h[0].chart, "deckapp-0.4.2");
        assert_eq!(h[1].status, "failed");
        assert_eq!(h[1].app_version, "MISSING");
        assert!(parse_history(b"null").expect("null").is_empty());
        assert!(parse_history(b"[]").expect("empty").is_empty());
    }

    #[test]
    fn pending_statuses() {
        for s in ["pending-install", "pending-upgrade", "pending-rollback"] {
            assert!(is_pending(s), "{s}");
        }
        for s in [
            "deployed",
            "failed",
            "superseded",
            "uninstalling",
            "",
            "pending",
        ] {
            assert!(!is_pending(s), "{s}");
        }
    }
}
