//! Step 3: the scoped rollout wait. Watches the release's Deployments, StatefulSets and
//! DaemonSets (label `app.kubernetes.io/instance=REL`, cross-checked against the release
//! manifest) with their ReplicaSets, Pods and Events, in every namespace the manifest names;
//! judges each workload by `kubectl rollout status` rules; waits for every gating workload,
//! fails fast on a progress deadline, and on timeout names every blocker with its pod-level
//! cause.

mod cache;
mod causes;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use foldhash::{HashMap, HashSet, HashSetExt};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kube::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::cluster::releases;
use crate::cluster::watch::{self, Health};
use crate::engine::event::{Event, Step, StepOutcome, WorkloadKey, WorkloadView};
use crate::engine::steps::{Ctx, StepError};
use crate::engine::views::{self, EventsByUid, Observed, Scope, event_view, pod_view};
use crate::rollout::objects::{
    EventSummary as KubeEvent, PodSummary as Pod, ReplicaSetSummary as ReplicaSet,
};
use crate::rollout::readiness::Progress;
use crate::rollout::{diagnosis, fail_fast};
use crate::text;

use cache::{Msg, World, uid};

/// The namespaces to watch: the release's, then every other one `manifest` names.
fn namespaces_of(release_ns: &str, manifest: &[WorkloadKey]) -> Vec<String> {
    let others: BTreeSet<&str> = manifest
        .iter()
        .map(|(_, ns, _)| ns.as_str())
        .filter(|ns| *ns != release_ns)
        .collect();
    std::iter::once(release_ns)
        .chain(others)
        .map(str::to_string)
        .collect()
}

fn view(
    ctx: &Ctx,
    ns: &str,
    w: &Observed<'_>,
    world: &World,
    events: &EventsByUid<'_>,
    causes: &HashMap<String, Vec<String>>,
) -> WorkloadView {
    let selector = ctx.selector();
    let scope = Scope {
        selector: &selector,
        unlabelled: &world.unlabelled,
        optional: &ctx.plan.optional,
        namespace: ns,
        failures_allowed: ctx.plan.failures_allowed_per_replica,
    };
    let lines = w
        .current
        .iter()
        .flat_map(|p| causes.get(uid(&p.metadata)).into_iter().flatten());
    views::workload_view_with_causes(w, &scope, events, views::first_cause_lines(lines))
}

/// What was last emitted, so only changes go out.
#[derive(Default)]
struct Emitted {
    workloads: BTreeMap<WorkloadKey, WorkloadView>,
    /// Each pod last emitted, by its uid. A fingerprint, not a copy: the deploy state holds
    /// the view; this only tells whether a new one differs.
    pods: HashMap<String, SentPod>,
    /// The uids of `pods` by the uid of the workload that claimed each: a publish looks for
    /// gone pods among those of the workloads it touched, not among every pod sent (that
    /// pass over 5,000 pods at each batch of changes was a sixth of the screen's CPU).
    claimed_by: HashMap<String, HashSet<String>>,
    /// The fingerprint of each Event last emitted, by (namespace index, the Event's name).
    events: HashMap<(usize, String), u64>,
    /// Each pod's cause lines (`pod NAME: CAUSE`) by uid, while it is not ready, kept until a
    /// change touches it: a workload's view quotes the first few over all its pods, and
    /// diagnosing each of 3,000 pods at every batch of changes was a seventh of the CPU.
    causes: HashMap<String, Vec<String>>,
    /// Bad fail-fast annotations already warned about, by workload.
    warned: BTreeSet<WorkloadKey>,
    /// Every workload's key in the watches' order, then the missing manifest workloads': read
    /// again only when the set of workloads may have changed.
    order: Vec<WorkloadKey>,
    /// The missing manifest workloads of the last publish.
    missing: Vec<WorkloadKey>,
}

/// What was last emitted of a pod.
struct SentPod {
    /// (namespace, name): the deploy state's key.
    key: (String, String),
    /// The uid of the workload that claimed it.
    owner: String,
    /// Whether it was of its workload's current revision: that changes without the pod.
    current: bool,
    view: u64,
}

/// A fingerprint of a view, to tell whether it changed.
fn fingerprint<T: std::hash::Hash>(v: &T) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(v)
}

/// Re-judges the workloads the changes since the last publish touched (all of them after a
/// relist or a watch failure) and emits what changed; returns every workload view, in the
/// order the watches hold them, borrowed: a publish costs what changed, not the release (at
/// thousands of workloads, or ten targets at once, cloning every view per batch of changes
/// was most of the CPU).
fn publish<'e>(ctx: &Ctx, world: &mut World, emitted: &'e mut Emitted) -> Vec<&'e WorkloadView> {
    let (all, touched) = world.take_touched();
    let reshaped = world.take_reshaped();
    // What the watch cache no longer holds is not compared against again.
    for key in world.dropped_events.drain(..) {
        emitted.events.remove(&key);
    }
    let world = &*world;
    let wanted = |u: &str| all || touched.contains(u);
    let judged = world.judge_where(wanted);
    let related = related_of(world, &judged);
    // The Events the views read: about the workloads and their ReplicaSets, the pods a change
    // touched (their new views and causes) and, where fail fast counts them, the current
    // pods. A pod nothing touched is not viewed or diagnosed again; gathering its Events at
    // each batch of changes was the largest part of a publish at 3,000 pods.
    let limit = ctx.plan.failures_allowed_per_replica;
    let events = world.events_about(judged.iter().zip(&related).flat_map(
        |((_, j), (rss, pods))| {
            let counted = j.readiness.progress != Progress::Done
                && fail_fast::allowed(limit, j.meta).0.is_some();
            std::iter::once(uid(j.meta))
                .chain(rss.iter().map(|r| uid(&r.metadata)))
                .chain(
                    pods.iter()
                        .filter(|p| wanted(uid(&p.metadata)))
                        .map(|p| uid(&p.metadata)),
                )
                .chain(
                    j.current
                        .iter()
                        .filter(move |_| counted)
                        .map(|p| uid(&p.metadata)),
                )
        },
    ));
    emitted.update_causes(world, &related, &events, &wanted);
    emitted.send_workloads(ctx, world, &judged, &events, reshaped);
    let changed = (!all).then_some(&touched);
    emitted.send_pods(ctx, world, &judged, &related, &events, changed);
    emitted.send_events(ctx, world, &events, &wanted);
    let emitted: &'e Emitted = emitted;
    emitted.in_order().collect()
}

/// The Events about `pod_uid`: as gathered for this publish, else looked up (a pod the
/// gathering did not name: one whose revision became or stopped being current, or one not yet
/// diagnosed).
fn events_of<'s, 'a: 's>(
    world: &'a World,
    events: &'s EventsByUid<'a>,
    pod_uid: &'a str,
) -> Cow<'s, [&'a KubeEvent]> {
    match events.get(pod_uid) {
        Some(about) => Cow::Borrowed(about.as_slice()),
        None => Cow::Owned(
            world
                .events_about([pod_uid])
                .remove(pod_uid)
                .unwrap_or_default(),
        ),
    }
}

/// Workloads as judged, each with the namespace index it was read in.
type Judged<'w> = [(usize, Observed<'w>)];

/// The ReplicaSets of each judged workload and all the pods of it and of them: what its view
/// and its pods' views are made of.
fn related_of<'w>(
    world: &'w World,
    judged: &Judged<'_>,
) -> Vec<(Vec<&'w ReplicaSet>, Vec<&'w Pod>)> {
    let mut related = Vec::with_capacity(judged.len());
    for (ns, j) in judged {
        let mut pods: Vec<&Pod> = world.pods_owned_by(*ns, uid(j.meta));
        let rss = world.rss_owned_by(*ns, uid(j.meta));
        for rs in &rss {
            pods.extend(world.pods_owned_by(*ns, uid(&rs.metadata)));
        }
        related.push((rss, pods));
    }
    related
}

impl Emitted {
    /// Every workload's view, in the watches' order.
    fn in_order(&self) -> impl Iterator<Item = &WorkloadView> {
        self.order.iter().filter_map(|k| self.workloads.get(k))
    }

    /// Diagnoses again the pods a change touched, and any not ready not yet diagnosed; a
    /// ready pod has no causes.
    fn update_causes(
        &mut self,
        world: &World,
        related: &[(Vec<&ReplicaSet>, Vec<&Pod>)],
        events: &EventsByUid<'_>,
        wanted: &impl Fn(&str) -> bool,
    ) {
        for pod in related.iter().flat_map(|(_, pods)| pods) {
            let pod_uid = uid(&pod.metadata);
            if !wanted(pod_uid) && self.causes.contains_key(pod_uid) {
                continue;
            }
            if diagnosis::is_pod_ready(pod) {
                self.causes.remove(pod_uid);
                continue;
            }
            let about = events_of(world, events, pod_uid);
            self.causes
                .insert(pod_uid.to_string(), views::cause_lines_of(pod, &about));
        }
    }

    /// Sends the judged workloads' and the missing manifest workloads' views that changed, and
    /// (when the set of workloads may have changed: `reshaped`) the workloads that are gone,
    /// keeping their order.
    fn send_workloads(
        &mut self,
        ctx: &Ctx,
        world: &World,
        judged: &Judged<'_>,
        events: &EventsByUid<'_>,
        reshaped: bool,
    ) {
        for (ns, j) in judged {
            let v = view(ctx, &world.namespaces[*ns], j, world, events, &self.causes);
            let key = v.key();
            self.warn_bad_annotation(ctx, j, &key);
            if self.workloads.get(&key) != Some(&v) {
                ctx.emit.send(Event::Workload(v.clone()));
                self.workloads.insert(key, v);
            }
        }
        let missing: Vec<WorkloadView> = world
            .missing()
            .iter()
            .map(|key| views::missing_view(key, &ctx.plan.optional))
            .collect();
        for v in &missing {
            let key = v.key();
            if self.workloads.get(&key) != Some(v) {
                ctx.emit.send(Event::Workload(v.clone()));
                self.workloads.insert(key, v.clone());
            }
        }
        let missing: Vec<WorkloadKey> = missing.iter().map(WorkloadView::key).collect();
        if !reshaped && missing == self.missing {
            return;
        }
        let order: Vec<WorkloadKey> = world
            .keys()
            .into_iter()
            .chain(missing.iter().cloned())
            .collect();
        self.missing = missing;
        let keys: BTreeSet<&WorkloadKey> = order.iter().collect();
        let gone: Vec<WorkloadKey> = self
            .workloads
            .keys()
            .filter(|k| !keys.contains(k))
            .cloned()
            .collect();
        for (kind, namespace, name) in gone {
            self.workloads
                .remove(&(kind.clone(), namespace.clone(), name.clone()));
            ctx.emit.send(Event::WorkloadGone {
                kind,
                namespace,
                name,
            });
        }
        self.order = order;
    }

    /// A fail-fast annotation that is not a number: said once per workload, never a crash.
    fn warn_bad_annotation(&mut self, ctx: &Ctx, j: &Observed<'_>, key: &WorkloadKey) {
        if self.warned.contains(key) {
            return;
        }
        let limit = ctx.plan.failures_allowed_per_replica;
        if let (_, Some(warning)) = crate::rollout::fail_fast::allowed(limit, j.meta) {
            ctx.emit.warn(Step::Rollout, text::plain(&warning));
            self.warned.insert(key.clone());
        }
    }

    /// Pods: every pod of a release workload, current or not (the drill-down shows both).
    /// Only the judged workloads' pods can have changed, and of them only those a change
    /// touched or whose revision's currency changed get a new view (at a 3,000-pod
    /// Deployment, re-viewing every pod at each batch of changes was most of the CPU). A pod
    /// is gone when it was touched or its workload was re-judged (or is gone) and no judged
    /// workload claims it now; `changed` holds the uids touched (`None` after a relist: all).
    fn send_pods(
        &mut self,
        ctx: &Ctx,
        world: &World,
        judged: &Judged<'_>,
        related: &[(Vec<&ReplicaSet>, Vec<&Pod>)],
        events: &EventsByUid<'_>,
        changed: Option<&HashSet<String>>,
    ) {
        let wanted = |u: &str| changed.is_none_or(|c| c.contains(u));
        let mut claimed: HashSet<&str> = HashSet::new();
        let mut viewed: HashSet<(String, String)> = HashSet::new();
        for ((_, j), (_, pods)) in judged.iter().zip(related) {
            let owner = format!("{}/{}", j.kind, j.meta.name.as_deref().unwrap_or(""));
            let owner_uid = uid(j.meta);
            let current: HashSet<&str> = j.current.iter().map(|p| uid(&p.metadata)).collect();
            for pod in pods {
                let pod_uid = uid(&pod.metadata);
                claimed.insert(pod_uid);
                let is_current = current.contains(pod_uid);
                let sent = self.pods.get(pod_uid);
                let unchanged =
                    sent.is_some_and(|s| s.current == is_current && s.owner == owner_uid);
                if unchanged && !wanted(pod_uid) {
                    continue;
                }
                // A ready pod nothing touched, whose revision became or stopped being current.
                let pod_events = events_of(world, events, pod_uid);
                let v = pod_view(pod, owner.clone(), is_current, &pod_events);
                let print = fingerprint(&v);
                let key = (v.namespace.clone(), v.name.clone());
                if sent.map(|s| s.view) != Some(print) {
                    ctx.emit.send(Event::Pod(v));
                }
                viewed.insert(key.clone());
                self.remember_pod(
                    pod_uid,
                    SentPod {
                        key,
                        owner: owner_uid.to_string(),
                        current: is_current,
                        view: print,
                    },
                );
            }
        }
        // The pods that may have left: those touched, and those of the workloads touched
        // (re-judged, or gone); after a relist, every one.
        let maybe_left: Vec<String> = match changed {
            None => self.pods.keys().cloned().collect(),
            Some(touched) => touched
                .iter()
                .filter(|u| self.pods.contains_key(u.as_str()))
                .chain(
                    touched
                        .iter()
                        .filter_map(|o| self.claimed_by.get(o))
                        .flatten(),
                )
                .cloned()
                .collect(),
        };
        let mut gone: Vec<(String, String)> = Vec::new();
        for pod in maybe_left {
            if claimed.contains(pod.as_str()) {
                continue;
            }
            if let Some(sent) = self.forget_pod(&pod) {
                gone.push(sent.key);
            }
        }
        for key in gone {
            // A pod of the same namespace and name (a StatefulSet's, recreated) may hold its
            // key: one viewed now, or one sent before that the watches still hold.
            let held = || {
                world
                    .pod_named(&key.0, &key.1)
                    .is_some_and(|p| self.pods.contains_key(uid(&p.metadata)))
            };
            if viewed.contains(&key) || held() {
                continue;
            }
            let (namespace, name) = key;
            ctx.emit.send(Event::PodGone { namespace, name });
        }
    }

    /// Keeps what was emitted of a pod, under the workload that claimed it.
    fn remember_pod(&mut self, pod_uid: &str, sent: SentPod) {
        let moved = self
            .pods
            .get(pod_uid)
            .filter(|before| before.owner != sent.owner)
            .map(|before| before.owner.clone());
        if let Some(before) = moved {
            self.unclaim(&before, pod_uid);
        }
        match self.claimed_by.get_mut(&sent.owner) {
            Some(pods) => {
                if !pods.contains(pod_uid) {
                    pods.insert(pod_uid.to_string());
                }
            }
            None => {
                self.claimed_by.insert(
                    sent.owner.clone(),
                    std::iter::once(pod_uid.to_string()).collect(),
                );
            }
        }
        self.pods.insert(pod_uid.to_string(), sent);
    }

    /// Forgets a pod that left the release's workloads: what was sent of it and its causes.
    fn forget_pod(&mut self, pod_uid: &str) -> Option<SentPod> {
        self.causes.remove(pod_uid);
        let sent = self.pods.remove(pod_uid)?;
        self.unclaim(&sent.owner, pod_uid);
        Some(sent)
    }

    fn unclaim(&mut self, owner: &str, pod_uid: &str) {
        if let Some(pods) = self.claimed_by.get_mut(owner) {
            pods.remove(pod_uid);
            if pods.is_empty() {
                self.claimed_by.remove(owner);
            }
        }
    }

    /// Events about the re-judged workloads and their ReplicaSets and pods (the keys of
    /// `events`), those that changed, by (namespace, name).
    fn send_events(
        &mut self,
        ctx: &Ctx,
        world: &World,
        events: &EventsByUid<'_>,
        wanted: &impl Fn(&str) -> bool,
    ) {
        // An Event that changed touched what it is about: the others are as last sent.
        let about = events.keys().copied().filter(|u| wanted(u));
        for ((ns, name), e) in world.events_by_name(about) {
            let v = event_view(e);
            let print = fingerprint(&v);
            let key = (ns, name.to_string());
            if self.events.get(&key) != Some(&print) {
                ctx.emit.send(Event::KubeEvent(v));
                self.events.insert(key, print);
            }
        }
    }
}

/// One LIST per (re)list for the workloads and ReplicaSets, which are few: kube's default pages
/// would only add requests.
fn unpaged(mut config: watcher::Config) -> watcher::Config {
    config.page_size = None;
    config
}

/// Pods and Events are listed in pages: a namespace's Events or a release's pods can run to
/// tens of thousands, and one unpaged LIST holds its whole body (27 MiB for the Events of a
/// 3,000-pod rollout) while it is read. A page's objects are kept as summaries as they come.
const PAGE: u32 = 500;

fn paged(mut config: watcher::Config) -> watcher::Config {
    config.page_size = Some(PAGE);
    config
}

fn start_watches(
    ctx: &Ctx,
    world: &World,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let client = &ctx.cluster.client;
    let labelled = unpaged(watcher::Config::default().labels(&ctx.selector()));
    let labelled_pages = paged(watcher::Config::default().labels(&ctx.selector()));
    let mut tasks = Vec::new();
    for (i, ns) in world.namespaces.iter().enumerate() {
        let ns = ns.as_str();
        tasks.extend([
            watch::spawn(
                Api::<Deployment>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Deploy(i, Box::new(c)),
            ),
            watch::spawn(
                Api::<StatefulSet>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Sts(i, Box::new(c)),
            ),
            watch::spawn(
                Api::<DaemonSet>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Ds(i, Box::new(c)),
            ),
            watch::spawn(
                Api::<ReplicaSet>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Rs(i, c),
            ),
            watch::spawn(
                Api::<Pod>::namespaced(client.clone(), ns),
                labelled_pages.clone(),
                tx.clone(),
                move |c| Msg::Pod(i, c),
            ),
            // Events cannot be label-selected; they are filtered to the release's objects.
            watch::spawn_trimmed(
                Api::<KubeEvent>::namespaced(client.clone(), ns),
                paged(watcher::Config::default()),
                tx.clone(),
                move |c| Msg::Ev(i, c),
                world.listed_events(),
            ),
        ]);
    }
    tasks
}

/// The workloads of the release's newest manifest, each in its namespace; empty (with a
/// warning) when the record cannot be read, so only the release namespace is watched.
async fn read_manifest(ctx: &Ctx) -> Vec<WorkloadKey> {
    let step = Step::Rollout;
    let revisions =
        match releases::revisions(&ctx.cluster.client, ctx.namespace(), &ctx.plan.release).await {
            Ok(r) => r,
            Err(e) => {
                ctx.emit.warn(
                    step,
                    format!("cannot read the release manifest for the label cross-check: {e:#}"),
                );
                return Vec::new();
            }
        };
    let Some(latest) = revisions.last() else {
        return Vec::new();
    };
    match releases::record(&ctx.cluster.client, ctx.namespace(), &latest.secret_name).await {
        Ok(r) => {
            let manifest = r.get("manifest").and_then(|m| m.as_str()).unwrap_or("");
            releases::manifest_workloads(manifest, ctx.namespace())
        }
        Err(e) => {
            ctx.emit.warn(
                step,
                format!("cannot decode the release record for the label cross-check: {e:#}"),
            );
            Vec::new()
        }
    }
}

/// Adds by-name watches for manifest workloads the label watch of their namespace does not see.
fn cross_check_manifest(
    ctx: &Ctx,
    manifest: &[WorkloadKey],
    world: &mut World,
    tx: &mpsc::UnboundedSender<Msg>,
    tasks: &mut Vec<tokio::task::JoinHandle<()>>,
) {
    let step = Step::Rollout;
    let client = &ctx.cluster.client;
    let home = ctx.namespace();
    for (kind, namespace, name) in manifest {
        let Some(ns) = world.namespace_index(namespace) else {
            continue;
        };
        if world.labelled_has(kind, ns, name) {
            continue;
        }
        let shown = crate::engine::event::reference(kind, namespace, name, home);
        ctx.emit.warn(
            step,
            format!(
                "{shown} is in the release manifest but not labelled {}: it gates all the same",
                ctx.selector()
            ),
        );
        let i = world.add_by_name(kind, ns, name);
        let by_name = unpaged(watcher::Config::default()).fields(&format!("metadata.name={name}"));
        let task = match kind.as_str() {
            "Deployment" => watch::spawn(
                Api::<Deployment>::namespaced(client.clone(), namespace),
                by_name,
                tx.clone(),
                move |c| Msg::Deploy(i, Box::new(c)),
            ),
            "StatefulSet" => watch::spawn(
                Api::<StatefulSet>::namespaced(client.clone(), namespace),
                by_name,
                tx.clone(),
                move |c| Msg::Sts(i, Box::new(c)),
            ),
            _ => watch::spawn(
                Api::<DaemonSet>::namespaced(client.clone(), namespace),
                by_name,
                tx.clone(),
                move |c| Msg::Ds(i, Box::new(c)),
            ),
        };
        tasks.push(task);
    }
}

/// `Kind/name: message (causes)`; a workload outside the release namespace `home` is
/// named `Kind/namespace/name`.
fn describe(v: &WorkloadView, home: &str) -> String {
    let mut s = format!("{}: {}", v.reference(home), v.message);
    if !v.pod_causes.is_empty() {
        s.push_str(&format!(" ({})", v.pod_causes.join("; ")));
    }
    s
}

pub async fn run(ctx: &Ctx) -> StepOutcome {
    super::run(ctx, Step::Rollout, try_run(ctx)).await
}

/// Waits until the gating workloads are ready, one fails, or the timeout; it never errors:
/// every way the wait ends is an outcome. `pub` for the rollback's own tracking, which must not
/// overwrite this run's rollout outcome.
pub async fn try_run(ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let step = Step::Rollout;
    let emit = &ctx.emit;
    let deadline = tokio::time::Instant::now() + ctx.plan.timeout;
    // Events older than helm's own wait before this step are an earlier run's.
    let since = k8s_openapi::jiff::Timestamp::now()
        .checked_sub(
            k8s_openapi::jiff::SignedDuration::try_from(ctx.plan.timeout).unwrap_or_default(),
        )
        .unwrap_or(k8s_openapi::jiff::Timestamp::MIN);
    // The manifest says which namespaces hold the release's workloads: read it before the
    // watches start, within the step's time.
    let manifest = tokio::select! {
        _ = ctx.cancel.cancelled() => return Ok(StepOutcome::Cancelled),
        _ = tokio::time::sleep_until(deadline) => return Ok(StepOutcome::Failed {
            reason: format!(
                "evidence unreadable after {}s: the release manifest could not be read",
                ctx.plan.timeout.as_secs()
            ),
        }),
        m = read_manifest(ctx) => m,
    };
    let mut world = World::new(namespaces_of(ctx.namespace(), &manifest));
    emit.info(
        step,
        format!(
            "watching Deployments, StatefulSets, DaemonSets with {} in {}",
            ctx.selector(),
            world.namespaces.join(", ")
        ),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut tasks = start_watches(ctx, &world, &tx);
    let mut emitted = Emitted::default();
    let mut degraded: BTreeMap<String, String> = BTreeMap::new();
    let mut cross_checked = false;
    let mut optional_checked = false;
    // Set once the gating workloads are ready while an optional one's pods are not seen yet.
    let mut grace: Option<tokio::time::Instant> = None;
    let outcome = loop {
        let graced = grace.unwrap_or(deadline).min(deadline);
        tokio::select! {
            _ = ctx.cancel.cancelled() => break StepOutcome::Cancelled,
            _ = tokio::time::sleep_until(deadline) => break timed_out(ctx, &emitted, &degraded, &world),
            _ = tokio::time::sleep_until(graced), if grace.is_some() => {
                say_pods_not_seen(ctx, &mut emitted);
                break StepOutcome::Succeeded;
            }
            msg = rx.recv() => {
                let Some(msg) = msg else { break StepOutcome::Failed { reason: "every watch stopped (evidence unreadable)".into() } };
                // What is queued now is taken in before one publish, each message as it comes
                // off the queue: collected first, thousands of them were held twice.
                let queued = rx.len();
                take_in(ctx, &mut world, &mut degraded, msg);
                for _ in 0..queued {
                    let Ok(more) = rx.try_recv() else { break };
                    take_in(ctx, &mut world, &mut degraded, more);
                }
                if !world.initially_synced() {
                    continue;
                }
                if !cross_checked {
                    cross_checked = true;
                    cross_check_manifest(ctx, &manifest, &mut world, &tx, &mut tasks);
                }
                let views = publish(ctx, &mut world, &mut emitted);
                if !optional_checked && world.all_synced() {
                    optional_checked = true;
                    warn_unmatched_optional(ctx, &views);
                }
                match judge(&views, world.all_synced(), ctx.namespace()) {
                    Some(StepOutcome::Succeeded) if views.iter().any(|v| pods_not_seen(v)) => {
                        grace.get_or_insert_with(|| tokio::time::Instant::now() + OPTIONAL_GRACE);
                    }
                    Some(outcome) => break outcome,
                    // A gating workload is not ready again: the grace starts over once it is.
                    None => grace = None,
                }
            }
        }
    };
    for t in tasks {
        t.abort();
    }
    if matches!(outcome, StepOutcome::Failed { .. }) {
        causes::gather(ctx, &world, &mut emitted, since).await;
    }
    free_apart((world, emitted));
    Ok(outcome)
}

/// Frees the watch cache on a thread of its own, so the verdict does not wait for it: at
/// 20,000 pods its teardown (a `free` per string and node of every pod and Event kept) was a
/// third of the time between the last pod ready and the exit. A one-shot run may exit first;
/// its pages go back with the process. Should the thread not start, the closure holding the
/// cache is dropped right here, as before.
fn free_apart<T: Send + 'static>(cache: T) {
    let _ = std::thread::Builder::new()
        .name("helmdeck-free".into())
        .spawn(move || drop(cache));
}

/// Applies one watch change to the cache and says when a watch failed or recovered.
fn take_in(ctx: &Ctx, world: &mut World, degraded: &mut BTreeMap<String, String>, msg: Msg) {
    let (what, health) = world.apply(msg);
    match health {
        Health::Degraded(error) => {
            let error = text::plain(&error);
            degraded.insert(what.clone(), error.clone());
            ctx.emit.send(Event::WatchDegraded { what, error });
        }
        Health::Recovered => {
            degraded.remove(&what);
            ctx.emit.send(Event::WatchRecovered { what });
        }
        Health::Unchanged => {}
    }
}

/// How long a rollout whose gating workloads are ready waits for the pods of an optional one
/// whose template changed, so its cause (Unschedulable on a GPU pool) is in the verdict.
pub const OPTIONAL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What an optional workload's view says when the grace ended before its pods were seen.
pub const PODS_NOT_SEEN: &str = "pods not seen yet";

/// An optional workload that is not ready and whose current pods say nothing yet: its new
/// template's pods are not created, scheduled or seen (a manifest workload missing from the
/// cluster has no pods to wait for).
fn pods_not_seen(v: &WorkloadView) -> bool {
    v.optional && !v.ready && v.pod_causes.is_empty() && v.created.is_some()
}

/// The grace ended: each optional workload still without a cause says so.
fn say_pods_not_seen(ctx: &Ctx, emitted: &mut Emitted) {
    for v in emitted.workloads.values_mut().filter(|v| pods_not_seen(v)) {
        v.pod_causes.push(PODS_NOT_SEEN.into());
        ctx.emit.send(Event::Workload(v.clone()));
    }
}

/// Once the release's workloads are known (every watch listed, the manifest's missing ones
/// included): each `--optional` pattern that matches none of them is a warning, not silence.
fn warn_unmatched_optional(ctx: &Ctx, views: &[&WorkloadView]) {
    let workloads: Vec<(&str, &str)> = views
        .iter()
        .map(|v| (v.kind.as_str(), v.name.as_str()))
        .collect();
    for glob in crate::rollout::optional::unmatched(&ctx.plan.optional, &workloads) {
        ctx.emit.warn(
            Step::Rollout,
            crate::rollout::optional::unmatched_warning(glob),
        );
    }
}

/// The step's outcome once every workload watch has listed: `None` while still waiting.
/// `home` is the release namespace (workloads elsewhere are named with theirs).
fn judge<V: std::borrow::Borrow<WorkloadView>>(
    views: &[V],
    all_synced: bool,
    home: &str,
) -> Option<StepOutcome> {
    // By-name watches of unlabelled manifest workloads must list before we can judge them.
    if !all_synced {
        return None;
    }
    let gating: Vec<&WorkloadView> = views
        .iter()
        .map(std::borrow::Borrow::borrow)
        .filter(|v| !v.optional)
        .collect();
    if gating.is_empty() {
        let reason = if views.is_empty() {
            "no workloads found for the release (fail closed: nothing to wait on is not a pass)"
                .to_string()
        } else {
            format!(
                "no gating workloads: all {} found are optional (fail closed)",
                views.len()
            )
        };
        return Some(StepOutcome::Failed { reason });
    }
    if let Some(failed) = gating.iter().find(|v| v.failed) {
        return Some(StepOutcome::Failed {
            reason: describe(failed, home),
        });
    }
    gating
        .iter()
        .all(|v| v.ready)
        .then_some(StepOutcome::Succeeded)
}

fn timed_out(
    ctx: &Ctx,
    emitted: &Emitted,
    degraded: &BTreeMap<String, String>,
    world: &World,
) -> StepOutcome {
    let secs = ctx.plan.timeout.as_secs();
    if !world.initially_synced() || !degraded.is_empty() {
        let errors: Vec<String> = degraded.iter().map(|(w, e)| format!("{w}: {e}")).collect();
        return StepOutcome::Failed {
            reason: format!(
                "evidence unreadable after {secs}s: {}",
                if errors.is_empty() {
                    "the workload watches never listed".into()
                } else {
                    errors.join("; ")
                }
            ),
        };
    }
    let blockers: Vec<String> = emitted
        .workloads
        .values()
        .filter(|v| !v.optional && !v.ready)
        .map(|v| describe(v, ctx.namespace()))
        .collect();
    if blockers.is_empty() {
        return StepOutcome::Failed {
            reason: format!("timed out after {secs}s with no gating workload found"),
        };
    }
    StepOutcome::Failed {
        reason: format!(
            "timed out after {secs}s; not ready: {}",
            blockers.join(" · ")
        ),
    }
}

#[cfg(test)]
mod tests;
