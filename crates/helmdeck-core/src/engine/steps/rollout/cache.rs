//! The rollout step's watch cache: what the watches of every namespace hold, and indexes over
//! it. The step watches each namespace the release manifest names alike, so the cache keeps one
//! slot per namespace (the release namespace first) in each list, plus by-name watches for
//! manifest workloads that lack the instance label; a change names its slot. The owner and
//! subject indexes are kept in step with the collections, so a change re-judges only the
//! workloads it touched.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::cluster::watch::{Change, Collection, Health};
use crate::engine::event::WorkloadKey;
use crate::engine::views::{EventsByUid, Observed};
use crate::rollout::diagnosis;
use crate::rollout::objects::{
    EventSummary as KubeEvent, PodSummary as Pod, ReplicaSetSummary as ReplicaSet,
};

/// A change of one watch; the index is the watch's place in its list in [`World`].
///
/// Workload changes are boxed: a full Deployment is several times the size of a pod's summary,
/// and every message queued (thousands while 3,000 pods change) is the size of the largest.
pub(super) enum Msg {
    Deploy(usize, Box<Change<Deployment>>),
    Sts(usize, Box<Change<StatefulSet>>),
    Ds(usize, Box<Change<DaemonSet>>),
    Rs(usize, Change<ReplicaSet>),
    Pod(usize, Change<Pod>),
    Ev(usize, Change<KubeEvent>),
}

/// One workload watch: label-selected in a namespace, or by name for one manifest workload
/// that lacks the instance label.
pub(super) struct Watched<K> {
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

    pub(super) fn by_name(ns: usize, name: &str) -> Self {
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
pub(super) struct World {
    /// The release namespace first, then the others the manifest names, sorted.
    pub(super) namespaces: Vec<String>,
    pub(super) deploys: Vec<Watched<Deployment>>,
    pub(super) stss: Vec<Watched<StatefulSet>>,
    pub(super) dss: Vec<Watched<DaemonSet>>,
    rss: Vec<Collection<ReplicaSet>>,
    pods: Vec<Collection<Pod>>,
    events: Vec<Collection<KubeEvent>>,
    /// Manifest workloads found only through a by-name watch.
    pub(super) unlabelled: BTreeSet<WorkloadKey>,
    /// Who owns what, so an event re-judges only the workload it touched.
    pub(super) index: Index,
    /// Uids that Events are about but no watched object has, as of the last sweep.
    strangers: HashSet<String>,
    /// When Events about objects not of the release are next looked for.
    next_sweep: Option<Instant>,
    /// Events dropped since the last publish, by (namespace index, name), for the step to
    /// forget what it emitted of them.
    pub(super) dropped_events: Vec<(usize, String)>,
}

/// A held Event as the caps order it: its time, namespace index and name.
type HeldEvent = (Option<k8s_openapi::jiff::Timestamp>, usize, String);

/// Which pods a change may have left ready with more Normal Events than such a pod keeps.
enum Settled {
    Nothing,
    /// A pod (by uid) that is ready.
    Pod(String),
    /// The pod of this name a Normal Event is about, if it is ready.
    EventAbout(usize, String),
    /// Every ready pod of the namespace (after a list).
    Namespace(usize),
}

/// Which objects a change of the Events may have crowded past [`EVENTS_PER_OBJECT`].
enum Crowding {
    /// The one an Event is about (by uid).
    About(String),
    /// Any with Events in this namespace (after a list).
    Namespace(usize),
}

/// The newest Events kept per object: the causes read the latest one of a reason, the
/// drill-down shows a few; a flapping pod's hundredth BackOff says nothing new.
pub(super) const EVENTS_PER_OBJECT: usize = 20;

/// Cuts a (re)list of Events, while it is listed, to what [`World`] keeps of it: the newest
/// [`EVENTS_PER_OBJECT`] about each object (an Event without a time the oldest; ties by name,
/// as the cache's own cap orders them). A ReplicaSet of 3,000 pods has 3,000
/// `SuccessfulCreate` Events; all were held until the list ended before.
// Boxed on purpose: a list's buffer grows by a pointer per Event, and the collection keeps
// the boxes (`Change::Resynced`).
#[allow(clippy::vec_box)]
pub(super) fn keep_newest_per_object(events: &mut Vec<Box<KubeEvent>>) {
    fn about(e: &KubeEvent) -> &str {
        e.involved_object.uid.as_deref().unwrap_or("")
    }
    fn order(e: &KubeEvent) -> (Option<k8s_openapi::jiff::Timestamp>, &str) {
        (e.time(), e.metadata.name.as_deref().unwrap_or(""))
    }
    let mut per_object: HashMap<&str, usize> = HashMap::new();
    for e in events.iter() {
        *per_object.entry(about(e)).or_default() += 1;
    }
    let mut crowded: Vec<usize> = (0..events.len())
        .filter(|i| per_object[about(&events[*i])] > EVENTS_PER_OBJECT)
        .collect();
    if crowded.is_empty() {
        return;
    }
    // By object, newest first: past each object's first EVENTS_PER_OBJECT, every one goes.
    crowded.sort_by(|a, b| {
        let (a, b) = (&events[*a], &events[*b]);
        about(a).cmp(about(b)).then_with(|| order(b).cmp(&order(a)))
    });
    let mut cut = vec![false; events.len()];
    let mut run = 0;
    for (n, i) in crowded.iter().enumerate() {
        let same = n > 0 && about(&events[crowded[n - 1]]) == about(&events[*i]);
        run = if same { run + 1 } else { 1 };
        cut[*i] = run > EVENTS_PER_OBJECT;
    }
    drop(per_object);
    let mut flags = cut.into_iter();
    events.retain(|_| !flags.next().unwrap_or(false));
}

/// The Normal Events kept about a pod that is ready: its newest. A ready pod's Scheduled,
/// Pulling, Pulled, Created and Started say what its status already does; at 20,000 pods
/// they were most of what helmdeck held. Its Warnings stay (up to [`EVENTS_PER_OBJECT`]), and
/// a pod that is not ready keeps every kind: that is the pod the drill-down is for.
pub(super) const NORMAL_OF_A_READY_POD: usize = 1;

/// How often Events about objects the watches do not hold are looked for. One such Event is
/// kept for one to two periods (its object may be listed a moment later) and then dropped, so
/// another team's churn in a shared namespace does not grow what helmdeck holds.
pub(super) const STRANGER_SWEEP: Duration = Duration::from_secs(15);

/// Owner and subject indexes over the pod, ReplicaSet and Event watches, kept in step with
/// the collections, plus what the changes since the last publish touched. Without them every
/// change re-judged every workload against every pod (cost growing with the release, not with
/// the change).
#[derive(Default)]
pub(super) struct Index {
    /// Owner uids of each pod and ReplicaSet, by its uid (uids are cluster-wide unique).
    owners: HashMap<String, Vec<String>>,
    /// Per namespace: pod names by owner uid.
    pods_by_owner: Vec<HashMap<String, BTreeSet<String>>>,
    /// Per namespace: ReplicaSet names by owner uid.
    rss_by_owner: Vec<HashMap<String, BTreeSet<String>>>,
    /// (namespace index, Event name) by the uid of the object the Event is about.
    events_about: HashMap<String, BTreeSet<(usize, String)>>,
    /// Uids whose views may have changed since the last publish, with their owners.
    pub(super) touched: HashSet<String>,
    /// Set by anything that may change every view: a (re)list, a watch failure, new scope.
    pub(super) all: bool,
    /// The set of workloads may have changed (one added or deleted, a relist, a watch failed):
    /// their order is read again; otherwise it stands and a publish costs what changed.
    pub(super) reshaped: bool,
    /// The uids of the pods, ReplicaSets and workloads held, shared with the Events watch.
    known: Arc<Known>,
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
            reshaped: true,
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
            Change::Resynced(all) => all.iter().map(Box::as_ref).collect(),
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
                self.known.insert(uid(o.meta()));
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
        self.known.remove(uid(meta));
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
                match before.items.get(name) {
                    Some(old) => {
                        self.touch(uid(old.meta()));
                        self.known.remove(uid(old.meta()));
                    }
                    None => self.reshaped = true,
                }
                if matches!(change, Change::Deleted(_)) {
                    self.reshaped = true;
                } else {
                    self.known.insert(uid(o.meta()));
                }
                self.touch(uid(o.meta()));
            }
            Change::Resynced(all) => {
                for old in before.items.values() {
                    self.known.remove(uid(old.meta()));
                }
                for o in all {
                    self.known.insert(uid(o.meta()));
                }
                self.all = true;
                self.reshaped = true;
            }
            Change::Failed(_) => {
                self.all = true;
                self.reshaped = true;
            }
        }
    }
}

pub(super) fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

impl World {
    pub(super) fn new(namespaces: Vec<String>) -> Self {
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
            strangers: HashSet::new(),
            next_sweep: None,
            dropped_events: Vec::new(),
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

    pub(super) fn apply(&mut self, msg: Msg) -> (String, Health) {
        self.apply_at(msg, Instant::now())
    }

    /// `apply` as of `now`, which decides when Events about unknown objects are swept.
    pub(super) fn apply_at(&mut self, msg: Msg, now: Instant) -> (String, Health) {
        // One new Event can crowd only the object it is about; a list, any.
        let crowding = match &msg {
            Msg::Ev(_, Change::Applied(e)) => Some(Crowding::About(
                e.involved_object.uid.clone().unwrap_or_default(),
            )),
            Msg::Ev(i, Change::Resynced(_)) => Some(Crowding::Namespace(*i)),
            _ => None,
        };
        // Whose Normal Events may be more than a ready pod keeps, once the change is in.
        let settled = match &msg {
            Msg::Pod(_, Change::Applied(p)) if diagnosis::is_pod_ready(p) => {
                Settled::Pod(uid(&p.metadata).to_string())
            }
            Msg::Ev(i, Change::Applied(e))
                if e.type_.as_deref() != Some("Warning")
                    && e.involved_object.kind.as_deref() == Some("Pod") =>
            {
                Settled::EventAbout(*i, e.involved_object.name.clone().unwrap_or_default())
            }
            Msg::Pod(i, Change::Resynced(_)) | Msg::Ev(i, Change::Resynced(_)) => {
                Settled::Namespace(*i)
            }
            _ => Settled::Nothing,
        };
        let out = self.apply_change(msg);
        // What the Events watch may drop while it lists relies on these watches alone.
        self.index.known.set_trusted(
            self.all_synced()
                && self.pods.iter().all(|c| c.synced)
                && self.rss.iter().all(|c| c.synced),
        );
        if let Some(crowding) = crowding {
            self.cap_events(&crowding);
        }
        self.settle(settled);
        self.sweep_strangers(now);
        out
    }

    fn apply_change(&mut self, msg: Msg) -> (String, Health) {
        let index = &mut self.index;
        let (what, ns, health) = match msg {
            Msg::Deploy(i, c) => {
                let c = *c;
                let w = &mut self.deploys[i];
                index.workload_change(&w.c, &c);
                (format!("Deployments[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Sts(i, c) => {
                let c = *c;
                let w = &mut self.stss[i];
                index.workload_change(&w.c, &c);
                (format!("StatefulSets[{i}]"), w.ns, w.c.apply(c))
            }
            Msg::Ds(i, c) => {
                let c = *c;
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
            self.index.reshaped = true;
        }
        (self.watch_name(what, ns), health)
    }

    /// The cut for a (re)list of Events, which reads what the other watches hold as they go.
    pub(super) fn listed_events(&self) -> ListedEvents {
        ListedEvents::new(Arc::clone(&self.index.known))
    }

    /// Whether every workload watch (label-selected and by-name) has data it can trust.
    pub(super) fn all_synced(&self) -> bool {
        self.deploys.iter().all(|w| w.c.synced)
            && self.stss.iter().all(|w| w.c.synced)
            && self.dss.iter().all(|w| w.c.synced)
    }

    /// Whether every label-selected workload watch has listed at least once.
    pub(super) fn initially_synced(&self) -> bool {
        let n = self.namespaces.len();
        self.deploys[..n].iter().all(|w| w.c.synced)
            && self.stss[..n].iter().all(|w| w.c.synced)
            && self.dss[..n].iter().all(|w| w.c.synced)
    }

    /// Whether the label watch of `ns` holds `kind/name`.
    pub(super) fn labelled_has(&self, kind: &str, ns: usize, name: &str) -> bool {
        match kind {
            "Deployment" => self.deploys[ns].c.items.contains_key(name),
            "StatefulSet" => self.stss[ns].c.items.contains_key(name),
            _ => self.dss[ns].c.items.contains_key(name),
        }
    }

    /// By-name watched manifest workloads that their (synced) watch says do not exist.
    pub(super) fn missing(&self) -> Vec<WorkloadKey> {
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

    /// The index of `namespace` among the watched ones, if it is watched.
    pub(super) fn namespace_index(&self, namespace: &str) -> Option<usize> {
        self.namespaces.iter().position(|n| n == namespace)
    }

    /// The pod the watches hold as `namespace/name`, if any.
    pub(super) fn pod_named(&self, namespace: &str, name: &str) -> Option<&Pod> {
        let ns = self.namespace_index(namespace)?;
        self.pods[ns].items.get(name).map(Box::as_ref)
    }

    pub(super) fn pods_owned_by(&self, ns: usize, owner_uid: &str) -> Vec<&Pod> {
        self.index.pods_by_owner[ns]
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|name| self.pods[ns].items.get(name).map(Box::as_ref))
            .collect()
    }

    pub(super) fn rss_owned_by(&self, ns: usize, owner_uid: &str) -> Vec<&ReplicaSet> {
        self.index.rss_by_owner[ns]
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|name| self.rss[ns].items.get(name).map(Box::as_ref))
            .collect()
    }

    /// Each workload with the namespace index it was read in; pods and ReplicaSets are
    /// looked up in that namespace only.
    #[cfg(test)]
    pub(super) fn judge(&self) -> Vec<(usize, Observed<'_>)> {
        self.judge_where(|_| true)
    }

    /// Like `judge`, for the workloads whose uid `wanted` accepts only. Every workload is
    /// visited, but only the wanted ones are judged or kept in the duplicate check (across
    /// label and by-name watches, the first seen is judged): at 500 workloads, inserting each
    /// into that set at every batch of changes was a fortieth of the screen's CPU.
    pub(super) fn judge_where(&self, wanted: impl Fn(&str) -> bool) -> Vec<(usize, Observed<'_>)> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for w in &self.deploys {
            for d in w.c.items.values() {
                if !wanted(uid(&d.metadata)) || !seen.insert(("Deployment", uid(&d.metadata))) {
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
                if !wanted(uid(&s.metadata)) || !seen.insert(("StatefulSet", uid(&s.metadata))) {
                    continue;
                }
                let pods = self.pods_owned_by(w.ns, uid(&s.metadata));
                out.push((w.ns, Observed::statefulset(s, pods, w.c.synced)));
            }
        }
        for w in &self.dss {
            for d in w.c.items.values() {
                if !wanted(uid(&d.metadata)) || !seen.insert(("DaemonSet", uid(&d.metadata))) {
                    continue;
                }
                let pods = self.pods_owned_by(w.ns, uid(&d.metadata));
                out.push((w.ns, Observed::daemonset(d, pods, w.c.synced)));
            }
        }
        out
    }

    /// The key of every workload, in the order `judge` visits them.
    pub(super) fn keys(&self) -> Vec<WorkloadKey> {
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

    /// Events about `uids`, by that uid, in (namespace, name) order as the views expect;
    /// borrowed, never copied.
    pub(super) fn events_about<'a>(
        &'a self,
        uids: impl IntoIterator<Item = &'a str>,
    ) -> EventsByUid<'a> {
        let mut map: EventsByUid<'a> = HashMap::new();
        for u in uids {
            if map.contains_key(u) {
                continue;
            }
            let Some((key, names)) = self.index.events_about.get_key_value(u) else {
                continue;
            };
            let list: Vec<&KubeEvent> = names
                .iter()
                .filter_map(|(ns, name)| self.events[*ns].items.get(name).map(Box::as_ref))
                .collect();
            map.insert(key.as_str(), list);
        }
        map
    }

    /// How many Events the watches hold, in every namespace.
    #[cfg(test)]
    pub(super) fn events_held(&self) -> usize {
        self.events.iter().map(|c| c.items.len()).sum()
    }

    /// Drops one held Event, and says so to the index and the step.
    fn drop_event(&mut self, ns: usize, name: &str) {
        let Some(e) = self.events[ns].items.remove(name) else {
            return;
        };
        let about = e.involved_object.uid.clone().unwrap_or_default();
        self.index.forget_event(&about, ns, name);
        self.index.touch(&about);
        self.dropped_events.push((ns, name.to_string()));
    }

    /// Cuts the Normal Events of the ready pods `settled` names to [`NORMAL_OF_A_READY_POD`].
    fn settle(&mut self, settled: Settled) {
        let ready = |p: &Pod| diagnosis::is_pod_ready(p).then(|| uid(&p.metadata).to_string());
        let pods: Vec<String> = match settled {
            Settled::Nothing => return,
            Settled::Pod(pod) => vec![pod],
            Settled::EventAbout(ns, name) => {
                let pod = self.pods[ns].items.get(&name);
                pod.and_then(|p| ready(p)).into_iter().collect()
            }
            Settled::Namespace(ns) => self.pods[ns]
                .items
                .values()
                .filter_map(|p| ready(p))
                .collect(),
        };
        for pod in pods {
            let Some(names) = self.index.events_about.get(&pod) else {
                continue;
            };
            if names.len() <= NORMAL_OF_A_READY_POD {
                continue;
            }
            let normal: Vec<HeldEvent> = names
                .iter()
                .filter_map(|(n, name)| {
                    let e = self.events[*n].items.get(name)?;
                    (e.type_.as_deref() != Some("Warning")).then(|| (e.time(), *n, name.clone()))
                })
                .collect();
            self.drop_oldest(normal, NORMAL_OF_A_READY_POD);
        }
    }

    /// Drops all but the newest `keep` of `held` (time, namespace index, name): oldest first,
    /// an Event without a time counting as the oldest.
    fn drop_oldest(&mut self, mut held: Vec<HeldEvent>, keep: usize) {
        held.sort();
        let excess = held.len().saturating_sub(keep);
        for (_, n, name) in held.into_iter().take(excess) {
            self.drop_event(n, &name);
        }
    }

    /// Keeps the newest [`EVENTS_PER_OBJECT`] Events about each object `crowding` names.
    fn cap_events(&mut self, crowding: &Crowding) {
        let crowded: Vec<String> = match crowding {
            Crowding::About(about) => self
                .index
                .events_about
                .get(about)
                .filter(|names| names.len() > EVENTS_PER_OBJECT)
                .map(|_| about.clone())
                .into_iter()
                .collect(),
            Crowding::Namespace(ns) => self
                .index
                .events_about
                .iter()
                .filter(|(_, names)| names.len() > EVENTS_PER_OBJECT)
                .filter(|(_, names)| names.iter().any(|(n, _)| n == ns))
                .map(|(uid, _)| uid.clone())
                .collect(),
        };
        for about in crowded {
            let held: Vec<HeldEvent> = self
                .index
                .events_about
                .get(&about)
                .into_iter()
                .flatten()
                .filter_map(|(n, name)| {
                    let e = self.events[*n].items.get(name)?;
                    Some((e.time(), *n, name.clone()))
                })
                .collect();
            self.drop_oldest(held, EVENTS_PER_OBJECT);
        }
    }

    /// The uids of every watched workload.
    fn workload_uids(&self) -> HashSet<&str> {
        let deploys = self
            .deploys
            .iter()
            .flat_map(|w| w.c.items.values().map(|o| uid(&o.metadata)));
        let stss = self
            .stss
            .iter()
            .flat_map(|w| w.c.items.values().map(|o| uid(&o.metadata)));
        let dss = self
            .dss
            .iter()
            .flat_map(|w| w.c.items.values().map(|o| uid(&o.metadata)));
        deploys
            .chain(stss)
            .chain(dss)
            .filter(|u| !u.is_empty())
            .collect()
    }

    /// Every [`STRANGER_SWEEP`]: drops the Events about objects that no watch held at the last
    /// sweep either. Only while the pod and ReplicaSet watches can be trusted: an object missed
    /// by a failing watch is not a stranger.
    fn sweep_strangers(&mut self, now: Instant) {
        let due = *self.next_sweep.get_or_insert(now + STRANGER_SWEEP);
        let trusted = self.pods.iter().all(|c| c.synced) && self.rss.iter().all(|c| c.synced);
        if now < due || !trusted {
            return;
        }
        self.next_sweep = Some(now + STRANGER_SWEEP);
        let workloads = self.workload_uids();
        let owners = &self.index.owners;
        let unknown: HashSet<String> = self
            .index
            .events_about
            .keys()
            .filter(|u| !owners.contains_key(*u) && !workloads.contains(u.as_str()))
            .cloned()
            .collect();
        let gone: Vec<(usize, String)> = unknown
            .iter()
            .filter(|u| self.strangers.contains(*u))
            .flat_map(|u| {
                self.index
                    .events_about
                    .get(u)
                    .into_iter()
                    .flatten()
                    .cloned()
            })
            .collect();
        for (ns, name) in gone {
            self.drop_event(ns, &name);
        }
        self.strangers = unknown;
    }

    /// Whether the set of workloads may have changed since the last call (see
    /// [`Index::reshaped`]), cleared for the changes to come.
    pub(super) fn take_reshaped(&mut self) -> bool {
        std::mem::take(&mut self.index.reshaped)
    }

    /// What the changes since the last call touched (`all`: anything may have changed), cleared
    /// for the changes to come.
    pub(super) fn take_touched(&mut self) -> (bool, HashSet<String>) {
        (
            std::mem::take(&mut self.index.all),
            std::mem::take(&mut self.index.touched),
        )
    }

    /// Adds the slot of a by-name watch of `kind/name` in namespace `ns`, for a manifest workload
    /// its namespace's label watch does not see; returns the index that watch's changes carry.
    /// Being unlabelled is part of the workload's view, so every view is judged again.
    pub(super) fn add_by_name(&mut self, kind: &str, ns: usize, name: &str) -> usize {
        let key = (
            kind.to_string(),
            self.namespaces[ns].clone(),
            name.to_string(),
        );
        self.unlabelled.insert(key);
        self.index.all = true;
        self.index.reshaped = true;
        match kind {
            "Deployment" => {
                self.deploys.push(Watched::by_name(ns, name));
                self.deploys.len() - 1
            }
            "StatefulSet" => {
                self.stss.push(Watched::by_name(ns, name));
                self.stss.len() - 1
            }
            _ => {
                self.dss.push(Watched::by_name(ns, name));
                self.dss.len() - 1
            }
        }
    }

    /// The Events about any of `uids`, each once, by (namespace index, name): the order they
    /// are sent in.
    pub(super) fn events_by_name<'a>(
        &'a self,
        uids: impl IntoIterator<Item = &'a str>,
    ) -> BTreeMap<(usize, &'a str), &'a KubeEvent> {
        let mut about = BTreeMap::new();
        for names in uids
            .into_iter()
            .filter_map(|u| self.index.events_about.get(u))
        {
            for (ns, name) in names {
                if let Some(e) = self.events[*ns].items.get(name) {
                    about.insert((*ns, name.as_str()), e.as_ref());
                }
            }
        }
        about
    }
}

mod listed;
use listed::Known;
pub(super) use listed::ListedEvents;

#[cfg(test)]
mod tests;
