//! Step 2: `helm upgrade --install` with the init hook switched off. Helm judges apply and
//! hooks; its exit status is the step's result, and the failing hooks are named from the
//! release record (`helm status -o json`).

use std::time::Duration;

use crate::engine::event::{Event, HookView, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError};
use crate::helm::hooks::{self, RunKind};
use crate::helm::process::{self, HelmRun, Stream};
use crate::helm::status::{self, ReleaseStatus};
use crate::text;

/// How long `helm status` may take before the record counts as unreadable.
const STATUS_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Reads the release record through `helm status -o json`.
pub async fn read_status(ctx: &Ctx) -> Result<ReleaseStatus, String> {
    let mut args = vec!["status".to_string(), ctx.plan.release.clone()];
    args.extend(ctx.scope_args());
    args.extend(["-o".into(), "json".into()]);
    let out = tokio::time::timeout(STATUS_TIMEOUT, ctx.helm_command(&args).output())
        .await
        .map_err(|_| {
            format!(
                "helm status did not answer within {}s",
                STATUS_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("running helm status: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "helm status failed: {}",
            text::plain_bytes(&out.stderr).trim()
        ));
    }
    status::parse_status(&out.stdout).map_err(|e| format!("unreadable helm status output: {e}"))
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

pub async fn run(ctx: &Ctx, revision_before: Option<i64>) -> StepOutcome {
    super::run(ctx, Step::Upgrade, try_run(ctx, revision_before)).await
}

async fn try_run(ctx: &Ctx, revision_before: Option<i64>) -> Result<StepOutcome, StepError> {
    let step = Step::Upgrade;
    let emit = &ctx.emit;
    let args = upgrade_args(ctx);
    emit.info(
        step,
        format!("helm {}", process::redact_args(&args).join(" ")),
    );
    let sender = emit.clone();
    let on_line = move |stream: Stream, line: String| {
        // Untrusted: only SGR colours survive (the TUI shows them; headless strips them).
        let text = text::sanitize_line(&line, text::Keep::Colours);
        sender.send(Event::HelmLine {
            stderr: stream == Stream::Stderr,
            text,
        });
    };
    let live_hooks = super::hooks_live::spawn(ctx);
    let helm = HelmRun {
        bin: ctx.helm.clone(),
        args,
        env: ctx.helm_env.clone(),
    };
    let result = process::run(helm, on_line, ctx.cancel.clone()).await;
    live_hooks.abort();
    // Let the aborted watcher finish, so its last live view cannot land after the record's.
    let _ = live_hooks.await;
    let exit = result.map_err(StepError::HelmRun)?;
    emit.send(Event::HelmExited {
        code: exit.code,
        signal: exit.signal,
        cancelled: exit.cancelled,
        stderr_tail: exit.stderr_tail.iter().map(|l| text::plain(l)).collect(),
    });
    let run_kind = if revision_before.is_some() {
        RunKind::Upgrade
    } else {
        RunKind::Install
    };
    let record = read_status(ctx).await;
    if let Ok(record) = &record {
        let chart = crate::cluster::releases::latest_chart(
            &ctx.cluster.client,
            ctx.namespace(),
            &ctx.plan.release,
        )
        .await;
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
    if exit.cancelled {
        return Ok(StepOutcome::Cancelled);
    }
    if !exit.success() {
        let error = crate::helm::failure::reason(&exit.stderr_tail)
            .unwrap_or_else(|| format!("helm exited with {:?}", exit.code));
        let mut reason = error;
        if let Ok(record) = &record {
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
        return Err(StepError::HelmFailed(reason));
    }
    // helm says yes; the record must agree, or the evidence is missing.
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
            emit.info(step, format!("revision {} deployed", r.version));
            Ok(StepOutcome::Succeeded)
        }
    }
}
