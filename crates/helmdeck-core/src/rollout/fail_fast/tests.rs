use super::*;
use serde_json::json;

fn pod(name: &str, restarts: i32, waiting: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "uid": name},
        "status": {"containerStatuses": [{"name": "api", "ready": false, "restartCount": restarts,
            "image": "i", "imageID": "", "state": {"waiting": {"reason": waiting}}}]}
    }))
    .unwrap()
}

fn event(reason: &str, message: &str, count: i32) -> Event {
    serde_json::from_value(json!({
        "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"},
        "reason": reason, "message": message, "count": count, "type": "Warning"
    }))
    .unwrap()
}

fn meta(annotations: serde_json::Value) -> ObjectMeta {
    serde_json::from_value(json!({"name": "api", "annotations": annotations})).unwrap()
}

#[test]
fn restarts_over_n_times_replicas_fail_and_at_the_limit_do_not() {
    let (a, b) = (
        pod("a", 1, "CrashLoopBackOff"),
        pod("b", 1, "CrashLoopBackOff"),
    );
    // 2 restarts, 1 allowed × 2 replicas: at the limit, still waiting.
    assert_eq!(exceeded(1, 2, &[(&a, &[]), (&b, &[])]), None);
    let c = pod("b", 2, "CrashLoopBackOff");
    assert_eq!(
        exceeded(1, 2, &[(&a, &[]), (&c, &[])]).as_deref(),
        Some("fail fast: 3 restarts > 1 allowed × 2 replicas")
    );
    assert_eq!(
        exceeded(0, 1, &[(&a, &[])]).as_deref(),
        Some("fail fast: 1 restarts > 0 allowed × 1 replica")
    );
    assert_eq!(exceeded(0, 1, &[]), None, "no new pods, nothing failed");
}

#[test]
fn image_pull_and_config_error_events_count_by_their_count() {
    let p = pod("api-x", 0, "ImagePullBackOff");
    let pulls = [
        event("BackOff", "Back-off pulling image \"nope:1\"", 2),
        event("Failed", "Error: ImagePullBackOff", 1),
    ];
    assert_eq!(
        exceeded(3, 1, &[(&p, &refs(&pulls))]),
        None,
        "3 events, 3 allowed"
    );
    assert_eq!(
        exceeded(2, 1, &[(&p, &refs(&pulls))]).as_deref(),
        Some("fail fast: pod api-x had 3 ImagePullBackOff events > 2 allowed")
    );
    let c = pod("api-y", 0, "CreateContainerConfigError");
    let config = [event(
        "Failed",
        "Error: secret \"trust-secrets\" not found",
        4,
    )];
    assert!(
        exceeded(3, 1, &[(&c, &refs(&config))])
            .is_some_and(|r| r.contains("4 CreateContainerConfigError events")),
    );
    // The same wording while the pod is not in CreateContainerConfigError is another failure.
    let other = pod("api-z", 0, "RunContainerError");
    assert_eq!(exceeded(0, 1, &[(&other, &refs(&config))]), None);
}

#[test]
fn crash_loop_backoff_events_and_other_reasons_do_not_count() {
    let p = pod("api-x", 0, "CrashLoopBackOff");
    let events = [
        event(
            "BackOff",
            "Back-off restarting failed container api in pod x",
            9,
        ),
        event("Unhealthy", "Readiness probe failed: ErrImagePull", 9),
    ];
    assert_eq!(exceeded(0, 1, &[(&p, &refs(&events))]), None);
}

#[test]
fn the_annotation_wins_over_the_flag_and_a_bad_one_turns_it_off_with_a_warning() {
    assert_eq!(allowed(Some(2), &meta(json!({}))), (Some(2), None));
    assert_eq!(allowed(None, &meta(json!({}))), (None, None));
    let werf = meta(json!({"werf.io/failures-allowed-per-replica": "0"}));
    assert_eq!(allowed(Some(2), &werf), (Some(0), None));
    assert_eq!(allowed(None, &werf), (Some(0), None));
    let both = meta(json!({"werf.io/failures-allowed-per-replica": "0",
                           "helmdeck.io/failures-allowed-per-replica": "5"}));
    assert_eq!(allowed(None, &both), (Some(5), None));
    for bad in ["-1", "two", "1.5", ""] {
        let m = meta(json!({"helmdeck.io/failures-allowed-per-replica": bad}));
        let (limit, warning) = allowed(Some(2), &m);
        assert_eq!(limit, None, "{bad:?}");
        let warning = warning.unwrap_or_default();
        assert!(
            warning.starts_with("api: annotation helmdeck.io/failures-allowed-per-replica="),
            "{warning}"
        );
    }
}

fn refs(events: &[Event]) -> Vec<&Event> {
    events.iter().collect()
}
