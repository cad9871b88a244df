//! Step 4: the init run, outside helm. Renders the chart with the toggle on and off
//! ([`init_render`]: from the deployed revision's values), creates the hook objects the toggle
//! adds ([`init_objects`], [`init_apply`]), replaces a stale Job (never another run's running
//! one), runs it, streams its logs, and waits for Complete or Failed. The release is already
//! live: a failure here is exit 3, not 1.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::{AsyncBufReadExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{LogParams, PostParams};
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::cluster::watch::{self, Change, Collection};
use crate::engine::event::{Event, Step, StepOutcome};
use crate::engine::steps::init_apply::{self, Applier};
use crate::engine::steps::init_objects::{self, JobEnd};
use crate::engine::steps::{Ctx, StepError, init_render};
use crate::engine::views;
use crate::rollout::diagnosis::{
    self, container_statuses_in_run_order, containers_in_run_order, pod_restarts,
};
use crate::rollout::objects::PodSummary;
use crate::rollout::readiness::{self, JobProgress};
use crate::text;

enum Msg {
    Job(Box<Change<Job>>),
    Pod(Box<Change<Pod>>),
    LogDone,
}

/// Follows the logs of one pod's containers in the order they run: each initContainer once it
/// has started, to its end, then the app containers; every line tagged with its container. A
/// container that never starts before the pod ends is passed over. `pod` carries the pod as
/// the watch last saw it.
fn follow_pod(
    ctx: &Ctx,
    pods: Api<Pod>,
    mut pod: tokio::sync::watch::Receiver<Pod>,
    tx: mpsc::UnboundedSender<Msg>,
) -> tokio::task::JoinHandle<()> {
    let emit = ctx.emit.clone();
    tokio::spawn(async move {
        let name = pod.borrow().metadata.name.clone().unwrap_or_default();
        let order = containers_in_run_order(&PodSummary::of(&pod.borrow()));
        for container in order {
            // Wait for its turn: started, or the pod is over without it.
            loop {
                let (started, over) = {
                    let p = pod.borrow_and_update();
                    (has_started(&p, &container), is_over(&p))
                };
                if started || over {
                    break;
                }
                if pod.changed().await.is_err() {
                    let _ = tx.send(Msg::LogDone);
                    return;
                }
            }
            let started = has_started(&pod.borrow(), &container);
            if !started {
                continue;
            }
            follow_log(&emit, &pods, &name, &container).await;
        }
        let _ = tx.send(Msg::LogDone);
    })
}

/// Streams one container's log to its end, sending each line as an event.
async fn follow_log(
    emit: &crate::engine::emit::Emitter,
    pods: &Api<Pod>,
    pod: &str,
    container: &str,
) {
    let params = LogParams {
        follow: true,
        container: Some(container.to_string()),
        ..Default::default()
    };
    if let Ok(stream) = pods.log_stream(pod, &params).await {
        let mut lines = std::pin::pin!(stream.lines());
        while let Ok(Some(line)) = lines.try_next().await {
            emit.send(Event::Log {
                pod: text::plain(pod),
                container: text::plain(container),
                text: text::plain(&line),
            });
        }
    }
}

/// The container is running or has run (its log can be read).
fn has_started(pod: &Pod, container: &str) -> bool {
    container_statuses_in_run_order(&PodSummary::of(pod))
        .filter(|c| c.name == container)
        .any(|c| {
            let ran = c
                .last_state
                .as_ref()
                .is_some_and(|s| s.terminated.is_some());
            ran || c
                .state
                .as_ref()
                .is_some_and(|s| s.running.is_some() || s.terminated.is_some())
        })
}

/// The pod has ended: no container of it starts any more.
fn is_over(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// The Job's end in one line: its reason, then its attempts counted over every pod it made and
/// every restart in them, with the newest pod's cause (one cause per Job, never one per pod).
fn job_failure(job: &Job, reason: &str, message: &str, pods: &[&Pod]) -> String {
    let name = job.metadata.name.as_deref().unwrap_or("");
    let mut s = format!("Job {name} failed: {reason}");
    if !message.is_empty() {
        s.push_str(&format!(" ({})", text::plain(message)));
    }
    let last = pods.iter().max_by_key(|p| {
        (
            p.metadata.creation_timestamp.clone(),
            p.metadata.name.clone(),
        )
    });
    if let Some(last) = last {
        let causes: Vec<String> = diagnosis::pod_causes(&PodSummary::of(last), &[])
            .iter()
            .map(|c| text::plain(&c.summary()))
            .collect();
        let cause = if causes.is_empty() {
            last.status
                .as_ref()
                .and_then(|st| st.phase.clone())
                .unwrap_or_default()
        } else {
            causes.join("; ")
        };
        let restarts: i64 = pods
            .iter()
            .map(|p| i64::try_from(pod_restarts(&PodSummary::of(p))).unwrap_or(i64::MAX))
            .sum();
        let last = format!(
            "pod {}: {cause}",
            text::plain(last.metadata.name.as_deref().unwrap_or(""))
        );
        s.push_str(&format!(
            "; {}",
            crate::engine::event::job_attempts(pods.len(), restarts, &last)
        ));
    }
    s
}

pub async fn run(ctx: &Ctx) -> StepOutcome {
    super::run(ctx, Step::Init, try_run(ctx)).await
}

/// Renders the chart both ways, creates the hook objects the toggle adds and clears the way
/// for the Job; [`run_job`] runs it; then the delete policies are applied.
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
    let objs = init_objects::plan(
        &renders.on,
        &renders.off,
        &toggle,
        &job_name,
        ctx.plan.init_selector.as_ref(),
    )
    .map_err(|e| StepError::InitJob(e.to_string()))?;
    let (init_render::Found::Rendered, Some(objs)) = (found, objs) else {
        return Ok(StepOutcome::Skipped {
            reason: format!("the chart renders no Job {job_name} with {toggle}=true"),
        });
    };
    for ignored in &objs.ignored {
        ctx.emit
            .info(Step::Init, format!("not applied: {}", text::plain(ignored)));
    }
    let run = init_apply::run_id();
    let mut job_obj = init_objects::prepare(objs.job.object.clone(), &ctx.plan.release, &run);
    job_obj["metadata"]["namespace"] = ctx.namespace().into();
    let job: Job = serde_json::from_value(job_obj).map_err(|error| StepError::InvalidJob {
        name: job_name.clone(),
        error,
    })?;
    let jobs: Api<Job> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    let pods: Api<Pod> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    // Before anything is replaced: another run's objects stay as they are; a Job this
    // machine's own earlier run left running is followed to its end instead.
    let attached = init_apply::guard_job(ctx, &jobs, &job_name)
        .await
        .map_err(StepError::InitJob)?;
    let mut applier = Applier::new(ctx);
    let (ran, run) = match attached {
        Some((existing, earlier)) => {
            ctx.emit.info(
                Step::Init,
                format!(
                    "init Job {job_name} still runs for this machine's run of {} (run {}): \
                     following it to its end, not replaced",
                    text::plain(&earlier.started),
                    text::plain(&earlier.run)
                ),
            );
            let start = Start::Attach(Box::new(existing), &earlier.run);
            let ran = run_job(ctx, &jobs, &pods, start, &job_name, deadline).await;
            (ran, earlier.run)
        }
        None => {
            let ran = async {
                applier
                    .create_objects(&objs, &ctx.plan.release, &run, deadline)
                    .await
                    .map_err(StepError::InitJob)?;
                init_apply::delete_and_wait(&jobs, "Job", &job_name, ctx, deadline)
                    .await
                    .map_err(StepError::InitJob)?;
                run_job(
                    ctx,
                    &jobs,
                    &pods,
                    Start::Create(&job, &run),
                    &job_name,
                    deadline,
                )
                .await
            }
            .await;
            (ran, run)
        }
    };
    match &ran {
        Ok(StepOutcome::Succeeded) => applier.delete_by_policy(&objs, JobEnd::Succeeded).await,
        Ok(StepOutcome::Failed { .. }) => applier.delete_by_policy(&objs, JobEnd::Failed).await,
        // Cancelled: the Job stops with this run (a cancel means "do not run init now", and a
        // Job left running would also block the printed `--only init`); the hooks stay where
        // they are, as helm leaves hooks when it is stopped.
        Ok(StepOutcome::Cancelled) => init_apply::stop_own_job(&jobs, &job_name, &run, ctx).await,
        _ => {}
    }
    // However it ended, even half way: the plain objects applied stay (the Job reads them),
    // their fields helm's from here, so a later plain helm upgrade adopts them.
    applier.hand_over(&objs).await;
    ran
}

/// Whether the pod belongs to the Job with this uid (not to an earlier or a later Job of the
/// same name).
fn owned_by(pod: &Pod, uid: &str) -> bool {
    pod.metadata
        .owner_references
        .as_ref()
        .is_some_and(|refs| refs.iter().any(|r| r.uid == uid))
}

/// The Job [`run_job`] follows, with its run label: one this run creates, or one that this
/// machine's earlier run created and left running.
enum Start<'a> {
    Create(&'a Job, &'a str),
    Attach(Box<Job>, &'a str),
}

/// Creates the Job (watched from before), or attaches to a running one, follows its
/// containers' logs, and waits for its end.
async fn run_job(
    ctx: &Ctx,
    jobs: &Api<Job>,
    pods: &Api<Pod>,
    start: Start<'_>,
    job_name: &str,
    deadline: tokio::time::Instant,
) -> Result<StepOutcome, StepError> {
    let step = Step::Init;
    let emit = &ctx.emit;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // Watch before creating, so no transition is missed.
    let tasks = watch_job(jobs, pods, job_name, &tx);
    let (created, run) = match start {
        Start::Attach(job, run) => (*job, run),
        Start::Create(job, run) => match jobs.create(&PostParams::default(), job).await {
            Ok(created) => {
                emit.info(step, format!("created Job {job_name}"));
                (created, run)
            }
            Err(error) => {
                tasks.iter().for_each(|t| t.abort());
                return Err(StepError::CreateJob {
                    name: job_name.to_string(),
                    error,
                });
            }
        },
    };
    // Followed by uid: a Job of the same name made by another run is not this one.
    let uid = created.metadata.uid.clone().unwrap_or_default();
    emit.send(Event::InitJob {
        name: text::plain(job_name),
        uid: text::plain(&uid),
        run: Some(text::plain(run)),
    });
    let mut run = JobRun {
        ctx,
        pods,
        job_name,
        uid: &uid,
        tx,
        tasks,
        jobs_seen: Collection::default(),
        pods_seen: Collection::default(),
        following: BTreeMap::new(),
        gone: BTreeMap::new(),
        logs_open: 0,
        seen: false,
        finished: None,
    };
    let (outcome, timed_out) = run.until_done(&mut rx, deadline).await;
    for t in run.tasks {
        t.abort();
    }
    if timed_out && let StepOutcome::Failed { reason } = &outcome {
        let warnings = init_apply::job_warnings(ctx, &created).await;
        if !warnings.is_empty() {
            return Ok(StepOutcome::Failed {
                reason: format!("{reason}; Job events: {}", warnings.join("; ")),
            });
        }
    }
    Ok(outcome)
}

/// The Job of that name and the pods of any Job of that name, feeding `tx`; which of them are
/// this run's is told by uid later.
fn watch_job(
    jobs: &Api<Job>,
    pods: &Api<Pod>,
    job_name: &str,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    vec![
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
    ]
}

/// This run's Job while it runs: what the watches hold, the log streams it follows, and how
/// it ended once it has.
struct JobRun<'a> {
    ctx: &'a Ctx,
    pods: &'a Api<Pod>,
    job_name: &'a str,
    uid: &'a str,
    tx: mpsc::UnboundedSender<Msg>,
    /// The watches and the log followers, stopped together when the run is over.
    tasks: Vec<tokio::task::JoinHandle<()>>,
    jobs_seen: Collection<Job>,
    pods_seen: Collection<Pod>,
    /// Each pod whose logs are followed, with the channel that hands its follower the pod as
    /// the watch sees it.
    following: BTreeMap<String, tokio::sync::watch::Sender<Pod>>,
    /// This run's pods as they were when deleted (the Job controller deletes a pod that
    /// still runs when the Job fails): the failure is told from them too.
    gone: BTreeMap<String, Pod>,
    logs_open: usize,
    /// This run's Job was in the watch once, so its absence now means it was deleted.
    seen: bool,
    finished: Option<StepOutcome>,
}

impl JobRun<'_> {
    /// Waits for the Job's end, the deadline or a cancel; the outcome, and whether the
    /// deadline ended it (then the Job's own events are worth reading).
    async fn until_done(
        &mut self,
        rx: &mut mpsc::UnboundedReceiver<Msg>,
        deadline: tokio::time::Instant,
    ) -> (StepOutcome, bool) {
        let ctx = self.ctx;
        loop {
            // After the Job ends, let the log streams drain and its pods' last changes arrive
            // (bounded) before reporting: the Job's and the pods' watches race, and the
            // evidence reads the pods as last seen.
            if let Some(done) = &self.finished
                && self.logs_open == 0
                && self.pods_settled()
            {
                return (done.clone(), false);
            }
            let drain_deadline = if self.finished.is_some() {
                tokio::time::Instant::now() + Duration::from_secs(3)
            } else {
                deadline
            };
            tokio::select! {
                _ = ctx.cancel.cancelled() => return (StepOutcome::Cancelled, false),
                _ = tokio::time::sleep_until(drain_deadline) => {
                    if let Some(done) = self.finished.clone() {
                        return (done, false);
                    }
                    let reason = format!(
                        "Job {} did not finish within {}s",
                        self.job_name,
                        ctx.plan.timeout.as_secs()
                    );
                    return (StepOutcome::Failed { reason }, true);
                }
                msg = rx.recv() => {
                    let Some(msg) = msg else {
                        let reason = "the Job watch stopped".into();
                        return (StepOutcome::Failed { reason }, false);
                    };
                    self.apply(msg);
                }
            }
        }
    }

    /// Every pod of this run's Job has ended (or is gone).
    fn pods_settled(&self) -> bool {
        self.pods_seen
            .items
            .values()
            .filter(|p| owned_by(p, self.uid))
            .all(|p| is_over(p))
    }

    /// Takes one watch change or log end in: shows this run's pods, follows each container's
    /// log once it has started, and judges the Job until it has ended.
    fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Job(c) => {
                self.jobs_seen.apply(*c);
            }
            Msg::Pod(c) => {
                if let Change::Deleted(pod) = c.as_ref()
                    && owned_by(pod, self.uid)
                {
                    self.gone
                        .insert(kube::ResourceExt::name_any(pod), pod.clone());
                }
                self.pods_seen.apply(*c);
            }
            Msg::LogDone => {
                self.logs_open = self.logs_open.saturating_sub(1);
            }
        }
        let uid = self.uid;
        let own: Vec<&Pod> = self
            .pods_seen
            .items
            .values()
            .map(Box::as_ref)
            .filter(|p| owned_by(p, uid))
            .collect();
        for pod in own.iter().copied() {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let owner = format!("Job/{}", self.job_name);
            self.ctx.emit.send(Event::Pod(views::pod_view(
                &PodSummary::of(pod),
                owner,
                true,
                &[],
            )));
            match self.following.get(&name) {
                Some(sender) => {
                    sender.send_replace((*pod).clone());
                }
                None => {
                    let (sender, receiver) = tokio::sync::watch::channel((*pod).clone());
                    self.following.insert(name.clone(), sender);
                    self.logs_open += 1;
                    let (pods, tx) = (self.pods.clone(), self.tx.clone());
                    self.tasks.push(follow_pod(self.ctx, pods, receiver, tx));
                }
            }
        }
        // The evidence: the pods as last seen, deleted ones included.
        let last_seen: Vec<&Pod> = own
            .iter()
            .copied()
            .chain(
                self.gone
                    .iter()
                    .filter(|(name, _)| !self.pods_seen.items.contains_key(*name))
                    .map(|(_, pod)| pod),
            )
            .collect();
        let judged = judge_own(
            &self.jobs_seen,
            self.job_name,
            uid,
            &mut self.seen,
            &last_seen,
        );
        match (&self.finished, judged) {
            (None, judged) => self.finished = judged,
            // The Job's watch can say Failed before the pods' does: while the end drains, a
            // failure is told again from the pods as last seen (which container, its log).
            (Some(StepOutcome::Failed { .. }), Some(again @ StepOutcome::Failed { .. })) => {
                self.finished = Some(again);
            }
            _ => {}
        }
    }
}

/// How this run's Job (by uid) ended, if it did: Complete, Failed, or gone or replaced under
/// it (another run, or a person, deleted it).
fn judge_own(
    jobs: &Collection<Job>,
    name: &str,
    uid: &str,
    seen: &mut bool,
    own_pods: &[&Pod],
) -> Option<StepOutcome> {
    let failed = |reason: String| Some(StepOutcome::Failed { reason });
    match jobs.items.get(name) {
        Some(j) if j.metadata.uid.as_deref() == Some(uid) => {
            *seen = true;
            match readiness::job(j) {
                JobProgress::Complete => Some(StepOutcome::Succeeded),
                JobProgress::Failed { reason, message } => {
                    failed(job_failure(j, &reason, &message, own_pods))
                }
                JobProgress::Running { .. } => None,
            }
        }
        Some(_) if jobs.synced => failed(format!(
            "Job {name} was replaced by another Job of that name before it ended"
        )),
        None if *seen && jobs.synced => failed(format!("Job {name} was deleted before it ended")),
        _ => None,
    }
}
