//! `helmdeck inspect`: the post-mortem of a release, read-only and without helm.
//!
//! `collect` reads the release records straight from their Secrets and ConfigMaps (each
//! revision decoded on its own, see `records`), the live hook Jobs with their pods, logs and
//! events (`evidence`), and the release's workloads (judged by `workloads` as the deploy step judges them).
//! The result is one [`Inspection`]; `json` and `text` render it (the TUI renders the same
//! struct). Values (`config`) are never decoded into it, and Secrets in the manifest are masked
//! (`redact`).

pub mod collect;
pub mod digest;
pub mod evidence;
pub mod init_job;
pub mod json;
pub mod model;
pub mod records;
pub mod redact;
pub mod text;
pub mod workloads;

use std::io::Write;

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::cli::InspectArgs;
use crate::cluster;
use crate::glob::KindGlob;

pub use collect::Request;
pub use model::Inspection;

/// What `helmdeck inspect` reads, and from where, so the TUI can read it again.
pub struct Reader {
    cluster: cluster::client::Cluster,
    request: Request,
}

impl Reader {
    /// Checks the arguments and connects. Errors are setup failures (bad arguments, an
    /// unreadable kubeconfig), which main turns into 2.
    pub async fn connect(args: &InspectArgs) -> Result<Reader> {
        if let Some(n) = args.revision.filter(|n| *n < 1) {
            return Err(eyre!("--revision must be 1 or more (got {n})"));
        }
        if args.release.is_empty() {
            return Err(eyre!("the release name is empty"));
        }
        let optional = args
            .optional
            .iter()
            .map(|p| KindGlob::new(p))
            .collect::<Result<Vec<_>, _>>()
            .wrap_err("--optional")?;
        let cluster = cluster::client::connect(args.kube_context.as_deref()).await?;
        let request = Request {
            release: args.release.clone(),
            namespace: args
                .namespace
                .clone()
                .unwrap_or_else(|| cluster.default_namespace.clone()),
            revision: args.revision,
            show_manifest: args.show_manifest,
            context: args.kube_context.clone(),
            optional,
            init_job: args.init_job.clone(),
        };
        Ok(Reader { cluster, request })
    }

    /// The first read. One quick request first, so an unreachable cluster is said at once
    /// rather than after every read has timed out.
    pub async fn first(&self) -> Inspection {
        match cluster::client::reachable(&self.cluster).await {
            Ok(_) => self.read().await,
            Err(e) => Inspection {
                release: crate::text::plain(&self.request.release),
                namespace: crate::text::plain(&self.request.namespace),
                requested: self.request.revision,
                revision: self.request.revision,
                error: Some(crate::text::plain(&e.to_string())),
                ..Inspection::default()
            },
        }
    }

    /// Reads the release again (the TUI's `r`).
    pub async fn read(&self) -> Inspection {
        collect::inspect(&self.cluster.client, &self.request).await
    }
}

/// Prints the inspection as one JSON document (`--json`) or as plain text; returns the exit
/// code (0, or 1 when the requested revision is unreadable).
pub fn print(inspection: &Inspection, json: bool) -> Result<i32> {
    let output = if json {
        let mut s = serde_json::to_string_pretty(&json::document(inspection))?;
        s.push('\n');
        s
    } else {
        text::render(inspection)
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error of the inspection.
    let _ = stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(inspection.exit_code())
}
