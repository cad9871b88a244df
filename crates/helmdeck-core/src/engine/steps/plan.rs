//! The plan step (`--plan`, `--plan-only`): gathers what [`crate::engine::plan::compare`]
//! needs (helm's server-side dry run of this very upgrade, the current revision's manifest
//! from its record, the live objects whose immutable fields matter) and emits the plan. With
//! an operator at the screen it then waits for the answer; nothing is written either way.

use std::collections::BTreeMap;

use kube::Api;
use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;

use crate::cluster::releases;
use crate::engine::ask::{Answer, Question};
use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::plan::{self, ObjectKey};
use crate::engine::steps::{Ctx, StepError};
use crate::text;

/// With an operator at the screen, waits for the answer (`true`: go on with the upgrade).
pub async fn run(ctx: &Ctx) -> StepOutcome {
    let answer = ctx.asks.take(Question::Plan);
    super::run(ctx, Step::Plan, try_run(ctx, answer)).await
}

/// The kinds whose immutable fields the plan checks, with their resource names.
fn plural(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Deployment" => "deployments",
        "StatefulSet" => "statefulsets",
        "DaemonSet" => "daemonsets",
        "Service" => "services",
        "Job" => "jobs",
        _ => return None,
    })
}

/// helm's arguments for the plan: the upgrade's own (same values, init toggle off) rendered by
/// the server without writing, so `lookup` sees the cluster.
pub fn dry_run_args(ctx: &Ctx) -> Vec<String> {
    let mut args = super::upgrade::upgrade_args(ctx);
    args.extend(["--dry-run=server".into(), "-o".into(), "json".into()]);
    args
}

async fn try_run(ctx: &Ctx, answer: Option<Answer>) -> Result<StepOutcome, StepError> {
    let step = Step::Plan;
    let emit = &ctx.emit;
    let args = dry_run_args(ctx);
    emit.info(
        step,
        format!(
            "helm {}",
            crate::helm::process::redact_args(&args).join(" ")
        ),
    );
    let Some(rendered) = render(ctx, &args).await? else {
        return Ok(StepOutcome::Cancelled);
    };
    let namespace = ctx.namespace();
    let new = plan::parse(&rendered, namespace, "rendered")
        .map_err(|e| StepError::Plan(e.to_string()))?;
    let old = match current_manifest(ctx).await? {
        Some((revision, manifest)) => {
            emit.info(step, format!("compared with revision {revision}"));
            Some(
                plan::parse(&manifest, namespace, "current revision's")
                    .map_err(|e| StepError::Plan(e.to_string()))?,
            )
        }
        None => {
            emit.info(step, "no deployed revision: everything is added");
            None
        }
    };
    let live = match &old {
        Some(old) => live_objects(ctx, old, &new).await,
        None => BTreeMap::new(),
    };
    let planned = plan::compare(old.as_ref(), &new, &live);
    emit.info(step, planned.summary());
    let refused = planned.refused().count();
    emit.send(Event::Plan(planned));
    if refused > 0 {
        emit.warn(
            step,
            format!("{refused} object(s) change a field the API server will refuse"),
        );
    }
    let Some(answer) = answer else {
        return Ok(StepOutcome::Succeeded);
    };
    if ctx.plan.plan_only {
        return Ok(StepOutcome::Succeeded);
    }
    emit.info(
        step,
        "waiting for the operator: y applies the plan, n declines it",
    );
    let approved = tokio::select! {
        // A screen that went away without an answer never approves.
        a = answer => a.unwrap_or(false),
        () = ctx.cancel.cancelled() => return Ok(StepOutcome::Cancelled),
    };
    emit.send(Event::PlanAnswer { approved });
    Ok(if approved {
        StepOutcome::Succeeded
    } else {
        StepOutcome::Skipped {
            reason: "plan declined: nothing written".into(),
        }
    })
}

/// The manifest helm would apply (hooks are apart, in the release's `hooks`). None when
/// cancelled. The rest of helm's answer (values, the chart) is dropped unread.
async fn render(ctx: &Ctx, args: &[String]) -> Result<Option<String>, StepError> {
    let mut cmd = ctx.helm_command(args);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().map_err(|source| {
        StepError::HelmRun(crate::helm::HelmError::Start {
            bin: ctx.helm.clone(),
            source,
        })
    })?;
    let pid = child.id();
    let output = child.wait_with_output();
    tokio::pin!(output);
    let out = tokio::select! {
        out = &mut output => out,
        () = ctx.cancel.cancelled() => {
            // helm is asked to stop, never killed (the house rule for helm, even dry).
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                // SAFETY: kill(2) with a pid this process spawned and has not reaped yet.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let _ = output.await;
            return Ok(None);
        }
        () = tokio::time::sleep(ctx.plan.timeout) => {
            return Err(StepError::Plan(format!(
                "helm's dry run did not answer within {}s", ctx.plan.timeout.as_secs()
            )));
        }
    }
    .map_err(|e| StepError::Plan(format!("running helm's dry run: {e}")))?;
    if !out.status.success() {
        let stderr = text::plain_bytes(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let why = crate::helm::failure::reason(&lines)
            .unwrap_or_else(|| format!("helm exited with {:?}", out.status.code()));
        return Err(StepError::Plan(format!("helm's dry run failed: {why}")));
    }
    let release: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| StepError::Plan(format!("helm's dry run printed no release JSON: {e}")))?;
    Ok(Some(
        release
            .get("manifest")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    ))
}

/// The manifest of the release's current revision: the newest deployed one (helm's own
/// "current" for an upgrade), else the newest of any status; none on a first install.
async fn current_manifest(ctx: &Ctx) -> Result<Option<(i64, String)>, StepError> {
    let client = &ctx.cluster.client;
    let revisions = releases::revisions(client, ctx.namespace(), &ctx.plan.release).await?;
    let current = releases::last_deployed(&revisions)
        .and_then(|v| revisions.iter().find(|r| r.version == v))
        .or(revisions.last());
    let Some(current) = current else {
        return Ok(None);
    };
    let record = releases::record(client, ctx.namespace(), &current.secret_name).await?;
    let manifest = record
        .get("manifest")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok(Some((current.version, manifest)))
}

/// The live objects the refusal rules read: those of a checked kind in both manifests. One
/// that cannot be read is said, and its fields go unchecked (helm would still refuse).
async fn live_objects(
    ctx: &Ctx,
    old: &BTreeMap<ObjectKey, Value>,
    new: &BTreeMap<ObjectKey, Value>,
) -> BTreeMap<ObjectKey, Value> {
    let mut live = BTreeMap::new();
    for (key, rendered) in new {
        let (api_version, kind, namespace, name) = key;
        let Some(plural) = plural(kind) else {
            continue;
        };
        if old.get(key).is_none_or(|o| o == rendered) {
            continue;
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.clone()),
        };
        let resource = ApiResource {
            group,
            version,
            api_version: api_version.clone(),
            kind: kind.clone(),
            plural: plural.into(),
        };
        let api: Api<DynamicObject> =
            Api::namespaced_with(ctx.cluster.client.clone(), namespace, &resource);
        match api.get_opt(name).await {
            Ok(Some(object)) => {
                if let Ok(value) = serde_json::to_value(&object) {
                    live.insert(key.clone(), value);
                }
            }
            Ok(None) => {}
            Err(e) => ctx.emit.warn(
                Step::Plan,
                format!(
                    "cannot read live {kind}/{}: {}; its immutable fields are not checked",
                    text::plain(name),
                    text::plain(&e.to_string())
                ),
            ),
        }
    }
    live
}
