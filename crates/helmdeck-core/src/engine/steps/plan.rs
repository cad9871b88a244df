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
    let old = deployed_objects(ctx).await?;
    let Some(planned) = planned(ctx, &args, old.as_ref()).await? else {
        return Ok(StepOutcome::Cancelled);
    };
    emit.info(step, planned.summary());
    let refused = planned.refused().count();
    emit.send(Event::Plan(planned));
    if refused > 0 {
        emit.warn(
            step,
            format!("{refused} object(s) change a field the API server will refuse"),
        );
    }
    match answer {
        Some(answer) if !ctx.plan.plan_only => ask(ctx, answer).await,
        _ => Ok(StepOutcome::Succeeded),
    }
}

/// The objects of the deployed revision (from its record), or none on a first install.
async fn deployed_objects(ctx: &Ctx) -> Result<Option<BTreeMap<ObjectKey, Value>>, StepError> {
    let Some((revision, manifest)) = current_manifest(ctx).await? else {
        ctx.emit
            .info(Step::Plan, "no deployed revision: everything is added");
        return Ok(None);
    };
    ctx.emit
        .info(Step::Plan, format!("compared with revision {revision}"));
    plan::parse(&manifest, ctx.namespace(), "current revision's")
        .map(Some)
        .map_err(|e| StepError::Plan(e.to_string()))
}

/// The plan of this upgrade against `old` (None: cancelled while helm rendered).
async fn planned(
    ctx: &Ctx,
    args: &[String],
    old: Option<&BTreeMap<ObjectKey, Value>>,
) -> Result<Option<plan::Plan>, StepError> {
    // helm creates the chart's `crds/` on an install only, before the templates, and never
    // with `--skip-crds`.
    let installs_crds = old.is_none() && !args.iter().any(|a| a == "--skip-crds");
    let (release, server_failed) = match render(ctx, args).await? {
        Rendered::Release(release) => (release, None),
        Rendered::Cancelled => return Ok(None),
        // The server cannot know a CRD the install has not created yet, so it refuses the
        // custom resources of it: rendered on the client instead, when that is the reason.
        Rendered::Failed(why) if installs_crds => match render(ctx, &client_args(ctx)).await? {
            Rendered::Release(release) => (release, Some(why)),
            Rendered::Cancelled => return Ok(None),
            Rendered::Failed(_) => return Err(dry_run_failed(&why)),
        },
        Rendered::Failed(why) => return Err(dry_run_failed(&why)),
    };
    let created = if installs_crds {
        crds_created(ctx, &release).await?
    } else {
        Vec::new()
    };
    let manifest = release
        .get("manifest")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut new = plan::parse(manifest, ctx.namespace(), "rendered")
        .map_err(|e| StepError::Plan(e.to_string()))?;
    let of_a_new_crd = |key: &ObjectKey| {
        let group = key.0.split_once('/').map_or("", |(g, _)| g);
        created.iter().any(|c| c.group == group && c.kind == key.1)
    };
    if let Some(why) = &server_failed {
        let unchecked = new.keys().filter(|k| of_a_new_crd(k)).count();
        if unchecked == 0 {
            return Err(dry_run_failed(why));
        }
        say_client_render(ctx, &created, unchecked, why);
    }
    for crd in &created {
        new.insert(crd.key.clone(), crd.object.clone());
    }
    let live = match old {
        Some(old) => live_objects(ctx, old, &new).await,
        None => BTreeMap::new(),
    };
    let mut planned = plan::compare(old, &new, &live);
    for object in &mut planned.objects {
        let key = (
            object.api_version.clone(),
            object.kind.clone(),
            object.namespace.clone(),
            object.name.clone(),
        );
        if created.iter().any(|c| c.key == key) {
            object.note = Some("from crds/: helm creates it before the templates".into());
        } else if server_failed.is_some() && of_a_new_crd(&key) {
            object.note = Some(
                "its CRD comes with this install: helm's server dry run cannot check it".into(),
            );
        }
    }
    Ok(Some(planned))
}

/// Why the plan was rendered on the client, and what that leaves unchecked.
fn say_client_render(ctx: &Ctx, created: &[ChartCrd], unchecked: usize, why: &str) {
    let names: Vec<String> = created.iter().map(|c| text::plain(&c.name)).collect();
    ctx.emit.warn(
        Step::Plan,
        format!(
            "helm's server dry run cannot know the CRDs this install creates first ({}): {why}",
            names.join(", ")
        ),
    );
    ctx.emit.info(
        Step::Plan,
        format!(
            "planned from helm's client-side render (--dry-run=client): {unchecked} custom \
             resource(s) of those CRDs are unchecked by the API server, and `lookup` sees no \
             cluster objects"
        ),
    );
}

/// Waits for the operator's answer to the plan.
async fn ask(ctx: &Ctx, answer: Answer) -> Result<StepOutcome, StepError> {
    ctx.emit.info(
        Step::Plan,
        "waiting for the operator: y applies the plan, n declines it",
    );
    let approved = tokio::select! {
        // A screen that went away without an answer never approves.
        a = answer => a.unwrap_or(false),
        () = ctx.cancel.cancelled() => return Ok(StepOutcome::Cancelled),
    };
    ctx.emit.send(Event::PlanAnswer { approved });
    Ok(if approved {
        StepOutcome::Succeeded
    } else {
        StepOutcome::Skipped {
            reason: "plan declined: nothing written".into(),
        }
    })
}

fn dry_run_failed(why: &str) -> StepError {
    StepError::Plan(format!("helm's dry run failed: {why}"))
}

/// The upgrade's own arguments rendered on the client: no server validation, so custom
/// resources of a CRD not yet created render; nothing is written either.
fn client_args(ctx: &Ctx) -> Vec<String> {
    let mut args = super::upgrade::upgrade_args(ctx);
    args.extend(["--dry-run=client".into(), "-o".into(), "json".into()]);
    args
}

/// How helm's dry run ended.
enum Rendered {
    /// helm's release JSON: `manifest` (hooks are apart, in `hooks`) and `chart.files`.
    Release(Value),
    /// helm failed: its error, in its words.
    Failed(String),
    Cancelled,
}

/// A CustomResourceDefinition of the chart's `crds/` that the cluster does not have: the
/// install creates it.
struct ChartCrd {
    key: ObjectKey,
    object: Value,
    name: String,
    group: String,
    kind: String,
}

/// The CRDs in the chart's `crds/` (helm's release JSON carries the chart's files, base64) that
/// the cluster does not have yet: helm's install creates them before the templates. One that
/// exists is left as it is by helm (said, not planned).
async fn crds_created(ctx: &Ctx, release: &Value) -> Result<Vec<ChartCrd>, StepError> {
    use base64::Engine as _;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let files = release
        .pointer("/chart/files")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let api: Api<CustomResourceDefinition> = Api::all(ctx.cluster.client.clone());
    let mut out = Vec::new();
    for file in files {
        let name = file.get("name").and_then(Value::as_str).unwrap_or_default();
        let manifest = [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e));
        if !name.starts_with("crds/") || !manifest {
            continue;
        }
        let Some(bytes) = file
            .get("data")
            .and_then(Value::as_str)
            .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
        else {
            continue;
        };
        // A file helm cannot read fails helm's own install; the plan just leaves it out.
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(&String::from_utf8_lossy(&bytes)).unwrap_or_default();
        for doc in docs {
            let field = |p: &str| doc.pointer(p).and_then(Value::as_str).map(str::to_string);
            let (Some("CustomResourceDefinition"), Some(api_version), Some(crd_name)) = (
                doc.get("kind").and_then(Value::as_str),
                field("/apiVersion"),
                field("/metadata/name"),
            ) else {
                continue;
            };
            let exists = api.get_opt(&crd_name).await.map_err(|e| {
                StepError::Plan(format!(
                    "reading CustomResourceDefinition {}: {}",
                    text::plain(&crd_name),
                    text::plain(&e.to_string())
                ))
            })?;
            if exists.is_some() {
                ctx.emit.info(
                    Step::Plan,
                    format!(
                        "CustomResourceDefinition/{} from crds/ exists: helm leaves it as it is",
                        text::plain(&crd_name)
                    ),
                );
                continue;
            }
            out.push(ChartCrd {
                key: (
                    api_version,
                    "CustomResourceDefinition".into(),
                    String::new(),
                    crd_name.clone(),
                ),
                group: field("/spec/group").unwrap_or_default(),
                kind: field("/spec/names/kind").unwrap_or_default(),
                name: crd_name,
                object: doc,
            });
        }
    }
    Ok(out)
}

/// Runs helm's dry run and reads its release JSON. The rest of helm's answer (values, the
/// chart) is read only for the chart's `crds/`.
async fn render(ctx: &Ctx, args: &[String]) -> Result<Rendered, StepError> {
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
            return Ok(Rendered::Cancelled);
        }
        () = tokio::time::sleep(ctx.plan.timeout) => {
            return Err(StepError::Plan(format!(
                "helm's dry run did not answer within {}s", ctx.plan.timeout.as_secs()
            )));
        }
    }
    .map_err(|e| StepError::Plan(format!("running helm's dry run: {e}")))?;
    if !out.status.success() {
        // Split before anything is made plain: `plain` would fold the lines into one, and the
        // `Error:` line would no longer start a line (the words made plain per line after).
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        return Ok(Rendered::Failed(crate::helm::failure::in_helms_words(
            "helm",
            &lines,
            out.status.code(),
            std::os::unix::process::ExitStatusExt::signal(&out.status),
        )));
    }
    let release: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| StepError::Plan(format!("helm's dry run printed no release JSON: {e}")))?;
    Ok(Rendered::Release(release))
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
