//! The rules input is held to before the first cluster request. Each broken rule is a usage
//! error (exit 2) whose one line names the input and the rule, and never echoes a secret: text
//! read from a file is cut to its parser's first line with quoted values masked
//! ([`crate::text::file_error`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Helm's limit on a release name (its record Secret's name adds a suffix to it).
pub const MAX_RELEASE_NAME: usize = 53;
/// A namespace is a DNS-1123 label.
pub const MAX_NAMESPACE: usize = 63;
/// The longest `--timeout` helm takes: Go's `time.Duration` maximum, 2562047h47m16.854775807s.
pub const MAX_TIMEOUT: Duration = Duration::new(9_223_372_036, 854_775_807);

/// The kinds the rollout step watches, the only ones a deny-list pattern can name.
pub const WORKLOAD_KINDS: &[&str] = &["Deployment", "StatefulSet", "DaemonSet"];

/// A rule the input breaks.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(
        "release name {0:?} is invalid: helm takes lower-case letters, digits, '-' and '.', \
         starting and ending with a letter or digit, at most 53 characters"
    )]
    ReleaseName(String),
    #[error("--init-job {0}: not a valid Job name (a DNS-1123 subdomain of at most 63 characters)")]
    JobName(String),
    #[error(
        "namespace {0:?} is invalid: a namespace is lower-case letters, digits and '-', \
         starting and ending with a letter or digit, at most 63 characters"
    )]
    Namespace(String),
    #[error("the chart is empty: give a chart directory, an archive, repo/name or oci://…")]
    ChartEmpty,
    #[error(
        "chart path {0:?} not found (a path that starts with '.' or '/' must exist; a \
         repository chart is written repo/name)"
    )]
    ChartMissing(String),
    #[error("values file {} is a directory", .0.display())]
    ValuesDirectory(PathBuf),
    #[error("values file {} is binary, not YAML", .0.display())]
    ValuesBinary(PathBuf),
    #[error("values file {} is not YAML: {message}", .path.display())]
    ValuesNotYaml { path: PathBuf, message: String },
    #[error(
        "values file {} is not a map of values (helm needs `key: value` lines at the top)",
        .0.display()
    )]
    ValuesNotMap(PathBuf),
    #[error("--timeout: {0:?} is more than helm's maximum (2562047h47m16s)")]
    TimeoutTooLong(String),
    #[error("--timeout: {0:?} is under a second; give 1s or more")]
    TimeoutSubSecond(String),
    #[error(
        "{flag} among the helm arguments conflicts with helmdeck's own {own}: give it to \
         helmdeck, which passes it on to helm"
    )]
    OwnFlag { flag: String, own: &'static str },
    #[error(
        "--kubeconfig among the helm arguments would point helm at another cluster than the \
         one helmdeck watches: set KUBECONFIG instead"
    )]
    Kubeconfig,
    #[error(
        "--init-selector {0:?}: give one LABEL=VALUE (a label key such as \
         app.kubernetes.io/component, a label value of at most 63 letters, digits, '-', '_', '.')"
    )]
    InitSelector(String),
    #[error("--optional: the pattern is empty")]
    OptionalEmpty,
    #[error("--optional {0:?}: the name pattern is empty")]
    OptionalNoName(String),
    #[error(
        "--optional {pattern:?}: unknown kind {kind:?} (the kinds that gate are Deployment, \
         StatefulSet and DaemonSet)"
    )]
    OptionalKind { pattern: String, kind: String },
    #[error("{flag} {}: it is a directory", .path.display())]
    ReportIsDirectory { flag: &'static str, path: PathBuf },
    #[error("{flag} {}: directory {} does not exist", .path.display(), .dir.display())]
    ReportNoDirectory {
        flag: &'static str,
        path: PathBuf,
        dir: PathBuf,
    },
    #[error("{flag} {}: directory {} is not writable ({reason})", .path.display(), .dir.display())]
    ReportNotWritable {
        flag: &'static str,
        path: PathBuf,
        dir: PathBuf,
        reason: String,
    },
    #[error(
        "--size {0:?}: give COLSxROWS, {min_w} to {max_w} columns by {min_h} to {max_h} rows \
         (e.g. 120x36)",
        min_w = CAST_COLS.start(),
        max_w = CAST_COLS.end(),
        min_h = CAST_ROWS.start(),
        max_h = CAST_ROWS.end()
    )]
    CastSize(String),
    #[error("{shown}: helm cannot parse it: {message}")]
    HelmValues { shown: String, message: String },
    // What the run reads besides the cluster (`-f -`, a pulled chart), made before the first
    // cluster request: failing here is still a usage error.
    #[error("creating a private temporary directory")]
    TempDir(#[source] std::io::Error),
    #[error("reading the values from standard input (-f -)")]
    Stdin(#[source] std::io::Error),
    #[error("saving the values from standard input")]
    SaveStdin(#[source] std::io::Error),
    #[error("cannot run helm pull {chart}: {error}")]
    PullRun {
        chart: String,
        error: std::io::Error,
    },
    #[error("helm pull {chart} did not finish within {secs}s")]
    PullTimeout { chart: String, secs: u64 },
    #[error("helm pull {chart} failed: {message}")]
    Pull { chart: String, message: String },
    #[error("the chart pulled for {chart} is unreadable: {message}")]
    Pulled { chart: String, message: String },
}

/// DNS-1123 label: lower-case alphanumerics and '-', alphanumeric at both ends.
fn is_label(s: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let b = s.as_bytes();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || c == b'-')
}

/// Helm's own rule (`chartutil.ValidateReleaseName`): a DNS-1123 subdomain of at most 53
/// characters. It keeps the name out of trouble in label selectors too (no `,`, `=`, `/`).
pub fn release_name(name: &str) -> Result<(), InputError> {
    if name.len() <= MAX_RELEASE_NAME && name.split('.').all(is_label) {
        Ok(())
    } else {
        Err(InputError::ReleaseName(crate::text::plain(name)))
    }
}

pub fn namespace(namespace: &str) -> Result<(), InputError> {
    if namespace.len() <= MAX_NAMESPACE && is_label(namespace) {
        Ok(())
    } else {
        Err(InputError::Namespace(crate::text::plain(namespace)))
    }
}

/// A Job name a watch waits for: a DNS-1123 subdomain short enough for its pods' `job-name`
/// label (63), so it holds no `,` or `=` that would change the label selector.
pub fn job_name(name: &str) -> Result<(), InputError> {
    if name.len() <= 63 && name.split('.').all(is_label) {
        Ok(())
    } else {
        Err(InputError::JobName(crate::text::plain(name)))
    }
}

/// Helm's rule for telling a local chart from a reference (`LocateChart`): `oci://…` is a
/// registry chart; anything that exists is a local chart; a path that is absolute or starts
/// with `.` must exist; the rest (`repo/name`, a URL, a name with `--repo`) is for helm to find.
pub fn chart(chart: &str) -> Result<(), InputError> {
    let c = chart.trim();
    if c.is_empty() {
        return Err(InputError::ChartEmpty);
    }
    if c.starts_with("oci://") || Path::new(c).exists() {
        return Ok(());
    }
    if Path::new(c).is_absolute() || c.starts_with('.') {
        return Err(InputError::ChartMissing(crate::text::plain(chart)));
    }
    Ok(())
}

/// A values file helm would read: not a directory, text, YAML whose first document (all helm
/// reads) is a map or empty. `-` (stdin) and URLs are helm's to read.
pub fn values_file(path: &Path) -> Result<(), InputError> {
    let text = path.to_string_lossy();
    if text == "-" || text.starts_with("http://") || text.starts_with("https://") {
        return Ok(());
    }
    if path.is_dir() {
        return Err(InputError::ValuesDirectory(path.to_path_buf()));
    }
    // Unreadable files are the caller's (it names the I/O error); here only the content counts.
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    values_text(path, &bytes)
}

fn values_text(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) if !t.contains('\0') => t,
        _ => return Err(InputError::ValuesBinary(path.to_path_buf())),
    };
    let mut options = serde_saphyr::Options::default();
    // Helm's YAML takes the last of repeated keys; the snippet would quote the file.
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    options.with_snippet = false;
    match serde_saphyr::from_str_with_options::<TopLevel>(first_document(text), options) {
        Ok(TopLevel::Map) => Ok(()),
        Ok(TopLevel::Other) => Err(InputError::ValuesNotMap(path.to_path_buf())),
        Err(e) => Err(InputError::ValuesNotYaml {
            path: path.to_path_buf(),
            message: crate::text::file_error(&e.to_string()),
        }),
    }
}

/// The first YAML document of a stream: helm reads that one and ignores the rest.
fn first_document(text: &str) -> &str {
    let mut started = false;
    let mut content = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        let marker = |m: &str| {
            t.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        };
        if marker("...") {
            return &text[..offset];
        }
        if marker("---") {
            if started || content {
                return &text[..offset];
            }
            started = true;
            content = !t[3..].trim().is_empty();
        } else if !t.trim().is_empty() && !t.trim_start().starts_with('#') && !t.starts_with('%') {
            content = true;
        }
        offset += line.len();
    }
    text
}

/// Whether a YAML document is a map (or empty, which helm reads as no values).
enum TopLevel {
    Map,
    Other,
}

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TopLevelVisitor)
    }
}

struct TopLevelVisitor;

impl<'de> Visitor<'de> for TopLevelVisitor {
    type Value = TopLevel;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map of values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Map)
    }

    fn visit_unit<E: de::Error>(self) -> Result<TopLevel, E> {
        Ok(TopLevel::Map)
    }

    fn visit_none<E: de::Error>(self) -> Result<TopLevel, E> {
        Ok(TopLevel::Map)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<TopLevel, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TopLevel, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }
}

/// A parsed `--timeout` within what helm takes and what the waits can count.
pub fn timeout(text: &str, timeout: Duration) -> Result<(), InputError> {
    if timeout > MAX_TIMEOUT {
        return Err(InputError::TimeoutTooLong(text.to_string()));
    }
    if !timeout.is_zero() && timeout < Duration::from_secs(1) {
        return Err(InputError::TimeoutSubSecond(text.to_string()));
    }
    Ok(())
}

/// helmdeck's own flags among the extra helm arguments: helm would deploy to one namespace or
/// cluster while helmdeck watches another.
pub fn extra_args(extra: &[String]) -> Result<(), InputError> {
    for arg in extra {
        let flag = arg.split('=').next().unwrap_or("");
        match flag {
            "--namespace" => return Err(own(flag, "-n/--namespace")),
            "--kube-context" => return Err(own(flag, "--kube-context")),
            "--kubeconfig" => return Err(InputError::Kubeconfig),
            _ => {}
        }
        if short_namespace(arg) {
            return Err(own("-n", "-n/--namespace"));
        }
    }
    Ok(())
}

fn own(flag: &str, own: &'static str) -> InputError {
    InputError::OwnFlag {
        flag: flag.to_string(),
        own,
    }
}

/// `-n`, `-nNS`, `-n=NS`, or `-n` at the end of a run of helm's boolean shorthands (`-in`):
/// Go's flag parser reads each of these as the namespace.
fn short_namespace(arg: &str) -> bool {
    let Some(letters) = arg.strip_prefix('-') else {
        return false;
    };
    if letters.starts_with('-') {
        return false;
    }
    for c in letters.chars() {
        match c {
            'n' => return true,
            // helm upgrade's boolean shorthands: --install, --help.
            'i' | 'h' => continue,
            _ => return false,
        }
    }
    false
}

/// `--init-selector LABEL=VALUE`: one equality on a label, as `kubectl apply --selector` takes
/// it; the key and the value as Kubernetes validates labels, so the selector matches what the
/// API would store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSelector {
    pub key: String,
    pub value: String,
}

impl LabelSelector {
    pub fn parse(text: &str) -> Result<Self, InputError> {
        let bad = || InputError::InitSelector(crate::text::plain(text));
        let (key, value) = text.split_once('=').ok_or_else(bad)?;
        // `==` is kubectl's other spelling of equality.
        let value = value.strip_prefix('=').unwrap_or(value);
        if !label_key(key) || !label_value(value) {
            return Err(bad());
        }
        Ok(LabelSelector {
            key: key.to_string(),
            value: value.to_string(),
        })
    }

    /// Whether an object (its `metadata.labels`) carries the label with this value.
    pub fn matches(&self, labels: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
        labels
            .and_then(|l| l.get(&self.key))
            .and_then(serde_json::Value::as_str)
            == Some(self.value.as_str())
    }
}

impl std::fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// A label name: at most 63 alphanumerics, '-', '_', '.', alphanumeric at both ends.
fn label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A label key: a name behind an optional DNS-1123 subdomain prefix (`app.kubernetes.io/`).
fn label_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => {
            prefix.len() <= 253 && prefix.split('.').all(is_label) && label_name(name)
        }
        None => label_name(key),
    }
}

/// A label value: empty, or a label name.
fn label_value(value: &str) -> bool {
    value.is_empty() || label_name(value)
}

/// A deny-list pattern: a name glob, optionally behind one of the kinds the rollout watches.
pub fn optional_pattern(pattern: &str) -> Result<(), InputError> {
    if pattern.trim().is_empty() {
        return Err(InputError::OptionalEmpty);
    }
    let Some((kind, name)) = pattern.split_once('/') else {
        return Ok(());
    };
    if !WORKLOAD_KINDS.iter().any(|k| k.eq_ignore_ascii_case(kind)) {
        return Err(InputError::OptionalKind {
            pattern: crate::text::plain(pattern),
            kind: crate::text::plain(kind),
        });
    }
    if name.trim().is_empty() {
        return Err(InputError::OptionalNoName(crate::text::plain(pattern)));
    }
    Ok(())
}

/// The directory a file at `path` lives in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The report can be written where asked: not a directory, in a directory that exists and
/// takes a new file (the report is written as a temporary file there, then renamed).
pub fn report_path(path: &Path) -> Result<(), InputError> {
    output_path("--report", path)
}

/// A file `flag` will write (atomically, beside it): its directory exists and takes a file.
pub fn output_path(flag: &'static str, path: &Path) -> Result<(), InputError> {
    if path.is_dir() {
        return Err(InputError::ReportIsDirectory {
            flag,
            path: path.to_path_buf(),
        });
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(InputError::ReportNoDirectory {
            flag,
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        });
    }
    tempfile::Builder::new()
        .prefix(".helmdeck-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| InputError::ReportNotWritable {
            flag,
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
            reason: e.kind().to_string(),
        })
}

/// The sizes a cast may have: the screen's smallest useful size up to a wall display.
pub const CAST_COLS: std::ops::RangeInclusive<u16> = 40..=500;
pub const CAST_ROWS: std::ops::RangeInclusive<u16> = 12..=200;

/// `--size COLSxROWS` of `replay --cast`.
pub fn cast_size(size: &str) -> Result<(u16, u16), InputError> {
    let bad = || InputError::CastSize(size.to_string());
    let (w, h) = size.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u16 = w.parse().map_err(|_| bad())?;
    let h: u16 = h.parse().map_err(|_| bad())?;
    if CAST_COLS.contains(&w) && CAST_ROWS.contains(&h) {
        Ok((w, h))
    } else {
        Err(bad())
    }
}

/// helm's value flags that its own parser reads (`strvals`), whose errors quote the value.
const PARSED_VALUE_FLAGS: &[&str] = &[
    "--set",
    "--set-string",
    "--set-json",
    "--set-file",
    "--set-literal",
];

/// The value flags among `args`, each as its flag and value (`--set k=v`, `--set=k=v`).
pub fn value_flags(args: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if let Some((flag, value)) = arg.split_once('=')
            && PARSED_VALUE_FLAGS.contains(&flag)
        {
            out.push((flag.to_string(), value.to_string()));
        } else if PARSED_VALUE_FLAGS.contains(&arg.as_str())
            && let Some(value) = iter.next()
        {
            out.push((arg.clone(), value.clone()));
        }
    }
    out
}

/// helm's message about a value flag, with every part of the value masked: the value whole,
/// each of its comma-separated parts and each part's value, and anything quoted.
pub fn mask_value(message: &str, value: &str) -> String {
    let mut secrets: Vec<&str> = vec![value];
    for part in value.split(',') {
        secrets.push(part);
        if let Some((_, v)) = part.split_once('=') {
            secrets.push(v);
        }
    }
    // Longest first, so a part never leaves a piece of the whole behind.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = crate::text::mask_quoted(message);
    for secret in secrets.into_iter().filter(|s| s.len() >= 3) {
        out = out.replace(secret, "***");
    }
    crate::text::mask_credentials(&out)
}

/// What helm says when it cannot parse a value flag.
const PARSE_FAILURE: &str = "failed parsing --set";

/// Lets helm parse the value flags (its own parser: no copy of its rules can drift) by
/// rendering an empty chart offline, which makes no cluster request. The first flag helm
/// refuses is a usage error; anything else (helm not answering in time) is left to the deploy.
pub async fn helm_values(
    helm: &Path,
    env: &[(String, String)],
    args: &[String],
) -> Result<(), InputError> {
    let flags = value_flags(args);
    if flags.is_empty() {
        return Ok(());
    }
    let Ok(dir) = tempfile::tempdir() else {
        return Ok(());
    };
    let chart = dir.path().join("values-check");
    let written = std::fs::create_dir(&chart).and_then(|()| {
        std::fs::write(
            chart.join("Chart.yaml"),
            "apiVersion: v2\nname: values-check\nversion: 0.1.0\n",
        )
    });
    if written.is_err() {
        return Ok(());
    }
    let all: Vec<String> = flags
        .iter()
        .flat_map(|(f, v)| [f.clone(), v.clone()])
        .collect();
    if template_error(helm, env, &chart, &all).await.is_none() {
        return Ok(());
    }
    // One flag at a time, to name the one helm refuses.
    for (flag, value) in &flags {
        let one = [flag.clone(), value.clone()];
        if let Some(message) = template_error(helm, env, &chart, &one).await {
            let shown = crate::helm::process::redact_args(&one).join(" ");
            return Err(InputError::HelmValues {
                shown,
                message: mask_value(&message, value),
            });
        }
    }
    Ok(())
}

/// helm's parse error for `values` rendered into `chart`, if it gives one within 20 s.
async fn template_error(
    helm: &Path,
    env: &[(String, String)],
    chart: &Path,
    values: &[String],
) -> Option<String> {
    let run = tokio::process::Command::new(helm)
        .args(["template", "values-check"])
        .arg(chart)
        .args(values)
        .envs(env.iter().cloned())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .ok()?
        .ok()?;
    if out.status.success() {
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains(PARSE_FAILURE))?;
    Some(line.trim().trim_start_matches("Error: ").to_string())
}

#[cfg(test)]
mod tests;
