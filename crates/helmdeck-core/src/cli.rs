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
    /// wait, init Job, verdict. Exit 0 landed, 1 failed, 3 live but init incomplete, 2 usage;
    /// 4 only from --plan-only (changes pending).
    Deploy(Box<DeployArgs>),
    /// The whole split deploy against an embedded simulated cluster, with the real helm: the
    /// demo chart, or any chart with `--chart`. Exits with the verdict's code, like deploy.
    Demo(Box<DemoArgs>),
    /// Play a recorded deploy back in the deploy screen, with its timing (space pause, +/-
    /// speed, n next step, End to the end), or list the records.
    Replay(ReplayArgs),
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
        /// Scenario name (one of `helmdeck sim --list`) or path to a scenario YAML file.
        #[arg(long, default_value = "all-green")]
        scenario: String,
        /// Address to listen on (loopback only; port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Write a kubeconfig that points at the simulator here.
        #[arg(long)]
        kubeconfig_out: Option<PathBuf>,
        /// The context name in that kubeconfig (default `helmdeck-sim`): give each simulator
        /// of a fleet its own, then list their files in one `KUBECONFIG`.
        #[arg(long, value_name = "NAME", requires = "kubeconfig_out")]
        context: Option<String>,
        /// List the embedded scenarios and exit.
        #[arg(long)]
        list: bool,
    },
    /// Print a shell completion script (generated from these definitions).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a directory.
    Man {
        /// Write helmdeck.1, helmdeck-deploy.1, … here instead of printing helmdeck.1.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

/// `helmdeck deploy`. Every setting can also live in `helmdeck.toml` beside the chart; flags win.
#[derive(Debug, Clone, clap::Args)]
pub struct DeployArgs {
    /// Release name.
    pub release: String,
    /// Chart directory or reference, as helm takes it.
    pub chart: String,
    #[command(flatten)]
    pub flags: DeployFlags,
}

/// Read access to the flags as if they were fields of the deploy, so the plan reads
/// `args.namespace` whichever command (deploy or demo) built the arguments.
impl std::ops::Deref for DeployArgs {
    type Target = DeployFlags;
    fn deref(&self) -> &DeployFlags {
        &self.flags
    }
}

/// The flags `deploy` and `demo` share: one definition, so the demo rehearses exactly the
/// deploy an operator will run.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DeployFlags {
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
    #[arg(long, conflicts_with = "target")]
    pub kube_context: Option<String>,
    /// Deploy to this kube context too (repeatable: one target per context, run at once; the
    /// namespace comes from -n or the context). Replaces helmdeck.toml's `[[target]]` tables.
    #[arg(long = "target", value_name = "CONTEXT")]
    pub target: Vec<String>,
    /// With targets: at most N of them deploy at once (default: all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub parallel: Option<u16>,
    /// With targets: deploy this one (its label or context) alone first; the rest start only
    /// if it lands (exit 0), otherwise they are reported `not started`.
    #[arg(long, value_name = "TARGET")]
    pub canary: Option<String>,
    /// With targets: start no new one after the first that does not land.
    #[arg(long)]
    pub stop_on_failure: bool,
    /// Values key that enables the init hook (set false for the upgrade, true to render it).
    #[arg(long)]
    pub init_toggle: Option<String>,
    /// Rendered `metadata.name` of the init Job.
    #[arg(long)]
    pub init_job: Option<String>,
    /// `LABEL=VALUE`: of the objects the toggle adds that are not hooks, the init step applies
    /// those with this label (as `kubectl apply --selector` would); without it, all of them.
    #[arg(long, value_name = "LABEL=VALUE")]
    pub init_selector: Option<String>,
    /// Deny list: workloads that are tracked and reported but never gate the verdict. A glob over
    /// the name, optionally `Kind/glob` (repeatable).
    #[arg(long = "optional", value_name = "PATTERN")]
    pub optional: Vec<String>,
    /// Budget of each waiting step (helm's own --timeout, the rollout wait, the init wait).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Fail fast (default off: wait to --timeout): the rollout fails once a gating workload's
    /// new pods restart more than N × its replicas, or one pod has more than N image-pull or
    /// config-error events. The annotation helmdeck.io/ (or werf.io/)
    /// failures-allowed-per-replica overrides it per workload.
    #[arg(long, value_name = "N")]
    pub failures_allowed_per_replica: Option<u32>,
    /// A `pending-*` lock younger than this is another deploy at work: reported, never advised
    /// away (default 10m).
    #[arg(long, value_name = "DURATION")]
    pub lock_min_age: Option<String>,
    /// Headless lock recovery: when a `pending-*` revision older than --lock-min-age holds the
    /// release, `helm rollback` to the last deployed revision, then deploy.
    #[arg(long)]
    pub recover_lock: bool,
    /// With --recover-lock: clear a lock even when it is younger than --lock-min-age.
    #[arg(long, requires = "recover_lock")]
    pub force: bool,
    /// helmdeck's own rollback (never passed to helm): when this run's upgrade or rollout fails,
    /// roll back to the last deployed revision and track its rollout; the verdict stays 1.
    #[arg(long)]
    pub rollback_on_failure: bool,
    /// After a landed deploy, run `helm test REL --logs` as a `test` step; a failing test pod
    /// turns the verdict to 1.
    #[arg(long)]
    pub test: bool,
    /// helm binary (else $HELM_BIN, .tools/bin/helm, PATH).
    #[arg(long)]
    pub helm: Option<PathBuf>,
    /// Plain line output instead of the TUI (implied when stdout is not a terminal).
    #[arg(long)]
    pub headless: bool,
    /// Write a machine-readable JSON report here.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Write a JUnit XML report here, for CI test reporters: one test case per step, per gating
    /// workload and for the verdict; optional workloads are skipped cases.
    #[arg(long, value_name = "FILE.xml")]
    pub junit: Option<PathBuf>,
    /// Run a single step against the live release.
    #[arg(long, value_enum)]
    pub only: Option<Only>,
    /// Print the commands and objects each step would use; write nothing to the cluster.
    #[arg(long)]
    pub dry_run: bool,
    /// Show what the upgrade would change first (helm's server-side dry run against the
    /// current revision); the TUI waits for `y`, headless prints it and deploys.
    #[arg(long, conflicts_with_all = ["dry_run", "only"])]
    pub plan: bool,
    /// Print the plan and stop: exit 0 when nothing would change, 4 when something would.
    /// Nothing is written.
    #[arg(long, conflicts_with_all = ["dry_run", "only"])]
    pub plan_only: bool,
    #[command(flatten)]
    pub record: RecordArgs,
    /// Extra arguments for `helm upgrade` (after `--`).
    #[arg(last = true)]
    pub extra: Vec<String>,
}

/// `helmdeck demo`: the deploy's flags, against the in-process simulator.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Scenario name (see `helmdeck sim --list`) or path to a scenario file (default:
    /// optional-pending); with --fleet, repeatable: one per simulated cluster, in turn.
    #[arg(long, value_name = "SCENARIO")]
    pub scenario: Vec<String>,
    /// Rehearse a fleet: start N simulated clusters (scenarios from --scenario in turn, else
    /// all-green, optional-pending, init-fails) and deploy to all of them at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=32))]
    pub fleet: Option<u16>,
    /// Chart directory or reference to rehearse (default: the embedded demo chart).
    #[arg(long)]
    pub chart: Option<String>,
    /// Release name.
    #[arg(long, default_value = "demo")]
    pub release: String,
    #[command(flatten)]
    pub flags: DeployFlags,
}

/// Where a run's events go, besides the screen (deploy and demo).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RecordArgs {
    /// Keep the record (NDJSON events) in this file instead of $XDG_STATE_HOME/helmdeck/.
    #[arg(long, value_name = "FILE.ndjson", conflicts_with = "no_record")]
    pub record: Option<PathBuf>,
    /// Keep no record of this run.
    #[arg(long)]
    pub no_record: bool,
    /// `-`: stream the record's NDJSON to standard output instead of the headless lines
    /// (implies --headless; nothing else is printed there).
    #[arg(long, value_name = "-", value_parser = ["-"])]
    pub events: Option<String>,
}

/// `helmdeck replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// The record to play (see --list).
    #[arg(required_unless_present = "list")]
    pub file: Option<PathBuf>,
    /// Playback speed (0.25 to 64; + and - change it while playing).
    #[arg(long, default_value_t = 1.0, value_name = "N")]
    pub speed: f64,
    /// Print the headless lines at once and exit with the recorded verdict's code.
    #[arg(long)]
    pub headless: bool,
    /// Write the report rebuilt from the record here (as the run's --report wrote it).
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// List the kept records (of RELEASE only, when given), newest first, with their verdicts.
    #[arg(long, value_name = "RELEASE", num_args = 0..=1, conflicts_with_all = ["file", "headless", "report", "cast"])]
    pub list: Option<Option<String>>,
    /// Write the replayed screen as an asciicast v2 file (any asciinema player shows it) with
    /// the record's timing (divided by --speed), without a terminal, instead of playing it.
    #[arg(long, value_name = "FILE.cast", conflicts_with = "headless")]
    pub cast: Option<PathBuf>,
    /// The cast's terminal size, COLSxROWS.
    #[arg(
        long,
        value_name = "COLSxROWS",
        default_value = "120x36",
        requires = "cast"
    )]
    pub size: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
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
    /// verdict line per revision; the screen: each in its History pane). `q` or a signal while
    /// waiting leaves with the last verdict's exit code.
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
            flags: DeployFlags {
                namespace: self.namespace.clone(),
                kube_context: self.kube_context.clone(),
                optional: self.optional.clone(),
                timeout: self.timeout.clone(),
                lock_min_age: self.lock_min_age.clone(),
                headless: self.headless,
                report: self.report.clone(),
                ..DeployFlags::default()
            },
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
    /// The init Job to show, as `deploy --init-job` names it (default: the newest Job
    /// helmdeck's init step created for the release, labelled `helmdeck.io/run`).
    #[arg(long, value_name = "NAME")]
    pub init_job: Option<String>,
    /// kubeconfig context to use.
    #[arg(long)]
    pub kube_context: Option<String>,
}
