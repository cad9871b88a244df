//! The fleet's targets: `--target CONTEXT` (repeatable) or helmdeck.toml's `[[target]]` tables,
//! checked as the rest of the plan is, before any cluster request.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;
use crate::validate;

/// One `[[target]]` table of helmdeck.toml, and the target it resolves to: where one deploy of
/// the fleet goes (a kube context, its namespace, its own values and a label).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TargetSetting {
    /// What the screen, the headless lines and the per-target files name it by (default: the
    /// context).
    #[serde(default)]
    pub label: String,
    /// The kube context (may hold colons: an EKS ARN).
    pub context: String,
    /// The release's namespace there (default: `-n`, the file's `namespace`, else the
    /// context's).
    pub namespace: Option<String>,
    /// Values files read after the deploy's own, for this target only (relative to the file).
    #[serde(default)]
    pub values: Vec<PathBuf>,
    /// `--set` pairs after the deploy's own, for this target only.
    #[serde(default)]
    pub set: Vec<String>,
}

/// The fleet's targets: the command line's `--target`s when there are any (flags win), else
/// the file's tables, their values files made relative to the file. Each label (default: the
/// context) must be unique, as must the file name it gives (see [`file_label`]); each
/// namespace and values file is held to the deploy's rules.
pub fn targets(
    flags: &[String],
    tables: Vec<TargetSetting>,
    base: Option<&Path>,
) -> Result<Vec<TargetSetting>, ConfigError> {
    let targets: Vec<TargetSetting> = if flags.is_empty() {
        tables
            .into_iter()
            .map(|mut t| {
                t.values = t
                    .values
                    .into_iter()
                    .map(|v| match base {
                        Some(dir) if v.is_relative() => dir.join(v),
                        _ => v,
                    })
                    .collect();
                t
            })
            .collect()
    } else {
        flags
            .iter()
            .map(|context| TargetSetting {
                label: String::new(),
                context: context.clone(),
                namespace: None,
                values: vec![],
                set: vec![],
            })
            .collect()
    };
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::with_capacity(targets.len());
    for mut t in targets {
        if t.context.trim().is_empty() {
            return Err(ConfigError::Target("a target names no context".into()));
        }
        if t.label.is_empty() {
            t.label = t.context.clone();
        }
        let file = file_label(&t.label);
        if let Some(other) = seen.insert(file.clone(), t.label.clone()) {
            return Err(ConfigError::Target(format!(
                "targets {} and {} share the name {file} (their reports and records would \
                 overwrite each other): give each a distinct label",
                crate::text::plain(&other),
                crate::text::plain(&t.label)
            )));
        }
        if let Some(ns) = &t.namespace {
            validate::namespace(ns)?;
        }
        for v in &t.values {
            if v.as_os_str() == "-" {
                return Err(ConfigError::Target(format!(
                    "target {}: values from stdin (-f -) can be read only once, not per target",
                    crate::text::plain(&t.label)
                )));
            }
            validate::values_file(v)?;
        }
        out.push(t);
    }
    Ok(out)
}

/// A target's label as a file name part: letters, digits, `.`, `_` and `-` kept, anything else
/// (an EKS ARN's `:` and `/`) a `-`, so `arn:aws:eks:…:cluster/kch` names
/// `fleet.arn-aws-eks-…-cluster-kch.json`.
pub fn file_label(label: &str) -> String {
    let cut: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(100)
        .collect();
    // A name of dots alone would be `.` or `..` in a path.
    if cut.chars().all(|c| c == '.') {
        format!("target{cut}")
    } else {
        cut
    }
}

impl super::DeployPlan {
    /// The plan of one target: this plan's, in the target's context and namespace (the
    /// target's, else this plan's), the target's values after the plan's own, no targets.
    pub fn for_target(&self, target: &TargetSetting) -> super::DeployPlan {
        let mut plan = self.clone();
        plan.context = Some(target.context.clone());
        plan.namespace = target.namespace.clone().or(plan.namespace);
        plan.values.extend(target.values.iter().cloned());
        plan.set.extend(target.set.iter().cloned());
        plan.targets.clear();
        plan
    }
}
