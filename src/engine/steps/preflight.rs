//! Step 1: tools, cluster reachable, namespace, and the release lock.

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;

use crate::cli::Only;
use crate::cluster::{client, releases};
use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::steps::Ctx;
use crate::time::{self, AgeStyle};

fn age(written_at: Option<i64>) -> String {
    let Some(at) = written_at else {
        return "unknown age".into();
    };
    let secs = jiff::Timestamp::now().as_second() - at;
    format!("{} ago", time::age(secs, AgeStyle::Short))
}

/// Returns the latest revision before this deploy (if any) with the outcome.
pub async fn run(ctx: &Ctx, helm_version: &str) -> (StepOutcome, Option<i64>) {
    let step = Step::Preflight;
    let emit = &ctx.emit;
    emit.started(step);
    emit.info(
        step,
        format!("helm {helm_version} ({})", ctx.helm.display()),
    );
    match client::reachable(&ctx.cluster).await {
        Ok(version) => emit.info(
            step,
            format!(
                "cluster {} reachable (Kubernetes {version})",
                ctx.cluster.server
            ),
        ),
        Err(e) => {
            return (
                emit.ended(
                    step,
                    StepOutcome::Failed {
                        reason: format!("{e:#}"),
                    },
                ),
                None,
            );
        }
    }
    let namespaces: Api<Namespace> = Api::all(ctx.cluster.client.clone());
    match namespaces.get_opt(&ctx.namespace).await {
        Ok(Some(_)) => emit.info(step, format!("namespace {} exists", ctx.namespace)),
        Ok(None) if ctx.plan.extra.iter().any(|a| a == "--create-namespace") => emit.info(
            step,
            format!(
                "namespace {} will be created by helm (--create-namespace)",
                ctx.namespace
            ),
        ),
        Ok(None) => {
            let reason = format!(
                "namespace {} does not exist (pass -- --create-namespace to let helm create it)",
                ctx.namespace
            );
            return (emit.ended(step, StepOutcome::Failed { reason }), None);
        }
        Err(e) => {
            let reason = format!("cannot read namespace {}: {e}", ctx.namespace);
            return (emit.ended(step, StepOutcome::Failed { reason }), None);
        }
    }
    let revisions =
        match releases::revisions(&ctx.cluster.client, &ctx.namespace, &ctx.plan.release).await {
            Ok(r) => r,
            Err(e) => {
                return (
                    emit.ended(
                        step,
                        StepOutcome::Failed {
                            reason: format!("{e:#}"),
                        },
                    ),
                    None,
                );
            }
        };
    let latest = revisions.last().map(|r| r.version);
    emit.send(Event::Release {
        revision_before: latest,
        revision: None,
        chart: None,
    });
    match revisions.last() {
        None => emit.info(
            step,
            format!(
                "release {} not installed yet: helm will install it",
                ctx.plan.release
            ),
        ),
        Some(r) => emit.info(
            step,
            format!(
                "release {} at revision {} ({})",
                ctx.plan.release, r.version, r.status
            ),
        ),
    }
    if let Some(lock) = releases::lock(&revisions, &ctx.plan.release, &ctx.namespace) {
        let deployed = match lock.last_deployed {
            Some(v) => format!("last deployed revision {v}"),
            None => "no deployed revision to roll back to".into(),
        };
        let reason = format!(
            "release {} is locked: revision {} is {} (written {}); {deployed}; clear it with: {}",
            ctx.plan.release,
            lock.pending.version,
            lock.pending.status,
            age(lock.pending.written_at),
            lock.fix
        );
        if ctx.plan.only == Some(Only::Rollout) {
            // Attaching to a rollout someone else started: the lock is expected, not a stop.
            emit.warn(step, reason);
        } else {
            return (emit.ended(step, StepOutcome::Failed { reason }), latest);
        }
    }
    (emit.ended(step, StepOutcome::Succeeded), latest)
}
