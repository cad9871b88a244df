//! While helm runs: the release's hook Jobs as the cluster shows them, so hooks are live on
//! screen (phase, pods, events) before the release record confirms them after helm exits.
//! Only Jobs created after helm started count: an earlier run's hook Job of the same name
//! (a failed one stays until helm replaces it) is not this run's.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use crate::rollout::objects::{EventSummary, PodSummary};
use kube::Api;
use kube::api::ListParams;
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::cluster::watch::{self, Change, Collection};
use crate::engine::emit::Emitter;
use crate::engine::event::{Event, HookView, PodView, Step};
use crate::engine::steps::Ctx;
use crate::engine::views;
use crate::helm::hooks::HookPhase;
use crate::rollout::readiness::{self, JobProgress};
use crate::text;

enum Msg {
    Job(Box<Change<Job>>),
    Pod(Box<Change<Pod>>),
    /// The Events about the object of that uid.
    Ev(String, Box<Change<EventSummary>>),
}

/// Which Jobs are this run's: those not listed before helm started (a deploy), or those created
/// since the revision's record was written (a watch, attached after its hooks may have started).
pub enum Since {
    NotAmong(BTreeSet<String>),
    Created(jiff::Timestamp),
}

impl Since {
    fn admits(&self, job: &Job) -> bool {
        match self {
            Since::NotAmong(before) => job
                .metadata
                .uid
                .as_ref()
                .is_some_and(|u| !before.contains(u)),
            // Both stamps come from the API server's clock, in whole seconds.
            Since::Created(at) => job
                .metadata
                .creation_timestamp
                .as_ref()
                .is_some_and(|t| t.0.as_second() >= at.as_second()),
        }
    }
}

/// A hook Job of this run: it carries `helm.sh/hook`, this release's instance label or none,
/// and `since` admits it.
fn is_this_runs_hook(job: &Job, release: &str, since: &Since) -> bool {
    let meta = &job.metadata;
    let hook = meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key("helm.sh/hook"));
    let instance = meta
        .labels
        .as_ref()
        .and_then(|l| l.get("app.kubernetes.io/instance"));
    hook && since.admits(job) && instance.is_none_or(|i| i == release)
}

pub fn hook_view(job: &Job) -> HookView {
    let ann = job.metadata.annotations.clone().unwrap_or_default();
    let status = job.status.as_ref();
    let phase = match readiness::job(job) {
        JobProgress::Complete => HookPhase::Succeeded,
        JobProgress::Failed { .. } => HookPhase::Failed,
        JobProgress::Running { .. } => HookPhase::Running,
    };
    HookView {
        name: text::plain(job.metadata.name.as_deref().unwrap_or("")),
        kind: "Job".into(),
        events: ann
            .get("helm.sh/hook")
            .map(|h| h.split(',').map(|e| text::plain(e.trim())).collect())
            .unwrap_or_default(),
        weight: ann
            .get("helm.sh/hook-weight")
            .and_then(|w| w.trim().parse().ok())
            .unwrap_or(0),
        phase,
        started_at: status
            .and_then(|s| s.start_time.as_ref())
            .map(|t| t.0.to_string()),
        completed_at: status
            .and_then(|s| s.completion_time.as_ref())
            .map(|t| t.0.to_string()),
    }
}

/// Lists the namespace's Jobs, then watches until aborted (the upgrade step aborts it when
/// helm exits); call it before helm starts. Without that list no Job can be told to be this
/// run's, so nothing is shown live (the record names the hooks after helm exits).
pub async fn start(ctx: &Ctx) -> Option<tokio::task::JoinHandle<()>> {
    let jobs: Api<Job> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    match jobs.list_metadata(&ListParams::default()).await {
        Ok(list) => {
            let before = list
                .items
                .into_iter()
                .filter_map(|j| j.metadata.uid)
                .collect();
            Some(spawn(ctx, Since::NotAmong(before)))
        }
        Err(e) => {
            ctx.emit.warn(
                Step::Upgrade,
                format!(
                    "hook Jobs are not shown live (listing the Jobs in {} failed: {e}); the release record names them after helm exits",
                    ctx.namespace()
                ),
            );
            None
        }
    }
}

/// Watches the hook Jobs created since a revision's record was written, until aborted.
pub fn start_since(ctx: &Ctx, record_created: jiff::Timestamp) -> tokio::task::JoinHandle<()> {
    spawn(ctx, Since::Created(record_created))
}

fn spawn(ctx: &Ctx, since: Since) -> tokio::task::JoinHandle<()> {
    let client = ctx.cluster.client.clone();
    let ns = ctx.namespace().to_string();
    let release = ctx.plan.release.clone();
    let emit = ctx.emit.clone();
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), &ns);
    tokio::spawn(async move {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut watches = watch_hook_objects(&client, &ns, tx.clone());
        let mut seen = Seen::default();
        let mut shown = Shown::default();
        while let Some(msg) = rx.recv().await {
            seen.apply(msg);
            let hooks: Vec<&Job> = seen
                .jobs
                .items
                .values()
                .map(Box::as_ref)
                .filter(|j| is_this_runs_hook(j, &release, &since))
                .collect();
            shown.hooks(&emit, &hooks);
            let related = shown.pods(&emit, &pods_api, &hooks, &seen.pods);
            for uid in &related {
                if !seen.events.contains_key(uid) {
                    seen.events.insert(uid.clone(), Collection::default());
                    watches
                        .0
                        .push(watch_events_about(&client, &ns, uid, tx.clone()));
                }
            }
            shown.events(&emit, &related, &seen.events);
        }
    })
}

/// The namespace's Jobs and the pods of any Job (`job-name` label), each watch feeding `tx`;
/// the watches stop when the returned guard is dropped.
fn watch_hook_objects(client: &kube::Client, ns: &str, tx: mpsc::UnboundedSender<Msg>) -> AbortAll {
    AbortAll(vec![
        watch::spawn(
            Api::<Job>::namespaced(client.clone(), ns),
            watcher::Config::default(),
            tx.clone(),
            |c| Msg::Job(Box::new(c)),
        ),
        watch::spawn(
            Api::<Pod>::namespaced(client.clone(), ns),
            watcher::Config::default().labels("job-name"),
            tx,
            |c| Msg::Pod(Box::new(c)),
        ),
    ])
}

/// The Events about one hook Job or hook pod, by uid, as `kubectl describe` selects them. Not
/// the namespace's Events: at a 3,000-pod release those are tens of thousands, every one of
/// them held and looked through at each change while helm ran, for the few about the hooks.
/// Its first list also finds the Events written before the object was first seen.
fn watch_events_about(
    client: &kube::Client,
    ns: &str,
    uid: &str,
    tx: mpsc::UnboundedSender<Msg>,
) -> tokio::task::JoinHandle<()> {
    let about = uid.to_string();
    watch::spawn(
        Api::<EventSummary>::namespaced(client.clone(), ns),
        watcher::Config::default().fields(&format!("involvedObject.uid={uid}")),
        tx,
        move |c| Msg::Ev(about.clone(), Box::new(c)),
    )
}

/// What the watches hold now.
#[derive(Default)]
struct Seen {
    jobs: Collection<Job>,
    pods: Collection<Pod>,
    /// By the uid of the hook Job or pod they are about.
    events: BTreeMap<String, Collection<EventSummary>>,
}

impl Seen {
    fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Job(c) => {
                self.jobs.apply(*c);
            }
            Msg::Pod(c) => {
                self.pods.apply(*c);
            }
            Msg::Ev(about, c) => {
                if let Some(held) = self.events.get_mut(&about) {
                    held.apply(*c);
                }
            }
        }
    }
}

/// What was last sent, so every watch change sends only what it changed on screen.
#[derive(Default)]
struct Shown {
    hooks: Vec<HookView>,
    pods: BTreeMap<String, PodView>,
    events: BTreeSet<(String, String, String, i32)>,
    /// Failed pods whose log tail was fetched: once each.
    logs_fetched: BTreeSet<String>,
}

impl Shown {
    /// The hooks pane, by weight then name as helm runs them.
    fn hooks(&mut self, emit: &Emitter, hooks: &[&Job]) {
        let mut views: Vec<HookView> = hooks.iter().map(|j| hook_view(j)).collect();
        views.sort_by(|a, b| (a.weight, &a.name).cmp(&(b.weight, &b.name)));
        if views != self.hooks {
            emit.send(Event::Hooks {
                hooks: views.clone(),
            });
            self.hooks = views;
        }
    }

    /// The pods of this run's hook Jobs; returns the uids of the hook Jobs and their pods,
    /// the objects whose Events belong on screen.
    fn pods(
        &mut self,
        emit: &Emitter,
        pods_api: &Api<Pod>,
        hooks: &[&Job],
        pods: &Collection<Pod>,
    ) -> BTreeSet<String> {
        let uids: BTreeSet<&str> = hooks
            .iter()
            .filter_map(|j| j.metadata.uid.as_deref())
            .collect();
        let mut related: BTreeSet<String> = uids.iter().map(|u| u.to_string()).collect();
        for pod in pods.items.values() {
            let owner = pod
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| uids.contains(o.uid.as_str()));
            let Some(owner) = owner else { continue };
            related.extend(pod.metadata.uid.clone());
            let view = views::pod_view(
                &PodSummary::of(pod),
                format!("Job/{}", owner.name),
                true,
                &[],
            );
            // A failed hook pod's last words: helm itself says only "BackoffLimitExceeded".
            if view.phase == "Failed" && self.logs_fetched.insert(view.name.clone()) {
                fetch_log_tail(pods_api, emit, &view.name, &view.log_containers());
            }
            if self.pods.get(&view.name) != Some(&view) {
                emit.send(Event::Pod(view.clone()));
                self.pods.insert(view.name.clone(), view);
            }
        }
        related
    }

    /// The Events about `related` objects, each (object, reason, message, count) once.
    fn events(
        &mut self,
        emit: &Emitter,
        related: &BTreeSet<String>,
        events: &BTreeMap<String, Collection<EventSummary>>,
    ) {
        let about = related.iter().filter_map(|uid| events.get(uid));
        for e in about.flat_map(|held| held.items.values()) {
            let view = views::event_view(e);
            if self.events.insert((
                view.object.clone(),
                view.reason.clone(),
                view.message.clone(),
                view.count,
            )) {
                emit.send(Event::KubeEvent(view));
            }
        }
    }
}

/// Lines kept of a failed hook pod's log.
const FAILED_HOOK_LOG_LINES: i64 = 20;

/// The last lines of each of the pod's `containers`, fetched one after the other in the
/// order given (the order they ran: initContainers first), so the lines arrive in that order.
pub fn fetch_log_tail(pods: &Api<Pod>, emit: &Emitter, pod: &str, containers: &[&str]) {
    let (pods, emit, pod) = (pods.clone(), emit.clone(), pod.to_string());
    let containers: Vec<String> = containers.iter().map(|c| c.to_string()).collect();
    tokio::spawn(async move {
        for container in containers {
            let params = kube::api::LogParams {
                container: Some(container.clone()),
                tail_lines: Some(FAILED_HOOK_LOG_LINES),
                ..Default::default()
            };
            // A container that never ran has no log: the next one may.
            let Ok(log) = pods.logs(&pod, &params).await else {
                continue;
            };
            for line in log.lines() {
                emit.send(Event::Log {
                    pod: pod.clone(),
                    container: container.clone(),
                    text: text::plain(line),
                });
            }
        }
    });
}

/// Stops the watch tasks when the live-hooks task itself is aborted.
struct AbortAll(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortAll {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(
        annotations: serde_json::Value,
        labels: serde_json::Value,
        created: &str,
        status: serde_json::Value,
    ) -> Job {
        job_with_uid("uid-new", annotations, labels, created, status)
    }

    fn job_with_uid(
        uid: &str,
        annotations: serde_json::Value,
        labels: serde_json::Value,
        created: &str,
        status: serde_json::Value,
    ) -> Job {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "demo-seed", "uid": uid, "annotations": annotations, "labels": labels, "creationTimestamp": created},
            "status": status
        }))
        .unwrap()
    }

    #[test]
    fn hook_jobs_of_this_run_only() {
        let hook = serde_json::json!({"helm.sh/hook": "post-install,post-upgrade", "helm.sh/hook-weight": "5"});
        let mine = serde_json::json!({"app.kubernetes.io/instance": "demo"});
        let theirs = serde_json::json!({"app.kubernetes.io/instance": "other"});
        let t = "2026-12-01T10:00:00Z";
        let before = Since::NotAmong(["uid-old".to_string()].into());
        assert!(is_this_runs_hook(
            &job(hook.clone(), mine.clone(), t, serde_json::json!({})),
            "demo",
            &before
        ));
        assert!(!is_this_runs_hook(
            &job(hook.clone(), theirs, t, serde_json::json!({})),
            "demo",
            &before
        ));
        assert!(!is_this_runs_hook(
            &job(
                serde_json::json!({}),
                serde_json::json!({"app.kubernetes.io/instance": "demo"}),
                t,
                serde_json::json!({})
            ),
            "demo",
            &before
        ));
        // Unlabelled: only if it was not there before helm started.
        assert!(is_this_runs_hook(
            &job(
                hook.clone(),
                serde_json::json!({}),
                t,
                serde_json::json!({})
            ),
            "demo",
            &before
        ));
        let failed = serde_json::json!({"conditions": [{"type": "Failed", "status": "True"}]});
        for labels in [serde_json::json!({}), mine] {
            // An earlier run's Job of the same name and labels, even created "later" by a
            // skewed clock: its UID was there before helm started.
            let leftover = job_with_uid(
                "uid-old",
                hook.clone(),
                labels,
                "2026-12-01T11:00:00Z",
                failed.clone(),
            );
            assert!(!is_this_runs_hook(&leftover, "demo", &before));
        }
        let no_uid: Job = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "demo-seed", "annotations": hook, "labels": {}}
        }))
        .unwrap();
        assert!(
            !is_this_runs_hook(&no_uid, "demo", &before),
            "no UID, no claim"
        );
    }

    /// A watch attaches after helm started: a hook Job counts when it was created at or after
    /// the watched revision's record, whatever its UID.
    #[test]
    fn a_watch_claims_the_hook_jobs_created_since_the_revision_was_written() {
        let hook = serde_json::json!({"helm.sh/hook": "post-upgrade"});
        let mine = serde_json::json!({"app.kubernetes.io/instance": "demo"});
        let since = Since::Created("2026-12-01T10:00:00Z".parse().unwrap());
        let at = |t: &str| job(hook.clone(), mine.clone(), t, serde_json::json!({}));
        assert!(is_this_runs_hook(
            &at("2026-12-01T10:00:00Z"),
            "demo",
            &since
        ));
        assert!(is_this_runs_hook(
            &at("2026-12-01T10:00:07Z"),
            "demo",
            &since
        ));
        assert!(
            !is_this_runs_hook(&at("2026-12-01T09:59:59Z"), "demo", &since),
            "an earlier revision's hook Job is not this one's"
        );
    }

    #[test]
    fn hook_view_reads_phase_events_and_weight() {
        let failed = job(
            serde_json::json!({"helm.sh/hook": "post-install, post-upgrade", "helm.sh/hook-weight": "5"}),
            serde_json::json!({}),
            "2026-12-01T10:00:00Z",
            serde_json::json!({"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}),
        );
        let v = hook_view(&failed);
        assert_eq!((v.phase, v.weight), (HookPhase::Failed, 5));
        assert_eq!(v.events, ["post-install", "post-upgrade"]);
        let running = job(
            serde_json::json!({"helm.sh/hook": "pre-upgrade"}),
            serde_json::json!({}),
            "2026-12-01T10:00:00Z",
            serde_json::json!({"active": 1}),
        );
        assert_eq!(hook_view(&running).phase, HookPhase::Running);
    }
}
