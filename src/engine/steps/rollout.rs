//! Step 3: the scoped rollout wait. Watches the release's Deployments, StatefulSets and
//! DaemonSets (label `app.kubernetes.io/instance=REL`, cross-checked against the release
//! manifest) with their ReplicaSets, Pods and Events; judges each workload by `kubectl rollout
//! status` rules; waits for every gating workload, fails fast on a progress deadline, and on
//! timeout names every blocker with its pod-level cause.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::cluster::releases;
use crate::cluster::watch::{self, Change, Collection, Health};
use crate::engine::event::{Event, KubeEventView, PodView, Step, StepOutcome, WorkloadView};
use crate::engine::steps::{Ctx, StepError};
use crate::engine::views::{self, Observed, Scope, event_view, owned_by, pod_view};
use crate::text;

enum Msg {
    Deploy(usize, Change<Deployment>),
    Sts(usize, Change<StatefulSet>),
    Ds(usize, Change<DaemonSet>),
    Rs(Change<ReplicaSet>),
    Pod(Change<Pod>),
    Ev(Change<KubeEvent>),
}

/// Everything the watches hold. Index 0 of each workload list is the label-selected watch;
/// later indices watch single manifest workloads that lack the instance label.
struct World {
    deploys: Vec<Collection<Deployment>>,
    stss: Vec<Collection<StatefulSet>>,
    dss: Vec<Collection<DaemonSet>>,
    rss: Collection<ReplicaSet>,
    pods: Collection<Pod>,
    events: Collection<KubeEvent>,
    /// Manifest workloads found only through a by-name watch.
    unlabelled: BTreeSet<(String, String)>,
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

impl World {
    fn new() -> Self {
        World {
            deploys: vec![Collection::default()],
            stss: vec![Collection::default()],
            dss: vec![Collection::default()],
            rss: Collection::default(),
            pods: Collection::default(),
            events: Collection::default(),
            unlabelled: BTreeSet::new(),
        }
    }

    fn apply(&mut self, msg: Msg) -> (String, Health) {
        match msg {
            Msg::Deploy(i, c) => (format!("Deployments[{i}]"), self.deploys[i].apply(c)),
            Msg::Sts(i, c) => (format!("StatefulSets[{i}]"), self.stss[i].apply(c)),
            Msg::Ds(i, c) => (format!("DaemonSets[{i}]"), self.dss[i].apply(c)),
            Msg::Rs(c) => ("ReplicaSets".into(), self.rss.apply(c)),
            Msg::Pod(c) => ("Pods".into(), self.pods.apply(c)),
            Msg::Ev(c) => ("Events".into(), self.events.apply(c)),
        }
    }

    /// Whether every workload watch (label-selected and by-name) has data it can trust.
    fn all_synced(&self) -> bool {
        self.deploys.iter().all(|c| c.synced)
            && self.stss.iter().all(|c| c.synced)
            && self.dss.iter().all(|c| c.synced)
    }

    /// Whether every label-selected workload watch has listed at least once.
    fn initially_synced(&self) -> bool {
        self.deploys[0].synced && self.stss[0].synced && self.dss[0].synced
    }

    fn pods_owned_by(&self, owner_uid: &str) -> Vec<&Pod> {
        self.pods
            .items
            .values()
            .filter(|p| owned_by(&p.metadata, owner_uid))
            .collect()
    }

    fn judge(&self) -> Vec<Observed<'_>> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for c in &self.deploys {
            for d in c.items.values() {
                if !seen.insert(("Deployment", uid(&d.metadata).to_string())) {
                    continue;
                }
                let rss: Vec<ReplicaSet> = self
                    .rss
                    .items
                    .values()
                    .filter(|r| owned_by(&r.metadata, uid(&d.metadata)))
                    .cloned()
                    .collect();
                out.push(Observed::deployment(
                    d,
                    &rss,
                    self.pods.items.values(),
                    c.synced,
                ));
            }
        }
        for c in &self.stss {
            for s in c.items.values() {
                if !seen.insert(("StatefulSet", uid(&s.metadata).to_string())) {
                    continue;
                }
                out.push(Observed::statefulset(s, self.pods.items.values(), c.synced));
            }
        }
        for c in &self.dss {
            for d in c.items.values() {
                if !seen.insert(("DaemonSet", uid(&d.metadata).to_string())) {
                    continue;
                }
                out.push(Observed::daemonset(d, self.pods.items.values(), c.synced));
            }
        }
        out
    }

    fn events_by_uid(&self) -> HashMap<&str, Vec<KubeEvent>> {
        let mut map: HashMap<&str, Vec<KubeEvent>> = HashMap::new();
        for e in self.events.items.values() {
            if let Some(u) = e.involved_object.uid.as_deref() {
                map.entry(u).or_default().push(e.clone());
            }
        }
        map
    }
}

fn view(
    ctx: &Ctx,
    w: &Observed<'_>,
    world: &World,
    events: &HashMap<&str, Vec<KubeEvent>>,
) -> WorkloadView {
    let selector = ctx.selector();
    let scope = Scope {
        selector: &selector,
        unlabelled: &world.unlabelled,
        optional: &ctx.plan.optional,
    };
    views::workload_view(w, &scope, events)
}

/// What was last emitted, so only changes go out.
#[derive(Default)]
struct Emitted {
    workloads: BTreeMap<(String, String), WorkloadView>,
    pods: BTreeMap<String, PodView>,
    events: BTreeMap<String, KubeEventView>,
}

/// Recomputes every view and emits what changed; returns the workload views.
fn publish(ctx: &Ctx, world: &World, emitted: &mut Emitted) -> Vec<WorkloadView> {
    let events = world.events_by_uid();
    let judged = world.judge();
    let views: Vec<WorkloadView> = judged
        .iter()
        .map(|j| view(ctx, j, world, &events))
        .collect();
    let mut keys = BTreeSet::new();
    for v in &views {
        let key = (v.kind.clone(), v.name.clone());
        keys.insert(key.clone());
        if emitted.workloads.get(&key) != Some(v) {
            ctx.emit.send(Event::Workload(v.clone()));
            emitted.workloads.insert(key, v.clone());
        }
    }
    let gone: Vec<(String, String)> = emitted
        .workloads
        .keys()
        .filter(|k| !keys.contains(*k))
        .cloned()
        .collect();
    for (kind, name) in gone {
        emitted.workloads.remove(&(kind.clone(), name.clone()));
        ctx.emit.send(Event::WorkloadGone { kind, name });
    }
    // Pods: every pod of a release workload, current or not (the drill-down shows both).
    let mut pod_names = BTreeSet::new();
    let mut related_uids: BTreeSet<String> = BTreeSet::new();
    for j in &judged {
        related_uids.insert(uid(j.meta).to_string());
        let owner = format!("{}/{}", j.kind, j.meta.name.as_deref().unwrap_or(""));
        let current: BTreeSet<&str> = j.current.iter().map(|p| uid(&p.metadata)).collect();
        let mut all: Vec<&Pod> = world.pods_owned_by(uid(j.meta));
        for rs in world
            .rss
            .items
            .values()
            .filter(|r| owned_by(&r.metadata, uid(j.meta)))
        {
            all.extend(world.pods_owned_by(uid(&rs.metadata)));
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
            pod_names.insert(v.name.clone());
            if emitted.pods.get(&v.name) != Some(&v) {
                ctx.emit.send(Event::Pod(v.clone()));
                emitted.pods.insert(v.name.clone(), v);
            }
        }
    }
    let gone: Vec<String> = emitted
        .pods
        .keys()
        .filter(|k| !pod_names.contains(*k))
        .cloned()
        .collect();
    for name in gone {
        emitted.pods.remove(&name);
        ctx.emit.send(Event::PodGone { name });
    }
    for (key, e) in &world.events.items {
        if !views::is_about(e, &related_uids) {
            continue;
        }
        let v = event_view(e);
        if emitted.events.get(key) != Some(&v) {
            ctx.emit.send(Event::KubeEvent(v.clone()));
            emitted.events.insert(key.clone(), v);
        }
    }
    views
}

fn start_watches(ctx: &Ctx, tx: &mpsc::UnboundedSender<Msg>) -> Vec<tokio::task::JoinHandle<()>> {
    let client = &ctx.cluster.client;
    let ns = ctx.namespace();
    let labelled = watcher::Config::default().labels(&ctx.selector());
    vec![
        watch::spawn(
            Api::<Deployment>::namespaced(client.clone(), ns),
            labelled.clone(),
            tx.clone(),
            |c| Msg::Deploy(0, c),
        ),
        watch::spawn(
            Api::<StatefulSet>::namespaced(client.clone(), ns),
            labelled.clone(),
            tx.clone(),
            |c| Msg::Sts(0, c),
        ),
        watch::spawn(
            Api::<DaemonSet>::namespaced(client.clone(), ns),
            labelled.clone(),
            tx.clone(),
            |c| Msg::Ds(0, c),
        ),
        watch::spawn(
            Api::<ReplicaSet>::namespaced(client.clone(), ns),
            labelled.clone(),
            tx.clone(),
            Msg::Rs,
        ),
        watch::spawn(
            Api::<Pod>::namespaced(client.clone(), ns),
            labelled,
            tx.clone(),
            Msg::Pod,
        ),
        // Events cannot be label-selected; they are filtered to the release's objects.
        watch::spawn(
            Api::<KubeEvent>::namespaced(client.clone(), ns),
            watcher::Config::default(),
            tx.clone(),
            Msg::Ev,
        ),
    ]
}

/// Adds by-name watches for manifest workloads the label watch does not see.
async fn cross_check_manifest(
    ctx: &Ctx,
    world: &mut World,
    tx: &mpsc::UnboundedSender<Msg>,
    tasks: &mut Vec<tokio::task::JoinHandle<()>>,
) {
    let step = Step::Rollout;
    let revisions =
        match releases::revisions(&ctx.cluster.client, ctx.namespace(), &ctx.plan.release).await {
            Ok(r) => r,
            Err(e) => {
                ctx.emit.warn(
                    step,
                    format!("cannot read the release manifest for the label cross-check: {e:#}"),
                );
                return;
            }
        };
    let Some(latest) = revisions.last() else {
        return;
    };
    let manifest =
        match releases::record(&ctx.cluster.client, ctx.namespace(), &latest.secret_name).await {
            Ok(r) => r
                .get("manifest")
                .and_then(|m| m.as_str())
                .unwrap_or("")
                .to_string(),
            Err(e) => {
                ctx.emit.warn(
                    step,
                    format!("cannot decode the release record for the label cross-check: {e:#}"),
                );
                return;
            }
        };
    let client = &ctx.cluster.client;
    let ns = ctx.namespace();
    for (kind, name) in releases::manifest_workloads(&manifest) {
        let seen = match kind.as_str() {
            "Deployment" => world.deploys[0].items.contains_key(&name),
            "StatefulSet" => world.stss[0].items.contains_key(&name),
            _ => world.dss[0].items.contains_key(&name),
        };
        if seen {
            continue;
        }
        ctx.emit.warn(step, format!("{kind}/{name} is in the release manifest but not labelled {}: it gates all the same", ctx.selector()));
        world.unlabelled.insert((kind.clone(), name.clone()));
        let by_name = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let task = match kind.as_str() {
            "Deployment" => {
                world.deploys.push(Collection::default());
                let i = world.deploys.len() - 1;
                watch::spawn(
                    Api::<Deployment>::namespaced(client.clone(), ns),
                    by_name,
                    tx.clone(),
                    move |c| Msg::Deploy(i, c),
                )
            }
            "StatefulSet" => {
                world.stss.push(Collection::default());
                let i = world.stss.len() - 1;
                watch::spawn(
                    Api::<StatefulSet>::namespaced(client.clone(), ns),
                    by_name,
                    tx.clone(),
                    move |c| Msg::Sts(i, c),
                )
            }
            _ => {
                world.dss.push(Collection::default());
                let i = world.dss.len() - 1;
                watch::spawn(
                    Api::<DaemonSet>::namespaced(client.clone(), ns),
                    by_name,
                    tx.clone(),
                    move |c| Msg::Ds(i, c),
                )
            }
        };
        tasks.push(task);
    }
}

fn describe(v: &WorkloadView) -> String {
    let mut s = format!("{}/{}: {}", v.kind, v.name, v.message);
    if !v.pod_causes.is_empty() {
        s.push_str(&format!(" ({})", v.pod_causes.join("; ")));
    }
    s
}

pub async fn run(ctx: &Ctx) -> StepOutcome {
    super::run(ctx, Step::Rollout, try_run(ctx)).await
}

/// Waits until the gating workloads are ready, one fails, or the timeout; it never errors:
/// every way the wait ends is an outcome.
async fn try_run(ctx: &Ctx) -> Result<StepOutcome, StepError> {
    let step = Step::Rollout;
    let emit = &ctx.emit;
    emit.info(
        step,
        format!(
            "watching Deployments, StatefulSets, DaemonSets with {} in {}",
            ctx.selector(),
            ctx.namespace()
        ),
    );
    let deadline = tokio::time::Instant::now() + ctx.plan.timeout;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut tasks = start_watches(ctx, &tx);
    let mut world = World::new();
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
                    cross_check_manifest(ctx, &mut world, &tx, &mut tasks).await;
                }
                let views = publish(ctx, &world, &mut emitted);
                if let Some(outcome) = judge(&views, world.all_synced()) {
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
fn judge(views: &[WorkloadView], all_synced: bool) -> Option<StepOutcome> {
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
            reason: describe(failed),
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
        .map(describe)
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
mod tests {
    use super::*;
    use crate::rollout::readiness::{Progress, Readiness};

    fn w(name: &str, optional: bool, ready: bool, failed: bool) -> WorkloadView {
        WorkloadView {
            kind: "Deployment".into(),
            name: name.into(),
            optional,
            optional_because: None,
            ready,
            failed,
            message: "msg".into(),
            desired: 1,
            ready_replicas: 0,
            updated: 0,
            available: 0,
            generation: 1,
            created: None,
            pod_causes: vec!["pod x: CrashLoopBackOff".into()],
            notes: vec![],
        }
    }

    fn failed_reason(o: Option<StepOutcome>) -> String {
        match o {
            Some(StepOutcome::Failed { reason }) => reason,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    fn plan(extra: &[&str]) -> crate::config::DeployPlan {
        use clap::Parser;
        let mut argv = vec!["helmdeck", "deploy", "demo", "/nonexistent-chart"];
        argv.extend_from_slice(extra);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Deploy(a) => crate::config::DeployPlan::from_args(&a).unwrap(),
            _ => unreachable!(),
        }
    }

    fn judged<'a>(meta: &'a ObjectMeta, progress: Progress, synced: bool) -> Observed<'a> {
        Observed {
            kind: "Deployment",
            meta,
            readiness: Readiness {
                progress,
                message: "m".into(),
                counts: Default::default(),
            },
            synced,
            current: vec![],
        }
    }

    /// The view the step builds for `w` under `plan`.
    fn view_for(
        plan: &crate::config::DeployPlan,
        selector: &str,
        w: &Observed<'_>,
        unlabelled: &BTreeSet<(String, String)>,
        events: &HashMap<&str, Vec<KubeEvent>>,
    ) -> WorkloadView {
        let scope = Scope {
            selector,
            unlabelled,
            optional: &plan.optional,
        };
        views::workload_view(w, &scope, events)
    }

    #[test]
    fn a_done_workload_on_stale_evidence_is_not_ready() {
        let meta = ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        };
        let none = BTreeSet::new();
        let fresh = view_for(
            &plan(&[]),
            "sel",
            &judged(&meta, Progress::Done, true),
            &none,
            &HashMap::new(),
        );
        assert!(fresh.ready && fresh.notes.is_empty());
        let stale = view_for(
            &plan(&[]),
            "sel",
            &judged(&meta, Progress::Done, false),
            &none,
            &HashMap::new(),
        );
        assert!(!stale.ready, "a failing watch's data never counts as ready");
        assert_eq!(stale.notes, ["evidence stale: its watch is failing"]);
        let failed = view_for(
            &plan(&[]),
            "sel",
            &judged(&meta, Progress::Failed, true),
            &none,
            &HashMap::new(),
        );
        assert!(failed.failed && !failed.ready);
    }

    #[test]
    fn deny_list_and_unlabelled_notes_reach_the_view() {
        let meta = ObjectMeta {
            name: Some("demo-gpu-client".into()),
            ..Default::default()
        };
        let unlabelled =
            BTreeSet::from([("Deployment".to_string(), "demo-gpu-client".to_string())]);
        let v = view_for(
            &plan(&["--optional", "*-gpu-client"]),
            "app.kubernetes.io/instance=demo",
            &judged(&meta, Progress::Waiting, true),
            &unlabelled,
            &HashMap::new(),
        );
        assert!(v.optional);
        assert_eq!(
            v.optional_because.as_deref(),
            Some("--optional *-gpu-client")
        );
        assert_eq!(
            v.notes,
            ["in the release manifest but not labelled app.kubernetes.io/instance=demo"]
        );
        let gating = view_for(
            &plan(&[]),
            "sel",
            &judged(&meta, Progress::Waiting, true),
            &BTreeSet::new(),
            &HashMap::new(),
        );
        assert!(!gating.optional);
    }

    /// Every way of marking a workload optional, judged by the step's watches (`World`) and
    /// by inspect from the same objects: both say optional, and why, alike.
    #[test]
    fn inspect_and_deploy_agree_on_every_way_of_marking_a_workload_optional() {
        use crate::inspect::workloads::{self, Live};
        use serde_json::json;
        fn object<K: serde::de::DeserializeOwned>(
            kind: &str,
            name: &str,
            annotations: serde_json::Value,
        ) -> K {
            serde_json::from_value(json!({
                "metadata": {"name": name, "uid": format!("uid-{kind}-{name}"), "generation": 1,
                             "annotations": annotations},
                "spec": {"selector": {}, "template": {}},
            }))
            .expect("a workload")
        }
        let deployments: Vec<Deployment> = vec![
            object("d", "demo-gpu-client", json!({})),
            object(
                "d",
                "demo-monitoring",
                json!({"helmdeck.io/optional": "TRUE"}),
            ),
            object(
                "d",
                "demo-web",
                json!({"werf.io/fail-mode": "IgnoreAndContinueDeployProcess"}),
            ),
            object("d", "demo-worker", json!({"helmdeck.io/optional": "false"})),
            object("d", "demo-api", json!({})),
        ];
        let statefulsets: Vec<StatefulSet> = vec![
            object(
                "s",
                "demo-db",
                json!({"werf.io/track-termination-mode": "nonblocking"}),
            ),
            object("s", "demo-gpu-client", json!({})),
        ];
        let daemonsets: Vec<DaemonSet> = vec![object("a", "demo-agent", json!({}))];
        let plan = plan(&[
            "--optional",
            "Deployment/*-gpu-client",
            "--optional",
            "*-agent",
        ]);
        let selector = "app.kubernetes.io/instance=demo";

        let mut world = World::new();
        world.apply(Msg::Deploy(0, Change::Resynced(deployments.clone())));
        world.apply(Msg::Sts(0, Change::Resynced(statefulsets.clone())));
        world.apply(Msg::Ds(0, Change::Resynced(daemonsets.clone())));
        let key = |w: &WorkloadView| {
            (
                w.kind.clone(),
                w.name.clone(),
                w.optional,
                w.optional_because.clone(),
            )
        };
        let mut deploy: Vec<_> = world
            .judge()
            .iter()
            .map(|w| view_for(&plan, selector, w, &world.unlabelled, &HashMap::new()))
            .map(|v| key(&v))
            .collect();
        deploy.sort();
        let live = Live {
            deployments,
            statefulsets,
            daemonsets,
            ..Live::default()
        };
        let mut inspect: Vec<_> = workloads::judge(&live, selector, &plan.optional)
            .workloads
            .iter()
            .map(key)
            .collect();
        inspect.sort();
        assert_eq!(deploy, inspect);

        let because = |kind: &str, name: &str| {
            deploy
                .iter()
                .find(|k| k.0 == kind && k.1 == name)
                .and_then(|k| k.3.clone())
        };
        for (kind, name, want) in [
            (
                "Deployment",
                "demo-gpu-client",
                Some("--optional Deployment/*-gpu-client"),
            ),
            ("StatefulSet", "demo-gpu-client", None),
            ("DaemonSet", "demo-agent", Some("--optional *-agent")),
            (
                "Deployment",
                "demo-monitoring",
                Some("annotation helmdeck.io/optional"),
            ),
            (
                "Deployment",
                "demo-web",
                Some("annotation werf.io/fail-mode"),
            ),
            (
                "StatefulSet",
                "demo-db",
                Some("annotation werf.io/track-termination-mode"),
            ),
            ("Deployment", "demo-worker", None),
            ("Deployment", "demo-api", None),
        ] {
            assert_eq!(because(kind, name).as_deref(), want, "{kind}/{name}");
        }
        assert!(deploy.iter().all(|k| k.2 == k.3.is_some()));
    }

    #[test]
    fn nothing_is_judged_before_every_watch_has_listed() {
        assert_eq!(judge(&[w("web", false, true, false)], false), None);
    }

    #[test]
    fn every_gating_workload_must_be_ready() {
        assert_eq!(
            judge(
                &[w("web", false, true, false), w("api", false, true, false)],
                true
            ),
            Some(StepOutcome::Succeeded)
        );
        assert_eq!(
            judge(
                &[w("web", false, true, false), w("api", false, false, false)],
                true
            ),
            None
        );
    }

    #[test]
    fn optional_workloads_never_gate() {
        let views = [w("web", false, true, false), w("gpu", true, false, true)];
        assert_eq!(
            judge(&views, true),
            Some(StepOutcome::Succeeded),
            "an optional failure is not a failure"
        );
    }

    #[test]
    fn a_terminal_failure_of_a_gating_workload_fails_fast() {
        let reason = failed_reason(judge(
            &[w("web", false, false, true), w("api", false, false, false)],
            true,
        ));
        assert!(reason.starts_with("Deployment/web: msg"), "{reason}");
        assert!(reason.contains("CrashLoopBackOff"), "{reason}");
    }

    #[test]
    fn no_workloads_or_only_optional_ones_fail_closed() {
        assert!(failed_reason(judge(&[], true)).contains("no workloads found"));
        assert!(
            failed_reason(judge(&[w("gpu", true, true, false)], true))
                .contains("no gating workloads")
        );
    }
}
