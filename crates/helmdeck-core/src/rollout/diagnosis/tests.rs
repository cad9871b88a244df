use super::*;
use serde_json::{Value, json};

const UNSCHEDULABLE: &str = include_str!("../fixtures/pod-unschedulable.json");
const IMAGE_PULL: &str = include_str!("../fixtures/pod-imagepull.json");
const CRASHLOOP: &str = include_str!("../fixtures/pod-crashloop.json");
const CRASHLOOP_RUNNING: &str = include_str!("../fixtures/pod-crashloop-running.json");
const OOMKILLED: &str = include_str!("../fixtures/pod-oomkilled.json");
const READINESS: &str = include_str!("../fixtures/pod-readiness.json");
const CONFIG_ERROR: &str = include_str!("../fixtures/pod-config-error.json");
const EVICTED: &str = include_str!("../fixtures/pod-evicted.json");
const READY: &str = include_str!("../fixtures/pod-ready.json");

/// Well after every fixture's container started, so every readiness probe is due.
fn later() -> Timestamp {
    "2026-12-01T11:00:00Z".parse().expect("a timestamp")
}

/// The causes as of `later()`: the fixtures' times are fixed, the clock is not.
fn pod_causes(pod: &Pod, events: &[Event]) -> Vec<PodCause> {
    pod_causes_at(pod, &events.iter().collect::<Vec<_>>(), later())
}

/// A fixture is `{"pod": <Pod>, "events": [<Event>...]}` as the API returns them.
fn raw(text: &str) -> Value {
    serde_json::from_str(text).expect("fixture is JSON")
}

fn typed(v: Value) -> (Pod, Vec<Event>) {
    let pod = serde_json::from_value(v["pod"].clone()).expect("fixture pod is a Pod");
    let events = serde_json::from_value(v["events"].clone()).expect("fixture events are Events");
    (pod, events)
}

fn causes(text: &str) -> Vec<PodCause> {
    let (pod, events) = typed(raw(text));
    pod_causes(&pod, &events)
}

const SCHEDULER: &str = "0/3 nodes are available: 1 node(s) had untolerated taint \
    {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: \
    0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption \
    victims found for incoming pod.";

#[test]
fn unschedulable_from_the_condition() {
    let got = causes(UNSCHEDULABLE);
    assert_eq!(
        got,
        vec![PodCause::Unschedulable {
            message: SCHEDULER.into()
        }]
    );
    assert_eq!(got[0].summary(), format!("Unschedulable: {SCHEDULER}"));
}

#[test]
fn unschedulable_falls_back_to_the_latest_failed_scheduling_event() {
    let mut v = raw(UNSCHEDULABLE);
    v["pod"]["status"]["conditions"][0]["message"] = Value::Null;
    // The first event in the list is the older one (eventTime 10:02 vs 10:07): time wins.
    v["events"].as_array_mut().expect("events").reverse();
    let (pod, events) = typed(v);
    let want = PodCause::Unschedulable {
        message: SCHEDULER.into(),
    };
    assert_eq!(pod_causes(&pod, &events), vec![want]);
    assert_eq!(
        pod_causes(&pod, &[]),
        vec![PodCause::Unschedulable {
            message: String::new()
        }]
    );
    assert_eq!(pod_causes(&pod, &[])[0].summary(), "Unschedulable");
}

#[test]
fn image_pull_back_off_quotes_the_pull_error() {
    let got = causes(IMAGE_PULL);
    let image = "registry.example.com/shop/api:9.9.9";
    let message = format!(
        "Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and \
         unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
    );
    let want = PodCause::ImagePullBackOff {
        container: "api".into(),
        image: image.into(),
        message,
    };
    assert_eq!(got, vec![want]);
    assert_eq!(got[0].summary(), format!("ImagePullBackOff: {image}"));
}

#[test]
fn image_pull_reasons_without_events_use_the_waiting_message() {
    for reason in ["ErrImagePull", "InvalidImageName", "ImagePullBackOff"] {
        let mut v = raw(IMAGE_PULL);
        let c = &mut v["pod"]["status"]["containerStatuses"][0];
        c["state"]["waiting"] = json!({"reason": reason, "message": "couldn't parse image name"});
        c["image"] = json!("");
        let (pod, _) = typed(v);
        let want = PodCause::ImagePullBackOff {
            container: "api".into(),
            image: "registry.example.com/shop/api:9.9.9".into(),
            message: "couldn't parse image name".into(),
        };
        assert_eq!(pod_causes(&pod, &[]), vec![want], "{reason}");
    }
}

#[test]
fn crash_loop_back_off_with_the_last_exit() {
    let got = causes(CRASHLOOP);
    let want = PodCause::CrashLoopBackOff {
        container: "web".into(),
        restarts: 4,
        last_exit_code: Some(1),
        last_reason: Some("Error".into()),
    };
    assert_eq!(got, vec![want]);
    assert_eq!(got[0].summary(), "CrashLoopBackOff (exit 1, 4 restarts)");
}

#[test]
fn oom_killed_beats_crash_loop_back_off() {
    let got = causes(OOMKILLED);
    assert_eq!(
        got,
        vec![PodCause::OomKilled {
            container: "search".into(),
            restarts: 4
        }]
    );
    assert_eq!(got[0].summary(), "OOMKilled (4 restarts)");
    // The same container crash-looping for another reason is plain CrashLoopBackOff.
    let mut v = raw(OOMKILLED);
    v["pod"]["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"] =
        json!("Error");
    let (pod, events) = typed(v);
    assert!(matches!(
        pod_causes(&pod, &events)[..],
        [PodCause::CrashLoopBackOff { .. }]
    ));
}

#[test]
fn readiness_probe_failing_quotes_the_latest_readiness_event_of_this_pod() {
    // The later event from an earlier db-0 (other uid) and the liveness event don't count.
    let got = causes(READINESS);
    let message = "Readiness probe failed: /var/run/postgresql:5432 - rejecting connections\n";
    let want = PodCause::ReadinessProbeFailing {
        container: "postgres".into(),
        message: message.into(),
    };
    assert_eq!(got, vec![want]);
    assert_eq!(
        got[0].summary(),
        "Readiness probe failed: /var/run/postgresql:5432 - rejecting connections"
    );
}

#[test]
fn readiness_probe_failing_without_events() {
    let (pod, _) = typed(raw(READINESS));
    let got = pod_causes(&pod, &[]);
    let message = "readiness probe not passing".into();
    assert_eq!(
        got,
        vec![PodCause::ReadinessProbeFailing {
            container: "postgres".into(),
            message
        }]
    );
    assert_eq!(got[0].summary(), "Readiness probe not passing");
}

#[test]
fn events_match_by_name_and_namespace_when_the_pod_has_no_uid() {
    let mut v = raw(READINESS);
    v["pod"]["metadata"]["uid"] = Value::Null;
    let (pod, events) = typed(v.clone());
    let message = "Readiness probe failed: from the previous db-0, deleted by the rollout";
    let want = PodCause::ReadinessProbeFailing {
        container: "postgres".into(),
        message: message.into(),
    };
    assert_eq!(pod_causes(&pod, &events), vec![want]);
    // Another namespace, or another kind with the pod's name, is not about this pod.
    let no_probe_event = PodCause::ReadinessProbeFailing {
        container: "postgres".into(),
        message: PROBE_FALLBACK.into(),
    };
    let mut other = v.clone();
    for e in other["events"].as_array_mut().expect("events") {
        e["involvedObject"]["namespace"] = json!("staging");
    }
    let (pod, events) = typed(other);
    assert_eq!(pod_causes(&pod, &events), vec![no_probe_event.clone()]);
    for e in v["events"].as_array_mut().expect("events") {
        e["involvedObject"]["kind"] = json!("PersistentVolumeClaim");
    }
    let (pod, events) = typed(v);
    assert_eq!(pod_causes(&pod, &events), vec![no_probe_event]);
}

#[test]
fn other_waiting_reasons_are_container_waiting() {
    let got = causes(CONFIG_ERROR);
    let want = PodCause::ContainerWaiting {
        container: "worker".into(),
        reason: "CreateContainerConfigError".into(),
        message: "secret \"worker-env\" not found".into(),
    };
    // The completed init container is no cause.
    assert_eq!(got, vec![want]);
    assert_eq!(
        got[0].summary(),
        "CreateContainerConfigError: secret \"worker-env\" not found"
    );
}

#[test]
fn failed_pod_says_why_it_ended() {
    let got = causes(EVICTED);
    let want = PodCause::Failed {
        container: "web".into(),
        exit_code: 137,
        reason: "Evicted".into(),
        message: "The container could not be located when the pod was terminated".into(),
    };
    assert_eq!(got, vec![want]);
    assert_eq!(
        got[0].summary(),
        "Failed: Evicted (exit 137): The container could not be located when the pod was terminated"
    );
    let mut v = raw(EVICTED);
    v["pod"]["status"]["reason"] = Value::Null;
    v["pod"]["status"]["containerStatuses"][0]["state"] =
        json!({"terminated": {"exitCode": 2, "reason": "Error"}});
    let (pod, _) = typed(v.clone());
    let want = PodCause::Failed {
        container: "web".into(),
        exit_code: 2,
        reason: "Error".into(),
        message: String::new(),
    };
    assert_eq!(pod_causes(&pod, &[]), vec![want]);
    v["pod"]["status"]["containerStatuses"] = Value::Null;
    let (pod, _) = typed(v);
    let got = pod_causes(&pod, &[]);
    assert_eq!(
        got,
        vec![PodCause::Failed {
            container: String::new(),
            exit_code: 0,
            reason: "Failed".into(),
            message: String::new(),
        }]
    );
    assert_eq!(got[0].summary(), "Failed: Failed");
}

/// The termination message is often the only line that says why; it reaches the summary (and
/// so the evidence), first line only.
#[test]
fn a_termination_message_is_part_of_the_failed_summary() {
    let mut v = raw(EVICTED);
    v["pod"]["status"]["reason"] = Value::Null;
    v["pod"]["status"]["containerStatuses"][0]["state"] = json!({"terminated": {
        "exitCode": 1, "reason": "Error",
        "message": "migration 0042 failed: column \"email\" already exists\nat step 3"}});
    let (pod, _) = typed(v);
    let got = pod_causes(&pod, &[]);
    assert_eq!(
        got[0].summary(),
        "Failed: Error (exit 1): migration 0042 failed: column \"email\" already exists"
    );
}

#[test]
fn ready_pod_has_no_causes() {
    // Its last run was OOMKilled and an old readiness failure is on record: neither matters now.
    let (pod, events) = typed(raw(READY));
    assert!(is_pod_ready(&pod));
    assert_eq!(pod_causes(&pod, &events), vec![]);
    assert!(!is_pod_ready(&typed(raw(READINESS)).0));
    assert!(!is_pod_ready(&Pod::default()));
    assert_eq!(pod_causes(&Pod::default(), &events), vec![]);
}

#[test]
fn serialises_with_a_cause_tag() {
    let cause = PodCause::OomKilled {
        container: "search".into(),
        restarts: 4,
    };
    let want = json!({"cause": "OomKilled", "container": "search", "restarts": 4});
    assert_eq!(serde_json::to_value(cause).expect("serialises"), want);
}

#[test]
fn restarts_and_crash_summaries() {
    let crash = |restarts, last_exit_code, last_reason: Option<&str>| PodCause::CrashLoopBackOff {
        container: "c".into(),
        restarts,
        last_exit_code,
        last_reason: last_reason.map(Into::into),
    };
    assert_eq!(
        crash(1, None, None).summary(),
        "CrashLoopBackOff (1 restart)"
    );
    assert_eq!(
        crash(2, None, Some("Error")).summary(),
        "CrashLoopBackOff (Error, 2 restarts)"
    );
    assert_eq!(
        crash(3, Some(137), Some("Error")).summary(),
        "CrashLoopBackOff (exit 137, 3 restarts)"
    );
}

fn pod_with_labels(labels: Value) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": "p", "labels": labels}})).expect("a Pod")
}

#[test]
fn pod_generation_by_hash_label() {
    let rs_pod = pod_with_labels(json!({"pod-template-hash": "5d7c9b8f4"}));
    assert!(pod_is_current(&rs_pod, "5d7c9b8f4"));
    assert!(pod_is_current(&rs_pod, "web-5d7c9b8f4"));
    assert!(!pod_is_current(&rs_pod, "6c8f7d9b5"));
    assert!(!pod_is_current(&rs_pod, "web5d7c9b8f4"));
    assert!(!pod_is_current(&rs_pod, "d7c9b8f4"));
    assert!(!pod_is_current(&rs_pod, ""));
    let sts_pod = pod_with_labels(json!({"controller-revision-hash": "db-6b8d9c7f5"}));
    assert!(pod_is_current(&sts_pod, "db-6b8d9c7f5"));
    assert!(!pod_is_current(&sts_pod, "db-7b8d9c7f5"));
    let ds_pod = pod_with_labels(json!({"controller-revision-hash": "6b8d9c7f5"}));
    assert!(pod_is_current(&ds_pod, "agent-6b8d9c7f5"));
    assert!(!pod_is_current(
        &pod_with_labels(json!({"controller-revision-hash": ""})),
        ""
    ));
    assert!(!pod_is_current(&Pod::default(), "6b8d9c7f5"));
}

const WEB_UID: &str = "d0e1f2a3-b4c5-4d6e-8f70-8192a3b4c5d6";

fn replicaset(name: &str, owner_uid: &str, revision: &str) -> ReplicaSet {
    let hash = name.trim_start_matches("web-");
    serde_json::from_value(json!({"metadata": {
        "name": name,
        "labels": {"pod-template-hash": hash},
        "annotations": {"deployment.kubernetes.io/revision": revision},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                             "uid": owner_uid, "controller": true}],
    }}))
    .expect("a ReplicaSet")
}

fn web(revision: Option<&str>) -> Deployment {
    let annotations = revision.map(|r| json!({"deployment.kubernetes.io/revision": r}));
    serde_json::from_value(
        json!({"metadata": {"name": "web", "uid": WEB_UID, "annotations": annotations}}),
    )
    .expect("a Deployment")
}

#[test]
fn new_replicaset_by_revision_then_highest() {
    let all = [
        replicaset("web-5d7c9b8f4", WEB_UID, "2"),
        replicaset("web-6c8f7d9b5", WEB_UID, "10"),
        replicaset("web-7f9c8b6d5", "another-web-uid", "11"),
        replicaset("web-8a9b0c1d2", WEB_UID, "9"),
    ];
    let name = |rs: Option<&ReplicaSet>| rs.and_then(|r| r.metadata.name.clone());
    assert_eq!(
        name(new_replicaset(&web(Some("2")), &all)),
        Some("web-5d7c9b8f4".into())
    );
    // Numeric order: revision 10 is above 9 (a string compare would say otherwise).
    assert_eq!(
        name(new_replicaset(&web(None), &all)),
        Some("web-6c8f7d9b5".into())
    );
    assert_eq!(
        name(new_replicaset(&web(Some("11")), &all)),
        Some("web-6c8f7d9b5".into())
    );
    assert_eq!(new_replicaset(&web(Some("2")), &all[2..3]), None);
    assert_eq!(new_replicaset(&web(Some("2")), &[]), None);
    assert_eq!(template_hash(&all[1]), Some("6c8f7d9b5"));
    assert_eq!(template_hash(&ReplicaSet::default()), None);
}

#[test]
fn new_replicaset_by_owner_name_when_the_deployment_has_no_uid() {
    let all = [replicaset("web-5d7c9b8f4", WEB_UID, "1")];
    let mut d = web(Some("1"));
    d.metadata.uid = None;
    assert!(new_replicaset(&d, &all).is_some());
    d.metadata.name = Some("api".into());
    assert!(new_replicaset(&d, &all).is_none());
}

#[test]
fn events_of_another_container_do_not_count() {
    let mut v = raw(READINESS);
    for e in v["events"].as_array_mut().expect("events") {
        e["involvedObject"]["fieldPath"] = json!("spec.containers{exporter}");
    }
    let (pod, events) = typed(v);
    let want = PodCause::ReadinessProbeFailing {
        container: "postgres".into(),
        message: PROBE_FALLBACK.into(),
    };
    assert_eq!(pod_causes(&pod, &events), vec![want]);
}

#[test]
fn a_running_init_container_is_no_cause_but_its_waiting_containers_are() {
    let mut v = raw(CONFIG_ERROR);
    let status = &mut v["pod"]["status"];
    status["initContainerStatuses"][0]["state"] =
        json!({"running": {"startedAt": "2026-12-01T10:02:12Z"}});
    status["initContainerStatuses"][0]["ready"] = json!(false);
    status["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "PodInitializing"}});
    let (pod, events) = typed(v);
    let want = PodCause::ContainerWaiting {
        container: "worker".into(),
        reason: "PodInitializing".into(),
        message: String::new(),
    };
    assert_eq!(pod_causes(&pod, &events), vec![want]);
    assert_eq!(pod_causes(&pod, &events)[0].summary(), "PodInitializing");
}

#[test]
fn oom_killed_now_counts_but_a_present_image_problem_comes_first() {
    let mut v = raw(OOMKILLED);
    let c = &mut v["pod"]["status"]["containerStatuses"][0];
    c["state"] = json!({"terminated": {"exitCode": 137, "reason": "OOMKilled"}});
    c["lastState"] = json!({});
    let (pod, _) = typed(v.clone());
    let want = PodCause::OomKilled {
        container: "search".into(),
        restarts: 4,
    };
    assert_eq!(pod_causes(&pod, &[]), vec![want]);
    let mut v = raw(OOMKILLED);
    v["pod"]["status"]["containerStatuses"][0]["state"] =
        json!({"waiting": {"reason": "ErrImagePull", "message": "pull access denied"}});
    let (pod, _) = typed(v);
    assert!(matches!(
        pod_causes(&pod, &[])[..],
        [PodCause::ImagePullBackOff { .. }]
    ));
}

#[test]
fn a_restarted_container_running_again_is_still_crash_looping() {
    let got = causes(CRASHLOOP_RUNNING);
    assert_eq!(
        got,
        vec![PodCause::CrashLoopBackOff {
            container: "web".into(),
            restarts: 3,
            last_exit_code: Some(1),
            last_reason: Some("Error".into()),
        }]
    );
    assert_eq!(got[0].summary(), "CrashLoopBackOff (exit 1, 3 restarts)");
    // Terminated again, not yet waiting in back-off: the same.
    let mut v = raw(CRASHLOOP);
    v["pod"]["status"]["containerStatuses"][0]["state"] =
        json!({"terminated": {"exitCode": 1, "reason": "Error"}});
    let (pod, events) = typed(v);
    assert_eq!(
        pod_causes(&pod, &events)[0].summary(),
        "CrashLoopBackOff (exit 1, 4 restarts)"
    );
}

#[test]
fn a_restart_without_a_terminated_last_state_is_not_a_crash_loop() {
    let mut v = raw(READINESS);
    v["pod"]["status"]["containerStatuses"][0]["restartCount"] = json!(2);
    let (pod, events) = typed(v);
    assert!(matches!(
        pod_causes(&pod, &events)[..],
        [PodCause::ReadinessProbeFailing { .. }]
    ));
}

#[test]
fn a_readiness_probe_is_starting_until_its_delay_and_one_period_passed() {
    // postgres started at 10:02:12 with no initial delay and a 5 s period.
    let (pod, events) = typed(raw(READINESS));
    let events: Vec<&Event> = events.iter().collect();
    let at = |t: &str| pod_causes_at(&pod, &events, t.parse().expect("a timestamp"));
    let starting = vec![PodCause::Starting {
        container: "postgres".into(),
    }];
    assert_eq!(at("2026-12-01T10:02:12Z"), starting);
    assert_eq!(at("2026-12-01T10:02:16Z"), starting);
    assert_eq!(
        at("2026-12-01T10:02:16Z")[0].summary(),
        "Starting (readiness probe not due yet)"
    );
    assert!(matches!(
        at("2026-12-01T10:02:17Z")[..],
        [PodCause::ReadinessProbeFailing { .. }]
    ));
    // A clock behind the cluster's: the container has only just started.
    assert_eq!(at("2026-12-01T10:00:00Z"), starting);
}

#[test]
fn a_readiness_probe_waits_for_its_initial_delay_and_the_default_period() {
    let mut v = raw(READINESS);
    let probe = &mut v["pod"]["spec"]["containers"][0]["readinessProbe"];
    probe["initialDelaySeconds"] = json!(20);
    probe["periodSeconds"] = Value::Null;
    let (pod, events) = typed(v);
    let events: Vec<&Event> = events.iter().collect();
    let at = |t: &str| pod_causes_at(&pod, &events, t.parse().expect("a timestamp"));
    // Due 20 + 10 s after 10:02:12.
    assert!(matches!(
        at("2026-12-01T10:02:41Z")[..],
        [PodCause::Starting { .. }]
    ));
    assert!(matches!(
        at("2026-12-01T10:02:42Z")[..],
        [PodCause::ReadinessProbeFailing { .. }]
    ));
}

/// A Secret volume that does not exist keeps every container in ContainerCreating; the pod's
/// FailedMount event is the cause, said once for the pod, not a bare "ContainerCreating".
#[test]
fn a_volume_that_cannot_mount_is_named_from_its_event_once() {
    let mut v = raw(CONFIG_ERROR);
    let status = &mut v["pod"]["status"];
    status["initContainerStatuses"][0]["state"] = json!({"waiting": {"reason": "PodInitializing"}});
    status["initContainerStatuses"][0]["ready"] = json!(false);
    status["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "PodInitializing"}});
    let (pod, _) = typed(v.clone());
    let bare = pod_causes(&pod, &[]);
    let summaries: Vec<String> = bare.iter().map(PodCause::summary).collect();
    assert_eq!(
        summaries,
        ["init container wait-db: PodInitializing"],
        "{bare:?}"
    );
    let uid = v["pod"]["metadata"]["uid"].clone();
    let name = v["pod"]["metadata"]["name"].clone();
    let namespace = v["pod"]["metadata"]["namespace"].clone();
    let message = "MountVolume.SetUp failed for volume \"creds\" : secret \"db-creds\" not found";
    let event: Event = serde_json::from_value(json!({
        "metadata": {"name": "e1", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "name": name, "namespace": namespace, "uid": uid},
        "reason": "FailedMount", "type": "Warning", "message": message,
        "lastTimestamp": "2026-12-01T10:02:30Z"
    }))
    .expect("event");
    let causes = pod_causes(&pod, std::slice::from_ref(&event));
    let mounts: Vec<_> = causes
        .iter()
        .filter(|c| c.summary() == format!("FailedMount: {message}"))
        .collect();
    assert_eq!(mounts.len(), 1, "{causes:?}");
    assert_eq!(causes[0].summary(), format!("FailedMount: {message}"));
    // Two containers still being created by the same failed mount: one cause, not two.
    let mut two = v;
    two["pod"]["status"]["containerStatuses"][0]["state"] =
        json!({"waiting": {"reason": "ContainerCreating"}});
    let (pod, _) = typed(two);
    let causes = pod_causes(&pod, &[event]);
    assert_eq!(causes.len(), 1, "{causes:?}");
}

/// An initContainer that crash-loops is named as one, and the app containers that only wait
/// for it (PodInitializing) add no cause of their own.
#[test]
fn a_crash_looping_init_container_is_the_one_cause_and_named() {
    let mut v = raw(CONFIG_ERROR);
    let status = &mut v["pod"]["status"];
    status["initContainerStatuses"][0]["ready"] = json!(false);
    status["initContainerStatuses"][0]["restartCount"] = json!(2);
    status["initContainerStatuses"][0]["state"] =
        json!({"waiting": {"reason": "CrashLoopBackOff"}});
    status["initContainerStatuses"][0]["lastState"] =
        json!({"terminated": {"exitCode": 1, "reason": "Error"}});
    status["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "PodInitializing"}});
    let (pod, events) = typed(v);
    let summaries: Vec<String> = pod_causes(&pod, &events)
        .iter()
        .map(PodCause::summary)
        .collect();
    assert_eq!(
        summaries,
        ["init container wait-db: CrashLoopBackOff (exit 1, 2 restarts)"]
    );
}

/// A pod that failed because an initContainer exited non-zero (restartPolicy Never) names that
/// initContainer, not the app container that never ran.
#[test]
fn a_pod_failed_by_its_init_container_names_it() {
    let mut v = raw(CONFIG_ERROR);
    let status = &mut v["pod"]["status"];
    status["phase"] = json!("Failed");
    status["initContainerStatuses"][0]["ready"] = json!(false);
    status["initContainerStatuses"][0]["state"] =
        json!({"terminated": {"exitCode": 2, "reason": "Error"}});
    status["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "PodInitializing"}});
    let (pod, events) = typed(v);
    let summaries: Vec<String> = pod_causes(&pod, &events)
        .iter()
        .map(PodCause::summary)
        .collect();
    assert_eq!(
        summaries,
        ["init container wait-db: Failed: Error (exit 2)"]
    );
}
