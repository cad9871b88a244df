//! Keeps release values out of records: every value given with `--set` (and its kin) or in a
//! values file is masked wherever it shows up in an event (a chart's NOTES printing a password,
//! a container logging its config). The events hold no values by design; this is the second
//! lock, because helm output and logs are text nobody controls.

use std::path::Path;

use serde_json::Value;

use crate::helm::process::redact_args;

const MASK: &str = "***";

/// Shorter values are masked nowhere: `1`, `on` or `web` would shred every line of the record
/// while being no secret. Switches (`true`, `false`, `null`) are not secrets either.
const MIN_LEN: usize = 4;

/// Fields (in events and the report) whose string names an object, a step or a state: never
/// masked.
const IDENTITY: &[&str] = &[
    "chart",
    "context",
    "events",
    "kind",
    "kube_context",
    "kubeContext",
    "name",
    "namespace",
    "outcome",
    "phase",
    "release",
    "state",
    "step",
    "uid",
];

#[derive(Debug, Clone, Default)]
pub struct Scrub {
    /// Longest first, so a secret containing another is masked whole.
    secrets: Vec<String>,
}

impl Scrub {
    /// The values of the helm arguments `args` (`--set k=v`, `-f file`, `--set-string …`, as
    /// passed to helm): the ones the printed commands already mask, and every string in a values
    /// file.
    pub fn of_helm_args(args: &[String]) -> Scrub {
        let mut secrets = Vec::new();
        let redacted = redact_args(args);
        for (arg, shown) in args.iter().zip(&redacted) {
            if arg != shown {
                let value = match arg.split_once('=') {
                    // `--set=k=v,k2=v2`: the flag's own `=` first.
                    Some((flag, rest)) if flag.starts_with("--") => rest,
                    _ => arg.as_str(),
                };
                secrets.push(value.to_string());
                for pair in value.split(',') {
                    secrets.push(pair.split_once('=').map_or(pair, |(_, v)| v).to_string());
                }
            }
        }
        let mut file_next = false;
        for arg in args {
            if file_next {
                secrets.extend(values_file_strings(Path::new(arg)));
            }
            file_next = arg == "-f" || arg == "--values";
            if let Some(path) = arg.strip_prefix("--values=") {
                secrets.extend(values_file_strings(Path::new(path)));
            }
        }
        Scrub::new(secrets)
    }

    pub fn new(secrets: Vec<String>) -> Scrub {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(|s| s.trim_matches(|c| c == '"' || c == '\'').to_string())
            .filter(|s| s.chars().count() >= MIN_LEN)
            .filter(|s| !matches!(s.as_str(), "true" | "false" | "null"))
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        secrets.dedup();
        Scrub { secrets }
    }

    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASK);
            }
        }
        out
    }

    /// Masks the free text in `value` (helm's lines, messages, reasons, logs, evidence): every
    /// string but the object keys and the fields that name things. A key is the format's, and
    /// a name, namespace, kind or uid is the cluster's, shown to anyone who can list it; a value
    /// that happens to be part of one (`--set namespaceOverride=edge`, `note=second`) must not
    /// turn `demo-edge-controller` into `demo-***-controller` or `seconds` into `***s`, which
    /// would make the report lie about what it judged.
    pub fn value(&self, value: &mut Value) {
        if self.secrets.is_empty() {
            return;
        }
        match value {
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => map
                .iter_mut()
                // A string only: `outcome` is a word in the report, an object with a free-text
                // reason in a step's event.
                .filter(|(k, v)| !(v.is_string() && IDENTITY.contains(&k.as_str())))
                .for_each(|(_, v)| self.value(v)),
            _ => {}
        }
    }
}

/// Every scalar of a values file, as text (a file that cannot be read or parsed yields none:
/// helm already refused it before the deploy started).
fn values_file_strings(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return vec![];
    };
    let Ok(doc) = serde_saphyr::from_str::<Value>(&text) else {
        return vec![];
    };
    let mut out = Vec::new();
    leaves(&doc, &mut out);
    out
}

fn leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn set_values_and_values_file_strings_are_masked_keys_and_switches_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v.yaml");
        std::fs::write(&file, "db:\n  password: s3cr3t-from-file\n  port: 5432\n").unwrap();
        let scrub = Scrub::of_helm_args(&args(&[
            "-f",
            file.to_str().unwrap(),
            "--set",
            "password=hunter22,initJob.enabled=true",
            "--set-string=token=abcd1234",
        ]));
        assert_eq!(
            scrub.text("pw hunter22 file s3cr3t-from-file token abcd1234 port 5432 password true"),
            "pw *** file *** token *** port *** password true"
        );
    }

    #[test]
    fn free_text_is_masked_short_values_keys_and_names_are_left() {
        let scrub = Scrub::new(vec!["hunter22".into(), "on".into()]);
        let mut v = serde_json::json!({"text": "x hunter22 on", "hunter22": ["hunter22"]});
        scrub.value(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"text": "x *** on", "hunter22": ["***"]})
        );
    }

    /// `--set namespaceOverride=edge` and `--set note=second`, as the e2e charts set them: the
    /// report's names, namespaces and keys stay what the cluster has; the text around them is
    /// still masked.
    #[test]
    fn a_value_inside_a_name_a_namespace_or_a_key_leaves_them_whole() {
        let scrub = Scrub::new(vec!["edge".into(), "second".into()]);
        let mut v = serde_json::json!({
            "namespace": "edge",
            "steps": [{"step": "rollout", "seconds": 1.5}],
            "workloads": [{"kind": "Deployment", "name": "demo-edge-controller", "namespace": "edge",
                "message": "deployment \"demo-edge-controller\" successfully rolled out"}],
            "helm": {"stderrTail": ["NOTES: note is second"]},
            "outcome": {"status": "failed", "reason": "refusing edge"},
        });
        scrub.value(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "namespace": "edge",
                "steps": [{"step": "rollout", "seconds": 1.5}],
                "workloads": [{"kind": "Deployment", "name": "demo-edge-controller", "namespace": "edge",
                    "message": "deployment \"demo-***-controller\" successfully rolled out"}],
                "helm": {"stderrTail": ["NOTES: note is ***"]},
                "outcome": {"status": "failed", "reason": "refusing ***"},
            })
        );
    }
}
