//! Name globs with an optional kind prefix (`Deployment/*-gpu-client`), shared by the deny
//! list and the simulator's scenario rules.

use globset::{Glob, GlobMatcher};

/// A pattern globset cannot compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob {pattern:?}")]
pub struct GlobError {
    pub pattern: String,
    #[source]
    pub source: globset::Error,
}

#[derive(Debug, Clone)]
pub struct KindGlob {
    kind: Option<String>,
    name: GlobMatcher,
    source: String,
}

impl KindGlob {
    pub fn new(pattern: &str) -> Result<Self, GlobError> {
        let (kind, name) = match pattern.split_once('/') {
            Some((k, n)) => (Some(k.to_string()), n),
            None => (None, pattern),
        };
        let name = Glob::new(name)
            .map_err(|source| GlobError {
                pattern: pattern.to_string(),
                source,
            })?
            .compile_matcher();
        Ok(KindGlob {
            kind,
            name,
            source: pattern.to_string(),
        })
    }

    /// Whole-name match; the kind, when given, compares case-insensitively.
    pub fn matches(&self, kind: &str, name: &str) -> bool {
        self.kind
            .as_deref()
            .is_none_or(|k| k.eq_ignore_ascii_case(kind))
            && self.name.is_match(name)
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_prefix_and_whole_name() {
        let g = KindGlob::new("Deployment/*-gpu-client").unwrap();
        assert!(g.matches("Deployment", "demo-gpu-client"));
        assert!(g.matches("deployment", "demo-gpu-client"));
        assert!(!g.matches("StatefulSet", "demo-gpu-client"));
        assert!(!g.matches("Deployment", "demo-gpu-client-2"));
        let any = KindGlob::new("demo-*").unwrap();
        assert!(any.matches("DaemonSet", "demo-agent"));
        assert!(!any.matches("DaemonSet", "xdemo-agent"));
        assert!(KindGlob::new("[").is_err());
    }
}
