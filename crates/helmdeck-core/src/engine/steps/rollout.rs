//! Step 3: the scoped rollout wait. Watches the release's Deployments, StatefulSets and
//! DaemonSets (label `app.kubernetes.io/instance=REL`, cross-checked against the release
//! manifest) with their ReplicaSets, Pods and Events, in every namespace the manifest names;
//! judges each workload by `kubectl rollout status` rules; waits for every gating workload,
//! fails fast on a progress deadline, and on timeout names every blocker with its pod-level
//! cause.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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
use crate::engine::views::{self, Observed, Scope, event_view, pod_view};
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
    /// Who owns what, so an event re-judges only the workload it touched.
    index: Index,
}

/// Owner and subject indexes over the pod, ReplicaSet and Event watches, kept in step with
/// the collections, plus what the changes since the last publish touched. Without them every
/// change re-judged every workload against every pod (cost growing with the release, not with
/// the change).
#[derive(Default)]
struct Index {
    /// Owner uids of each pod and ReplicaSet, by its uid (uids are cluster-wide unique).
    owners: HashMap<String, Vec<String>>,
    /// Per namespace: pod names by owner uid.
    pods_by_owner: Vec<HashMap<String, BTreeSet<String>>>,
    /// Per namespace: ReplicaSet names by owner uid.
    rss_by_owner: Vec<HashMap<String, BTreeSet<String>>>,
    /// (namespace index, Event name) by the uid of the object the Event is about.
    events_about: HashMap<String, BTreeSet<(usize, String)>>,
    /// Uids whose views may have changed since the last publish, with their owners.
    touched: HashSet<String>,
    /// Set by anything that may change every view: a (re)list, a watch failure, new scope.
    all: bool,
}

/// Names by owner uid (of one namespace), and owner uids by uid.
type OwnerMaps<'a> = (
    &'a mut HashMap<String, BTreeSet<String>>,
    &'a mut HashMap<String, Vec<String>>,
);

fn owner_uids(meta: &ObjectMeta) -> impl Iterator<Item = &str> {
    meta.owner_references
        .iter()
        .flatten()
        .map(|o| o.uid.as_str())
        .filter(|u| !u.is_empty())
}

impl Index {
    fn new(namespaces: usize) -> Self {
        Index {
            pods_by_owner: vec![HashMap::new(); namespaces],
            rss_by_owner: vec![HashMap::new(); namespaces],
            all: true,
            ..Index::default()
        }
    }

    /// Marks `uid` and its owners up to the workload (pod → ReplicaSet → Deployment).
    fn touch(&mut self, uid: &str) {
        if uid.is_empty() {
            return;
        }
        self.touched.insert(uid.to_string());
        let Some(owners) = self.owners.get(uid) else {
            return;
        };
        for o in owners {
            self.touched.insert(o.clone());
            for oo in self.owners.get(o).into_iter().flatten() {
                self.touched.insert(oo.clone());
            }
        }
    }

    fn add_owned(
        by_owner: &mut HashMap<String, BTreeSet<String>>,
        owners: &mut HashMap<String, Vec<String>>,
        meta: &ObjectMeta,
    ) {
        let name = meta.name.clone().unwrap_or_default();
        let list: Vec<String> = owner_uids(meta).map(str::to_string).collect();
        for o in &list {
            by_owner.entry(o.clone()).or_default().insert(name.clone());
        }
        if !uid(meta).is_empty() {
            owners.insert(uid(meta).to_string(), list);
        }
    }

    fn remove_owned(
        by_owner: &mut HashMap<String, BTreeSet<String>>,
        owners: &mut HashMap<String, Vec<String>>,
        meta: &ObjectMeta,
    ) {
        let name = meta.name.as_deref().unwrap_or("");
        for o in owner_uids(meta) {
            if let Some(set) = by_owner.get_mut(o) {
                set.remove(name);
                if set.is_empty() {
                    by_owner.remove(o);
                }
            }
        }
        owners.remove(uid(meta));
    }

    /// Re-indexes an owned object (pod or ReplicaSet) of namespace `ns` for `change`, given
    /// the collection before it; touches the old and the new owners.
    fn owned_change<K: kube::Resource>(
        &mut self,
        pods: bool,
        ns: usize,
        before: &Collection<K>,
        change: &Change<K>,
    ) {
        let changed: Vec<&K> = match change {
            Change::Applied(o) | Change::Deleted(o) => vec![o],
            Change::Resynced(all) => all.iter().collect(),
            Change::Failed(_) => {
                self.all = true;
                return;
            }
        };
        if let Change::Resynced(_) = change {
            self.all = true;
            for old in before.items.values() {
                self.unindex(pods, ns, old.meta());
            }
        } else {
            for o in &changed {
                let name = o.meta().name.as_deref().unwrap_or("");
                if let Some(old) = before.items.get(name) {
                    self.touch(uid(old.meta()));
                    self.unindex(pods, ns, old.meta());
                }
            }
        }
        let deleted = matches!(change, Change::Deleted(_));
        for o in changed {
            if !deleted {
                let (by_owner, owners) = self.maps(pods, ns);
                Self::add_owned(by_owner, owners, o.meta());
            }
            self.touch(uid(o.meta()));
            for owner in owner_uids(o.meta()) {
                self.touch(owner);
            }
        }
    }

    fn maps(&mut self, pods: bool, ns: usize) -> OwnerMaps<'_> {
        let by_owner = if pods {
            &mut self.pods_by_owner[ns]
        } else {
            &mut self.rss_by_owner[ns]
        };
        (by_owner, &mut self.owners)
    }

    fn unindex(&mut self, pods: bool, ns: usize, meta: &ObjectMeta) {
        let (by_owner, owners) = self.maps(pods, ns);
        Self::remove_owned(by_owner, owners, meta);
    }

    /// Re-indexes Events of namespace `ns` by the object they are about.
    fn event_change(
        &mut self,
        ns: usize,
        before: &Collection<KubeEvent>,
        change: &Change<KubeEvent>,
    ) {
        let about = |e: &KubeEvent| e.involved_object.uid.clone().unwrap_or_default();
        match change {
            Change::Failed(_) => self.all = true,
            Change::Resynced(all) => {
                self.all = true;
                for (name, e) in &before.items {
                    self.forget_event(&about(e), ns, name);
                }
                for e in all {
                    let name = e.metadata.name.clone().unwrap_or_default();
                    self.events_about
                        .entry(about(e))
                        .or_default()
                        .insert((ns, name));
                }
            }
            Change::Applied(e) | Change::Deleted(e) => {
                let name = e.metadata.name.clone().unwrap_or_default();
                if let Some(old) = before.items.get(&name) {
                    let old_about = about(old);
                    self.forget_event(&old_about, ns, &name);
                    self.touch(&old_about);
                }
                let now = about(e);
                if matches!(change, Change::Applied(_)) {
                    self.events_about
                        .entry(now.clone())
                        .or_default()
                        .insert((ns, name));
                }
                self.touch(&now);
            }
        }
    }

    fn forget_event(&mut self, about: &str, ns: usize, name: &str) {
        if let Some(set) = self.events_about.get_mut(about) {
            set.remove(&(ns, name.to_string()));
            if set.is_empty() {
                self.events_about.remove(about);
            }
        }
    }

    /// Touches a workload for a change of its own watch; a (re)list or failure touches all.
    fn workload_change<K: kube::Resource>(&mut self, before: &Collection<K>, change: &Change<K>) {
        match change {
            Change::Applied(o) | Change::Deleted(o) => {
                let name = o.meta().name.as_deref().unwrap_or("");
                if let Some(old) = before.items.get(name) {
                    self.touch(uid(old.meta()));
                }
                self.touch(uid(o.meta()));
            }
            Change::Resynced(_) | Change::Failed(_) => self.all = true,
        }
    }
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
            index: Index::new(n),
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
        let index = &mut self.index;
        let (what, ns, health) = match msg {
            Msg::Deploy(i, c) => {
                let w = &mut self.deploys[i];
                index.workload_change(&w.c, &c);
                (format!("Deployments[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Sts(i, c) => {
                let w = &mut self.stss[i];
                index.workload_change(&w.c, &c);
                (format!("StatefulSets[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Ds(i, c) => {
                let w = &mut self.dss[i];
                index.workload_change(&w.c, &c);
                (format!("DaemonSets[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Rs(i, c) => {
                index.owned_change(false, i, &self.rss[i], &c);
                ("ReplicaSets".into(), i, self.rss[i].apply(c))
            }
            Msg::Pod(i, c) => {
                index.owned_change(true, i, &self.pods[i], &c);
                ("Pods".into(), i, self.pods[i].apply(c))
            }
            Msg::Ev(i, c) => {
                index.event_change(i, &self.events[i], &c);
                ("Events".into(), i, self.events[i].apply(c))
            }
        };
        if health != Health::Unchanged {
            // The synced flag of a whole watch feeds every view it holds.
            self.index.all = true;
        }
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
        self.index.pods_by_owner[ns]
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|name| self.pods[ns].items.get(name))
            .collect()
    }

    fn rss_owned_by(&self, ns: usize, owner_uid: &str) -> Vec<&ReplicaSet> {
        self.index.rss_by_owner[ns]
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|name| self.rss[ns].items.get(name))
            .collect()
    }

    /// Each workload with the namespace index it was read in; pods and ReplicaSets are
    /// looked up in that namespace only.
    #[cfg(test)]
    fn judge(&self) -> Vec<(usize, Observed<'_>)> {
        self.judge_where(|_| true)
    }

    /// Like `judge`, for the workloads whose uid `wanted` accepts only. Every workload is
    /// visited (duplicates across label and by-name watches resolve as before), but only the
    /// wanted ones are judged: judging is what costs.
    fn judge_where(&self, wanted: impl Fn(&str) -> bool) -> Vec<(usize, Observed<'_>)> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for w in &self.deploys {
            for d in w.c.items.values() {
                if !seen.insert(("Deployment", uid(&d.metadata))) || !wanted(uid(&d.metadata)) {
                    continue;
                }
                let rss: Vec<ReplicaSet> = self
                    .rss_owned_by(w.ns, uid(&d.metadata))
                    .into_iter()
                    .cloned()
                    .collect();
                // Only the pods of its ReplicaSets can be current; by name, as the full list
                // was ordered.
                let pods: BTreeMap<&str, &Pod> = rss
                    .iter()
                    .flat_map(|r| self.pods_owned_by(w.ns, uid(&r.metadata)))
                    .map(|p| (p.metadata.name.as_deref().unwrap_or(""), p))
                    .collect();
                out.push((
                    w.ns,
                    Observed::deployment(d, &rss, pods.into_values(), w.c.synced),
                ));
            }
        }
        for w in &self.stss {
            for s in w.c.items.values() {
                if !seen.insert(("StatefulSet", uid(&s.metadata))) || !wanted(uid(&s.metadata)) {
                    continue;
                }
                let pods = self.pods_owned_by(w.ns, uid(&s.metadata));
                out.push((w.ns, Observed::statefulset(s, pods, w.c.synced)));
            }
        }
        for w in &self.dss {
            for d in w.c.items.values() {
                if !seen.insert(("DaemonSet", uid(&d.metadata))) || !wanted(uid(&d.metadata)) {
                    continue;
                }
                let pods = self.pods_owned_by(w.ns, uid(&d.metadata));
                out.push((w.ns, Observed::daemonset(d, pods, w.c.synced)));
            }
        }
        out
    }

    /// The key of every workload, in the order `judge` visits them.
    fn keys(&self) -> Vec<WorkloadKey> {
        fn of<K: kube::Resource>(
            kind: &str,
            list: &[Watched<K>],
            namespaces: &[String],
            seen: &mut BTreeSet<(String, String)>,
            out: &mut Vec<WorkloadKey>,
        ) {
            for w in list {
                for o in w.c.items.values() {
                    let meta = o.meta();
                    if !seen.insert((kind.to_string(), uid(meta).to_string())) {
                        continue;
                    }
                    let ns = meta
                        .namespace
                        .clone()
                        .unwrap_or_else(|| namespaces[w.ns].clone());
                    let name = meta.name.clone().unwrap_or_default();
                    out.push((kind.to_string(), ns, name));
                }
            }
        }
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        of(
            "Deployment",
            &self.deploys,
            &self.namespaces,
            &mut seen,
            &mut out,
        );
        of(
            "StatefulSet",
            &self.stss,
            &self.namespaces,
            &mut seen,
            &mut out,
        );
        of(
            "DaemonSet",
            &self.dss,
            &self.namespaces,
            &mut seen,
            &mut out,
        );
        out
    }

    /// Events about `uids`, by that uid, in (namespace, name) order as the views expect.
    fn events_about<'a>(
        &self,
        uids: impl IntoIterator<Item = &'a str>,
    ) -> HashMap<&str, Vec<KubeEvent>> {
        let mut map: HashMap<&str, Vec<KubeEvent>> = HashMap::new();
        for u in uids {
            let Some((key, names)) = self.index.events_about.get_key_value(u) else {
                continue;
            };
            let list: Vec<KubeEvent> = names
                .iter()
                .filter_map(|(ns, name)| self.events[*ns].items.get(name))
                .cloned()
                .collect();
            map.insert(key.as_str(), list);
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
    /// The pods last emitted for each workload (by its uid), to tell which are gone.
    pods_of: HashMap<String, BTreeSet<(String, String)>>,
}

/// Re-judges the workloads the changes since the last publish touched (all of them after a
/// relist or a watch failure) and emits what changed; returns every workload view, in the
/// order the watches hold them.
fn publish(ctx: &Ctx, world: &mut World, emitted: &mut Emitted) -> Vec<WorkloadView> {
    let all = std::mem::take(&mut world.index.all);
    let touched = std::mem::take(&mut world.index.touched);
    let world = &*world;
    let wanted = |u: &str| all || touched.contains(u);
    let judged = world.judge_where(wanted);
    // Related uids of each judged workload: itself, its ReplicaSets, all their pods.
    let mut related: Vec<(Vec<&ReplicaSet>, Vec<&Pod>)> = Vec::with_capacity(judged.len());
    for (ns, j) in &judged {
        let mut pods: Vec<&Pod> = world.pods_owned_by(*ns, uid(j.meta));
        let rss = world.rss_owned_by(*ns, uid(j.meta));
        for rs in &rss {
            pods.extend(world.pods_owned_by(*ns, uid(&rs.metadata)));
        }
        related.push((rss, pods));
    }
    let events = world.events_about(judged.iter().zip(&related).flat_map(
        |((_, j), (rss, pods))| {
            std::iter::once(uid(j.meta))
                .chain(rss.iter().map(|r| uid(&r.metadata)))
                .chain(pods.iter().map(|p| uid(&p.metadata)))
        },
    ));
    for (ns, j) in &judged {
        let v = view(ctx, &world.namespaces[*ns], j, world, &events);
        let key = v.key();
        if emitted.workloads.get(&key) != Some(&v) {
            ctx.emit.send(Event::Workload(v.clone()));
            emitted.workloads.insert(key, v);
        }
    }
    let missing: Vec<WorkloadView> = world
        .missing()
        .iter()
        .map(|key| views::missing_view(key, &ctx.plan.optional))
        .collect();
    for v in &missing {
        let key = v.key();
        if emitted.workloads.get(&key) != Some(v) {
            ctx.emit.send(Event::Workload(v.clone()));
            emitted.workloads.insert(key, v.clone());
        }
    }
    let order: Vec<WorkloadKey> = world
        .keys()
        .into_iter()
        .chain(missing.iter().map(WorkloadView::key))
        .collect();
    let keys: BTreeSet<&WorkloadKey> = order.iter().collect();
    let gone: Vec<WorkloadKey> = emitted
        .workloads
        .keys()
        .filter(|k| !keys.contains(k))
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
    // Only the judged workloads' pods can have changed; a pod is gone when no workload
    // claims it any more.
    let mut claimed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut new_pods_of: Vec<(String, BTreeSet<(String, String)>)> = Vec::new();
    for ((_, j), (_, pods)) in judged.iter().zip(&related) {
        let owner = format!("{}/{}", j.kind, j.meta.name.as_deref().unwrap_or(""));
        let current: BTreeSet<&str> = j.current.iter().map(|p| uid(&p.metadata)).collect();
        let mut mine = BTreeSet::new();
        for pod in pods {
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
            mine.insert(key.clone());
            claimed.insert(key.clone());
            if emitted.pods.get(&key) != Some(&v) {
                ctx.emit.send(Event::Pod(v.clone()));
                emitted.pods.insert(key, v);
            }
        }
        new_pods_of.push((uid(j.meta).to_string(), mine));
    }
    let judged_uids: HashSet<&str> = judged.iter().map(|(_, j)| uid(j.meta)).collect();
    let mut dropped: BTreeSet<(String, String)> = BTreeSet::new();
    emitted.pods_of.retain(|owner, pods| {
        // A workload re-judged now, or one that is gone (it was touched, or all were).
        let rejudged = judged_uids.contains(owner.as_str()) || wanted(owner);
        if rejudged {
            dropped.extend(std::mem::take(pods));
        }
        !rejudged
    });
    for (owner, pods) in new_pods_of {
        emitted.pods_of.insert(owner, pods);
    }
    let still: BTreeSet<&(String, String)> = emitted.pods_of.values().flatten().collect();
    let gone: Vec<(String, String)> = dropped
        .into_iter()
        .filter(|k| !claimed.contains(k) && !still.contains(k) && emitted.pods.contains_key(k))
        .collect();
    for (namespace, name) in gone {
        emitted.pods.remove(&(namespace.clone(), name.clone()));
        ctx.emit.send(Event::PodGone { namespace, name });
    }
    // Events about the re-judged workloads and their ReplicaSets and pods, by (namespace, name).
    let mut about: BTreeMap<(usize, &str), &KubeEvent> = BTreeMap::new();
    for names in events
        .keys()
        .filter_map(|u| world.index.events_about.get(*u))
    {
        for (ns, name) in names {
            if let Some(e) = world.events[*ns].items.get(name) {
                about.insert((*ns, name.as_str()), e);
            }
        }
    }
    for ((ns, name), e) in about {
        let v = event_view(e);
        let key = (ns, name.to_string());
        if emitted.events.get(&key) != Some(&v) {
            ctx.emit.send(Event::KubeEvent(v.clone()));
            emitted.events.insert(key, v);
        }
    }
    order
        .iter()
        .filter_map(|k| emitted.workloads.get(k).cloned())
        .collect()
}

/// One LIST per (re)list: kube's default pages of 500 turn a namespace's Events or pods into
/// several requests, and the whole list is held before judging anyway.
fn unpaged(mut config: watcher::Config) -> watcher::Config {
    config.page_size = None;
    config
}

fn start_watches(
    ctx: &Ctx,
    world: &World,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let client = &ctx.cluster.client;
    let labelled = unpaged(watcher::Config::default().labels(&ctx.selector()));
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
                unpaged(watcher::Config::default()),
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
        // Being unlabelled is part of the workload's view.
        world.index.all = true;
        let by_name = unpaged(watcher::Config::default()).fields(&format!("metadata.name={name}"));
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
                let views = publish(ctx, &mut world, &mut emitted);
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
