//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "helmdeck",
    version,
    about = "Run a Helm deploy step by step, live, with one exit code that says what happened"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Deploy a release step by step: preflight, helm upgrade (init hook off), scoped rollout
    /// wait, init Job, verdict. Exit 0 landed, 1 failed, 3 live but init incomplete, 2 usage.
    Deploy(Box<DeployArgs>),
    /// The whole split deploy of the demo chart against an embedded simulated cluster, with the
    /// real helm. Exits with the verdict's code, like deploy.
    Demo {
        /// Scenario name (see `helmdeck sim --list`) or path to a scenario file.
        #[arg(long, default_value = "optional-pending")]
        scenario: String,
        /// Plain line output instead of the TUI.
        #[arg(long)]
        headless: bool,
        /// helm binary (else $HELM_BIN, .tools/bin/helm, PATH).
        #[arg(long)]
        helm: Option<PathBuf>,
        /// Write the JSON report here.
        #[arg(long, value_name = "FILE.json")]
        report: Option<PathBuf>,
    },
    /// Post-mortem of a release: history, lock state, hooks with phases, failed hooks' pods,
    /// logs and events, and the workloads' readiness. Reads the release records directly
    /// (helm is not needed); never shows values or Secret data.
    Inspect(InspectArgs),
    /// Attach to a deploy of RELEASE that someone else runs (CI, a colleague, a GitOps
    /// controller): follows its release records, hook Jobs, rollout and init Job to a verdict.
    /// Needs no chart and no helm binary.
    Watch(WatchArgs),
    /// Serve a simulated Kubernetes API on loopback, driven by a scenario (for demos and tests).
    Sim {
        /// Scenario name (from assets/scenarios) or path to a scenario YAML file.
        #[arg(long, default_value = "all-green")]
        scenario: String,
        /// Address to listen on (loopback only; port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Write a kubeconfig that points at the simulator here.
        #[arg(long)]
        kubeconfig_out: Option<PathBuf>,
        /// List the embedded scenarios and exit.
        #[arg(long)]
        list: bool,
    },
}

/// `helmdeck deploy`. Every setting can also live in `helmdeck.toml` beside the chart; flags win.
#[derive(Debug, Clone, clap::Args)]
pub struct DeployArgs {
    /// Release name.
    pub release: String,
    /// Chart directory or reference, as helm takes it.
    pub chart: String,
    /// Namespace of the release (default: the kubeconfig context's, else `default`).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Values file (repeatable), passed to helm as `-f`.
    #[arg(short = 'f', long = "values")]
    pub values: Vec<PathBuf>,
    /// Value override (repeatable), passed to helm as `--set`.
    #[arg(long = "set")]
    pub set: Vec<String>,
    /// kubeconfig context to use.
    #[arg(long)]
    pub kube_context: Option<String>,
    /// Values key that enables the init hook (set false for the upgrade, true to render it).
    #[arg(long)]
    pub init_toggle: Option<String>,
    /// Rendered `metadata.name` of the init Job.
    #[arg(long)]
    pub init_job: Option<String>,
    /// Deny list: workloads that are tracked and reported but never gate the verdict. A glob over
    /// the name, optionally `Kind/glob` (repeatable).
    #[arg(long = "optional", value_name = "PATTERN")]
    pub optional: Vec<String>,
    /// Budget of each waiting step (helm's own --timeout, the rollout wait, the init wait).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// A `pending-*` lock younger than this is another deploy at work: reported, never advised
    /// away (default 10m).
    #[arg(long, value_name = "DURATION")]
    pub lock_min_age: Option<String>,
    /// helm binary (else $HELM_BIN, .tools/bin/helm, PATH).
    #[arg(long)]
    pub helm: Option<PathBuf>,
    /// Plain line output instead of the TUI (implied when stdout is not a terminal).
    #[arg(long)]
    pub headless: bool,
    /// Write a machine-readable JSON report here.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Run a single step against the live release.
    #[arg(long, value_enum)]
    pub only: Option<Only>,
    /// Print the commands and objects each step would use; write nothing to the cluster.
    #[arg(long)]
    pub dry_run: bool,
    /// Extra arguments for `helm upgrade` (after `--`).
    #[arg(last = true)]
    pub extra: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Only {
    /// Attach to a release that is rolling out and wait/diagnose (helm is not run).
    Rollout,
    /// Re-run the init step against the live release.
    Init,
}

/// `helmdeck watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    pub release: String,
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    #[arg(long)]
    pub kube_context: Option<String>,
    /// Workloads that never gate (`Kind/glob`), as for deploy.
    #[arg(long = "optional", value_name = "PATTERN")]
    pub optional: Vec<String>,
    /// A Job the deploy runs after its rollout: waited for (never created); its failure is exit 3.
    #[arg(long)]
    pub init_job: Option<String>,
    /// How long each of the record, the rollout and the init Job may take (default 5m).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    #[arg(long)]
    pub headless: bool,
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Stay attached after a verdict and judge the next revision helm writes (headless: one
    /// verdict line per revision). The exit code is the last verdict's.
    #[arg(long)]
    pub follow: bool,
    /// A pending revision younger than this is a deploy in progress, never a stuck lock.
    #[arg(long, value_name = "DURATION")]
    pub lock_min_age: Option<String>,
}

impl WatchArgs {
    /// The deploy arguments a watch means: `--only rollout` with no chart read.
    pub fn as_deploy(&self) -> DeployArgs {
        DeployArgs {
            release: self.release.clone(),
            chart: NO_CHART.into(),
            namespace: self.namespace.clone(),
            values: vec![],
            set: vec![],
            kube_context: self.kube_context.clone(),
            init_toggle: None,
            init_job: None,
            optional: self.optional.clone(),
            timeout: self.timeout.clone(),
            lock_min_age: self.lock_min_age.clone(),
            helm: None,
            headless: self.headless,
            report: self.report.clone(),
            only: None,
            dry_run: false,
            extra: vec![],
        }
    }
}

/// What a watch shows where a deploy names its chart.
pub const NO_CHART: &str = "(watch: no chart)";

/// `helmdeck inspect`.
#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
    /// Release name.
    pub release: String,
    /// Namespace of the release (default: the kubeconfig context's, else `default`).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Revision to inspect (default: the latest).
    #[arg(long)]
    pub revision: Option<i64>,
    /// Print one JSON document instead of the TUI.
    #[arg(long)]
    pub json: bool,
    /// Plain text instead of the TUI (implied when stdout is not a terminal).
    #[arg(long)]
    pub headless: bool,
    /// Also show the rendered manifest of the revision (never Secret data or values).
    #[arg(long)]
    pub show_manifest: bool,
    /// Deny list, as `deploy --optional` takes it: workloads shown as optional (never gating).
    /// A glob over the name, optionally `Kind/glob` (repeatable).
    #[arg(long = "optional", value_name = "PATTERN")]
    pub optional: Vec<String>,
    /// kubeconfig context to use.
    #[arg(long)]
    pub kube_context: Option<String>,
}
