//! A deploy made ready before the first cluster request: the plan, the handles on helm and the
//! cluster, and the questions a screen may answer. Every step reads it through its
//! [`Ctx`](crate::engine::steps::Ctx); nothing here runs anything.

use std::path::PathBuf;

use crate::cluster::client::Cluster;
use crate::config::DeployPlan;
use crate::engine::ask::Asks;
use crate::engine::event::RecordedLock;

pub struct Prepared {
    pub plan: DeployPlan,
    pub helm: PathBuf,
    pub helm_version: String,
    pub cluster: Cluster,
    /// Environment for every helm invocation (the demo points helm at its own kubeconfig).
    pub helm_env: Vec<(String, String)>,
    /// What an operator at a screen may be asked (the plan, a stuck lock, a rollback after a
    /// failed verdict); nothing where nobody is asked (headless).
    pub asks: Asks,
    /// This machine's ended runs of the release whose init step created a Job, from its
    /// records (the binary gives the reader: the engine reads no record). Read only when a
    /// running init Job is found: a Job of one of them is attached to, not refused as another
    /// run's. None: no records (the demo's cluster is new).
    pub earlier_runs: Option<EarlierRuns>,
    /// The `pending-*` revisions this machine's earlier runs of the release left, read from
    /// their records (the binary gives the reader: the engine reads no files) only when
    /// preflight finds a lock: a lock among them whose helm is gone is ours, not another
    /// operator's deploy in progress.
    pub own_locks: OwnLocks,
}

/// Reads this machine's earlier runs of the release, on demand.
pub type EarlierRuns = std::sync::Arc<dyn Fn() -> Vec<EarlierRun> + Send + Sync>;

/// An ended run, recorded on this machine, whose init step created a Job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierRun {
    /// The Job's `helmdeck.io/run` label.
    pub run: String,
    /// The Job's uid: a Job of the same name and label made since is not that run's.
    pub uid: String,
    /// When that run started (RFC 3339).
    pub started: String,
}

/// This machine's recorded locks of the release, read once, on first use: a deploy that finds
/// no lock reads no record.
#[derive(Default)]
pub struct OwnLocks {
    read: Option<Box<dyn Fn() -> Vec<RecordedLock> + Send + Sync>>,
    read_once: std::sync::OnceLock<Vec<RecordedLock>>,
}

impl OwnLocks {
    pub fn new(read: impl Fn() -> Vec<RecordedLock> + Send + Sync + 'static) -> Self {
        OwnLocks {
            read: Some(Box::new(read)),
            read_once: std::sync::OnceLock::new(),
        }
    }

    /// The recorded locks (none where no reader was given: the demo, watch).
    pub fn get(&self) -> &[RecordedLock] {
        self.read_once
            .get_or_init(|| self.read.as_ref().map(|read| read()).unwrap_or_default())
    }
}

impl Prepared {
    /// The release's namespace (the plan's, else the kube context's).
    pub fn namespace(&self) -> &str {
        self.plan.namespace_or(&self.cluster.default_namespace)
    }

    /// `-n NS [--kube-context CTX]`, for helm command lines.
    pub fn scope_args(&self) -> Vec<String> {
        crate::advice::helm_scope(self.namespace(), self.plan.context.as_deref())
    }

    /// A helm command with the deploy's environment.
    pub fn helm_command(&self, args: &[String]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.helm);
        cmd.args(args)
            .envs(self.helm_env.iter().cloned())
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// The release's instance label, the scope of every watch.
    pub fn selector(&self) -> String {
        format!("app.kubernetes.io/instance={}", self.plan.release)
    }
}
