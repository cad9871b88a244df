//! Step 4: the init Job, run outside helm. Renders the chart with the toggle on and off
//! ([`init_render`]: from the deployed revision's values), picks the Job, replaces a stale
//! one, runs it, streams its logs, and waits for Complete or Failed. The release is already
//! live: a failure here is exit 3, not 1.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::{AsyncBufReadExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, LogParams, PostParams};
use kube::runtime::watcher;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::cluster::watch::{self, Change, Collection};
use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError, init_render};
use crate::engine::views;
use crate::rollout::diagnosis;
use crate::rollout::readiness::{self, JobProgress};
use crate::text;

const DELETE_POLL: Duration = Duration::from_millis(250);

/// Picks the Job named `name` from rendered YAML and makes it a plain object of the release:
/// hook annotations off (helm does not own this run), the instance label on.
pub fn pick_job(
    rendered: &str,
    name: &str,
    release: &str,
    namespace: &str,
) -> Result<Option<Value>, String> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(rendered)
        .map_err(|e| format!("cannot parse helm template output: {e}"))?;
    let Some(mut job) = docs.into_iter().find(|d| {
        d.get("kind").and_then(Value::as_str) == Some("Job")
            && d.pointer("/metadata/name").and_then(Value::as_str) == Some(name)
    }) else {
        return Ok(None);
    };
    let meta = job
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or("the rendered Job has no metadata")?;
    if let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        ann.retain(|k, _| !k.starts_with("helm.sh/hook"));
    }
    meta.insert("namespace".into(), Value::String(namespace.into()));
    let labels = meta
        .entry("labels")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(
            "app.kubernetes.io/instance".into(),
            Value::String(release.into()),
        );
    }
    Ok(Some(job))
}

/// Deletes a Job of that name (with its pods) and waits until it is gone.
async fn delete_stale(
    api: &Api<Job>,
    name: &str,
    ctx: &Ctx,
    deadline: tokio::time::Instant,
) -> Result<(), String> {
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => ctx
            .emit
            .info(Step::Init, format!("deleted the previous Job {name}")),
        Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
        Err(e) => return Err(format!("cannot delete the previous Job {name}: {e}")),
    }
    loop {
        match api.get_opt(name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(DELETE_POLL).await
            }
            Ok(Some(_)) => return Err(format!("the previous Job {name} is still there")),
            Err(e) => return Err(format!("cannot read Job {name}: {e}")),
        }
    }
}

enum Msg {
    Job(Box<Change<Job>>),
    Pod(Box<Change<Pod>>),
    LogDone,
}

/// Follows one container's log, sending each line as an event.
fn follow_log(
    ctx: &Ctx,
    pods: Api<Pod>,
    pod: String,
    container: String,
    tx: mpsc::UnboundedSender<Msg>,
) -> tokio::task::JoinHandle<()> {
    let emit = ctx.emit.clone();
    tokio::spawn(async move {
        let params = LogParams {
            follow: true,
            container: Some(container.clone()),
            ..Default::default()
        };
        if let Ok(stream) = pods.log_stream(&pod, &params).await {
            let mut lines = stream.lines();
            while let Ok(Some(line)) = lines.try_next().await {
                emit.send(Event::Log {
                    pod: text::plain(&pod),
                    container: text::plain(&container),
                    text: text::plain(&line),
                });
            }
        }
        let _ = tx.send(Msg::LogDone);
    })
}

fn job_failure(job: &Job, reason: &str, message: &str, pods: &Collection<Pod>) -> String {
    let name = job.metadata.name.as_deref().unwrap_or("");
    let mut s = format!("Job {name} failed: {reason}");
    if !message.is_empty() {
        s.push_str(&format!(" ({})", text::plain(message)));
    }
    let mut exits: Vec<String> = Vec::new();
    for pod in pods.items.values() {
        for cause in diagnosis::pod_causes(pod, &[]) {
            exits.push(format!(
                "pod {}: {}",
                text::plain(pod.metadata.name.as_deref().unwrap_or("")),
                text::plain(&cause.summary())
            ));
        }
    }
    if !exits.is_empty() {
        exits.sort();
        s.push_str(&format!("; {}", exits.join("; ")));
    }
    s
}

pub async fn run(ctx: &Ctx) -> StepOutcome {
    super::run(ctx, Step::Init, try_run(ctx)).await
}

/// Renders the Job and clears the way for it; [`run_job`] runs it.
async fn try_run(ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let (Some(toggle), Some(job_name)) = (ctx.plan.init_toggle.clone(), ctx.plan.init_job.clone())
    else {
        return Ok(StepOutcome::Skipped {
            reason: "not configured (no --init-toggle/--init-job)".into(),
        });
    };
    let deadline = tokio::time::Instant::now() + ctx.plan.timeout;
    let renders = init_render::from_release(ctx, &toggle)
        .await
        .map_err(StepError::InitJob)?;
    let found = init_render::check(&renders, &toggle, &job_name)
        .map_err(|e| StepError::InitJob(e.to_string()))?;
    let picked = pick_job(&renders.on, &job_name, &ctx.plan.release, ctx.namespace())
        .map_err(StepError::InitJob)?;
    let (init_render::Found::Rendered, Some(job_obj)) = (found, picked) else {
        return Ok(StepOutcome::Skipped {
            reason: format!("the chart renders no Job {job_name} with {toggle}=true"),
        });
    };
    let job: Job = serde_json::from_value(job_obj).map_err(|error| StepError::InvalidJob {
        name: job_name.clone(),
        error,
    })?;
    let jobs: Api<Job> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    let pods: Api<Pod> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    delete_stale(&jobs, &job_name, ctx, deadline)
        .await
        .map_err(StepError::InitJob)?;
    run_job(ctx, &jobs, &pods, &job, &job_name, deadline).await
}

/// Creates the Job (watched from before), follows its containers' logs, and waits for its end.
async fn run_job(
    ctx: &Ctx,
    jobs: &Api<Job>,
    pods: &Api<Pod>,
    job: &Job,
    job_name: &str,
    deadline: tokio::time::Instant,
) -> Result<StepOutcome, StepError> {
    let step = Step::Init;
    let emit = &ctx.emit;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // Watch before creating, so no transition is missed.
    let mut tasks = vec![
        watch::spawn(
            jobs.clone(),
            watcher::Config::default().fields(&format!("metadata.name={job_name}")),
            tx.clone(),
            |c| Msg::Job(Box::new(c)),
        ),
        watch::spawn(
            pods.clone(),
            watcher::Config::default().labels(&format!("job-name={job_name}")),
            tx.clone(),
            |c| Msg::Pod(Box::new(c)),
        ),
    ];
    if let Err(error) = jobs.create(&PostParams::default(), job).await {
        tasks.iter().for_each(|t| t.abort());
        return Err(StepError::CreateJob {
            name: job_name.to_string(),
            error,
        });
    }
    emit.info(step, format!("created Job {job_name}"));
    let mut job_c: Collection<Job> = Collection::default();
    let mut pod_c: Collection<Pod> = Collection::default();
    let mut following: BTreeSet<(String, String)> = BTreeSet::new();
    let mut logs_open = 0usize;
    let mut finished: Option<StepOutcome> = None;
    let outcome = loop {
        // After the Job ends, let the log streams drain (bounded) before reporting.
        if let Some(done) = &finished
            && logs_open == 0
        {
            break done.clone();
        }
        let drain_deadline = if finished.is_some() {
            tokio::time::Instant::now() + Duration::from_secs(3)
        } else {
            deadline
        };
        tokio::select! {
            _ = ctx.cancel.cancelled() => break StepOutcome::Cancelled,
            _ = tokio::time::sleep_until(drain_deadline) => {
                break finished.clone().unwrap_or_else(|| StepOutcome::Failed {
                    reason: format!("Job {job_name} did not finish within {}s", ctx.plan.timeout.as_secs()),
                });
            }
            msg = rx.recv() => {
                let Some(msg) = msg else { break StepOutcome::Failed { reason: "the Job watch stopped".into() } };
                match msg {
                    Msg::Job(c) => { job_c.apply(*c); }
                    Msg::Pod(c) => { pod_c.apply(*c); }
                    Msg::LogDone => { logs_open = logs_open.saturating_sub(1); }
                }
                for pod in pod_c.items.values() {
                    let name = pod.metadata.name.clone().unwrap_or_default();
                    emit.send(Event::Pod(views::pod_view(pod, format!("Job/{job_name}"), true, &[])));

                    let started = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).into_iter().flatten()
                        .filter(|c| c.state.as_ref().is_some_and(|s| s.running.is_some() || s.terminated.is_some()))
                        .map(|c| c.name.clone())
                        .collect::<Vec<_>>();
                    for container in started {
                        if following.insert((name.clone(), container.clone())) {
                            logs_open += 1;
                            tasks.push(follow_log(ctx, pods.clone(), name.clone(), container, tx.clone()));
                        }
                    }
                }
                if finished.is_none()
                    && let Some(j) = job_c.items.get(job_name)
                {
                    match readiness::job(j) {
                        JobProgress::Complete => finished = Some(StepOutcome::Succeeded),
                        JobProgress::Failed { reason, message } => {
                            finished = Some(StepOutcome::Failed { reason: job_failure(j, &reason, &message, &pod_c) });
                        }
                        JobProgress::Running { .. } => {}
                    }
                }
            }
        }
    };
    for t in tasks {
        t.abort();
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_job_strips_hook_annotations_and_labels_the_release() {
        let rendered = "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: demo-init\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: demo-init\n  annotations:\n    helm.sh/hook: post-install,post-upgrade\n    helm.sh/hook-weight: \"0\"\n    keep: me\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: init, image: x}]\n";
        let job = pick_job(rendered, "demo-init", "demo", "apps")
            .unwrap()
            .unwrap();
        assert_eq!(job["kind"], "Job");
        assert_eq!(job["metadata"]["namespace"], "apps");
        assert_eq!(
            job["metadata"]["labels"]["app.kubernetes.io/instance"],
            "demo"
        );
        let ann = job["metadata"]["annotations"].as_object().unwrap();
        assert_eq!(ann.keys().collect::<Vec<_>>(), ["keep"]);
        assert!(
            pick_job(rendered, "other", "demo", "apps")
                .unwrap()
                .is_none()
        );
        assert!(pick_job("a: [", "x", "r", "n").is_err());
    }
}
