//! Which workloads never gate a deploy, and why. One rule for the deploy step and for inspect,
//! so the two cannot disagree about what blocked a release.
//!
//! A workload is optional when a deny-list glob (`--optional`, `optional` in helmdeck.toml)
//! matches it, or when it carries `helmdeck.io/optional: "true"`, or one of werf's two
//! annotations that say the same (so charts written for werf carry over). Annotation values
//! compare case-insensitively: `"True"` in a chart means what its author meant.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::glob::KindGlob;

/// The annotations that make a workload optional, each with the value that does so. The first
/// one that matches names the reason.
pub const ANNOTATIONS: [(&str, &str); 3] = [
    ("helmdeck.io/optional", "true"),
    ("werf.io/fail-mode", "IgnoreAndContinueDeployProcess"),
    ("werf.io/track-termination-mode", "NonBlocking"),
];

/// Why the workload `kind` described by `meta` is optional (`--optional demo-gpu-*`,
/// `annotation helmdeck.io/optional`), or `None` when it gates. Globs match the object's own
/// name, before any sanitizing for display; the first matching glob wins, then annotations.
pub fn optional_because(deny: &[KindGlob], kind: &str, meta: &ObjectMeta) -> Option<String> {
    let name = meta.name.as_deref().unwrap_or("");
    if let Some(g) = deny.iter().find(|g| g.matches(kind, name)) {
        return Some(format!("--optional {}", g.as_str()));
    }
    let annotations = meta.annotations.as_ref()?;
    ANNOTATIONS
        .iter()
        .find(|(key, value)| {
            annotations
                .get(*key)
                .is_some_and(|v| v.eq_ignore_ascii_case(value))
        })
        .map(|(key, _)| format!("annotation {key}"))
}

/// The deny-list patterns that match none of the release's `workloads` (kind, name), in the
/// order given: a typo in one would otherwise leave the workload it meant silently gating.
pub fn unmatched<'a>(deny: &'a [KindGlob], workloads: &[(&str, &str)]) -> Vec<&'a KindGlob> {
    deny.iter()
        .filter(|g| !workloads.iter().any(|(kind, name)| g.matches(kind, name)))
        .collect()
}

/// The warning for a pattern [`unmatched`] found, naming it as it was given.
pub fn unmatched_warning(glob: &KindGlob) -> String {
    format!(
        "--optional {} matches no workload of the release: it makes nothing optional (a typo \
         leaves the workload it meant gating)",
        glob.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, annotations: &[(&str, &str)]) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            annotations: (!annotations.is_empty()).then(|| {
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
            ..ObjectMeta::default()
        }
    }

    fn globs(patterns: &[&str]) -> Vec<KindGlob> {
        patterns
            .iter()
            .map(|p| KindGlob::new(p).expect("valid glob"))
            .collect()
    }

    #[test]
    fn by_glob_with_or_without_a_kind() {
        let deny = globs(&["Deployment/*-gpu-client", "demo-mon*"]);
        let because = |kind: &str, name: &str| optional_because(&deny, kind, &meta(name, &[]));
        assert_eq!(
            because("Deployment", "demo-gpu-client").as_deref(),
            Some("--optional Deployment/*-gpu-client")
        );
        assert_eq!(because("StatefulSet", "demo-gpu-client"), None);
        assert_eq!(
            because("DaemonSet", "demo-monitoring").as_deref(),
            Some("--optional demo-mon*")
        );
        assert_eq!(because("Deployment", "demo-web"), None, "whole-name match");
        assert_eq!(because("Deployment", "x-demo-monitoring"), None);
    }

    #[test]
    fn by_annotation_in_any_case() {
        for (key, value) in [
            ("helmdeck.io/optional", "true"),
            ("helmdeck.io/optional", "TRUE"),
            ("helmdeck.io/optional", "True"),
            ("werf.io/fail-mode", "IgnoreAndContinueDeployProcess"),
            ("werf.io/fail-mode", "ignoreandcontinuedeployprocess"),
            ("werf.io/track-termination-mode", "NonBlocking"),
            ("werf.io/track-termination-mode", "nonblocking"),
        ] {
            assert_eq!(
                optional_because(&[], "Deployment", &meta("demo-web", &[(key, value)])),
                Some(format!("annotation {key}")),
                "{key}: {value}"
            );
        }
    }

    #[test]
    fn other_values_and_other_annotations_gate() {
        for (key, value) in [
            ("helmdeck.io/optional", "false"),
            ("helmdeck.io/optional", ""),
            ("helmdeck.io/optional", "yes"),
            ("werf.io/fail-mode", "FailWholeDeployProcessImmediately"),
            ("werf.io/track-termination-mode", "WaitUntilResourceReady"),
            ("helm.sh/resource-policy", "keep"),
        ] {
            assert_eq!(
                optional_because(&[], "Deployment", &meta("demo-web", &[(key, value)])),
                None,
                "{key}: {value}"
            );
        }
        assert_eq!(
            optional_because(&[], "Deployment", &ObjectMeta::default()),
            None
        );
    }

    #[test]
    fn a_glob_is_named_before_an_annotation() {
        let deny = globs(&["demo-*"]);
        let m = meta("demo-gpu", &[("helmdeck.io/optional", "true")]);
        assert_eq!(
            optional_because(&deny, "Deployment", &m).as_deref(),
            Some("--optional demo-*")
        );
    }

    #[test]
    fn a_pattern_that_matches_no_workload_is_named() {
        let deny = globs(&[
            "Deployment/*-gpu-client",
            "Deployment/*-gpu-clinet",
            "demo-mon*",
        ]);
        let workloads = [
            ("Deployment", "demo-gpu-client"),
            ("DaemonSet", "demo-monitoring"),
            ("StatefulSet", "demo-db"),
        ];
        let left: Vec<&str> = unmatched(&deny, &workloads)
            .into_iter()
            .map(KindGlob::as_str)
            .collect();
        assert_eq!(left, ["Deployment/*-gpu-clinet"]);
        assert_eq!(
            unmatched(&deny, &[]).len(),
            3,
            "no workload: nothing matches"
        );
        assert_eq!(
            unmatched_warning(&deny[1]),
            "--optional Deployment/*-gpu-clinet matches no workload of the release: it makes \
             nothing optional (a typo leaves the workload it meant gating)"
        );
    }
}
