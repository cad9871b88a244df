//! The deploy plan: flags merged over an optional `helmdeck.toml` beside the chart, validated
//! before anything touches the cluster (a bad plan is a usage error, exit 2).

pub mod fleet;
pub mod inputs;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cli::{DeployArgs, Only};
use crate::glob::{GlobError, KindGlob};
use crate::validate::{self, InputError};

/// Helm's own default `--timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Default `--lock-min-age`: a pending revision younger than this is taken for a deploy still
/// at work (helm's own default `--timeout` is 5m; twice that leaves a slow one room).
pub const DEFAULT_LOCK_MIN_AGE: Duration = Duration::from_secs(600);

/// `helmdeck.toml`, beside the chart. Every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileConfig {
    pub namespace: Option<String>,
    /// Relative paths are relative to the file's directory.
    #[serde(default)]
    pub values: Vec<PathBuf>,
    #[serde(default)]
    pub set: Vec<String>,
    pub kube_context: Option<String>,
    pub init_toggle: Option<String>,
    pub init_job: Option<String>,
    pub init_selector: Option<String>,
    #[serde(default)]
    pub optional: Vec<String>,
    pub timeout: Option<TimeoutSetting>,
    /// A non-negative integer: a negative or fractional one fails to parse (exit 2).
    pub failures_allowed_per_replica: Option<u32>,
    /// The same forms as `timeout`.
    pub lock_min_age: Option<TimeoutSetting>,
    pub helm: Option<PathBuf>,
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// `--plan` by default.
    pub plan: Option<bool>,
    /// The fleet: one deploy per table (`[[target]]`), at once.
    #[serde(default, rename = "target")]
    pub targets: Vec<fleet::TargetSetting>,
}

/// `timeout` in helmdeck.toml: a duration as the flag takes it (`"5m"`), or a bare number of
/// seconds (`timeout = 30`), which the flag reads as seconds too.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TimeoutSetting {
    Seconds(i64),
    Fraction(f64),
    Text(String),
}

impl TimeoutSetting {
    /// The text the flag would have been given.
    fn text(&self) -> String {
        match self {
            TimeoutSetting::Seconds(n) => n.to_string(),
            TimeoutSetting::Fraction(x) => x.to_string(),
            TimeoutSetting::Text(t) => t.clone(),
        }
    }
}

/// What the deploy was asked to do: the one owner of these facts. The engine's context holds
/// it and the state's `PlanSummary` (engine/state.rs) is derived from it.
#[derive(Debug, Clone)]
pub struct DeployPlan {
    pub release: String,
    pub chart: String,
    /// The release's namespace when `-n` or the file names one; `None` leaves it to the kube
    /// context ([`DeployPlan::namespace_or`]).
    pub namespace: Option<String>,
    pub values: Vec<PathBuf>,
    pub set: Vec<String>,
    pub context: Option<String>,
    pub init_toggle: Option<String>,
    pub init_job: Option<String>,
    /// `--init-selector`: which objects the toggle adds the init step applies (hooks always).
    pub init_selector: Option<validate::LabelSelector>,
    pub optional: Vec<KindGlob>,
    pub timeout: Duration,
    /// Fail fast (opt-in, `rollout::fail_fast`): `None` waits to `timeout`.
    pub failures_allowed_per_replica: Option<u32>,
    /// A `pending-*` lock younger than this is another deploy in progress (never advised away).
    pub lock_min_age: Duration,
    /// `--recover-lock`: roll back an old pending lock in preflight, then deploy.
    pub recover_lock: bool,
    /// `--force`: `--recover-lock` clears even a lock younger than `lock_min_age`.
    pub force: bool,
    /// `--rollback-on-failure` (helmdeck's, never helm's).
    pub rollback_on_failure: bool,
    /// `--test`: `helm test` after a landed deploy.
    pub test: bool,
    pub helm: Option<PathBuf>,
    pub report: Option<PathBuf>,
    pub only: Option<Only>,
    pub dry_run: bool,
    /// Show the plan before the upgrade (`--plan`, or `plan = true` in the file).
    pub plan: bool,
    /// Show the plan and stop (exit 0 no change, 4 changes).
    pub plan_only: bool,
    pub extra: Vec<String>,
    /// Where the settings came from (for the report).
    pub config_file: Option<PathBuf>,
    /// Values read from stdin and a pulled chart, once resolved before the first cluster request.
    pub inputs: std::sync::Arc<inputs::Inputs>,
    /// `helmdeck watch`: follow the release's records instead of running helm.
    pub watch: Option<Watching>,
    /// The fleet's targets (`--target`, else the file's `[[target]]` tables); none is a single
    /// deploy.
    pub targets: Vec<fleet::TargetSetting>,
}

/// What a watch follows. Revisions up to `after` were judged by an earlier pass of `--follow`:
/// only a newer one is this pass's, and waiting for it has no deadline (a screen left open
/// beside a pipeline waits for the next deploy, however late).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watching {
    pub after: Option<i64>,
}

/// Why the plan cannot be made: every one is a usage error (exit 2), caught before any cluster
/// request. Each message names one layer; the edge prints the chain (`{:#}`).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {}", .path.display())]
    ReadFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The parser's own message, without the snippet of the file it would quote.
    #[error("{}: line {line}, column {column}: {message}", .path.display())]
    ParseFile {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("values file {} is not readable", .path.display())]
    ValuesUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--timeout: {0}")]
    Timeout(String),
    #[error("--timeout must be more than 0")]
    ZeroTimeout,
    #[error("--lock-min-age: {0}")]
    LockMinAge(String),
    #[error("--optional")]
    Optional(#[source] GlobError),
    #[error(
        "{0} is not allowed among the helm arguments: helmdeck waits for the rollout itself \
         (with the deny list); helm's own wait would fail on optional workloads"
    )]
    HelmWaits(String),
    #[error(
        "{0} is not passed to helm (its wait knows no deny list): use helmdeck's own \
         --rollback-on-failure, before the `--`"
    )]
    HelmRollback(String),
    #[error(
        "--init-toggle and --init-job go together (the values key that enables the init hook, and the Job's name)"
    )]
    InitHalf,
    #[error(
        "--init-selector selects what the init step applies: it needs --init-toggle and --init-job"
    )]
    InitSelectorAlone,
    #[error("--init-toggle takes a values key like xnat.initJob.enabled, got {0:?}")]
    InitToggleKey(String),
    #[error(
        "--only init needs --init-toggle and --init-job (flags or helmdeck.toml): without them there is no init step to run"
    )]
    OnlyInitUnconfigured,
    #[error(
        "--recover-lock rolls the release back (a write) and {0} writes nothing: run {0} \
         without --recover-lock to see the deploy, or --recover-lock alone to clear the lock"
    )]
    RecoverLockWrites(&'static str),
    #[error("{0}")]
    Target(String),
    #[error(transparent)]
    Input(#[from] InputError),
}

/// Helm flags that would make helm wait for workloads itself: that wait knows no deny list,
/// so an optional workload that legitimately stays Pending would fail the upgrade.
const FORBIDDEN_EXTRA: &[&str] = &[
    "--wait",
    "--atomic",
    "--rollback-on-failure",
    "--wait-for-jobs",
];

impl DeployPlan {
    pub fn from_args(args: &DeployArgs) -> Result<Self, ConfigError> {
        validate::release_name(&args.release)?;
        // A dry run and a plan write nothing, ever; the recovery is a `helm rollback`.
        if args.recover_lock && (args.dry_run || args.plan_only) {
            let flag = if args.dry_run {
                "--dry-run"
            } else {
                "--plan-only"
            };
            return Err(ConfigError::RecoverLockWrites(flag));
        }
        let config_path = config_path(&args.chart);
        let file = match &config_path {
            Some(p) => load_file(p)?,
            None => FileConfig::default(),
        };
        let base = config_path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let values = values_files(&file, base.as_deref(), args)?;
        let namespace = args.namespace.clone().or(file.namespace.clone());
        if let Some(ns) = &namespace {
            validate::namespace(ns)?;
        }
        let timeout = timeout(args, &file)?;
        let lock_min_age = match args
            .lock_min_age
            .clone()
            .or(file.lock_min_age.as_ref().map(TimeoutSetting::text))
        {
            Some(t) => crate::time::parse_duration(&t)
                .map_err(|e| ConfigError::LockMinAge(e.to_string()))?,
            None => DEFAULT_LOCK_MIN_AGE,
        };
        let patterns: Vec<&String> = file.optional.iter().chain(args.optional.iter()).collect();
        for p in &patterns {
            validate::optional_pattern(p)?;
        }
        let optional = patterns
            .into_iter()
            .map(|p| KindGlob::new(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ConfigError::Optional)?;
        let extra = extra_args(file.extra_args.clone(), args)?;
        let targets = fleet::targets(&args.target, file.targets.clone(), base.as_deref())?;
        check_fleet(args, &targets)?;
        let init_toggle = args.init_toggle.clone().or(file.init_toggle.clone());
        let init_job = args.init_job.clone().or(file.init_job.clone());
        check_init(args, init_toggle.as_deref(), init_job.as_deref())?;
        let init_selector = match args.init_selector.as_ref().or(file.init_selector.as_ref()) {
            Some(_) if init_toggle.is_none() => return Err(ConfigError::InitSelectorAlone),
            Some(text) => Some(validate::LabelSelector::parse(text)?),
            None => None,
        };
        if let Some(report) = &args.report {
            validate::report_path(report)?;
        }
        Ok(DeployPlan {
            release: args.release.clone(),
            chart: args.chart.clone(),
            namespace,
            values,
            set: file
                .set
                .into_iter()
                .chain(args.set.iter().cloned())
                .collect(),
            context: args.kube_context.clone().or(file.kube_context),
            init_toggle,
            init_job,
            init_selector,
            optional,
            timeout,
            failures_allowed_per_replica: args
                .failures_allowed_per_replica
                .or(file.failures_allowed_per_replica),
            lock_min_age,
            recover_lock: args.recover_lock,
            force: args.force,
            rollback_on_failure: args.rollback_on_failure,
            test: args.test,
            helm: args.helm.clone().or(file.helm),
            report: args.report.clone(),
            only: args.only,
            dry_run: args.dry_run,
            // `--only` attaches to or re-runs part of the live release: there is no upgrade
            // to plan, so the file's default does not apply to it.
            plan: args.plan_only
                || args.plan
                || (args.only.is_none() && !args.dry_run && file.plan.unwrap_or(false)),
            plan_only: args.plan_only,
            extra,
            config_file: config_path,
            inputs: Default::default(),
            watch: None,
            targets,
        })
    }

    /// The release's namespace: `-n`, else the file's, else the kube context's.
    pub fn namespace_or<'a>(&'a self, context_namespace: &'a str) -> &'a str {
        self.namespace.as_deref().unwrap_or(context_namespace)
    }

    /// Helm's `--timeout` value (`300s`; `1.5s` keeps the fraction, as Go reads it).
    pub fn helm_timeout(&self) -> String {
        let (secs, nanos) = (self.timeout.as_secs().max(1), self.timeout.subsec_nanos());
        if nanos == 0 {
            return format!("{secs}s");
        }
        let fraction = format!("{nanos:09}");
        format!("{secs}.{}s", fraction.trim_end_matches('0'))
    }

    /// Every argument that may carry a value: the values flags and the extra helm args; what
    /// the printers and records mask values from.
    pub fn value_args_with_extra(&self) -> Vec<String> {
        let mut out = self.value_args();
        out.extend(self.extra.iter().cloned());
        out
    }

    /// The values flags (`-f`, `--set`), shared by `helm upgrade` and `helm template`; `-f -`
    /// names the file stdin was saved to.
    pub fn value_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in &self.values {
            out.push("-f".into());
            out.push(self.inputs.values_path(&v.display().to_string()));
        }
        for s in &self.set {
            out.push("--set".into());
            out.push(s.clone());
        }
        out
    }
}

/// `helmdeck.toml` beside a local chart directory.
fn config_path(chart: &str) -> Option<PathBuf> {
    let dir = Path::new(chart);
    let candidate = dir.join("helmdeck.toml");
    (dir.is_dir() && candidate.is_file()).then_some(candidate)
}

fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| {
        // Where the parser stopped, counted in characters as an editor shows it.
        let at = e.span().map_or(0, |s| s.start.min(text.len()));
        let before = text.get(..at).unwrap_or("");
        ConfigError::ParseFile {
            path: path.to_path_buf(),
            line: before.matches('\n').count() + 1,
            column: before.rsplit('\n').next().unwrap_or("").chars().count() + 1,
            message: crate::text::file_error(e.message()),
        }
    })
}

/// The values files in the order helm reads them: the file's (relative to it), then the
/// command line's; each must be readable and YAML before the first cluster request.
fn values_files(
    file: &FileConfig,
    base: Option<&Path>,
    args: &DeployArgs,
) -> Result<Vec<PathBuf>, ConfigError> {
    let file_values = file.values.iter().map(|v| match base {
        Some(dir) if v.is_relative() => dir.join(v),
        _ => v.clone(),
    });
    let values: Vec<PathBuf> = file_values.chain(args.values.iter().cloned()).collect();
    for v in &values {
        let text = v.to_string_lossy();
        if text != "-" && !text.starts_with("http://") && !text.starts_with("https://") {
            std::fs::metadata(v).map_err(|source| ConfigError::ValuesUnreadable {
                path: v.clone(),
                source,
            })?;
        }
        validate::values_file(v)?;
    }
    Ok(values)
}

/// `--timeout` (else the file's, else the default): parsed, within helm's range, never zero.
fn timeout(args: &DeployArgs, file: &FileConfig) -> Result<Duration, ConfigError> {
    let timeout_text = args
        .timeout
        .clone()
        .or(file.timeout.as_ref().map(TimeoutSetting::text));
    let timeout = match &timeout_text {
        Some(t) => {
            let d =
                crate::time::parse_duration(t).map_err(|e| ConfigError::Timeout(e.to_string()))?;
            validate::timeout(t, d)?;
            d
        }
        None => DEFAULT_TIMEOUT,
    };
    if timeout.is_zero() {
        return Err(ConfigError::ZeroTimeout);
    }
    Ok(timeout)
}

/// The helm arguments after `--` (the file's first): never one that makes helm wait or roll
/// back by itself, which would defeat the split deploy.
fn extra_args(from_file: Vec<String>, args: &DeployArgs) -> Result<Vec<String>, ConfigError> {
    let extra: Vec<String> = from_file
        .into_iter()
        .chain(args.extra.iter().cloned())
        .collect();
    for arg in &extra {
        let flag = arg.split('=').next().unwrap_or("");
        if matches!(flag, "--rollback-on-failure" | "--atomic") {
            return Err(ConfigError::HelmRollback(flag.to_string()));
        }
        if FORBIDDEN_EXTRA.contains(&flag) {
            return Err(ConfigError::HelmWaits(flag.to_string()));
        }
    }
    validate::extra_args(&extra)?;
    Ok(extra)
}

/// The fleet's flags need a fleet, and a fleet a deploy each target can run on its own.
fn check_fleet(args: &DeployArgs, targets: &[fleet::TargetSetting]) -> Result<(), ConfigError> {
    let alone = |flag: &str| {
        ConfigError::Target(format!(
            "{flag} needs targets (--target CONTEXT, or [[target]] tables in helmdeck.toml)"
        ))
    };
    if targets.is_empty() {
        if args.parallel.is_some() {
            return Err(alone("--parallel"));
        }
        if args.canary.is_some() {
            return Err(alone("--canary"));
        }
        if args.stop_on_failure {
            return Err(alone("--stop-on-failure"));
        }
        return Ok(());
    }
    if args.kube_context.is_some() {
        return Err(ConfigError::Target(
            "--kube-context names one cluster and the targets name theirs: give one or the other"
                .into(),
        ));
    }
    if args.record.events.is_some() {
        return Err(ConfigError::Target(
            "--events -: one stream of several targets' records would interleave on stdout              (each target keeps its own record)"
                .into(),
        ));
    }
    if args.values.iter().any(|v| v.as_os_str() == "-") {
        return Err(ConfigError::Target(
            "-f -: values from stdin can be read only once, not per target".into(),
        ));
    }
    if let Some(canary) = &args.canary
        && !targets
            .iter()
            .any(|t| &t.label == canary || &t.context == canary)
    {
        return Err(ConfigError::Target(format!(
            "--canary {}: no target has that label or context",
            crate::text::plain(canary)
        )));
    }
    Ok(())
}

/// The init step is configured whole or not at all, with a toggle `--set` can carry.
fn check_init(
    args: &DeployArgs,
    init_toggle: Option<&str>,
    init_job: Option<&str>,
) -> Result<(), ConfigError> {
    if init_toggle.is_some() != init_job.is_some() {
        return Err(ConfigError::InitHalf);
    }
    if let Some(key) = init_toggle
        && (key.is_empty() || key.contains('=') || key.contains(','))
    {
        return Err(ConfigError::InitToggleKey(key.to_string()));
    }
    if args.only == Some(Only::Init) && init_toggle.is_none() {
        return Err(ConfigError::OnlyInitUnconfigured);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
