use super::*;
use serde_json::json;

/// An object `name` in `ns` with uid `uid`, owned by the object with uid `owner` if given.
fn object<K: serde::de::DeserializeOwned>(
    ns: &str,
    name: &str,
    uid: &str,
    owner: Option<&str>,
) -> K {
    let refs: Vec<serde_json::Value> = owner
        .map(|o| json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": o, "uid": o}))
        .into_iter()
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns, "uid": uid, "ownerReferences": refs},
    }))
    .expect("a valid object")
}

fn event(ns: &str, name: &str, about: &str) -> KubeEvent {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"kind": "Pod", "name": about, "uid": about},
    }))
    .expect("an Event")
}

fn names(pods: &[&Pod]) -> Vec<String> {
    pods.iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect()
}

/// Every label-selected workload watch of every namespace has listed, empty.
fn listed(namespaces: &[&str]) -> World {
    let mut world = World::new(namespaces.iter().map(|n| n.to_string()).collect());
    for i in 0..namespaces.len() {
        world.apply(Msg::Deploy(i, Box::new(Change::resynced(vec![]))));
        world.apply(Msg::Sts(i, Box::new(Change::resynced(vec![]))));
        world.apply(Msg::Ds(i, Box::new(Change::resynced(vec![]))));
    }
    world
}

#[test]
fn a_relist_replaces_what_the_namespace_held_and_its_index() {
    let mut world = listed(&["apps"]);
    let first = vec![
        object("apps", "p1", "p1", Some("r1")),
        object("apps", "p2", "p2", Some("r1")),
    ];
    world.apply(Msg::Pod(0, Change::resynced(first)));
    assert_eq!(names(&world.pods_owned_by(0, "r1")), ["p1", "p2"]);
    world.take_touched();
    let second = vec![object("apps", "p3", "p3", Some("r2"))];
    world.apply(Msg::Pod(0, Change::resynced(second)));
    assert!(
        world.pods_owned_by(0, "r1").is_empty(),
        "p1 and p2 are gone"
    );
    assert_eq!(names(&world.pods_owned_by(0, "r2")), ["p3"]);
    let (all, _) = world.take_touched();
    assert!(all, "a relist may change every view");
    assert!(!world.take_touched().0, "taking clears it");
}

#[test]
fn a_failed_watch_leaves_its_namespace_unsynced_until_its_next_list() {
    let mut world = listed(&["apps", "monitoring"]);
    assert!(world.initially_synced() && world.all_synced());
    let (what, health) = world.apply(Msg::Deploy(1, Box::new(Change::Failed("boom".into()))));
    assert_eq!(what, "Deployments[1] in monitoring");
    assert_eq!(health, Health::Degraded("boom".into()));
    assert!(!world.initially_synced() && !world.all_synced());
    assert!(world.take_touched().0, "a failure may have missed anything");
    let d: Deployment = object("monitoring", "web", "d1", None);
    assert_eq!(
        world
            .apply(Msg::Deploy(1, Box::new(Change::Applied(d.clone()))))
            .1,
        Health::Unchanged
    );
    assert!(!world.all_synced(), "a single change is not a list");
    let (_, health) = world.apply(Msg::Deploy(1, Box::new(Change::resynced(vec![d]))));
    assert_eq!(health, Health::Recovered);
    assert!(world.initially_synced() && world.all_synced());
    let (what, _) = world.apply(Msg::Sts(0, Box::new(Change::Failed("x".into()))));
    assert_eq!(
        what, "StatefulSets[0]",
        "the release namespace's name stays bare"
    );
}

#[test]
fn objects_are_found_in_their_own_namespace_only() {
    let mut world = listed(&["apps", "monitoring"]);
    // The same owner uid in both namespaces' indexes: each lookup stays in its namespace.
    for (i, ns) in ["apps", "monitoring"].into_iter().enumerate() {
        let pod = object(ns, &format!("{ns}-pod"), &format!("p-{ns}"), Some("rs"));
        world.apply(Msg::Pod(i, Change::resynced(vec![pod])));
        let rs = object(ns, "web-1", &format!("rs-{ns}"), Some("d"));
        world.apply(Msg::Rs(i, Change::resynced(vec![rs])));
    }
    assert_eq!(names(&world.pods_owned_by(0, "rs")), ["apps-pod"]);
    assert_eq!(names(&world.pods_owned_by(1, "rs")), ["monitoring-pod"]);
    let rss = world.rss_owned_by(1, "d");
    assert_eq!(rss.len(), 1);
    assert_eq!(rss[0].metadata.uid.as_deref(), Some("rs-monitoring"));
    assert!(world.pods_owned_by(0, "nobody").is_empty());
}

#[test]
fn a_by_name_watch_gates_judging_but_not_the_first_list() {
    let mut world = listed(&["apps", "monitoring"]);
    let i = world.add_by_name("DaemonSet", 1, "exporter");
    assert_eq!(i, 2, "after the two label-selected slots");
    assert!(
        world.unlabelled.contains(&(
            "DaemonSet".to_string(),
            "monitoring".to_string(),
            "exporter".to_string()
        )),
        "named unlabelled in its own namespace"
    );
    assert!(
        world.take_touched().0,
        "being unlabelled is part of every view"
    );
    assert!(world.initially_synced(), "the label watches listed");
    assert!(!world.all_synced(), "the by-name watch has not");
    assert!(
        world.missing().is_empty(),
        "not listed, not known to be missing"
    );
    let (what, _) = world.apply(Msg::Ds(i, Box::new(Change::resynced(vec![]))));
    assert_eq!(what, "DaemonSets[2] in monitoring");
    assert!(world.all_synced());
    assert_eq!(
        world.missing(),
        [(
            "DaemonSet".to_string(),
            "monitoring".to_string(),
            "exporter".to_string()
        )]
    );
    let found: DaemonSet = object("monitoring", "exporter", "ds1", None);
    world.apply(Msg::Ds(i, Box::new(Change::Applied(found))));
    assert!(world.missing().is_empty());
    assert_eq!(
        world.keys(),
        [(
            "DaemonSet".to_string(),
            "monitoring".to_string(),
            "exporter".to_string()
        )]
    );
}

/// An Event about `about`, last seen `secs` after an hour's start.
fn event_at(name: &str, about: &str, secs: u64) -> KubeEvent {
    let at =
        k8s_openapi::jiff::Timestamp::from_second(1_800_000_000 + secs as i64).expect("a time");
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "apps"},
        "involvedObject": {"kind": "Pod", "name": about, "uid": about},
        "reason": "BackOff", "lastTimestamp": at.to_string(),
    }))
    .expect("an Event")
}

/// Every watch of `apps` listed, with one pod `p1` of a ReplicaSet `r1`.
fn with_one_pod() -> World {
    let mut world = listed(&["apps"]);
    world.apply(Msg::Pod(
        0,
        Change::resynced(vec![object("apps", "p1", "p1", Some("r1"))]),
    ));
    world.apply(Msg::Rs(
        0,
        Change::resynced(vec![object("apps", "r1", "r1", Some("d1"))]),
    ));
    world.apply(Msg::Ev(0, Change::resynced(vec![])));
    world
}

#[test]
fn another_teams_churning_events_leave_what_is_held_bounded() {
    let mut world = with_one_pod();
    let start = Instant::now();
    let mut most = 0;
    // 5,000 Events about other teams' objects, ten a second, with one about our pod.
    for i in 0..5_000u64 {
        let at = start + Duration::from_millis(100 * i);
        let e = event_at(
            &format!("other-{i}"),
            &format!("theirs-{}", i % 700),
            i / 10,
        );
        world.apply_at(Msg::Ev(0, Change::Applied(e)), at);
        if i == 2_500 {
            world.apply_at(Msg::Ev(0, Change::Applied(event_at("ours", "p1", 250))), at);
        }
        most = most.max(world.events_held());
    }
    // Ten a second are held for at most two sweeps.
    let bound = 10 * 2 * STRANGER_SWEEP.as_secs() as usize + 1;
    assert!(most <= bound, "held {most} > {bound}");
    // Once quiet, two sweeps later none of theirs is left.
    for sweeps in 1..=2 {
        let later = start + Duration::from_secs(500) + sweeps * STRANGER_SWEEP;
        world.apply_at(Msg::Deploy(0, Box::new(Change::resynced(vec![]))), later);
    }
    assert_eq!(world.events_held(), 1, "only the one about our pod is left");
    assert_eq!(world.events_by_name(["p1"]).len(), 1);
    let dropped = world.dropped_events.len();
    assert_eq!(
        dropped, 5_000,
        "each dropped Event is told to the step once"
    );
}

#[test]
fn an_event_about_an_object_not_seen_yet_is_kept_once_its_object_appears() {
    let mut world = with_one_pod();
    let start = Instant::now();
    for (name, about) in [("early", "p2"), ("stray", "gone")] {
        let e = event_at(name, about, 0);
        world.apply_at(Msg::Ev(0, Change::Applied(e)), start);
    }
    let pod = object("apps", "p2", "p2", Some("r1"));
    let soon = start + Duration::from_secs(5);
    world.apply_at(Msg::Pod(0, Change::Applied(pod)), soon);
    for t in [20, 40, 60] {
        let at = start + Duration::from_secs(t);
        world.apply_at(Msg::Deploy(0, Box::new(Change::resynced(vec![]))), at);
    }
    let held: Vec<&str> = world
        .events_by_name(["p2", "gone"])
        .into_keys()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(held, ["early"]);
}

#[test]
fn at_most_20_events_are_held_per_object_the_newest() {
    let mut world = with_one_pod();
    let listed: Vec<KubeEvent> = (0..30)
        .map(|i| event_at(&format!("e-{i:02}"), "p1", i))
        .collect();
    world.apply(Msg::Ev(0, Change::resynced(listed)));
    for i in 30..50 {
        let e = event_at(&format!("e-{i:02}"), "p1", i);
        world.apply(Msg::Ev(0, Change::Applied(e)));
    }
    let held: Vec<String> = world
        .events_by_name(["p1"])
        .into_keys()
        .map(|(_, n)| n.to_string())
        .collect();
    let newest: Vec<String> = (30..50).map(|i| format!("e-{i:02}")).collect();
    assert_eq!(held, newest);
    assert_eq!(world.events_held(), EVENTS_PER_OBJECT);
    // An old Event seen again is the newest now.
    world.apply(Msg::Ev(0, Change::Applied(event_at("e-00", "p1", 100))));
    let held = world.events_by_name(["p1"]);
    assert_eq!(held.len(), EVENTS_PER_OBJECT);
    assert!(held.contains_key(&(0, "e-00")) && !held.contains_key(&(0, "e-30")));
}

#[test]
fn events_are_found_by_what_they_are_about_in_every_namespace() {
    let mut world = listed(&["apps", "monitoring"]);
    world.apply(Msg::Ev(
        1,
        Change::resynced(vec![event("monitoring", "e-b", "p1")]),
    ));
    world.apply(Msg::Ev(
        0,
        Change::resynced(vec![event("apps", "e-a", "p1"), event("apps", "e-c", "p2")]),
    ));
    let about: Vec<(usize, &str)> = world.events_by_name(["p1"]).into_keys().collect();
    assert_eq!(about, [(0, "e-a"), (1, "e-b")], "by namespace, then name");
    let both: Vec<(usize, &str)> = world.events_by_name(["p2", "p1"]).into_keys().collect();
    assert_eq!(both, [(0, "e-a"), (0, "e-c"), (1, "e-b")]);
    world.apply(Msg::Ev(
        1,
        Change::Deleted(event("monitoring", "e-b", "p1")),
    ));
    assert_eq!(world.events_by_name(["p1"]).len(), 1);
    assert!(world.events_by_name(["p3"]).is_empty());
}

#[test]
fn a_list_cut_while_listed_keeps_what_the_cache_keeps_of_it() {
    // 45 Events about p1 (times out of order, two without a time, two at the same second), 5
    // about p2, 25 about a ReplicaSet r1.
    let mut listed: Vec<KubeEvent> = (0..45u64)
        .map(|i| event_at(&format!("p1-{i:02}"), "p1", (i * 7) % 45))
        .collect();
    listed.push(event_at("p1-same", "p1", 44));
    let mut untimed = event("apps", "p1-untimed", "p1");
    untimed.involved_object.uid = Some("p1".into());
    listed.push(untimed);
    listed.extend((0..5).map(|i| event_at(&format!("p2-{i}"), "p2", i)));
    listed.extend((0..25).map(|i| event_at(&format!("r1-{i:02}"), "r1", 100 - i)));
    let held = |events: Vec<KubeEvent>| {
        let mut world = with_one_pod();
        world.apply(Msg::Ev(0, Change::resynced(events)));
        let mut names: Vec<String> = world
            .events_by_name(["p1", "p2", "r1"])
            .into_keys()
            .map(|(_, n)| n.to_string())
            .collect();
        names.sort();
        names
    };
    let whole = held(listed.clone());
    let mut cut: Vec<Box<KubeEvent>> = listed.into_iter().map(Box::new).collect();
    keep_newest_per_object(&mut cut);
    let cut: Vec<KubeEvent> = cut.into_iter().map(|e| *e).collect();
    assert_eq!(cut.len(), 2 * EVENTS_PER_OBJECT + 5, "20 + 5 + 20 kept");
    let mut cut_names: Vec<String> = cut
        .iter()
        .map(|e| e.metadata.name.clone().unwrap_or_default())
        .collect();
    cut_names.sort();
    assert_eq!(
        cut_names, whole,
        "the cut keeps exactly what the cache keeps"
    );
    assert_eq!(held(cut), whole);
    assert!(whole.contains(&"p1-same".to_string()) && !whole.contains(&"p1-untimed".to_string()));
}

/// An Event of `type_` about pod `p1` (uid `p1`), last seen `secs` after an hour's start.
fn typed(name: &str, type_: &str, secs: u64) -> KubeEvent {
    let mut e = event_at(name, "p1", secs);
    e.type_ = Some(type_.into());
    e
}

fn held_about_p1(world: &World) -> Vec<String> {
    world
        .events_by_name(["p1"])
        .into_keys()
        .map(|(_, n)| n.to_string())
        .collect()
}

#[test]
fn a_ready_pod_keeps_its_newest_normal_event_and_its_warnings() {
    let mut world = with_one_pod();
    let listed = vec![
        typed("a-scheduled", "Normal", 1),
        typed("b-pulled", "Normal", 2),
        typed("c-unhealthy", "Warning", 3),
        typed("d-started", "Normal", 4),
    ];
    world.apply(Msg::Ev(0, Change::resynced(listed)));
    // Not ready: every one is kept (the drill-down is for this pod).
    assert_eq!(
        held_about_p1(&world),
        ["a-scheduled", "b-pulled", "c-unhealthy", "d-started"]
    );
    let mut ready: Pod = object("apps", "p1", "p1", Some("r1"));
    ready.status = serde_json::from_value(json!({
        "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
    }))
    .ok();
    world.apply(Msg::Pod(0, Change::Applied(ready.clone())));
    assert_eq!(held_about_p1(&world), ["c-unhealthy", "d-started"]);
    // A newer Normal one replaces it; a Warning joins.
    world.apply(Msg::Ev(0, Change::Applied(typed("e-killing", "Normal", 5))));
    world.apply(Msg::Ev(
        0,
        Change::Applied(typed("f-backoff", "Warning", 6)),
    ));
    assert_eq!(
        held_about_p1(&world),
        ["c-unhealthy", "e-killing", "f-backoff"]
    );
    // After a relist, the same.
    let relisted = vec![
        typed("a-scheduled", "Normal", 1),
        typed("c-unhealthy", "Warning", 3),
        typed("e-killing", "Normal", 5),
    ];
    world.apply(Msg::Ev(0, Change::resynced(relisted)));
    assert_eq!(held_about_p1(&world), ["c-unhealthy", "e-killing"]);
}

/// What a (re)list of Events drops as it arrives: an Event about an object no trusted watch
/// holds, older than the newest listed by more than the cache keeps such an Event. Ours, the
/// recent ones, the ones with no time or no uid stay; nothing goes before the watches listed;
/// an object deleted since is a stranger again.
#[test]
fn a_listed_event_about_an_object_no_watch_holds_goes_as_it_arrives() {
    use crate::cluster::watch::ListCut;
    let sweep = STRANGER_SWEEP.as_secs();
    let admitted = |world: &World, events: Vec<KubeEvent>| -> Vec<String> {
        let mut cut = world.listed_events();
        events
            .into_iter()
            .filter(|e| cut.admit(e))
            .map(|e| e.metadata.name.unwrap_or_default())
            .collect()
    };
    let list = || {
        vec![
            event_at("newest", "theirs", 1_000),
            event_at("ours-old", "p1", 1_000 - 10 * sweep),
            event_at("rs-old", "r1", 1_000 - 10 * sweep),
            event_at("gone-old", "gone", 1_000 - sweep - 1),
            event_at("gone-recent", "gone", 1_000 - sweep),
            event("apps", "no-time", "gone"),
            serde_json::from_value(json!({
                "metadata": {"name": "no-uid", "namespace": "apps",
                             "creationTimestamp": "2020-01-01T00:00:00Z"},
                "involvedObject": {"kind": "Node", "name": "node-1"},
            }))
            .expect("an Event"),
        ]
    };
    let mut world = with_one_pod();
    assert_eq!(
        admitted(&world, list()),
        [
            "newest",
            "ours-old",
            "rs-old",
            "gone-recent",
            "no-time",
            "no-uid"
        ]
    );
    // A workload's own Events are about a held object too.
    let d: Deployment = object("apps", "web", "d1", None);
    world.apply(Msg::Deploy(0, Box::new(Change::Applied(d))));
    let about_d = vec![
        event_at("newest", "theirs", 1_000),
        event_at("d-old", "d1", 0),
    ];
    assert_eq!(admitted(&world, about_d), ["newest", "d-old"]);
    // The pod deleted: its old Events are a stranger's.
    let p1: Pod = object("apps", "p1", "p1", Some("r1"));
    world.apply(Msg::Pod(0, Change::Deleted(p1)));
    assert!(!admitted(&world, list()).contains(&"ours-old".to_string()));
    // Before the pods have listed (or while their watch fails), nothing is a stranger.
    let mut fresh = listed(&["apps"]);
    assert_eq!(admitted(&fresh, list()).len(), 7);
    fresh.apply(Msg::Rs(0, Change::resynced(vec![])));
    fresh.apply(Msg::Pod(0, Change::resynced(vec![])));
    assert_eq!(
        admitted(&fresh, list()).len(),
        4,
        "ours-old, rs-old and gone-old go"
    );
    fresh.apply(Msg::Pod(0, Change::Failed("boom".into())));
    assert_eq!(admitted(&fresh, list()).len(), 7);
}

/// A workload both a label watch and a by-name watch hold is judged once, and only when wanted.
#[test]
fn a_workload_seen_by_two_watches_is_judged_once_when_wanted() {
    let mut world = listed(&["apps"]);
    let i = world.add_by_name("Deployment", 0, "web");
    let web = || -> Deployment { object("apps", "web", "d-web", None) };
    let other: Deployment = object("apps", "api", "d-api", None);
    world.apply(Msg::Deploy(
        0,
        Box::new(Change::resynced(vec![web(), other])),
    ));
    world.apply(Msg::Deploy(i, Box::new(Change::resynced(vec![web()]))));
    let judged = |world: &World, wanted: &dyn Fn(&str) -> bool| -> Vec<String> {
        world
            .judge_where(wanted)
            .iter()
            .map(|(_, j)| j.meta.name.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(judged(&world, &|_| true), ["api", "web"]);
    assert_eq!(judged(&world, &|u| u == "d-web"), ["web"]);
    assert!(judged(&world, &|_| false).is_empty());
}
