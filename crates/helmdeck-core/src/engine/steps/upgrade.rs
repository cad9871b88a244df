//! Step 2: `helm upgrade --install` with the init hook switched off. Helm judges apply and
//! hooks; its exit status is the step's result, and the failing hooks are named from the
//! release record of this run's revision, decoded from its Secret: the one that appeared while
//! this run's helm ran (another operator's is never claimed). Not through `helm status`: helm 4
//! reads back every resource of the release for it (at 200 workloads, 400 requests and longer
//! than the upgrade); the e2e tests keep `helm status -o json` as the oracle it must agree with.

use std::collections::BTreeSet;
use std::time::Duration;

use color_eyre::eyre::WrapErr;

use crate::cluster::releases::{self, Revision};
use crate::engine::event::{Event, HookView, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError, lock};
use crate::helm::hooks::{self, RunKind};
use crate::helm::process::{self, HelmExit};
use crate::helm::status::{self, ReleaseStatus};
use crate::text;

/// How long reading the record may take before it counts as unreadable.
const RECORD_TIMEOUT: Duration = Duration::from_secs(30);

/// The arguments of the upgrade (unredacted: they go to helm, never to the screen as is).
pub fn upgrade_args(ctx: &Ctx) -> Vec<String> {
    let plan = &ctx.plan;
    let mut args = vec![
        "upgrade".into(),
        "--install".into(),
        plan.release.clone(),
        plan.helm_chart(),
    ];
    args.extend(ctx.scope_args());
    args.extend(plan.value_args());
    if let Some(key) = &plan.init_toggle {
        // Last, so it wins over any --set of the same key from the user.
        args.push("--set".into());
        args.push(format!("{key}=false"));
    }
    args.push("--timeout".into());
    args.push(plan.helm_timeout());
    args.extend(plan.upgrade_extra());
    args
}

/// Reads one revision's release record from its Secret (without its values).
pub(super) async fn read_record(ctx: &Ctx, rev: &Revision) -> Result<ReleaseStatus, String> {
    let read = releases::record(&ctx.cluster.client, ctx.namespace(), &rev.secret_name);
    let record = tokio::time::timeout(RECORD_TIMEOUT, read)
        .await
        .map_err(|_| {
            format!(
                "the release record was not read within {}s",
                RECORD_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("reading the release record: {e:#}"))?;
    status::from_release_json(&record).map_err(|e| format!("unreadable release record: {e}"))
}

/// `name version` of the record's chart, as `releases::chart` gives it.
fn chart_of(record: &ReleaseStatus) -> Option<String> {
    let name = record.chart.as_deref()?;
    let version = record.chart_version.as_deref().unwrap_or("");
    Some(text::plain(format!("{name} {version}").trim()))
}

pub fn hook_views(record: &ReleaseStatus, run: RunKind) -> Vec<HookView> {
    hooks::judge(&record.hooks, run)
        .into_iter()
        .map(|j| HookView {
            name: text::plain(&j.record.name),
            kind: text::plain(&j.record.kind),
            events: j.record.events.iter().map(|e| text::plain(e)).collect(),
            weight: j.record.weight,
            phase: j.outcome,
            started_at: j.record.started_at.clone(),
            completed_at: j.record.completed_at.clone(),
        })
        .collect()
}

/// The outcome with the revision this run's helm wrote (`None` when it wrote none, or another
/// operation got there first): what `--rollback-on-failure` may roll back.
pub async fn run(ctx: &Ctx, revision_before: Option<i64>) -> (StepOutcome, Option<i64>) {
    let mut written = None;
    let outcome = super::run(
        ctx,
        Step::Upgrade,
        try_run(ctx, revision_before, &mut written),
    )
    .await;
    (outcome, written)
}

/// The oldest revision whose record Secret is not among `before` (the UIDs listed before helm
/// started): the one this run's helm wrote, if it wrote one. The oldest, not the newest: another
/// operator's upgrade may land between this helm's end and the listing after it, and taking
/// theirs for ours would let `--rollback-on-failure` and `R` roll back over it. With the oldest,
/// any newer record is told as another operation's, and nothing is rolled back over it.
fn this_runs<'a>(after: &'a [Revision], before: &BTreeSet<String>) -> Option<&'a Revision> {
    after
        .iter()
        .filter(|r| !r.uid.is_empty() && !before.contains(&r.uid))
        .min_by_key(|r| r.version)
}

async fn try_run(
    ctx: &Ctx,
    revision_before: Option<i64>,
    written: &mut Option<i64>,
) -> Result<StepOutcome, StepError> {
    let emit = &ctx.emit;
    let args = upgrade_args(ctx);
    emit.info(
        Step::Upgrade,
        format!("helm {}", process::redact_args(&args).join(" ")),
    );
    let (client, namespace, release) = (&ctx.cluster.client, ctx.namespace(), &ctx.plan.release);
    // Listed before helm starts: afterwards, only a record Secret not among these is this run's.
    let records_before: BTreeSet<String> = releases::revisions(client, namespace, release)
        .await
        .wrap_err("listing the release records before helm starts")?
        .into_iter()
        .map(|r| r.uid)
        .collect();
    let exit = upgrade_with_live_hooks(ctx, args).await?;
    let records_after = releases::revisions(client, namespace, release).await;
    if !exit.success()
        && !exit.cancelled
        && let Some(error) = lock::refusal(&exit.stderr_tail)
    {
        // The other deploy's record and hook Jobs appeared while this helm ran, so the live view
        // may have shown them: none of them is this run's.
        emit.send(Event::Hooks { hooks: vec![] });
        let other = records_after.as_ref().ok().and_then(|r| r.last());
        return Err(StepError::Concurrent(lock::refused_reason(
            &text::plain(error),
            other,
            jiff::Timestamp::now(),
        )));
    }
    let run_kind = if revision_before.is_some() {
        RunKind::Upgrade
    } else {
        RunKind::Install
    };
    let ours = records_after
        .as_ref()
        .ok()
        .and_then(|after| this_runs(after, &records_before));
    *written = ours.map(|r| r.version);
    let record = match (ours, &records_after) {
        (Some(rev), _) => read_record(ctx, rev).await,
        (None, Ok(_)) => Err("this run's helm wrote no release record".to_string()),
        (None, Err(e)) => Err(format!("listing the release records after helm: {e:#}")),
    };
    show_record(
        ctx,
        ours.is_some(),
        records_after.is_ok(),
        &record,
        run_kind,
    );
    // helm 4 ends a cancelled upgrade `failed`; a helm killed outright leaves it pending.
    if let Ok(after) = &records_after
        && let Some(left) =
            super::left_lock::left_by(ctx, after, &records_before, "upgrade", &exit, None)
    {
        super::left_lock::announce(ctx, Step::Upgrade, left);
    }
    if exit.cancelled {
        return Ok(StepOutcome::Cancelled);
    }
    if !exit.success() {
        return Err(StepError::HelmFailed(failure_reason(
            &exit, &record, run_kind,
        )));
    }
    // helm says yes; this run's record must agree, or the evidence is missing.
    if ours.is_none()
        && let Ok(after) = &records_after
    {
        return Err(StepError::NoNewRevision(
            after.last().map_or(0, |r| r.version),
        ));
    }
    landed(ctx, record, revision_before)
}

/// Runs the upgrade with the hook Jobs shown live while helm runs, and says how helm ended.
/// The live view stops before helm's end is told, so none of it can land after the record's.
async fn upgrade_with_live_hooks(ctx: &Ctx, args: Vec<String>) -> Result<HelmExit, StepError> {
    let live_hooks = super::hooks_live::start(ctx).await;
    let result = super::helm_run::stream_helm(ctx, args, |_, _| {}).await;
    if let Some(live_hooks) = live_hooks {
        live_hooks.abort();
        // Let the aborted watcher finish, so its last live view cannot land after the record's.
        let _ = live_hooks.await;
    }
    let exit = result.map_err(StepError::HelmRun)?;
    ctx.emit.send(Event::HelmExited {
        code: exit.code,
        signal: exit.signal,
        cancelled: exit.cancelled,
        stderr_tail: exit.stderr_tail.iter().map(|l| text::plain(l)).collect(),
    });
    Ok(exit)
}

/// Replaces the live hook view with what this run's record says, once helm has exited. `ours`:
/// helm wrote a record of this run; `listed`: the records could be listed after helm.
fn show_record(
    ctx: &Ctx,
    ours: bool,
    listed: bool,
    record: &Result<ReleaseStatus, String>,
    run_kind: RunKind,
) {
    let emit = &ctx.emit;
    match (ours, record) {
        (true, Ok(record)) => {
            let chart = chart_of(record);
            emit.send(Event::Release {
                revision_before: None,
                deployed_before: None,
                revision: Some(record.version),
                chart,
            });
            emit.send(Event::Hooks {
                hooks: hook_views(record, run_kind),
            });
        }
        // helm wrote no revision, so it ran no hook: any hook Job seen live was another's.
        (false, _) if listed => emit.send(Event::Hooks { hooks: vec![] }),
        _ => {}
    }
}

/// helm's own error, then the hooks this run's record names as failing and skipped: helm's
/// error alone rarely says which hook broke the upgrade.
fn failure_reason(
    exit: &HelmExit,
    record: &Result<ReleaseStatus, String>,
    run_kind: RunKind,
) -> String {
    let mut reason =
        crate::helm::failure::in_helms_words("helm", &exit.stderr_tail, exit.code, exit.signal);
    if let Ok(record) = record {
        let judged = hooks::judge(&record.hooks, run_kind);
        let failing: Vec<String> = hooks::failing(&judged)
            .iter()
            .map(|h| text::plain(&h.record.name))
            .collect();
        let skipped: Vec<String> = hooks::skipped(&judged)
            .iter()
            .map(|h| text::plain(&h.record.name))
            .collect();
        if !failing.is_empty() {
            reason.push_str(&format!(" · failing hooks: {}", failing.join(", ")));
        }
        if !skipped.is_empty() {
            reason.push_str(&format!(" · skipped hooks: {}", skipped.join(", ")));
        }
    }
    reason
}

/// After helm exited 0: the step succeeds only when this run's record is readable, deployed
/// and newer than the revision before, since helm's exit status alone is not the evidence.
fn landed(
    ctx: &Ctx,
    record: Result<ReleaseStatus, String>,
    revision_before: Option<i64>,
) -> Result<StepOutcome, StepError> {
    match record {
        Err(e) => Err(StepError::RecordUnreadable(e)),
        Ok(r) if r.status != "deployed" => Err(StepError::NotDeployed {
            revision: r.version,
            status: r.status,
        }),
        Ok(r) if revision_before.is_some_and(|before| r.version <= before) => {
            Err(StepError::NoNewRevision(r.version))
        }
        Ok(r) => {
            ctx.emit
                .info(Step::Upgrade, format!("revision {} deployed", r.version));
            Ok(StepOutcome::Succeeded)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(version: i64, uid: &str) -> Revision {
        Revision {
            version,
            status: "deployed".into(),
            uid: uid.into(),
            ..Default::default()
        }
    }

    #[test]
    fn this_runs_revision_is_the_oldest_record_that_was_not_there_before() {
        let before: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        assert_eq!(
            this_runs(&[rev(1, "a"), rev(2, "b"), rev(3, "c")], &before).map(|r| r.version),
            Some(3)
        );
        // The same revision number again (deleted and rewritten) is a new record.
        assert_eq!(
            this_runs(&[rev(1, "a"), rev(2, "z")], &before).map(|r| r.version),
            Some(2)
        );
        assert_eq!(this_runs(&[rev(1, "a"), rev(2, "b")], &before), None);
        assert_eq!(
            this_runs(&[rev(1, "a"), rev(2, "")], &before),
            None,
            "no UID, no claim"
        );
        assert_eq!(this_runs(&[], &before), None);
        // Another operator's revision 4 landed before the listing after this run's helm: 3 is
        // this run's, whatever order the records are listed in.
        assert_eq!(
            this_runs(
                &[rev(4, "d"), rev(1, "a"), rev(3, "c"), rev(2, "b")],
                &before
            )
            .map(|r| r.version),
            Some(3)
        );
    }
}
