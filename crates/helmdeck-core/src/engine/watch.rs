//! `helmdeck watch`: a deploy someone else runs, followed from its release records. No chart and
//! no helm: the records (the Secrets helm writes) say which revision is under way and how it
//! ended, the hook Jobs are watched live while it is pending, then the rollout step judges its
//! workloads and, with `--init-job`, the named Job is judged from its hook record or waited for
//! (never created). The steps are the deploy's (`upgrade` is the record followed until it is no
//! longer `pending-*`), so every renderer and the verdict read a watch as they read a deploy.

use std::time::Duration;

use color_eyre::eyre::WrapErr;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use crate::rollout::objects::PodSummary;
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use crate::cluster::client;
use crate::cluster::releases::{self, Lock, Revision};
use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::steps::{self, Ctx, StepError, hooks_live, lock, upgrade};
use crate::engine::views;
pub use crate::engine::watch_init::run_kind_of;
use crate::helm::hooks::{self, RunKind};
use crate::helm::status::{self, ReleaseStatus};
use crate::rollout::readiness::{self, JobProgress};
use crate::text;

/// How often the records (and the init Job) are read again.
const POLL: Duration = Duration::from_secs(1);

/// Where the release stands for a watch that judges revisions newer than `after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase<'a> {
    /// No revision newer than `after` yet (no record at all, or only judged ones).
    Waiting,
    /// The newest revision is `pending-*`: a helm operation is writing it.
    Pending(&'a Revision),
    /// The newest revision is settled (`deployed`, `failed`, ...): it can be judged.
    Settled(&'a Revision),
}

/// The state machine of the record step: always the newest revision, so a deploy that died
/// pending and was started over is followed to the one that runs now.
pub fn phase(revisions: &[Revision], after: Option<i64>) -> Phase<'_> {
    match revisions.last() {
        Some(r) if after.is_none_or(|a| r.version > a) => {
            if status::is_pending(&r.status) {
                Phase::Pending(r)
            } else {
                Phase::Settled(r)
            }
        }
        _ => Phase::Waiting,
    }
}

/// The revision a rollback of `watched` may target: the newest earlier one still `deployed`;
/// once `watched` itself is `deployed` its success superseded that one, so then the newest
/// earlier `superseded` one. Never `watched` itself, and none on a first install.
pub fn rollback_target(revisions: &[Revision], watched: i64) -> Option<i64> {
    let earlier = || revisions.iter().rev().filter(move |r| r.version < watched);
    if let Some(r) = earlier().find(|r| r.status == "deployed") {
        return Some(r.version);
    }
    let watched_deployed = revisions
        .iter()
        .any(|r| r.version == watched && r.status == "deployed");
    watched_deployed
        .then(|| {
            earlier()
                .find(|r| r.status == "superseded")
                .map(|r| r.version)
        })
        .flatten()
}

/// The watch's steps, in the deploy's order; each ends the run when it does not succeed.
pub async fn run_steps(ctx: &Ctx, after: Option<i64>) {
    if steps::run(ctx, Step::Preflight, preflight(ctx)).await != StepOutcome::Succeeded {
        return;
    }
    if steps::run(ctx, Step::Upgrade, follow_record(ctx, after)).await != StepOutcome::Succeeded {
        return;
    }
    if steps::rollout::run(ctx).await != StepOutcome::Succeeded {
        return;
    }
    match ctx.plan.init_job.clone() {
        Some(job) => {
            steps::run(ctx, Step::Init, init(ctx, &job)).await;
        }
        None => {
            steps::skip(ctx, Step::Init, "no --init-job").await;
        }
    }
}

async fn preflight(ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let step = Step::Preflight;
    let version = client::reachable(&ctx.cluster).await?;
    ctx.emit.info(
        step,
        format!(
            "cluster {} reachable (Kubernetes {version})",
            ctx.cluster.server
        ),
    );
    ctx.emit.info(
        step,
        format!(
            "watching release {} in {} from its records (no chart, no helm)",
            ctx.plan.release,
            ctx.namespace()
        ),
    );
    Ok(StepOutcome::Succeeded)
}

/// What the record step has said so far, so each fact is said once.
#[derive(Default)]
struct Said {
    /// The revision followed, and since when it is pending (its step deadline runs from there).
    watched: Option<i64>,
    /// Whether the pending revision was last called young (a deploy in progress) or old.
    young: Option<bool>,
}

/// Follows the newest revision until it is no longer pending, then judges it from its record.
async fn follow_record(ctx: &Ctx, after: Option<i64>) -> Result<StepOutcome, StepError> {
    let step = Step::Upgrade;
    let emit = &ctx.emit;
    let (client, namespace, release) = (&ctx.cluster.client, ctx.namespace(), &ctx.plan.release);
    // Waiting for the first record has the timeout; waiting for a later one (--follow) has none.
    let mut deadline = after
        .is_none()
        .then(|| tokio::time::Instant::now() + ctx.plan.timeout);
    let mut said = Said::default();
    let mut live_hooks: Option<tokio::task::JoinHandle<()>> = None;
    if after.is_none() {
        emit.info(step, format!("waiting for a release record of {release}"));
    }
    let outcome = loop {
        // Its error names the records and the namespace already.
        let revisions = releases::revisions(client, namespace, release).await?;
        let now = jiff::Timestamp::now();
        if let Some(reason) = uninstalled(&revisions, said.watched.or(after), release) {
            emit.send(Event::Uninstalled);
            break Ok(StepOutcome::Failed { reason });
        }
        match phase(&revisions, after) {
            Phase::Waiting => {}
            Phase::Pending(rev) => {
                if said.watched != Some(rev.version) {
                    announce(ctx, &revisions, rev);
                    said = Said {
                        watched: Some(rev.version),
                        young: None,
                    };
                    deadline = Some(tokio::time::Instant::now() + ctx.plan.timeout);
                    if let Some(old) = live_hooks.take() {
                        old.abort();
                    }
                    let since = created(rev).unwrap_or(now);
                    live_hooks = Some(hooks_live::start_since(ctx, since));
                }
                if rev.status == "pending-rollback" {
                    let failed = failed_rollback_hooks(ctx, created(rev)).await?;
                    if !failed.is_empty() {
                        // The failing hook pod's end and its log land from the live hooks.
                        tokio::time::sleep(2 * POLL).await;
                        break Ok(StepOutcome::Failed {
                            reason: format!(
                                "revision {} is pending-rollback and stays so: helm stops a \
                                 rollback at its failed hook without writing the revision again \
                                 · failing hooks: {}",
                                rev.version,
                                failed.join(", ")
                            ),
                        });
                    }
                }
                let young = lock::is_young(rev, ctx.plan.lock_min_age, now);
                if said.young != Some(young) {
                    said.young = Some(young);
                    let held = held(ctx, &revisions, rev);
                    let reason = lock::reason(&held, release, ctx.plan.lock_min_age, now, true);
                    if young {
                        emit.info(step, reason);
                    } else {
                        emit.warn(step, reason);
                    }
                }
            }
            Phase::Settled(rev) => {
                if said.watched != Some(rev.version) {
                    announce(ctx, &revisions, rev);
                }
                if let Some(live) = live_hooks.take() {
                    if rev.status == "failed" {
                        // The failing hook pod's end and its log may land just after the record.
                        tokio::time::sleep(2 * POLL).await;
                    }
                    live.abort();
                    let _ = live.await;
                }
                break judge(ctx, rev).await;
            }
        }
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            let secs = ctx.plan.timeout.as_secs();
            break match said.watched {
                None => Ok(StepOutcome::Failed {
                    reason: format!("no release record of {release} in {namespace} within {secs}s"),
                }),
                Some(v) => Ok(StepOutcome::Failed {
                    reason: format!("revision {v} still pending after {secs}s"),
                }),
            };
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => break Ok(StepOutcome::Cancelled),
            _ = tokio::time::sleep(POLL) => {}
        }
    };
    if let Some(live) = live_hooks {
        live.abort();
        let _ = live.await;
    }
    outcome
}

/// `helm uninstall` under the watch, once it knows a revision (`known`: the one followed, or
/// with `--follow` the last one judged): every record is gone, or the newest is being
/// uninstalled (helm marks it `uninstalling`, then deletes them all unless `--keep-history`).
/// Nothing is pending any more and nothing is left to roll back to.
pub fn uninstalled(revisions: &[Revision], known: Option<i64>, release: &str) -> Option<String> {
    let known = known?;
    match revisions.last() {
        None => Some(format!(
            "release {release} was uninstalled: the records of revision {known} and every other are gone"
        )),
        Some(r) if r.status == "uninstalling" => Some(format!(
            "release {release} is being uninstalled (revision {} is uninstalling)",
            r.version
        )),
        Some(_) => None,
    }
}

/// When a revision's record Secret was written (the API server's clock).
fn created(rev: &Revision) -> Option<jiff::Timestamp> {
    rev.created.as_deref().and_then(|c| c.parse().ok())
}

/// The rollback hook Jobs of this release created since `since` that failed, by name. helm v4
/// returns on a rollback hook's error without writing the revision again, so its record stays
/// `pending-rollback` (that hook `Running`) for good: these Jobs are the only sign it ended.
async fn failed_rollback_hooks(
    ctx: &Ctx,
    since: Option<jiff::Timestamp>,
) -> Result<Vec<String>, StepError> {
    let jobs: Api<Job> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    let list = jobs
        .list(&ListParams::default())
        .await
        .wrap_err("listing the rollback hook Jobs")?;
    let mut failed: Vec<String> = list
        .items
        .iter()
        .filter(|job| {
            let meta = &job.metadata;
            let rollback_hook = meta
                .annotations
                .as_ref()
                .and_then(|a| a.get("helm.sh/hook"))
                .is_some_and(|events| {
                    events
                        .split(',')
                        .any(|e| matches!(e.trim(), "pre-rollback" | "post-rollback"))
                });
            let ours = meta
                .labels
                .as_ref()
                .and_then(|l| l.get("app.kubernetes.io/instance"))
                .is_none_or(|i| *i == ctx.plan.release);
            // Both stamps come from the API server's clock, in whole seconds.
            let new = since.is_none_or(|s| {
                meta.creation_timestamp
                    .as_ref()
                    .is_some_and(|t| t.0.as_second() >= s.as_second())
            });
            rollback_hook && ours && new
        })
        .filter(|job| matches!(readiness::job(job), JobProgress::Failed { .. }))
        .map(|job| text::plain(job.metadata.name.as_deref().unwrap_or("")))
        .collect();
    failed.sort();
    Ok(failed)
}

/// The lock a pending revision holds, with the rollback this watch may advise.
fn held(ctx: &Ctx, revisions: &[Revision], rev: &Revision) -> Lock {
    let target = rollback_target(revisions, rev.version);
    let (release, namespace, context) = (
        &ctx.plan.release,
        ctx.namespace(),
        ctx.plan.context.as_deref(),
    );
    let fix = match target {
        Some(v) => crate::advice::helm_rollback(release, v, namespace, context),
        None => crate::advice::kubectl_delete("secret", &rev.secret_name, namespace, context),
    };
    Lock {
        pending: rev.clone(),
        last_deployed: target,
        fix,
    }
}

/// The revision now followed: the one before it, and the rollback target, for the advice.
fn announce(ctx: &Ctx, revisions: &[Revision], rev: &Revision) {
    let before = revisions
        .iter()
        .rev()
        .find(|r| r.version < rev.version)
        .map(|r| r.version);
    ctx.emit.send(Event::Release {
        revision_before: before,
        deployed_before: rollback_target(revisions, rev.version),
        revision: Some(rev.version),
        chart: None,
    });
    ctx.emit.info(
        Step::Upgrade,
        format!(
            "revision {} is {} ({} of {})",
            rev.version,
            text::plain(&rev.status),
            rev.operation(),
            ctx.plan.release
        ),
    );
}

/// The settled revision's verdict from its record: the hooks, description and notes shown.
async fn judge(ctx: &Ctx, rev: &Revision) -> Result<StepOutcome, StepError> {
    let (client, namespace) = (&ctx.cluster.client, ctx.namespace());
    let value = releases::record(client, namespace, &rev.secret_name)
        .await
        .wrap_err_with(|| format!("reading the record of revision {}", rev.version))?;
    let record = status::from_release_json(&value)
        .map_err(|e| StepError::RecordUnreadable(e.to_string()))?;
    let run_kind = run_kind_of(&record);
    ctx.emit.send(Event::Release {
        revision_before: None,
        deployed_before: None,
        revision: Some(record.version),
        chart: releases::chart(client, namespace, &rev.secret_name).await,
    });
    ctx.emit.send(Event::Hooks {
        hooks: upgrade::hook_views(&record, run_kind),
    });
    for line in record_lines(&record, &value) {
        ctx.emit.send(Event::HelmLine {
            stderr: false,
            text: line,
        });
    }
    Ok(outcome_of(&record, run_kind))
}

/// What the helm pane shows instead of helm's output: the revision's status, description and
/// notes, made inert.
pub fn record_lines(record: &ReleaseStatus, value: &Value) -> Vec<String> {
    let mut lines = vec![format!(
        "revision {}: {}",
        record.version,
        text::plain(&record.status)
    )];
    lines.extend(
        record
            .description
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(text::plain),
    );
    if let Some(notes) = value.pointer("/info/notes").and_then(Value::as_str)
        && !notes.trim().is_empty()
    {
        lines.push("NOTES:".into());
        lines.extend(notes.lines().map(text::plain));
    }
    lines
}

/// A settled revision's outcome: `deployed` succeeds; anything else fails, naming the failing
/// and skipped hooks from the record.
pub fn outcome_of(record: &ReleaseStatus, run_kind: RunKind) -> StepOutcome {
    if record.status == "deployed" {
        return StepOutcome::Succeeded;
    }
    let description = record
        .description
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut reason = format!(
        "revision {} is {}: {}",
        record.version,
        text::plain(&record.status),
        text::plain(&description)
    );
    let judged = hooks::judge(&record.hooks, run_kind);
    let names = |list: Vec<&hooks::JudgedHook>| {
        list.iter()
            .map(|h| text::plain(&h.record.name))
            .collect::<Vec<_>>()
    };
    let failing = names(hooks::failing(&judged));
    let skipped = names(hooks::skipped(&judged));
    if !failing.is_empty() {
        reason.push_str(&format!(" · failing hooks: {}", failing.join(", ")));
    }
    if !skipped.is_empty() {
        reason.push_str(&format!(" · skipped hooks: {}", skipped.join(", ")));
    }
    StepOutcome::Failed { reason }
}

/// `--init-job NAME`: a hook of the release is judged from helm's record of it (it ran while the
/// revision was pending and may be deleted since); any other Job is waited for.
async fn init(ctx: &Ctx, name: &str) -> Result<StepOutcome, StepError> {
    match crate::engine::watch_init::from_hook(ctx, name).await? {
        Some(outcome) => Ok(outcome),
        None => wait_for_job(ctx, name).await,
    }
}

/// Waits for the `--init-job` Job (created by the deploy, never by a watch) to end. Only
/// a Job created since the watched revision's record counts: an earlier deploy's is not this
/// one's run.
async fn wait_for_job(ctx: &Ctx, name: &str) -> Result<StepOutcome, StepError> {
    let step = Step::Init;
    let (client, namespace) = (&ctx.cluster.client, ctx.namespace());
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let revisions = releases::revisions(client, namespace, &ctx.plan.release)
        .await
        .wrap_err("reading the release records")?;
    let since: Option<jiff::Timestamp> = revisions
        .last()
        .and_then(|r| r.created.as_deref())
        .and_then(|c| c.parse().ok());
    ctx.emit.info(
        step,
        format!("waiting for Job {name} (not created by a watch)"),
    );
    let deadline = tokio::time::Instant::now() + ctx.plan.timeout;
    let owner = format!("Job/{name}");
    let mut announced = false;
    loop {
        let job = jobs
            .get_opt(name)
            .await
            .wrap_err_with(|| format!("reading Job {name}"))?
            .filter(|j| {
                let created = j.metadata.creation_timestamp.as_ref().map(|t| t.0);
                since.is_none_or(|s| created.is_some_and(|c| c.as_second() >= s.as_second()))
            });
        if let Some(job) = &job {
            if !announced {
                announced = true;
                ctx.emit.send(Event::InitJob {
                    name: text::plain(name),
                    uid: text::plain(job.metadata.uid.as_deref().unwrap_or("")),
                    run: job
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(crate::engine::steps::init_objects::RUN_LABEL))
                        .map(|r| text::plain(r)),
                });
            }
            let list = pods
                .list(&ListParams::default().labels(&format!("job-name={name}")))
                .await
                .wrap_err_with(|| format!("listing the pods of Job {name}"))?;
            let progress = readiness::job(job);
            for pod in &list.items {
                let view = views::pod_view(&PodSummary::of(pod), owner.clone(), true, &[]);
                if matches!(progress, JobProgress::Failed { .. }) && view.phase == "Failed" {
                    hooks_live::fetch_log_tail(
                        &pods,
                        &ctx.emit,
                        &view.name,
                        &view.log_containers(),
                    );
                }
                ctx.emit.send(Event::Pod(view));
            }
            match progress {
                JobProgress::Complete => return Ok(StepOutcome::Succeeded),
                JobProgress::Failed { reason, message } => {
                    return Ok(StepOutcome::Failed {
                        reason: text::plain(&format!("Job {name} failed: {reason}: {message}")),
                    });
                }
                JobProgress::Running { .. } => {}
            }
        }
        if tokio::time::Instant::now() >= deadline {
            let secs = ctx.plan.timeout.as_secs();
            let what = if announced {
                "did not finish"
            } else {
                "did not appear"
            };
            return Ok(StepOutcome::Failed {
                reason: format!("Job {name} {what} within {secs}s"),
            });
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => return Ok(StepOutcome::Cancelled),
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(version: i64, status: &str) -> Revision {
        Revision {
            version,
            status: status.into(),
            secret_name: format!("sh.helm.release.v1.demo.v{version}"),
            ..Revision::default()
        }
    }

    #[test]
    fn the_record_step_follows_the_newest_revision_newer_than_the_judged_ones() {
        assert_eq!(phase(&[], None), Phase::Waiting);
        let installing = [rev(1, "pending-install")];
        assert_eq!(phase(&installing, None), Phase::Pending(&installing[0]));
        let installed = [rev(1, "deployed")];
        assert_eq!(phase(&installed, None), Phase::Settled(&installed[0]));
        // --follow after judging revision 1: it waits for the next one.
        assert_eq!(phase(&installed, Some(1)), Phase::Waiting);
        let upgrading = [rev(1, "deployed"), rev(2, "pending-upgrade")];
        assert_eq!(phase(&upgrading, Some(1)), Phase::Pending(&upgrading[1]));
        for settled in ["failed", "deployed", "superseded"] {
            let done = [rev(1, "superseded"), rev(2, settled)];
            assert_eq!(phase(&done, Some(1)), Phase::Settled(&done[1]), "{settled}");
        }
        let rolling_back = [
            rev(1, "deployed"),
            rev(2, "failed"),
            rev(3, "pending-rollback"),
        ];
        assert_eq!(phase(&rolling_back, None), Phase::Pending(&rolling_back[2]));
    }

    #[test]
    fn an_uninstall_is_seen_once_a_revision_is_known() {
        // Waiting for the first record: nothing is gone yet.
        assert_eq!(uninstalled(&[], None, "demo"), None);
        let gone = uninstalled(&[], Some(3), "demo").expect("records gone");
        assert!(gone.starts_with("release demo was uninstalled"), "{gone}");
        let going = [rev(2, "deployed"), rev(3, "uninstalling")];
        assert!(
            uninstalled(&going, Some(3), "demo").is_some_and(|r| r.contains("being uninstalled"))
        );
        let pending = [rev(2, "deployed"), rev(3, "pending-upgrade")];
        assert_eq!(uninstalled(&pending, Some(3), "demo"), None);
    }

    #[test]
    fn a_rollback_targets_an_earlier_deployed_revision_only() {
        // A first install: nothing to roll back to, least of all the failing revision itself.
        assert_eq!(rollback_target(&[rev(1, "failed")], 1), None);
        assert_eq!(rollback_target(&[rev(1, "deployed")], 1), None);
        assert_eq!(rollback_target(&[rev(1, "pending-install")], 1), None);
        // An upgrade under way or failed: the one still deployed.
        assert_eq!(
            rollback_target(&[rev(1, "deployed"), rev(2, "pending-upgrade")], 2),
            Some(1)
        );
        assert_eq!(
            rollback_target(
                &[rev(1, "superseded"), rev(2, "deployed"), rev(3, "failed")],
                3
            ),
            Some(2)
        );
        // An upgrade that landed but whose rollout fails: the one it superseded.
        assert_eq!(
            rollback_target(
                &[rev(1, "superseded"), rev(2, "failed"), rev(3, "deployed")],
                3
            ),
            Some(1)
        );
        // Never a failed revision.
        assert_eq!(
            rollback_target(&[rev(1, "failed"), rev(2, "failed")], 2),
            None
        );
    }

    fn record(status: &str, description: &str, hooks: Value) -> (ReleaseStatus, Value) {
        let value = serde_json::json!({
            "name": "demo", "namespace": "apps", "version": 2,
            "info": {"status": status, "description": description, "notes": "Visit \u{1b}[31mhttp://demo\n"},
            "hooks": hooks,
        });
        (status::from_release_json(&value).expect("a record"), value)
    }

    #[test]
    fn a_settled_revision_is_judged_from_its_record_with_its_failing_hooks() {
        let hooks = serde_json::json!([
            {"name": "demo-migrate", "kind": "Job", "path": "t/m.yaml", "events": ["post-upgrade"],
             "last_run": {"phase": "Failed", "started_at": "2026-12-01T10:00:00Z"}},
        ]);
        let (failed, _) = record(
            "failed",
            "Upgrade \"demo\" failed: post-upgrade hooks failed:\n\tjob demo-migrate failed",
            hooks,
        );
        let StepOutcome::Failed { reason } = outcome_of(&failed, RunKind::Upgrade) else {
            panic!("a failed revision must fail the step");
        };
        assert!(
            reason.starts_with("revision 2 is failed: Upgrade \"demo\" failed"),
            "{reason}"
        );
        assert!(
            reason.ends_with("· failing hooks: demo-migrate"),
            "{reason}"
        );
        let (deployed, value) = record("deployed", "Upgrade complete", serde_json::json!([]));
        assert_eq!(
            outcome_of(&deployed, RunKind::Upgrade),
            StepOutcome::Succeeded
        );
        // Only `deployed` is a success: a revision superseded under the watch never went live.
        let (superseded, _) = record("superseded", "Upgrade complete", serde_json::json!([]));
        assert!(matches!(
            outcome_of(&superseded, RunKind::Upgrade),
            StepOutcome::Failed { .. }
        ));
        let lines = record_lines(&deployed, &value);
        assert_eq!(
            lines[..3],
            ["revision 2: deployed", "Upgrade complete", "NOTES:"]
        );
        assert!(
            !lines[3].contains('\u{1b}'),
            "notes are made inert: {lines:?}"
        );
    }

    #[test]
    fn a_rollbacks_record_is_judged_by_its_rollback_hooks() {
        let hooks = serde_json::json!([
            {"name": "demo-seed", "kind": "Job", "path": "t/s.yaml",
             "events": ["post-upgrade", "post-rollback"],
             "last_run": {"phase": "Failed", "started_at": "2026-12-01T10:00:00Z"}},
            {"name": "demo-notify", "kind": "Job", "path": "t/n.yaml", "events": ["post-rollback"]},
        ]);
        let (failed, _) = record(
            "failed",
            "Rollback \"demo\" failed: post-rollback hooks failed",
            hooks.clone(),
        );
        assert_eq!(run_kind_of(&failed), RunKind::Rollback);
        let StepOutcome::Failed { reason } = outcome_of(&failed, run_kind_of(&failed)) else {
            panic!("a failed rollback must fail the step");
        };
        assert!(
            reason.contains("failing hooks: demo-seed")
                && reason.contains("skipped hooks: demo-notify"),
            "{reason}"
        );
        let (pending, _) = record("pending-rollback", "Rollback to 1", hooks.clone());
        assert_eq!(run_kind_of(&pending), RunKind::Rollback);
        let (upgrade, _) = record("failed", "Upgrade \"demo\" failed", hooks);
        assert_eq!(run_kind_of(&upgrade), RunKind::Upgrade);
    }
}
