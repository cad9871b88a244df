//! Step 1: tools, cluster reachable, namespace, and the release lock.

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;

use crate::cli::Only;
use crate::cluster::{client, releases};
use crate::engine::ask::{Answer, Question};
use crate::engine::event::{Event, LockView, RecordedLock, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError, lock};

/// Returns the latest revision before this deploy (if any) with the outcome.
/// `unlock` is the screen's answer to a stuck lock (TUI only; headless never waits).
pub async fn run(ctx: &Ctx) -> (StepOutcome, Option<i64>) {
    let unlock = ctx.asks.take(Question::Unlock);
    let mut latest = None;
    let outcome = super::run(ctx, Step::Preflight, async {
        latest = try_run(ctx, unlock).await?;
        Ok(StepOutcome::Succeeded)
    })
    .await;
    (outcome, latest)
}

/// The lock as the TUI's `u` prompt shows it, with the same guard `--recover-lock` applies.
async fn lock_view(ctx: &Ctx, held: &releases::Lock) -> LockView {
    let now = jiff::Timestamp::now();
    LockView {
        revision: held.pending.version,
        status: held.pending.status.clone(),
        age: lock::age(&held.pending, now),
        description: pending_description(ctx, held).await,
        last_deployed: held.last_deployed,
        command: held.fix.clone(),
        refusal: super::rollback::unlock_refusal(
            held,
            ctx.plan.lock_min_age,
            ctx.plan.force,
            own_lock(ctx, held).is_some(),
            now,
        ),
    }
}

/// This machine's own earlier run's record of the held lock, when its helm is gone.
fn own_lock<'a>(ctx: &'a Ctx, held: &releases::Lock) -> Option<&'a RecordedLock> {
    super::left_lock::ours(
        ctx.own_locks.get(),
        &held.pending,
        crate::helm::spawn::alive,
    )
}

/// What the pending record says about the operation that wrote it (helm's `info.description`,
/// e.g. `Preparing upgrade`), made inert: it comes from the cluster. The revision list holds
/// labels only, so the record is read; an unreadable one only loses this line.
async fn pending_description(ctx: &Ctx, held: &releases::Lock) -> Option<String> {
    let record = releases::record(
        &ctx.cluster.client,
        ctx.namespace(),
        &held.pending.secret_name,
    )
    .await
    .ok()?;
    description_of(&record)
}

fn description_of(record: &serde_json::Value) -> Option<String> {
    let text = record.pointer("/info/description")?.as_str()?;
    let text = crate::text::plain(text);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The checks in order; the first that fails ends the step. Returns the latest revision.
async fn try_run(ctx: &Ctx, unlock: Option<Answer>) -> Result<Option<i64>, StepError> {
    check_cluster(ctx).await?;
    let revisions = read_release(ctx).await?;
    let mut latest = revisions.last().map(|r| r.version);
    if let Some(held) = releases::lock(
        &revisions,
        &ctx.plan.release,
        ctx.namespace(),
        ctx.plan.context.as_deref(),
    ) {
        latest = past_the_lock(ctx, &held, latest, unlock).await?;
    }
    // The budget judges the rollout's timeout against a render with the command line's values:
    // `--only init` runs no rollout (and its printed command carries no values), so neither the
    // check nor its "not checked" line applies there.
    if ctx.plan.only != Some(Only::Init) {
        super::budget::check(ctx).await;
    }
    Ok(latest)
}

/// helm, the cluster and the namespace: without them nothing later can run, and each failure
/// says which of them is missing.
async fn check_cluster(ctx: &Ctx) -> Result<(), StepError> {
    let step = Step::Preflight;
    let emit = &ctx.emit;
    emit.info(
        step,
        format!("helm {} ({})", ctx.helm_version, ctx.helm.display()),
    );
    let version = client::reachable(&ctx.cluster).await?;
    emit.info(
        step,
        format!(
            "cluster {} reachable (Kubernetes {version})",
            ctx.cluster.server
        ),
    );
    let namespaces: Api<Namespace> = Api::all(ctx.cluster.client.clone());
    match namespaces.get_opt(ctx.namespace()).await {
        Ok(Some(_)) => emit.info(step, format!("namespace {} exists", ctx.namespace())),
        Ok(None) if ctx.plan.extra.iter().any(|a| a == "--create-namespace") => emit.info(
            step,
            format!(
                "namespace {} will be created by helm (--create-namespace)",
                ctx.namespace()
            ),
        ),
        Ok(None) => return Err(StepError::NoNamespace(ctx.namespace().to_string())),
        Err(error) => {
            return Err(StepError::ReadNamespace {
                namespace: ctx.namespace().to_string(),
                error,
            });
        }
    }
    Ok(())
}

/// The release's history, and what the screens need of it before helm runs: the revision
/// before this deploy and the one a rollback would go back to.
async fn read_release(ctx: &Ctx) -> Result<Vec<releases::Revision>, StepError> {
    let step = Step::Preflight;
    let emit = &ctx.emit;
    let revisions =
        releases::revisions(&ctx.cluster.client, ctx.namespace(), &ctx.plan.release).await?;
    let latest = revisions.last().map(|r| r.version);
    // Attached to a rollout (`--only rollout`, as a watch is), the latest revision is the one
    // judged: the rollback target is an earlier one, never it.
    let deployed_before = match (ctx.plan.only, latest) {
        (Some(Only::Rollout), Some(watched)) => {
            crate::engine::watch::rollback_target(&revisions, watched)
        }
        _ => releases::last_deployed(&revisions),
    };
    emit.send(Event::Release {
        revision_before: latest,
        deployed_before,
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
    Ok(revisions)
}

/// A held lock stops the deploy unless it is expected (attaching to a rollout) or cleared:
/// by `--recover-lock`, or by the operator at the screen. Returns the latest revision the
/// deploy goes on from (a rollback that clears the lock writes a new one).
async fn past_the_lock(
    ctx: &Ctx,
    held: &releases::Lock,
    latest: Option<i64>,
    unlock: Option<Answer>,
) -> Result<Option<i64>, StepError> {
    let step = Step::Preflight;
    let attaching = ctx.plan.only == Some(Only::Rollout);
    let now = jiff::Timestamp::now();
    let own = own_lock(ctx, held).filter(|_| !attaching);
    let recorded = super::left_lock::as_recorded(held, own);
    let reason = match own {
        Some(own) => super::left_lock::reason(&recorded, own, &ctx.plan.release, now),
        None => lock::reason(
            held,
            &ctx.plan.release,
            ctx.plan.lock_min_age,
            now,
            attaching,
        ),
    };
    if attaching {
        // Attaching to a rollout someone else started: the lock is expected, not a stop.
        ctx.emit.warn(step, reason);
        return Ok(latest);
    }
    if ctx.plan.recover_lock {
        ctx.emit.warn(step, reason);
    } else {
        ask_to_unlock(ctx, &recorded, reason, unlock).await?;
    }
    super::rollback::unlock(ctx, held, own).await
}

/// At the screen an old lock waits for the operator's `u` and `y`; a refused one has nothing
/// to ask, headless never waits, and a cancel (q) stops the wait as a `no`.
async fn ask_to_unlock(
    ctx: &Ctx,
    held: &releases::Lock,
    reason: String,
    unlock: Option<Answer>,
) -> Result<(), StepError> {
    let view = lock_view(ctx, held).await;
    let refused = view.refusal.is_some();
    ctx.emit.send(Event::Lock(view));
    let Some(answer) = unlock.filter(|_| !refused) else {
        return Err(StepError::Locked(reason));
    };
    ctx.emit.warn(
        Step::Preflight,
        format!("{reason} (press u to see it and clear it, q to stop)"),
    );
    let approved = tokio::select! {
        a = answer => a.unwrap_or(false),
        () = ctx.cancel.cancelled() => false,
    };
    if !approved {
        return Err(StepError::Locked(reason));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_says_what_its_record_says_made_inert() {
        let record =
            serde_json::json!({"info": {"description": "Preparing \u{1b}[31mupgrade\u{202e}"}});
        let shown = description_of(&record).expect("a description");
        assert!(shown.starts_with("Preparing "), "{shown:?}");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
            "{shown:?}"
        );
        for empty in [
            serde_json::json!({"info": {"description": "  "}}),
            serde_json::json!({"info": {}}),
            serde_json::json!({"info": {"description": 3}}),
        ] {
            assert_eq!(description_of(&empty), None, "{empty}");
        }
    }
}
