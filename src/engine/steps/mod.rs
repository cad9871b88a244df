//! One async function per step. Each emits what it sees and returns how it ended.

pub mod hooks_live;
pub mod init;
pub mod preflight;
pub mod rollout;
pub mod upgrade;

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::cluster::client::Cluster;
use crate::config::DeployPlan;
use crate::engine::emit::Emitter;

/// What every step gets.
pub struct Ctx {
    pub plan: DeployPlan,
    pub namespace: String,
    pub helm: PathBuf,
    pub cluster: Cluster,
    pub emit: Emitter,
    pub cancel: CancellationToken,
    /// Environment for every helm invocation (the demo points helm at its own kubeconfig).
    pub helm_env: Vec<(String, String)>,
}

impl Ctx {
    /// `-n NS [--kube-context CTX]`, for helm command lines.
    pub fn scope_args(&self) -> Vec<String> {
        let mut args = vec!["-n".to_string(), self.namespace.clone()];
        if let Some(ctx) = &self.plan.context {
            args.push("--kube-context".into());
            args.push(ctx.clone());
        }
        args
    }

    /// A helm command with the deploy's environment.
    pub fn helm_command(&self, args: &[String]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.helm);
        cmd.args(args)
            .envs(self.helm_env.iter().cloned())
            .stdin(std::process::Stdio::null());
        cmd
    }

    pub fn selector(&self) -> String {
        format!("app.kubernetes.io/instance={}", self.plan.release)
    }
}
