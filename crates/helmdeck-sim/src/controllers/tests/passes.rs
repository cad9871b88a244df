//! Tests of the reconcile loop as a whole: forgetting deleted workloads, no writes when
//! nothing changes, re-listing after a lagged feed, and the scale benchmark.

use super::*;

#[test]
fn deleting_a_deployment_forgets_its_pods_and_logs() {
    let mut h = Harness::new("workloads:\n  - match: web\n    logs: [\"hi\"]\n");
    h.create(*ids::DEPLOYMENTS, deployment("web", 2));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    let pod = meta(&h.list(*ids::PODS, "web-")[0], "name").to_string();
    assert!(h.sim.logs.read(NS, &pod, "app", false).is_some());
    h.sim
        .store
        .delete(*ids::DEPLOYMENTS, Some(NS), "web")
        .unwrap();
    h.run(Duration::from_millis(300));
    assert!(h.list(*ids::PODS, "web-").is_empty());
    assert!(h.sim.logs.read(NS, &pod, "app", false).is_none());
    assert!(h.ctl.pods.is_empty());
}

#[test]
fn quiet_cluster_writes_nothing() {
    let mut h = Harness::new("{}");
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    h.create(*ids::STATEFULSETS, statefulset("db", 2));
    h.create(*ids::DAEMONSETS, daemonset("agent"));
    h.create(*ids::JOBS, job("init", 1));
    h.run(Duration::from_secs(15));
    let rv = h.sim.store.current_rv();
    h.run(Duration::from_secs(2));
    assert_eq!(
        h.sim.store.current_rv(),
        rv,
        "settled objects are not rewritten"
    );
}

/// Not a test of behaviour: prints how long passes take at the target scale
/// (`cargo test --release --lib controllers::tests::passes::scale -- --ignored --nocapture`).
#[test]
#[ignore]
fn scale_1000_workloads_10000_pods() {
    let mut h = Harness::new("{}");
    for i in 0..1000 {
        h.create(*ids::DEPLOYMENTS, deployment(&format!("w{i}"), 10));
    }
    let started = Instant::now();
    h.run(Duration::from_secs(3));
    eprintln!("30 passes while rolling out: {:?}", started.elapsed());
    assert_eq!(h.sim.store.list(*ids::PODS, None, |_| true).0.len(), 10_000);
    let started = Instant::now();
    h.run(Duration::from_secs(3));
    eprintln!("30 settled passes: {:?}", started.elapsed());
    for i in 0..1000 {
        h.set_image(*ids::DEPLOYMENTS, &format!("w{i}"), "web:2");
    }
    let started = Instant::now();
    let done = h.run_until(Duration::from_secs(60), |h| {
        (0..1000)
            .step_by(97)
            .all(|i| h.rollout(*ids::DEPLOYMENTS, &format!("w{i}")) == Rollout::Done)
    });
    eprintln!(
        "rolling update of every Deployment (done: {done}): {:?}",
        started.elapsed()
    );
}

#[test]
fn relisting_after_a_lagged_feed_changes_nothing() {
    let mut h = Harness::new("{}");
    h.create(*ids::DEPLOYMENTS, deployment("web", 3));
    h.create(*ids::STATEFULSETS, statefulset("db", 2));
    assert!(h.run_until(Duration::from_secs(10), |h| {
        h.rollout(*ids::DEPLOYMENTS, "web") == Rollout::Done
            && h.rollout(*ids::STATEFULSETS, "db") == Rollout::Done
    }));
    h.run(Duration::from_secs(1));
    let rv = h.sim.store.current_rv();
    h.ctl.cache = super::super::cache::Cache::default();
    h.run(Duration::from_secs(1));
    assert_eq!(h.sim.store.current_rv(), rv);
    // Changes made while the feed was being rebuilt are still seen.
    h.ctl.cache = super::super::cache::Cache::default();
    h.set_image(*ids::DEPLOYMENTS, "web", "web:2");
    assert!(h.run_until(Duration::from_secs(10), |h| {
        let d = h.get(*ids::DEPLOYMENTS, "web");
        n(&d, "/status/observedGeneration") == 2
            && h.rollout(*ids::DEPLOYMENTS, "web") == Rollout::Done
    }));
    assert_eq!(h.list(*ids::PODS, "web-").len(), 3);
}

/// With `event_ttl`, an Event goes that long after its last write, as the API server's
/// `--event-ttl` has it; without, Events stay.
#[test]
fn events_expire_after_the_scenarios_event_ttl() {
    let all_events = |h: &Harness| h.sim.store.list(*ids::EVENTS, Some(NS), |_| true).0.len();
    let mut kept = Harness::new("");
    let mut expiring = Harness::new("event_ttl: 3s\n");
    for h in [&mut kept, &mut expiring] {
        h.create(*ids::DEPLOYMENTS, deployment("web", 2));
        assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    }
    let written = all_events(&expiring);
    assert!(written > 0);
    assert_eq!(
        all_events(&kept),
        written,
        "the same story, the same Events"
    );
    expiring.run(Duration::from_secs(1));
    assert_eq!(all_events(&expiring), written, "not yet");
    for h in [&mut kept, &mut expiring] {
        h.run(Duration::from_secs(3));
    }
    assert_eq!(all_events(&expiring), 0);
    assert_eq!(all_events(&kept), written);
}

/// A TTL past what the clock can hold is no expiry, never an overflow in the controllers.
#[test]
fn an_event_ttl_too_long_for_the_clock_never_expires() {
    let mut h = Harness::new("event_ttl: 2562047788015215h\n");
    h.create(*ids::DEPLOYMENTS, deployment("web", 2));
    assert!(h.rolls_out(*ids::DEPLOYMENTS, "web", 10));
    h.run(Duration::from_secs(5));
    assert!(
        !h.sim
            .store
            .list(*ids::EVENTS, Some(NS), |_| true)
            .0
            .is_empty()
    );
}
