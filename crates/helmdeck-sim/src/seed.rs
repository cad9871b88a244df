//! Helm release records for scenario seeds, stored as Helm 4's Secret driver stores them.

use serde_json::{Value, json};

use super::scenario::SeedRelease;
use helmdeck_formats::release::release_secret;

/// One Secret per seeded revision, with timestamps `age` in the past.
pub fn release_secrets(release: &SeedRelease) -> Vec<Value> {
    let now = jiff::Timestamp::now();
    release
        .revisions
        .iter()
        .map(|rev| {
            let age = rev.age.unwrap_or_default();
            let when = now
                .checked_sub(jiff::SignedDuration::try_from(age).unwrap_or_default())
                .unwrap_or(now);
            let stamp = helmdeck_formats::time::rfc3339(when);
            let chart = rev.chart.clone().unwrap_or_else(|| "deckapp".into());
            let version = rev.chart_version.clone().unwrap_or_else(|| "0.4.2".into());
            let description =
                rev.description
                    .clone()
                    .unwrap_or_else(|| match rev.status.as_str() {
                        "pending-upgrade" => "Preparing upgrade".into(),
                        "pending-install" => "Initial install underway".into(),
                        "deployed" if rev.version == 1 => "Install complete".into(),
                        "failed" => format!("Upgrade \"{}\" failed: seeded failure", release.name),
                        _ => "Upgrade complete".into(),
                    });
            let record = json!({
                "name": release.name,
                "namespace": release.namespace,
                "version": rev.version,
                "info": {"first_deployed": stamp, "last_deployed": stamp, "status": rev.status,
                         "description": description},
                "chart": {"metadata": {"name": chart, "version": version, "apiVersion": "v2",
                                       "appVersion": "1.4.2"}},
                "manifest": "",
                "apply_method": "ssa",
            });
            let mut secret = release_secret(&record, when.as_second());
            // Written `age` ago, so the API server stamped it then.
            secret["metadata"]["creationTimestamp"] = json!(stamp);
            secret
        })
        .collect()
}
