//! `helmdeck inspect`: the post-mortem of a release, read-only and without helm.
//!
//! `collect` reads the release records straight from their Secrets and ConfigMaps (each
//! revision decoded on its own, see `records`), the live hook Jobs with their pods, logs and
//! events (`evidence`), and the release's workloads (judged by `workloads` as the deploy step judges them).
//! The result is one [`Inspection`]; `json` and `text` render it (the TUI renders the same
//! struct). Values (`config`) are never decoded into it, and Secrets in the manifest are masked
//! (`redact`).

pub mod collect;
pub mod evidence;
pub mod json;
pub mod model;
pub mod records;
pub mod redact;
pub mod text;
pub mod workloads;

use std::io::{IsTerminal, Write};

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::cli::InspectArgs;
use crate::cluster;
use crate::glob::KindGlob;

pub use collect::Request;
pub use model::Inspection;

/// Runs the command; returns the exit code (0, or 1 when the requested revision is unreadable).
/// Errors are setup failures (bad arguments, unreadable kubeconfig), which main turns into 2.
pub async fn run(args: InspectArgs) -> Result<i32> {
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
        .collect::<Result<Vec<_>>>()
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
        optional,
    };
    // One quick request first, so an unreachable cluster is said at once rather than after
    // every read has timed out.
    let inspection = match cluster::client::reachable(&cluster).await {
        Ok(_) => collect::inspect(&cluster.client, &request).await,
        Err(e) => Inspection {
            release: crate::text::plain(&request.release),
            namespace: crate::text::plain(&request.namespace),
            requested: request.revision,
            revision: request.revision,
            error: Some(crate::text::plain(&e.to_string())),
            ..Inspection::default()
        },
    };
    let output = if args.json {
        let mut s = serde_json::to_string_pretty(&json::document(&inspection))?;
        s.push('\n');
        s
    } else {
        // The TUI takes over when stdout is a terminal and --headless is not given.
        let headless = args.headless || !std::io::stdout().is_terminal();
        if !headless {
            let client = cluster.client.clone();
            return crate::ui::run_inspect(inspection, move || {
                let (client, request) = (client.clone(), request.clone());
                async move { collect::inspect(&client, &request).await }
            })
            .await;
        }
        text::render(&inspection)
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error of the inspection.
    let _ = stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(inspection.exit_code())
}
