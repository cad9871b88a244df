//! Helm release records read straight from their Secrets (`owner=helm,name=REL`), for the
//! lock check and the manifest cross-check. Labels give revision and status; the body is
//! decoded only for what labels lack.

use color_eyre::eyre::{Result, WrapErr};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use crate::helm::release::decode_release_secret;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Revision {
    pub version: i64,
    pub status: String,
    /// Unix seconds of the last write (`modifiedAt`, else `createdAt` label). Helm 4 copies the
    /// previous revision's `modifiedAt` onto a new record, so this is no age of a revision.
    pub written_at: Option<i64>,
    pub secret_name: String,
    /// The record Secret's UID: a revision is a run's own only when its UID appeared while that
    /// run's helm ran.
    pub uid: String,
    /// The record Secret's `metadata.creationTimestamp` (RFC 3339): when the revision was
    /// written, so when the operation that wrote it started.
    pub created: Option<String>,
}

impl Revision {
    /// The helm operation a `pending-*` status stands for (`pending-upgrade` -> `upgrade`); for
    /// a finished revision, the one that wrote it (the first an install, later ones upgrades).
    pub fn operation(&self) -> &str {
        match self.status.strip_prefix("pending-") {
            Some(op) => op,
            None if self.version == 1 => "install",
            None => "upgrade",
        }
    }

    /// Seconds since the record Secret was created, as of `now` (`None` when unknown).
    pub fn age_secs(&self, now: jiff::Timestamp) -> Option<i64> {
        let created: jiff::Timestamp = self.created.as_deref()?.parse().ok()?;
        Some(now.as_second() - created.as_second())
    }
}

/// Every stored revision of a release, oldest first.
pub async fn revisions(
    client: &kube::Client,
    namespace: &str,
    release: &str,
) -> Result<Vec<Revision>> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let list = api
        .list_metadata(&ListParams::default().labels(&format!("owner=helm,name={release}")))
        .await
        .wrap_err_with(|| format!("listing the release records of {release} in {namespace}"))?;
    let mut out: Vec<Revision> = list
        .items
        .iter()
        .filter_map(|s| {
            let labels = s.metadata.labels.as_ref()?;
            let version = labels.get("version")?.parse().ok()?;
            let at = |k: &str| labels.get(k).and_then(|v| v.parse::<i64>().ok());
            Some(Revision {
                version,
                status: labels.get("status").cloned().unwrap_or_default(),
                written_at: at("modifiedAt").or_else(|| at("createdAt")),
                secret_name: s.metadata.name.clone().unwrap_or_default(),
                uid: s.metadata.uid.clone().unwrap_or_default(),
                created: s
                    .metadata
                    .creation_timestamp
                    .as_ref()
                    .map(|t| crate::time::rfc3339(t.0)),
            })
        })
        .collect();
    out.sort_by_key(|r| r.version);
    Ok(out)
}

/// One revision's record Secret, read and decoded (values included: callers drop or guard them).
async fn decoded(client: &kube::Client, namespace: &str, secret_name: &str) -> Result<Value> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = api
        .get(secret_name)
        .await
        .wrap_err_with(|| format!("reading {secret_name}"))?;
    let value = serde_json::to_value(&secret).wrap_err("re-encoding the Secret")?;
    decode_release_secret(&value)
        .map_err(|e| color_eyre::eyre::eyre!("decoding {secret_name}: {e}"))
}

/// The decoded release record of one revision (helm's JSON, without touching `config`).
pub async fn record(client: &kube::Client, namespace: &str, secret_name: &str) -> Result<Value> {
    let mut release = decoded(client, namespace, secret_name).await?;
    // Values may hold secrets: drop them as soon as the record is read.
    if let Some(obj) = release.as_object_mut() {
        obj.remove("config");
        if let Some(chart) = obj.get_mut("chart").and_then(Value::as_object_mut) {
            chart.remove("values");
        }
    }
    Ok(release)
}

/// The values helm deployed a revision with (the record's `config`: exactly what `-f`/`--set*`/
/// `--reuse-values` came to). They may hold secrets: callers hand them to helm through a private
/// file and never show them.
pub async fn values(client: &kube::Client, namespace: &str, secret_name: &str) -> Result<Value> {
    let mut release = decoded(client, namespace, secret_name).await?;
    Ok(match release.get_mut("config").map(Value::take) {
        Some(config @ Value::Object(_)) => config,
        _ => Value::Object(Default::default()),
    })
}

/// `name version` of the chart of one revision (helm status leaves the chart out).
pub async fn chart(client: &kube::Client, namespace: &str, secret_name: &str) -> Option<String> {
    let record = record(client, namespace, secret_name).await.ok()?;
    let meta = record.pointer("/chart/metadata")?;
    let name = meta.get("name")?.as_str()?;
    let version = meta.get("version").and_then(Value::as_str).unwrap_or("");
    Some(crate::text::plain(format!("{name} {version}").trim()))
}

/// The lock a `pending-*` latest revision puts on the release, described for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub pending: Revision,
    pub last_deployed: Option<i64>,
    /// The command that clears it (never run by helmdeck).
    pub fix: String,
}

/// The newest revision helm records as `deployed`: the only one a rollback may target. A
/// `superseded` one was replaced, by a later deploy or by a rollback that then failed; a
/// `failed` or `pending-*` one never went live.
pub fn last_deployed(revisions: &[Revision]) -> Option<i64> {
    revisions
        .iter()
        .rev()
        .find(|r| r.status == "deployed")
        .map(|r| r.version)
}

/// `context` is the kube context the deploy used: the fix must reach the same cluster.
pub fn lock(
    revisions: &[Revision],
    release: &str,
    namespace: &str,
    context: Option<&str>,
) -> Option<Lock> {
    let latest = revisions.last()?;
    if !latest.status.starts_with("pending-") {
        return None;
    }
    let last_deployed = last_deployed(revisions);
    let fix = match last_deployed {
        Some(v) => crate::advice::helm_rollback(release, v, namespace, context),
        // Nothing to roll back to: only removing the stuck record unblocks the release.
        None => crate::advice::kubectl_delete("secret", &latest.secret_name, namespace, context),
    };
    Some(Lock {
        pending: latest.clone(),
        last_deployed,
        fix,
    })
}

/// Workloads named in a release manifest as (kind, namespace, name), for the label
/// cross-check and for which namespaces to watch. A workload without `metadata.namespace` is
/// in `release_namespace`, where helm puts it.
pub fn manifest_workloads(
    manifest: &str,
    release_namespace: &str,
) -> Vec<(String, String, String)> {
    let docs: Vec<Value> = manifest
        .split("\n---")
        .filter_map(|doc| serde_saphyr::from_str::<Value>(doc).ok())
        .collect();
    docs.iter()
        .filter_map(|d| {
            let kind = d.get("kind")?.as_str()?;
            if !matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet") {
                return None;
            }
            let namespace = d
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or(release_namespace);
            Some((
                kind.to_string(),
                namespace.to_string(),
                d.pointer("/metadata/name")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(version: i64, status: &str) -> Revision {
        Revision {
            version,
            status: status.into(),
            secret_name: format!("sh.helm.release.v1.demo.v{version}"),
            ..Default::default()
        }
    }

    #[test]
    fn pending_latest_revision_is_a_lock_with_a_rollback_fix() {
        let l = lock(
            &[
                rev(1, "superseded"),
                rev(2, "deployed"),
                rev(3, "pending-upgrade"),
            ],
            "demo",
            "apps",
            None,
        )
        .unwrap();
        assert_eq!(l.pending.version, 3);
        assert_eq!(l.last_deployed, Some(2));
        assert_eq!(l.fix, "helm rollback demo 2 -n apps");
        assert!(
            lock(
                &[rev(1, "deployed"), rev(2, "failed")],
                "demo",
                "apps",
                None
            )
            .is_none()
        );
        assert!(lock(&[], "demo", "apps", None).is_none());
    }

    #[test]
    fn the_last_deployed_revision_is_never_a_failed_or_superseded_one() {
        assert_eq!(
            last_deployed(&[rev(1, "superseded"), rev(2, "deployed"), rev(3, "failed")]),
            Some(2)
        );
        // A rollback that failed superseded the deployed revision: nothing is deployed.
        let after_failed_rollback = [rev(1, "superseded"), rev(2, "superseded"), rev(3, "failed")];
        assert_eq!(last_deployed(&after_failed_rollback), None);
        let mut locked = after_failed_rollback.to_vec();
        locked.push(rev(4, "pending-upgrade"));
        let l = lock(&locked, "demo", "apps", None).unwrap();
        assert_eq!(l.last_deployed, None);
        assert_eq!(
            l.fix,
            "kubectl delete secret sh.helm.release.v1.demo.v4 -n apps"
        );
        assert_eq!(last_deployed(&[]), None);
    }

    #[test]
    fn pending_install_without_a_deployed_revision_names_the_record_to_delete() {
        let l = lock(&[rev(1, "pending-install")], "demo", "apps", Some("prod")).unwrap();
        assert_eq!(l.last_deployed, None);
        assert_eq!(
            l.fix,
            "kubectl delete secret sh.helm.release.v1.demo.v1 -n apps --context prod"
        );
    }

    #[test]
    fn manifest_workloads_are_found_in_the_namespace_they_name() {
        let m = "---\n# Source: c/templates/a.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\n# Source: c/templates/s.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: exporter\n  namespace: monitoring\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: blank\n  namespace: \"\"\n";
        let key = |k: &str, n: &str, w: &str| (k.to_string(), n.to_string(), w.to_string());
        assert_eq!(
            manifest_workloads(m, "apps"),
            vec![
                key("Deployment", "apps", "web"),
                key("StatefulSet", "apps", "db"),
                key("DaemonSet", "monitoring", "exporter"),
                key("Deployment", "apps", "blank"),
            ]
        );
    }
}
