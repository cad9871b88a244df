//! Keeps release values out of records: the values given with `--set` (and its kin) or in a
//! values file are masked wherever they stand as a whole token in an event's free text (a
//! chart's NOTES printing a password, a container logging its config). The events hold no
//! values by design; this is the second lock, because helm output and logs are text nobody
//! controls.
//!
//! Which values, decided by the key each was given under:
//! - a key whose last segment ends in `name`, `Name` or `Override` (`nameOverride`,
//!   `fullnameOverride`, `releaseName`, `secretName`), or starts with `existing` (the public
//!   charts' `auth.existingSecret`, `persistence.existingClaim`): never masked; it names an
//!   object, and a report that hides what it judged (`secret "x" not found`) lies;
//! - otherwise, a key with `password`, `secret`, `token` or `key` in any segment
//!   (case-insensitive): always masked, whatever its length;
//! - any other value: masked when it is four characters or more.
//!
//! `true`, `false` and `null` are switches, never masked. Where: only a whole token (not inside
//! a longer word or name: `prod` leaves `production` whole), never in a field that names an
//! object, and never inside a `Kind/name` reference.

use std::borrow::Cow;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::engine::event::Event;
use crate::engine::state::DeployState;
use crate::helm::process::redact_args;

const MASK: &str = "***";

/// Shorter values (not under a secret's key) are masked nowhere: `1`, `on` or `web` would shred
/// every line of the record while being no secret.
const MIN_LEN: usize = 4;

/// Words that make a key a secret's: its values are masked whatever their length.
const SECRET_WORDS: &[&str] = &["password", "secret", "token", "key"];

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

/// kubectl's lowercase kinds in `kind/name` references (`pod/demo-web-1`, `job/x`); a kind
/// with a group (`deployment.apps/x`) or capitalised (`Deployment/x`) is recognised by shape.
const LOWERCASE_KINDS: &[&str] = &[
    "configmap",
    "cronjob",
    "daemonset",
    "deployment",
    "ingress",
    "job",
    "namespace",
    "persistentvolumeclaim",
    "pod",
    "pvc",
    "replicaset",
    "role",
    "rolebinding",
    "secret",
    "service",
    "serviceaccount",
    "statefulset",
];

/// How a value given under a key is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// A name: never masked.
    Never,
    /// A secret's: masked whatever its length.
    Always,
    /// Masked when long enough.
    IfLong,
}

/// The rule for a value given under `path` (its key's segments; empty when it came without
/// one). The last segment decides first: `secretName` names a Secret, it does not hold one.
fn rule(path: &[String]) -> Rule {
    let last = path.last().map_or("", String::as_str);
    let names_an_object = last.ends_with("name")
        || last.ends_with("Name")
        || last.ends_with("Override")
        || last.starts_with("existing");
    if names_an_object {
        return Rule::Never;
    }
    let secret = path.iter().any(|segment| {
        let lower = segment.to_lowercase();
        SECRET_WORDS.iter().any(|w| lower.contains(w))
    });
    if secret { Rule::Always } else { Rule::IfLong }
}

/// The segments of a `--set` key: `a.b[0].c` is `a`, `b`, `c` (an index is no key).
fn key_path(key: &str) -> Vec<String> {
    key.split('.')
        .map(|s| s.split('[').next().unwrap_or(s).to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A value given under a key, kept only if its rule masks it.
fn keep(path: &[String], value: &str, out: &mut Vec<String>) {
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    if value.is_empty() || matches!(value, "true" | "false" | "null") {
        return;
    }
    let kept = match rule(path) {
        Rule::Never => false,
        Rule::Always => true,
        Rule::IfLong => value.chars().count() >= MIN_LEN,
    };
    if kept {
        out.push(value.to_string());
    }
}

#[derive(Debug, Clone, Default)]
pub struct Scrub {
    /// Longest first, so a secret containing another is masked whole.
    secrets: Vec<String>,
}

impl Scrub {
    /// The values of the helm arguments `args` (`--set k=v`, `-f file`, `--set-string …`, as
    /// passed to helm) that their keys' rules mask (see the module's comment).
    pub fn of_helm_args(args: &[String]) -> Scrub {
        let mut secrets = Vec::new();
        let redacted = redact_args(args);
        let mut flag = "";
        for (arg, shown) in args.iter().zip(&redacted) {
            if arg != shown {
                let (flag, value) = match arg.split_once('=') {
                    // `--set=k=v,k2=v2`: the flag's own `=` first.
                    Some((own, rest)) if own.starts_with("--") => (own, rest),
                    _ => (flag, arg.as_str()),
                };
                flag_values(flag, value, &mut secrets);
            }
            flag = arg;
        }
        let mut file_next = false;
        for arg in args {
            if file_next {
                values_file(Path::new(arg), &mut secrets);
            }
            file_next = arg == "-f" || arg == "--values";
            if let Some(path) = arg.strip_prefix("--values=") {
                values_file(Path::new(path), &mut secrets);
            }
        }
        Scrub::masking(secrets)
    }

    /// Masks each of `secrets` that its length allows (no key known: the four-character rule).
    pub fn new(secrets: Vec<String>) -> Scrub {
        let mut kept = Vec::new();
        for secret in &secrets {
            keep(&[], secret, &mut kept);
        }
        Scrub::masking(kept)
    }

    /// Masks exactly `secrets`, already chosen by their rules.
    fn masking(mut secrets: Vec<String>) -> Scrub {
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        secrets.dedup();
        Scrub { secrets }
    }

    /// `text` with every whole-token occurrence of a secret masked, `Kind/name` references left
    /// whole. Spans are found on the text as given (longest secret first, no overlap), so a
    /// mask never makes a new token boundary for a shorter secret.
    pub fn text(&self, text: &str) -> String {
        if self.secrets.is_empty() {
            return text.to_string();
        }
        let references = references(text);
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for secret in &self.secrets {
            for (start, _) in text.match_indices(secret.as_str()) {
                let end = start + secret.len();
                let taken = spans.iter().any(|&(s, e)| start < e && s < end);
                let in_reference = references.iter().any(|&(s, e)| start < e && s < end);
                if !taken && !in_reference && whole_token(text, start, end) {
                    spans.push((start, end));
                }
            }
        }
        if spans.is_empty() {
            return text.to_string();
        }
        spans.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(MASK);
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// `event` as the record keeps it (values masked, names whole), or `None` when its masked
    /// form no longer reads as an event (a value that is a whole enum word of it).
    pub fn event(&self, event: &Event) -> Option<Event> {
        if self.secrets.is_empty() {
            return Some(event.clone());
        }
        let mut value = serde_json::to_value(event).ok()?;
        self.value(&mut value);
        serde_json::from_value(value).ok()
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

impl Scrub {
    /// `event` as the deploy state keeps it, so every reader of that one state may show it:
    /// helm's own streamed lines and the `--plan` diff (the preview of the values' changes) as
    /// helm printed them, everything else with the release's values masked as the record masks
    /// it. An event whose masked form no longer reads as one is kept as it is (the files a run
    /// leaves are masked again when written: [`Scrub::state`]).
    pub fn shown<'e>(&self, event: &'e Event) -> Cow<'e, Event> {
        match event {
            _ if self.secrets.is_empty() => Cow::Borrowed(event),
            Event::HelmLine { .. } | Event::Plan(_) => Cow::Borrowed(event),
            _ => self.event(event).map_or(Cow::Borrowed(event), Cow::Owned),
        }
    }

    /// `item` masked as the record masks the event that carried it, or `None` when its masked
    /// form no longer reads as one (a replay of the record goes without it too).
    fn masked<T: Serialize + DeserializeOwned>(&self, item: &T) -> Option<T> {
        let mut value = serde_json::to_value(item).ok()?;
        self.value(&mut value);
        serde_json::from_value(value).ok()
    }

    /// `state` with the release's values masked, as a replay of the record would rebuild it:
    /// what the files a run leaves behind (the JUnit XML, the job summary) are written from,
    /// masked when written rather than folded a second time. Itself when nothing is masked.
    pub fn state<'a>(&self, state: &'a DeployState) -> Cow<'a, DeployState> {
        if self.secrets.is_empty() {
            return Cow::Borrowed(state);
        }
        let mut kept = state.clone();
        kept.plan = self.masked(&state.plan).unwrap_or_default();
        for step in kept.steps.values_mut() {
            step.outcome = step.outcome.as_ref().and_then(|o| self.masked(o));
        }
        for note in &mut kept.notes {
            note.text = self.text(&note.text);
        }
        for (_, line) in &mut kept.helm.lines {
            *line = self.text(line);
        }
        for line in &mut kept.helm.stderr_tail {
            *line = self.text(line);
        }
        kept.hooks = self.masked(&state.hooks).unwrap_or_default();
        kept.workloads
            .retain(|_, w| self.masked(w).map(|m| *w = m).is_some());
        kept.pods
            .retain(|_, p| self.masked(p).map(|m| *p = m).is_some());
        kept.events
            .retain_mut(|e| self.masked(e).map(|m| *e = m).is_some());
        for lines in kept.logs.values_mut() {
            lines.iter_mut().for_each(|l| *l = self.text(l));
        }
        for error in kept.degraded.values_mut() {
            *error = self.text(error);
        }
        kept.verdict = state.verdict.as_ref().and_then(|v| self.masked(v));
        kept.init_run = state.init_run.as_ref().map(|r| self.text(r));
        kept.changes = state.changes.as_ref().and_then(|c| self.masked(c));
        kept.rollback = state.rollback.as_ref().and_then(|r| self.masked(r));
        kept.lock = state.lock.as_ref().and_then(|l| self.masked(l));
        kept.newer = state.newer.as_ref().and_then(|n| self.masked(n));
        kept.left_lock = state.left_lock.as_ref().and_then(|l| self.masked(l));
        Cow::Owned(kept)
    }
}

/// The values one value flag gives (`k=v,k2=v2`), each under its key.
fn flag_values(flag: &str, value: &str, out: &mut Vec<String>) {
    // The flag's value as a whole (`--set-json '{…}'` has no key of its own).
    keep(&[], value, out);
    // `--set-json cfg={"password":…,"b":…}`: the object's leaves, each under its key (its
    // commas are the object's, not pairs).
    if flag == "--set-json"
        && let Some((key, json)) = value.split_once('=')
        && let Ok(json @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(json)
    {
        leaves(&json, &mut key_path(key), out);
        return;
    }
    if flag == "--set-json"
        && let Ok(json @ Value::Object(_)) = serde_json::from_str::<Value>(value)
    {
        leaves(&json, &mut Vec::new(), out);
        return;
    }
    for pair in value.split(',') {
        match pair.split_once('=') {
            Some((key, v)) => keep(&key_path(key), v, out),
            None => keep(&[], pair, out),
        }
    }
}

/// Every scalar of a values file that its key's rule masks (a file that cannot be read or
/// parsed yields none: helm already refused it before the deploy started).
fn values_file(path: &Path, out: &mut Vec<String>) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(doc) = serde_saphyr::from_str::<Value>(&text) else {
        return;
    };
    leaves(&doc, &mut Vec::new(), out);
}

/// The scalars under `value`, each judged by the key it stands under (a list's items by the
/// list's key).
fn leaves(value: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
    match value {
        Value::String(s) => keep(path, s, out),
        Value::Number(n) => keep(path, &n.to_string(), out),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, path, out)),
        Value::Object(map) => {
            for (key, v) in map {
                path.push(key.clone());
                leaves(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// A character that continues a word or a name: `-`, `.` and `_` join only when a letter or
/// digit follows them (`trust-release`, `prod.example.com`), not at a sentence's end
/// (`it is hunter22.`).
fn joins(c: char, beyond: Option<char>) -> bool {
    c.is_alphanumeric()
        || (matches!(c, '-' | '.' | '_') && beyond.is_some_and(char::is_alphanumeric))
}

/// Whether `text[start..end]` stands as a whole token: no word or name goes on past either
/// end. A secret whose own edge is punctuation (`:8080`) needs no boundary on that side.
fn whole_token(text: &str, start: usize, end: usize) -> bool {
    let matched = &text[start..end];
    let mut before = text[..start].chars().rev();
    let open = match (matched.chars().next(), before.next()) {
        (Some(first), Some(prev)) if first.is_alphanumeric() => !joins(prev, before.next()),
        _ => true,
    };
    let mut after = text[end..].chars();
    let close = match (matched.chars().last(), after.next()) {
        (Some(last), Some(next)) if last.is_alphanumeric() => !joins(next, after.next()),
        _ => true,
    };
    open && close
}

/// The `Kind/name` references in `text` (`Deployment/demo-web`, `deployment.apps/demo-web`,
/// `pod/demo-web-1`), as byte spans: an object's kind and name are the cluster's, never masked.
fn references(text: &str) -> Vec<(usize, usize)> {
    let name_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    let kind_char = |c: char| c.is_ascii_alphanumeric() || c == '.';
    let mut out = Vec::new();
    for (slash, _) in text.match_indices('/') {
        let kind_start = text[..slash]
            .rfind(|c: char| !kind_char(c))
            .map_or(0, |i| i + 1);
        let kind = &text[kind_start..slash];
        let name_len = text[slash + 1..]
            .find(|c: char| !name_char(c))
            .unwrap_or(text.len() - slash - 1);
        let name = text[slash + 1..slash + 1 + name_len].trim_end_matches(['.', '-']);
        let is_kind = kind.starts_with(|c: char| c.is_ascii_uppercase())
            || (kind.starts_with(|c: char| c.is_ascii_lowercase())
                && (kind.contains('.') || LOWERCASE_KINDS.contains(&kind)));
        if is_kind && !name.is_empty() {
            out.push((kind_start, slash + 1 + name.len()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// A scrub of the values file `yaml` (and the extra helm arguments `more`).
    fn of_file(yaml: &str, more: &[&str]) -> Scrub {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v.yaml");
        std::fs::write(&file, yaml).unwrap();
        let mut all = args(&["-f", file.to_str().unwrap()]);
        all.extend(args(more));
        Scrub::of_helm_args(&all)
    }

    /// The one state keeps helm's lines as printed (the screen shows them); the state the
    /// files are written from masks them, and every other text, without a second fold.
    #[test]
    fn the_state_keeps_helm_lines_as_printed_and_is_masked_whole_when_written() {
        let scrub = Scrub::of_helm_args(&args(&["--set", "password=hunter2-long"]));
        let mut state = DeployState::default();
        let events = [
            Event::HelmLine {
                stderr: false,
                text: "NOTES: password is hunter2-long".into(),
            },
            Event::Note {
                step: crate::engine::event::Step::Upgrade,
                level: crate::engine::event::Level::Info,
                text: "set hunter2-long".into(),
            },
            Event::Release {
                revision_before: None,
                deployed_before: None,
                revision: Some(2),
                chart: Some("hunter2-long".into()),
            },
        ];
        for event in &events {
            state.apply(&scrub.shown(event), 1.0, "t");
        }
        assert_eq!(state.helm.lines[0].1, "NOTES: password is hunter2-long");
        assert_eq!(state.notes[0].text, "set ***");
        let written = scrub.state(&state);
        assert_eq!(written.helm.lines[0].1, "NOTES: password is ***");
        assert_eq!(written.notes[0].text, "set ***");
        assert_eq!(
            written.chart_version.as_deref(),
            Some("hunter2-long"),
            "a name"
        );
        assert!(matches!(Scrub::default().state(&state), Cow::Borrowed(_)));
    }

    #[test]
    fn set_values_and_values_file_strings_are_masked_keys_and_switches_are_not() {
        let scrub = of_file(
            "db:\n  password: s3cr3t-from-file\n  port: 5432\n",
            &[
                "--set",
                "password=hunter22,initJob.enabled=true",
                "--set-string=token=abcd1234",
            ],
        );
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
    /// report's names, namespaces and keys stay what the cluster has, and a value inside a
    /// longer name or word in free text is no token of its own; the value standing alone is
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
            "outcome": {"status": "failed", "reason": "refusing edge, 2 seconds"},
        });
        scrub.value(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "namespace": "edge",
                "steps": [{"step": "rollout", "seconds": 1.5}],
                "workloads": [{"kind": "Deployment", "name": "demo-edge-controller", "namespace": "edge",
                    "message": "deployment \"demo-edge-controller\" successfully rolled out"}],
                "helm": {"stderrTail": ["NOTES: note is ***"]},
                "outcome": {"status": "failed", "reason": "refusing ***, 2 seconds"},
            })
        );
    }

    /// The issue's case: `--set environment=prod` against a schema that wants `production`.
    #[test]
    fn a_value_inside_a_longer_word_is_no_token_prod_leaves_production_whole() {
        let scrub = Scrub::of_helm_args(&args(&["--set", "environment=prod"]));
        let error = "values don't meet the specifications of the schema(s): \
                     at '/environment': value must be one of 'production', 'staging'";
        assert_eq!(scrub.text(error), error);
        assert_eq!(
            scrub.text("environment is prod; 'prod' (prod)."),
            "environment is ***; '***' (***)."
        );
    }

    /// Whole tokens only: letters, digits and `-` `.` `_` between them continue a word or a
    /// name; other punctuation and a sentence's final `.` end it.
    #[test]
    fn whole_tokens_only_joiners_continue_a_word_punctuation_ends_it() {
        let scrub = Scrub::new(vec!["trust".into(), "hunter22".into(), "source".into()]);
        assert_eq!(
            scrub.text("trust-release-flip-trust-xnat trust_x xtrust trust.example.org"),
            "trust-release-flip-trust-xnat trust_x xtrust trust.example.org"
        );
        assert_eq!(
            scrub.text(
                "seeding trust for source_trust: url=postgres://u:hunter22@db, it is hunter22."
            ),
            "seeding *** for source_trust: url=postgres://u:***@db, it is ***."
        );
        assert_eq!(
            scrub.text("trust-"),
            "***-",
            "a trailing dash joins nothing"
        );
    }

    /// A value that is a whole name in a `Kind/name` reference stays: the object is the
    /// cluster's, and the reference must say which one failed.
    #[test]
    fn kind_name_references_are_never_masked() {
        let scrub = Scrub::new(vec![
            "xnat-init".into(),
            "trust-release-flip-trust-db".into(),
        ]);
        assert_eq!(
            scrub.text(
                "Job/xnat-init failed; job.batch/xnat-init; pod/xnat-init; \
                 StatefulSet/trust-release-flip-trust-db: not ready; init is xnat-init"
            ),
            "Job/xnat-init failed; job.batch/xnat-init; pod/xnat-init; \
             StatefulSet/trust-release-flip-trust-db: not ready; init is ***"
        );
        assert_eq!(
            scrub.text("path data/xnat-init"),
            "path data/***",
            "a path segment is no reference"
        );
    }

    /// The issue's cases: names sharing the release's prefix, overrides, and a short secret.
    #[test]
    fn name_keys_are_never_masked_secret_keys_always_whatever_their_length() {
        let scrub = of_file(
            "nameOverride: trust\nfullnameOverride: trust-release-flip-trust\n\
             releaseName: flip-release\nsource:\n  sourceName: source_trust\n  \
             region: west\n  dbPassword: pw1\n  apiKey: 42\n\
             aws:\n  secretAccessKey: ab\n  accessKeyName: ops\n  tokens: [t1, t2]\n\
             feature:\n  enabled: true\n",
            &["--set", "db.auth.token=x9,chart.releaseName=xnat-release"],
        );
        let text = "trust trust-release-flip-trust flip-release source_trust west \
                    pw1 42 ab ops t1 t2 x9 xnat-release true";
        assert_eq!(
            scrub.text(text),
            "trust trust-release-flip-trust flip-release source_trust *** \
             *** *** *** ops *** *** *** xnat-release true"
        );
    }

    /// `existingSecret` names a Secret made outside the chart: the kubelet's `secret "x" not
    /// found` must say which, as every other object name does.
    #[test]
    fn existing_object_keys_name_objects_and_are_never_masked() {
        let scrub = Scrub::of_helm_args(&args(&[
            "--set",
            "api.existingSecret=deck-db-credentials,db.password=deck-db-pass",
        ]));
        assert_eq!(
            scrub.text("secret \"deck-db-credentials\" not found; deck-db-pass"),
            "secret \"deck-db-credentials\" not found; ***"
        );
    }

    #[test]
    fn set_json_objects_are_judged_leaf_by_leaf() {
        let scrub = Scrub::of_helm_args(&args(&[
            "--set-json",
            r#"cfg={"password":"pq","appName":"gateway-api"}"#,
        ]));
        assert_eq!(scrub.text("pq gateway-api"), "*** gateway-api");
        let whole = Scrub::of_helm_args(&args(&["--set-json", r#"{"db":{"token":"t0"}}"#]));
        assert_eq!(whole.text("t0"), "***");
    }
}
