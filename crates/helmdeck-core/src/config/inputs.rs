//! What a deploy reads besides the cluster, once resolved: the saved `-f -` values and a pulled
//! chart. Plain data the plan holds; `engine::inputs` resolves it before the first cluster
//! request and says which helm arguments each call gets.

use std::path::PathBuf;

/// The resolved inputs; empty until
/// [`resolve`](crate::engine::inputs::resolve) ran (and for a plan that needs neither).
#[derive(Debug, Default)]
pub struct Inputs {
    pub(crate) dir: Option<tempfile::TempDir>,
    /// Where the values read from stdin were saved.
    pub(crate) stdin_values: Option<PathBuf>,
    pub(crate) pulled: Option<Pulled>,
}

/// A repository or OCI chart, untarred once.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub dir: PathBuf,
    /// The exact version pulled (from its Chart.yaml).
    pub version: String,
}

impl Inputs {
    /// The path helm is given for a values file: the saved stdin for `-`, else as given.
    pub fn values_path(&self, given: &str) -> String {
        match (&self.stdin_values, given) {
            (Some(saved), "-") => saved.display().to_string(),
            _ => given.to_string(),
        }
    }

    pub fn pulled(&self) -> Option<&Pulled> {
        self.pulled.as_ref()
    }
}
