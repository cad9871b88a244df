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
    /// The `pending-*` revisions this machine's earlier runs of the release left, read from
    /// their records before the deploy (the engine reads no files): a lock among them whose
    /// helm is gone is ours, not another operator's deploy in progress.
    pub own_locks: Vec<RecordedLock>,
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
