//! Step 3: the scoped rollout wait. Watches the release's Deployments, StatefulSets and
//! DaemonSets (label `app.kubernetes.io/instance=REL`, cross-checked against the release
//! manifest) with their ReplicaSets, Pods and Events, in every namespace the manifest names;
//! judges each workload by `kubectl rollout status` rules; waits for every gating workload,
//! fails fast on a progress deadline, and on timeout names every blocker with its pod-level
//! cause.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::cluster::releases;
use crate::cluster::watch::{self, Change, Collection, Health};
use crate::engine::event::{
    Event, KubeEventView, PodView, Step, StepOutcome, WorkloadKey, WorkloadView,
};
use crate::engine::steps::{Ctx, StepError};
use crate::engine::views::{self, Observed, Scope, event_view, owned_by, pod_view};
use crate::text;

/// A change of one watch; the index is the watch's place in its list in [`World`].
enum Msg {
    Deploy(usize, Change<Deployment>),
    Sts(usize, Change<StatefulSet>),
    Ds(usize, Change<DaemonSet>),
    Rs(usize, Change<ReplicaSet>),
    Pod(usize, Change<Pod>),
    Ev(usize, Change<KubeEvent>),
}

/// One workload watch: label-selected in a namespace, or by name for one manifest workload
/// that lacks the instance label.
struct Watched<K> {
    /// Index into [`World::namespaces`].
    ns: usize,
    by_name: Option<String>,
    c: Collection<K>,
}

impl<K> Watched<K> {
    fn labelled(ns: usize) -> Self {
        Watched {
            ns,
            by_name: None,
            c: Collection::default(),
        }
    }

    fn by_name(ns: usize, name: &str) -> Self {
        Watched {
            ns,
            by_name: Some(name.to_string()),
            c: Collection::default(),
        }
    }
}

/// Everything the watches hold. Every namespace the release manifest names is watched alike
/// (charts with `namespaceOverride` place workloads outside `-n`): entry `i` of `rss`, `pods`,
/// `events` and the first `namespaces.len()` entries of each workload list are the
/// label-selected watches of `namespaces[i]`; later workload entries are by-name watches.
struct World {
    /// The release namespace first, then the others the manifest names, sorted.
    namespaces: Vec<String>,
    deploys: Vec<Watched<Deployment>>,
    stss: Vec<Watched<StatefulSet>>,
    dss: Vec<Watched<DaemonSet>>,
    rss: Vec<Collection<ReplicaSet>>,
    pods: Vec<Collection<Pod>>,
    events: Vec<Collection<KubeEvent>>,
    /// Manifest workloads found only through a by-name watch.
    unlabelled: BTreeSet<WorkloadKey>,
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

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

impl World {
    fn new(namespaces: Vec<String>) -> Self {
        let n = namespaces.len();
        World {
            deploys: (0..n).map(Watched::labelled).collect(),
            stss: (0..n).map(Watched::labelled).collect(),
            dss: (0..n).map(Watched::labelled).collect(),
            rss: (0..n).map(|_| Collection::default()).collect(),
            pods: (0..n).map(|_| Collection::default()).collect(),
            events: (0..n).map(|_| Collection::default()).collect(),
            unlabelled: BTreeSet::new(),
            namespaces,
        }
    }

    /// The name a watch's health is reported under: as it always was in the release
    /// namespace, with ` in NS` for a namespace of its own.
    fn watch_name(&self, what: String, ns: usize) -> String {
        if ns == 0 {
            what
        } else {
            format!("{what} in {}", self.namespaces[ns])
        }
    }

    fn apply(&mut self, msg: Msg) -> (String, Health) {
        let (what, ns, health) = match msg {
            Msg::Deploy(i, c) => {
                let w = &mut self.deploys[i];
                (format!("Deployments[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Sts(i, c) => {
                let w = &mut self.stss[i];
                (format!("StatefulSets[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Ds(i, c) => {
                let w = &mut self.dss[i];
                (format!("DaemonSets[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Rs(i, c) => ("ReplicaSets".into(), i, self.rss[i].apply(c)),
            Msg::Pod(i, c) => ("Pods".into(), i, self.pods[i].apply(c)),
            Msg::Ev(i, c) => ("Events".into(), i, self.events[i].apply(c)),
        };
        (self.watch_name(what, ns), health)
    }

    /// Whether every workload watch (label-selected and by-name) has data it can trust.
    fn all_synced(&self) -> bool {
        self.deploys.iter().all(|w| w.c.synced)
            && self.stss.iter().all(|w| w.c.synced)
            && self.dss.iter().all(|w| w.c.synced)
    }

    /// Whether every label-selected workload watch has listed at least once.
    fn initially_synced(&self) -> bool {
        let n = self.namespaces.len();
        self.deploys[..n].iter().all(|w| w.c.synced)
            && self.stss[..n].iter().all(|w| w.c.synced)
            && self.dss[..n].iter().all(|w| w.c.synced)
    }

    /// Whether the label watch of `ns` holds `kind/name`.
    fn labelled_has(&self, kind: &str, ns: usize, name: &str) -> bool {
        match kind {
            "Deployment" => self.deploys[ns].c.items.contains_key(name),
            "StatefulSet" => self.stss[ns].c.items.contains_key(name),
            _ => self.dss[ns].c.items.contains_key(name),
        }
    }

    /// By-name watched manifest workloads that their (synced) watch says do not exist.
    fn missing(&self) -> Vec<WorkloadKey> {
        fn absent<K>(kind: &str, list: &[Watched<K>], namespaces: &[String]) -> Vec<WorkloadKey> {
            list.iter()
                .filter_map(|w| {
                    let name = w.by_name.as_ref()?;
                    (w.c.synced && !w.c.items.contains_key(name))
                        .then(|| (kind.to_string(), namespaces[w.ns].clone(), name.clone()))
                })
                .collect()
        }
        let mut out = absent("Deployment", &self.deploys, &self.namespaces);
        out.extend(absent("StatefulSet", &self.stss, &self.namespaces));
        out.extend(absent("DaemonSet", &self.dss, &self.namespaces));
        out
    }

    fn pods_owned_by(&self, ns: usize, owner_uid: &str) -> Vec<&Pod> {
        self.pods[ns]
            .items
            .values()
            .filter(|p| owned_by(&p.metadata, owner_uid))
            .collect()
    }

    /// Each workload with the namespace index it was read in; pods and ReplicaSets are
    /// looked up in that namespace only.
    fn judge(&self) -> Vec<(usize, Observed<'_>)> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for w in &self.deploys {
            for d in w.c.items.values() {
                if !seen.insert(("Deployment", uid(&d.metadata).to_string())) {
                    continue;
                }
                let rss: Vec<ReplicaSet> = self.rss[w.ns]
                    .items
                    .values()
                    .filter(|r| owned_by(&r.metadata, uid(&d.metadata)))
                    .cloned()
                    .collect();
                let pods = self.pods[w.ns].items.values();
                out.push((w.ns, Observed::deployment(d, &rss, pods, w.c.synced)));
            }
        }
        for w in &self.stss {
            for s in w.c.items.values() {
                if !seen.insert(("StatefulSet", uid(&s.metadata).to_string())) {
                    continue;
                }
                let pods = self.pods[w.ns].items.values();
                out.push((w.ns, Observed::statefulset(s, pods, w.c.synced)));
            }
        }
        for w in &self.dss {
            for d in w.c.items.values() {
                if !seen.insert(("DaemonSet", uid(&d.metadata).to_string())) {
                    continue;
                }
                let pods = self.pods[w.ns].items.values();
                out.push((w.ns, Observed::daemonset(d, pods, w.c.synced)));
            }
        }
        out
    }

    fn events_by_uid(&self) -> HashMap<&str, Vec<KubeEvent>> {
        let mut map: HashMap<&str, Vec<KubeEvent>> = HashMap::new();
        for e in self.events.iter().flat_map(|c| c.items.values()) {
            if let Some(u) = e.involved_object.uid.as_deref() {
                map.entry(u).or_default().push(e.clone());
            }
        }
        map
    }
}

fn view(
    ctx: &Ctx,
    ns: &str,
    w: &Observed<'_>,
    world: &World,
    events: &HashMap<&str, Vec<KubeEvent>>,
) -> WorkloadView {
    let selector = ctx.selector();
    let scope = Scope {
        selector: &selector,
        unlabelled: &world.unlabelled,
        optional: &ctx.plan.optional,
        namespace: ns,
    };
    views::workload_view(w, &scope, events)
}

/// What was last emitted, so only changes go out.
#[derive(Default)]
struct Emitted {
    workloads: BTreeMap<WorkloadKey, WorkloadView>,
    /// By (namespace, name).
    pods: BTreeMap<(String, String), PodView>,
    /// By (namespace index, the Event's name).
    events: BTreeMap<(usize, String), KubeEventView>,
}

/// Recomputes every view and emits what changed; returns the workload views.
fn publish(ctx: &Ctx, world: &World, emitted: &mut Emitted) -> Vec<WorkloadView> {
    let events = world.events_by_uid();
    let judged = world.judge();
    let mut views: Vec<WorkloadView> = judged
        .iter()
        .map(|(ns, j)| view(ctx, &world.namespaces[*ns], j, world, &events))
        .collect();
    views.extend(
        world
            .missing()
            .iter()
            .map(|key| views::missing_view(key, &ctx.plan.optional)),
    );
    let mut keys = BTreeSet::new();
    for v in &views {
        let key = v.key();
        keys.insert(key.clone());
        if emitted.workloads.get(&key) != Some(v) {
            ctx.emit.send(Event::Workload(v.clone()));
            emitted.workloads.insert(key, v.clone());
        }
    }
    let gone: Vec<WorkloadKey> = emitted
        .workloads
        .keys()
        .filter(|k| !keys.contains(*k))
        .cloned()
        .collect();
    for (kind, namespace, name) in gone {
        emitted
            .workloads
            .remove(&(kind.clone(), namespace.clone(), name.clone()));
        ctx.emit.send(Event::WorkloadGone {
            kind,
            namespace,
            name,
        });
    }
    // Pods: every pod of a release workload, current or not (the drill-down shows both).
    let mut pod_keys = BTreeSet::new();
    let mut related_uids: BTreeSet<String> = BTreeSet::new();
    for (ns, j) in &judged {
        related_uids.insert(uid(j.meta).to_string());
        let owner = format!("{}/{}", j.kind, j.meta.name.as_deref().unwrap_or(""));
        let current: BTreeSet<&str> = j.current.iter().map(|p| uid(&p.metadata)).collect();
        let mut all: Vec<&Pod> = world.pods_owned_by(*ns, uid(j.meta));
        for rs in world.rss[*ns]
            .items
            .values()
            .filter(|r| owned_by(&r.metadata, uid(j.meta)))
        {
            all.extend(world.pods_owned_by(*ns, uid(&rs.metadata)));
            related_uids.insert(uid(&rs.metadata).to_string());
        }
        for pod in all {
            related_uids.insert(uid(&pod.metadata).to_string());
            let pod_events = events
                .get(uid(&pod.metadata))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let v = pod_view(
                pod,
                owner.clone(),
                current.contains(uid(&pod.metadata)),
                pod_events,
            );
            let key = (v.namespace.clone(), v.name.clone());
            pod_keys.insert(key.clone());
            if emitted.pods.get(&key) != Some(&v) {
                ctx.emit.send(Event::Pod(v.clone()));
                emitted.pods.insert(key, v);
            }
        }
    }
    let gone: Vec<(String, String)> = emitted
        .pods
        .keys()
        .filter(|k| !pod_keys.contains(*k))
        .cloned()
        .collect();
    for (namespace, name) in gone {
        emitted.pods.remove(&(namespace.clone(), name.clone()));
        ctx.emit.send(Event::PodGone { namespace, name });
    }
    for (ns, collection) in world.events.iter().enumerate() {
        for (name, e) in &collection.items {
            if !views::is_about(e, &related_uids) {
                continue;
            }
            let v = event_view(e);
            let key = (ns, name.clone());
            if emitted.events.get(&key) != Some(&v) {
                ctx.emit.send(Event::KubeEvent(v.clone()));
                emitted.events.insert(key, v);
            }
        }
    }
    views
}

fn start_watches(
    ctx: &Ctx,
    world: &World,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let client = &ctx.cluster.client;
    let labelled = watcher::Config::default().labels(&ctx.selector());
    let mut tasks = Vec::new();
    for (i, ns) in world.namespaces.iter().enumerate() {
        let ns = ns.as_str();
        tasks.extend([
            watch::spawn(
                Api::<Deployment>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Deploy(i, c),
            ),
            watch::spawn(
                Api::<StatefulSet>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Sts(i, c),
            ),
            watch::spawn(
                Api::<DaemonSet>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Ds(i, c),
            ),
            watch::spawn(
                Api::<ReplicaSet>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Rs(i, c),
            ),
            watch::spawn(
                Api::<Pod>::namespaced(client.clone(), ns),
                labelled.clone(),
                tx.clone(),
                move |c| Msg::Pod(i, c),
            ),
            // Events cannot be label-selected; they are filtered to the release's objects.
            watch::spawn(
                Api::<KubeEvent>::namespaced(client.clone(), ns),
                watcher::Config::default(),
                tx.clone(),
                move |c| Msg::Ev(i, c),
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
        let Some(ns) = world.namespaces.iter().position(|n| n == namespace) else {
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
        world
            .unlabelled
            .insert((kind.clone(), namespace.clone(), name.clone()));
        let by_name = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let task = match kind.as_str() {
            "Deployment" => {
                world.deploys.push(Watched::by_name(ns, name));
                let i = world.deploys.len() - 1;
                watch::spawn(
                    Api::<Deployment>::namespaced(client.clone(), namespace),
                    by_name,
                    tx.clone(),
                    move |c| Msg::Deploy(i, c),
                )
            }
            "StatefulSet" => {
                world.stss.push(Watched::by_name(ns, name));
                let i = world.stss.len() - 1;
                watch::spawn(
                    Api::<StatefulSet>::namespaced(client.clone(), namespace),
                    by_name,
                    tx.clone(),
                    move |c| Msg::Sts(i, c),
                )
            }
            _ => {
                world.dss.push(Watched::by_name(ns, name));
                let i = world.dss.len() - 1;
                watch::spawn(
                    Api::<DaemonSet>::namespaced(client.clone(), namespace),
                    by_name,
                    tx.clone(),
                    move |c| Msg::Ds(i, c),
                )
            }
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
    let outcome = loop {
        tokio::select! {
            _ = ctx.cancel.cancelled() => break StepOutcome::Cancelled,
            _ = tokio::time::sleep_until(deadline) => break timed_out(ctx, &emitted, &degraded, &world),
            msg = rx.recv() => {
                let Some(msg) = msg else { break StepOutcome::Failed { reason: "every watch stopped (evidence unreadable)".into() } };
                let mut batch = vec![msg];
                while let Ok(more) = rx.try_recv() {
                    batch.push(more);
                }
                for msg in batch {
                    let (what, health) = world.apply(msg);
                    match health {
                        Health::Degraded(error) => {
                            let error = text::plain(&error);
                            degraded.insert(what.clone(), error.clone());
                            emit.send(Event::WatchDegraded { what, error });
                        }
                        Health::Recovered => {
                            degraded.remove(&what);
                            emit.send(Event::WatchRecovered { what });
                        }
                        Health::Unchanged => {}
                    }
                }
                if !world.initially_synced() {
                    continue;
                }
                if !cross_checked {
                    cross_checked = true;
                    cross_check_manifest(ctx, &manifest, &mut world, &tx, &mut tasks);
                }
                let views = publish(ctx, &world, &mut emitted);
                if let Some(outcome) = judge(&views, world.all_synced(), ctx.namespace()) {
                    break outcome;
                }
            }
        }
    };
    for t in tasks {
        t.abort();
    }
    Ok(outcome)
}

/// The step's outcome once every workload watch has listed: `None` while still waiting.
/// `home` is the release namespace (workloads elsewhere are named with theirs).
fn judge(views: &[WorkloadView], all_synced: bool, home: &str) -> Option<StepOutcome> {
    // By-name watches of unlabelled manifest workloads must list before we can judge them.
    if !all_synced {
        return None;
    }
    let gating: Vec<&WorkloadView> = views.iter().filter(|v| !v.optional).collect();
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
