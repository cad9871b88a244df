//! The rollout step's judging, views and watch bookkeeping, without a cluster.

use super::cache::Watched;
use super::*;
use crate::cluster::watch::Change;
use crate::rollout::readiness::{Progress, Readiness};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn w(name: &str, optional: bool, ready: bool, failed: bool) -> WorkloadView {
    WorkloadView {
        kind: "Deployment".into(),
        namespace: "apps".into(),
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
        evidence: vec![],
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
    unlabelled: &BTreeSet<WorkloadKey>,
    events: &HashMap<&str, Vec<&KubeEvent>>,
) -> WorkloadView {
    let scope = Scope {
        selector,
        unlabelled,
        optional: &plan.optional,
        namespace: "apps",
        failures_allowed: plan.failures_allowed_per_replica,
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
        &HashMap::default(),
    );
    assert!(fresh.ready && fresh.notes.is_empty());
    let stale = view_for(
        &plan(&[]),
        "sel",
        &judged(&meta, Progress::Done, false),
        &none,
        &HashMap::default(),
    );
    assert!(!stale.ready, "a failing watch's data never counts as ready");
    assert_eq!(stale.notes, ["evidence stale: its watch is failing"]);
    let failed = view_for(
        &plan(&[]),
        "sel",
        &judged(&meta, Progress::Failed, true),
        &none,
        &HashMap::default(),
    );
    assert!(failed.failed && !failed.ready);
}

#[test]
fn deny_list_and_unlabelled_notes_reach_the_view() {
    let meta = ObjectMeta {
        name: Some("demo-gpu-client".into()),
        ..Default::default()
    };
    let unlabelled = BTreeSet::from([(
        "Deployment".to_string(),
        "apps".to_string(),
        "demo-gpu-client".to_string(),
    )]);
    let v = view_for(
        &plan(&["--optional", "*-gpu-client"]),
        "app.kubernetes.io/instance=demo",
        &judged(&meta, Progress::Waiting, true),
        &unlabelled,
        &HashMap::default(),
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
        &HashMap::default(),
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

    let mut world = World::new(vec!["apps".into()]);
    world.apply(Msg::Deploy(
        0,
        Box::new(Change::resynced(deployments.clone())),
    ));
    world.apply(Msg::Sts(
        0,
        Box::new(Change::resynced(statefulsets.clone())),
    ));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(daemonsets.clone()))));
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
        .map(|(_, w)| view_for(&plan, selector, w, &world.unlabelled, &HashMap::default()))
        .map(|v| key(&v))
        .collect();
    deploy.sort();
    let live = Live {
        deployments,
        statefulsets,
        daemonsets,
        ..Live::default()
    };
    let mut inspect: Vec<_> = workloads::judge(&live, selector, &plan.optional, "apps")
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
    assert_eq!(judge(&[w("web", false, true, false)], false, "apps"), None);
}

#[test]
fn every_gating_workload_must_be_ready() {
    assert_eq!(
        judge(
            &[w("web", false, true, false), w("api", false, true, false)],
            true,
            "apps"
        ),
        Some(StepOutcome::Succeeded)
    );
    assert_eq!(
        judge(
            &[w("web", false, true, false), w("api", false, false, false)],
            true,
            "apps"
        ),
        None
    );
}

#[test]
fn optional_workloads_never_gate() {
    let views = [w("web", false, true, false), w("gpu", true, false, true)];
    assert_eq!(
        judge(&views, true, "apps"),
        Some(StepOutcome::Succeeded),
        "an optional failure is not a failure"
    );
}

#[test]
fn a_terminal_failure_of_a_gating_workload_fails_fast() {
    let reason = failed_reason(judge(
        &[w("web", false, false, true), w("api", false, false, false)],
        true,
        "apps",
    ));
    assert!(reason.starts_with("Deployment/web: msg"), "{reason}");
    assert!(reason.contains("CrashLoopBackOff"), "{reason}");
}

#[test]
fn no_workloads_or_only_optional_ones_fail_closed() {
    assert!(failed_reason(judge::<WorkloadView>(&[], true, "apps")).contains("no workloads found"));
    assert!(
        failed_reason(judge(&[w("gpu", true, true, false)], true, "apps"))
            .contains("no gating workloads")
    );
}

#[test]
fn every_namespace_the_manifest_names_is_watched_release_namespace_first() {
    let key = |k: &str, n: &str, w: &str| (k.to_string(), n.to_string(), w.to_string());
    let manifest = [
        key("Deployment", "apps", "web"),
        key("DaemonSet", "monitoring", "exporter"),
        key("Deployment", "logging", "shipper"),
        key("Deployment", "monitoring", "metrics"),
    ];
    assert_eq!(
        namespaces_of("apps", &manifest),
        ["apps", "logging", "monitoring"]
    );
    assert_eq!(namespaces_of("apps", &[]), ["apps"]);
}

/// A Deployment named alike in two namespaces: each is judged with its own namespace's
/// ReplicaSets and pods, keyed by namespace, and a by-name watch that lists nothing makes
/// the manifest workload a "not found" blocker rather than nothing at all.
#[test]
fn workloads_are_judged_with_the_pods_of_their_own_namespace() {
    use serde_json::json;
    let deploy = |ns: &str| -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": ns, "uid": format!("d-{ns}"), "generation": 1,
                         "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": 1, "selector": {}, "template": {}},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1},
        }))
        .expect("a Deployment")
    };
    let rs = |ns: &str| -> ReplicaSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": ns, "uid": format!("rs-{ns}"),
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": format!("d-{ns}")}]},
        }))
        .expect("a ReplicaSet")
    };
    let pod = |ns: &str| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-1-x", "namespace": ns, "uid": format!("p-{ns}"),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": format!("rs-{ns}")}]},
        }))
        .expect("a Pod")
    };
    let mut world = World::new(vec!["apps".into(), "monitoring".into()]);
    for (i, ns) in ["apps", "monitoring"].into_iter().enumerate() {
        world.apply(Msg::Deploy(i, Box::new(Change::resynced(vec![deploy(ns)]))));
        world.apply(Msg::Sts(i, Box::new(Change::resynced(vec![]))));
        world.apply(Msg::Ds(i, Box::new(Change::resynced(vec![]))));
        world.apply(Msg::Rs(i, Change::resynced(vec![rs(ns)])));
        world.apply(Msg::Pod(i, Change::resynced(vec![pod(ns)])));
    }
    assert!(world.initially_synced());
    let judged = world.judge();
    assert_eq!(judged.len(), 2);
    for (ns, w) in &judged {
        let want = &world.namespaces[*ns];
        assert_eq!(w.meta.namespace.as_ref(), Some(want));
        let pods: Vec<_> = w
            .current
            .iter()
            .map(|p| p.metadata.namespace.clone())
            .collect();
        assert_eq!(pods, [Some(want.clone())], "its own namespace's pod only");
    }
    let none = BTreeSet::new();
    let keys: BTreeSet<WorkloadKey> = judged
        .iter()
        .map(|(_, w)| view_for(&plan(&[]), "sel", w, &none, &HashMap::default()).key())
        .collect();
    assert_eq!(keys.len(), 2, "one name, two namespaces, two workloads");

    // A manifest workload in monitoring that only a by-name watch could see, and it is not there.
    world.dss.push(Watched::by_name(1, "exporter"));
    assert!(world.missing().is_empty(), "not listed yet");
    let last = world.dss.len() - 1;
    let (what, _) = world.apply(Msg::Ds(last, Box::new(Change::resynced(vec![]))));
    assert_eq!(what, format!("DaemonSets[{last}] in monitoring"));
    assert_eq!(
        world.missing(),
        [(
            "DaemonSet".to_string(),
            "monitoring".to_string(),
            "exporter".to_string()
        )]
    );
    let (what, _) = world.apply(Msg::Pod(0, Change::Failed("x".into())));
    assert_eq!(
        what, "Pods",
        "the release namespace's watches keep their names"
    );
}

use serde_json::json;

/// An object named `name` with uid `name`, owned by `owner` (a uid) when given.
fn owned<K: serde::de::DeserializeOwned>(name: &str, owner: Option<&str>) -> K {
    let refs: Vec<serde_json::Value> = owner
        .map(|o| json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": o, "uid": o}))
        .into_iter()
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "apps", "uid": name, "ownerReferences": refs},
    }))
    .expect("a valid object")
}

fn about(name: &str, uid: &str) -> KubeEvent {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "apps"},
        "involvedObject": {"kind": "Pod", "name": uid, "uid": uid},
    }))
    .expect("an Event")
}

/// Two Deployments, each with a ReplicaSet and a pod, listed; then what was touched is cleared
/// as a publish does.
fn two_deployments() -> World {
    let mut world = World::new(vec!["apps".into()]);
    world.apply(Msg::Deploy(
        0,
        Box::new(Change::resynced(vec![owned("d1", None), owned("d2", None)])),
    ));
    world.apply(Msg::Rs(
        0,
        Change::resynced(vec![owned("r1", Some("d1")), owned("r2", Some("d2"))]),
    ));
    world.apply(Msg::Pod(
        0,
        Change::resynced(vec![owned("p1", Some("r1")), owned("p2", Some("r2"))]),
    ));
    world.apply(Msg::Ev(0, Change::resynced(vec![])));
    assert!(world.index.all, "a list touches everything");
    world.index.all = false;
    world.index.touched.clear();
    world
}

fn touched(world: &mut World) -> BTreeSet<String> {
    std::mem::take(&mut world.index.touched)
        .into_iter()
        .collect()
}

fn set(uids: &[&str]) -> BTreeSet<String> {
    uids.iter().map(|u| u.to_string()).collect()
}

#[test]
fn a_change_touches_only_its_own_owner_chain() {
    let mut world = two_deployments();
    world.apply(Msg::Pod(0, Change::Applied(owned("p1", Some("r1")))));
    assert_eq!(touched(&mut world), set(&["p1", "r1", "d1"]));
    // An Event about a pod re-judges that pod's workload only.
    world.apply(Msg::Ev(0, Change::Applied(about("e1", "p2"))));
    assert_eq!(touched(&mut world), set(&["p2", "r2", "d2"]));
    // A pod that changes owner touches both the old and the new chain.
    world.apply(Msg::Pod(0, Change::Applied(owned("p1", Some("r2")))));
    assert_eq!(touched(&mut world), set(&["p1", "r1", "d1", "r2", "d2"]));
    assert_eq!(world.pods_owned_by(0, "r1").len(), 0);
    assert_eq!(world.pods_owned_by(0, "r2").len(), 2);
    // A deleted pod still touches its owners, and leaves the index.
    world.apply(Msg::Pod(0, Change::Deleted(owned("p2", Some("r2")))));
    assert_eq!(touched(&mut world), set(&["p2", "r2", "d2"]));
    let left: Vec<_> = world
        .pods_owned_by(0, "r2")
        .iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(left, ["p1"]);
    assert!(!world.index.all, "single changes never touch everything");
    // A failing watch may have missed anything.
    world.apply(Msg::Pod(0, Change::Failed("gone".into())));
    assert!(world.index.all);
}

#[test]
fn events_are_indexed_by_what_they_are_about() {
    let mut world = two_deployments();
    world.apply(Msg::Ev(0, Change::Applied(about("e1", "p1"))));
    world.apply(Msg::Ev(0, Change::Applied(about("e2", "p1"))));
    let events = world.events_about(["p1", "p2"]);
    assert_eq!(events.get("p1").map(Vec::len), Some(2));
    assert!(!events.contains_key("p2"));
    // Re-pointed to another object: it leaves the old one's list.
    world.apply(Msg::Ev(0, Change::Applied(about("e2", "p2"))));
    let events = world.events_about(["p1", "p2"]);
    assert_eq!(events.get("p1").map(Vec::len), Some(1));
    assert_eq!(events.get("p2").map(Vec::len), Some(1));
    world.apply(Msg::Ev(0, Change::Deleted(about("e1", "p1"))));
    assert!(!world.events_about(["p1"]).contains_key("p1"));
}

#[test]
fn judging_the_touched_workloads_matches_judging_all_of_them() {
    let mut world = two_deployments();
    world.apply(Msg::Pod(0, Change::Applied(owned("p3", Some("r2")))));
    let touched = touched(&mut world);
    let some = world.judge_where(|u| touched.contains(u));
    assert_eq!(some.len(), 1, "only d2");
    let all = world.judge();
    let d2 = all
        .iter()
        .find(|(_, j)| j.meta.name.as_deref() == Some("d2"))
        .expect("d2 judged");
    assert_eq!(format!("{:?}", some[0].1), format!("{:?}", d2.1));
}

/// The workload views a publish returns, by name, in order; and the names said gone.
fn published(world: &mut World, emitted: &mut Emitted) -> (Vec<String>, Vec<String>) {
    let (ctx, mut rx) = crate::engine::steps::tests::ctx();
    let names = publish(&ctx, world, emitted)
        .iter()
        .map(|v| v.name.clone())
        .collect();
    let mut gone = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let crate::engine::event::Event::WorkloadGone { name, .. } = e {
            gone.push(name);
        }
    }
    (names, gone)
}

/// The order a publish returns is kept between publishes and read again only when the set of
/// workloads changed: a deleted one is said gone and leaves it, a new one joins it, a changed
/// one keeps its place.
#[tokio::test]
async fn a_deleted_workload_is_said_gone_and_leaves_the_order_a_new_one_joins_it() {
    let mut world = World::new(vec!["apps".into()]);
    world.apply(Msg::Deploy(
        0,
        Box::new(Change::resynced(vec![owned("d1", None), owned("d2", None)])),
    ));
    world.apply(Msg::Sts(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Rs(0, Change::resynced(vec![])));
    world.apply(Msg::Pod(0, Change::resynced(vec![])));
    world.apply(Msg::Ev(0, Change::resynced(vec![])));
    let mut emitted = Emitted::default();
    let none: Vec<String> = vec![];
    assert_eq!(
        published(&mut world, &mut emitted),
        (vec!["d1".into(), "d2".into()], none.clone())
    );

    world.apply(Msg::Deploy(0, Box::new(Change::Deleted(owned("d1", None)))));
    assert_eq!(
        published(&mut world, &mut emitted),
        (vec!["d2".into()], vec!["d1".into()])
    );

    world.apply(Msg::Deploy(0, Box::new(Change::Applied(owned("d3", None)))));
    assert_eq!(
        published(&mut world, &mut emitted),
        (vec!["d2".into(), "d3".into()], none.clone())
    );

    let mut changed: Deployment = owned("d2", None);
    changed.metadata.generation = Some(7);
    world.apply(Msg::Deploy(0, Box::new(Change::Applied(changed))));
    assert_eq!(
        published(&mut world, &mut emitted),
        (vec!["d2".into(), "d3".into()], none)
    );
}

/// The pods said gone by a publish, by name.
fn pods_gone(world: &mut World, emitted: &mut Emitted) -> Vec<String> {
    let (ctx, mut rx) = crate::engine::steps::tests::ctx();
    drop(publish(&ctx, world, emitted));
    let mut gone = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let crate::engine::event::Event::PodGone { name, .. } = e {
            gone.push(name);
        }
    }
    gone
}

/// A deleted pod is said gone once; a change to another pod says no pod gone (the pods every
/// other workload claims are gathered only when one left a workload re-judged).
#[tokio::test]
async fn a_deleted_pod_is_said_gone_once_and_a_pod_change_says_no_other_gone() {
    let mut world = two_deployments();
    world.apply(Msg::Sts(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(vec![]))));
    let mut emitted = Emitted::default();
    assert!(pods_gone(&mut world, &mut emitted).is_empty());
    world.apply(Msg::Pod(0, Change::Deleted(owned("p1", Some("r1")))));
    assert_eq!(pods_gone(&mut world, &mut emitted), ["p1"]);
    let mut p2: Pod = owned("p2", Some("r2"));
    p2.metadata.resource_version = Some("9".into());
    world.apply(Msg::Pod(0, Change::Applied(p2)));
    assert!(pods_gone(&mut world, &mut emitted).is_empty());
    world.apply(Msg::Pod(0, Change::Applied(owned("p1", Some("r1")))));
    assert!(pods_gone(&mut world, &mut emitted).is_empty());
    world.apply(Msg::Pod(0, Change::Deleted(owned("p1", Some("r1")))));
    assert_eq!(pods_gone(&mut world, &mut emitted), ["p1"]);
}

/// A deleted workload's pods are said gone though no change touched them (they are found
/// under the workload that claimed them, not by a pass over every pod sent); a pod whose
/// ReplicaSet another workload adopted moves with it, and its first workload's deletion then
/// says nothing gone.
#[tokio::test]
async fn a_gone_workloads_pods_are_said_gone_and_an_adopted_pod_moves_with_its_replicaset() {
    let mut world = two_deployments();
    world.apply(Msg::Sts(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(vec![]))));
    let mut emitted = Emitted::default();
    assert!(pods_gone(&mut world, &mut emitted).is_empty());
    world.apply(Msg::Rs(0, Change::Applied(owned("r1", Some("d2")))));
    assert!(
        pods_gone(&mut world, &mut emitted).is_empty(),
        "p1 is d2's now"
    );
    world.apply(Msg::Deploy(0, Box::new(Change::Deleted(owned("d1", None)))));
    assert!(
        pods_gone(&mut world, &mut emitted).is_empty(),
        "d1 claimed no pod any more"
    );
    world.apply(Msg::Deploy(0, Box::new(Change::Deleted(owned("d2", None)))));
    let mut gone = pods_gone(&mut world, &mut emitted);
    gone.sort();
    assert_eq!(gone, ["p1", "p2"]);
    assert!(emitted.pods.is_empty() && emitted.claimed_by.is_empty());
}

/// The pods a publish sends views of, and those it says gone, by name.
fn pods_sent(world: &mut World, emitted: &mut Emitted) -> (Vec<String>, Vec<String>) {
    let (ctx, mut rx) = crate::engine::steps::tests::ctx();
    drop(publish(&ctx, world, emitted));
    let (mut sent, mut gone) = (Vec::new(), Vec::new());
    while let Ok(e) = rx.try_recv() {
        match e {
            crate::engine::event::Event::Pod(v) => sent.push(v.name),
            crate::engine::event::Event::PodGone { name, .. } => gone.push(name),
            _ => {}
        }
    }
    sent.sort();
    (sent, gone)
}

/// A publish views only the pods a change touched: a pod's change sends that pod, not the
/// others of its workload; a pod recreated under its name (a StatefulSet's) in one batch is
/// sent again and never said gone.
#[tokio::test]
async fn a_publish_views_only_the_pods_that_changed() {
    let mut world = two_deployments();
    world.apply(Msg::Sts(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Pod(0, Change::Applied(owned("p3", Some("r1")))));
    let mut emitted = Emitted::default();
    let (sent, _) = pods_sent(&mut world, &mut emitted);
    assert_eq!(sent, ["p1", "p2", "p3"]);
    let none: Vec<String> = vec![];
    assert_eq!(
        pods_sent(&mut world, &mut emitted),
        (none.clone(), none.clone())
    );

    let mut running: Pod = owned("p1", Some("r1"));
    running.status = serde_json::from_value(json!({"phase": "Running"})).ok();
    world.apply(Msg::Pod(0, Change::Applied(running)));
    assert_eq!(
        pods_sent(&mut world, &mut emitted),
        (vec!["p1".into()], none.clone())
    );

    world.apply(Msg::Pod(0, Change::Deleted(owned("p3", Some("r1")))));
    let mut again: Pod = owned("p3", Some("r1"));
    again.metadata.uid = Some("p3-again".into());
    world.apply(Msg::Pod(0, Change::Applied(again)));
    assert_eq!(
        pods_sent(&mut world, &mut emitted),
        (vec!["p3".into()], none.clone()),
        "the new pod under the old name is sent, and nothing is said gone"
    );
    world.apply(Msg::Pod(0, Change::Deleted(owned("p2", Some("r2")))));
    assert_eq!(
        pods_sent(&mut world, &mut emitted),
        (none, vec!["p2".into()])
    );
}

/// A Deployment's new revision makes its old pods not current without a change to them: they
/// are viewed again (the drill-down tells old pods from new), though nothing touched them.
#[tokio::test]
async fn a_new_revision_views_the_old_pods_again_as_not_current() {
    let deploy = |revision: &str| -> Deployment {
        serde_json::from_value(
            json!({"metadata": {"name": "d1", "namespace": "apps", "uid": "d1",
            "annotations": {"deployment.kubernetes.io/revision": revision}}}),
        )
        .expect("a Deployment")
    };
    let rs = |name: &str, revision: &str| -> ReplicaSet {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "apps", "uid": name,
            "labels": {"pod-template-hash": name},
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d1", "uid": "d1"}]}}))
        .expect("a ReplicaSet")
    };
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p1", "namespace": "apps",
        "uid": "p1", "labels": {"pod-template-hash": "r1"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r1", "uid": "r1"}]}}))
    .expect("a pod");
    let mut world = World::new(vec!["apps".into()]);
    world.apply(Msg::Deploy(
        0,
        Box::new(Change::resynced(vec![deploy("1")])),
    ));
    world.apply(Msg::Sts(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Rs(
        0,
        Change::resynced(vec![rs("r1", "1"), rs("r2", "2")]),
    ));
    world.apply(Msg::Pod(0, Change::resynced(vec![pod])));
    world.apply(Msg::Ev(0, Change::resynced(vec![])));
    let mut emitted = Emitted::default();
    let current = |world: &mut World, emitted: &mut Emitted| -> Vec<(String, bool)> {
        let (ctx, mut rx) = crate::engine::steps::tests::ctx();
        drop(publish(&ctx, world, emitted));
        let mut sent = Vec::new();
        while let Ok(e) = rx.try_recv() {
            if let crate::engine::event::Event::Pod(v) = e {
                sent.push((v.name, v.current));
            }
        }
        sent
    };
    assert_eq!(
        current(&mut world, &mut emitted),
        [("p1".to_string(), true)]
    );
    world.apply(Msg::Deploy(0, Box::new(Change::Applied(deploy("2")))));
    assert_eq!(
        current(&mut world, &mut emitted),
        [("p1".to_string(), false)]
    );
}

/// Each pod's causes are kept between publishes and diagnosed again only when a change
/// touches the pod or an Event about it: after every change the workload view quotes exactly
/// what diagnosing every current pod afresh quotes.
#[tokio::test]
async fn kept_pod_causes_quote_what_diagnosing_every_pod_afresh_does() {
    let pod = |name: &str, waiting: Option<&str>| -> Pod {
        let status = match waiting {
            Some(reason) => json!({"phase": "Pending", "containerStatuses": [{"name": "app",
                "ready": false, "restartCount": 0, "image": "i", "imageID": "",
                "state": {"waiting": {"reason": reason, "message": format!("{name} waits")}}}]}),
            None => json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                "image": "i", "imageID": "", "state": {"running": {}}}]}),
        };
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "apps",
            "uid": name, "labels": {"pod-template-hash": "r1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r1", "uid": "r1"}]},
            "spec": {"containers": [{"name": "app"}]}, "status": status}))
        .expect("a pod")
    };
    let warning = |name: &str, about: &str, reason: &str| -> KubeEvent {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "apps"},
            "involvedObject": {"kind": "Pod", "name": about, "uid": about},
            "type": "Warning", "reason": reason, "message": format!("{about}: {reason}")}))
        .expect("an Event")
    };
    let mut world = World::new(vec!["apps".into()]);
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "d1",
        "namespace": "apps", "uid": "d1", "annotations": {"deployment.kubernetes.io/revision": "1"}},
        "spec": {"replicas": 4, "selector": {}, "template": {}}}))
    .expect("a Deployment");
    world.apply(Msg::Deploy(0, Box::new(Change::resynced(vec![d]))));
    world.apply(Msg::Sts(0, Box::new(Change::resynced(vec![]))));
    world.apply(Msg::Ds(0, Box::new(Change::resynced(vec![]))));
    let rs: ReplicaSet = serde_json::from_value(json!({"metadata": {"name": "r1",
        "namespace": "apps", "uid": "r1", "labels": {"pod-template-hash": "r1"},
        "annotations": {"deployment.kubernetes.io/revision": "1"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d1", "uid": "d1"}]}}))
    .expect("a ReplicaSet");
    world.apply(Msg::Rs(0, Change::resynced(vec![rs])));
    world.apply(Msg::Pod(
        0,
        Change::resynced(vec![
            pod("p1", Some("ImagePullBackOff")),
            pod("p2", Some("ContainerCreating")),
            pod("p3", None),
            pod("p4", Some("ErrImagePull")),
        ]),
    ));
    world.apply(Msg::Ev(0, Change::resynced(vec![])));
    let mut emitted = Emitted::default();
    let plan = plan(&[]);
    let mut quoted = Vec::new();
    let changes: Vec<Msg> = vec![
        Msg::Ev(0, Change::Applied(warning("e1", "p2", "FailedMount"))),
        Msg::Pod(0, Change::Applied(pod("p1", None))),
        Msg::Pod(0, Change::Applied(pod("p3", Some("CrashLoopBackOff")))),
        Msg::Ev(0, Change::Applied(warning("e2", "p4", "FailedScheduling"))),
        Msg::Pod(0, Change::Deleted(pod("p2", None))),
        Msg::Ev(0, Change::Deleted(warning("e2", "p4", "FailedScheduling"))),
    ];
    for change in std::iter::once(None).chain(changes.into_iter().map(Some)) {
        if let Some(change) = change {
            world.apply(change);
        }
        let (ctx, _rx) = crate::engine::steps::tests::ctx();
        let kept = publish(&ctx, &mut world, &mut emitted)[0]
            .pod_causes
            .clone();
        let judged = world.judge();
        let w = &judged[0].1;
        let events = world.events_about(w.current.iter().map(|p| uid(&p.metadata)));
        let afresh = view_for(&plan, "x", w, &BTreeSet::new(), &events).pod_causes;
        assert_eq!(kept, afresh);
        quoted.push(kept);
    }
    // The changes did change what is quoted (each step above is seen).
    quoted.dedup();
    assert!(quoted.len() >= 4, "{quoted:#?}");
    // Only the pods not ready are kept: p1 turned ready, p2 is gone.
    let mut held: Vec<&str> = emitted.causes.keys().map(String::as_str).collect();
    held.sort_unstable();
    assert_eq!(held, ["p3", "p4"]);
}

#[test]
fn the_cache_freed_apart_is_freed() {
    struct Dropped(std::sync::mpsc::Sender<std::thread::ThreadId>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    free_apart(Dropped(tx));
    let on = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("never freed");
    assert_ne!(
        on,
        std::thread::current().id(),
        "freed on the caller's thread"
    );
}
