use super::*;

fn writer(manager: &str) -> Writer<'_> {
    Writer {
        manager,
        subresource: None,
        api_version: "apps/v1",
        now: "2026-01-01T00:00:00Z",
    }
}

fn deploy(replicas: i64, image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps", "uid": "u", "labels": {"app": "web"}},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
}

fn created_by(manager: &str, obj: Value) -> Value {
    let mut live = obj.clone();
    record_create(&mut live, &obj, &writer(manager), "Apply");
    live
}

#[test]
fn a_field_set_keys_named_list_items_and_leaves_out_server_fields() {
    let set = field_set(&deploy(2, "x:1"));
    assert_eq!(
        Value::Object(set),
        json!({"f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}})
    );
}

#[test]
fn another_manager_changing_an_owned_field_conflicts_unless_forced() {
    let live = created_by("helm", deploy(2, "x:1"));
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 5}});
    let err = apply(&live, &body, &writer("b"), false).unwrap_err();
    assert_eq!((err.code, err.reason), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"helm\" using apps/v1: .spec.replicas"
    );
    assert_eq!(
        err.to_status()["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"helm\" using apps/v1",
            "field": ".spec.replicas"}])
    );
    // The same value is no conflict: the field is shared.
    let same = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}});
    let shared = apply(&live, &same, &writer("b"), false).unwrap();
    let managers: Vec<&str> = shared["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["helm", "b"]);
    // Forced, the field moves to `b`.
    let forced = apply(&live, &body, &writer("b"), true).unwrap();
    assert_eq!(forced["spec"]["replicas"], 5);
    let entries = forced["metadata"]["managedFields"].as_array().unwrap();
    assert!(entries[0]["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    assert_eq!(entries[1]["manager"], "b");
    assert_eq!(entries[1]["operation"], "Apply");
    assert!(entries[1]["fieldsV1"]["f:spec"].get("f:replicas").is_some());
}

#[test]
fn a_field_the_applier_stops_applying_goes_unless_someone_else_owns_it() {
    let mut first = deploy(2, "x:1");
    first["spec"]["paused"] = json!(true);
    first["metadata"]["labels"]["tier"] = json!("web");
    let live = created_by("helm", first);
    let mut live = apply(
        &live,
        &json!({"metadata": {"name": "web", "labels": {"tier": "web"}}}),
        &writer("other"),
        false,
    )
    .unwrap();
    // Defaults the server filled are no one's, and stay.
    live["spec"]["progressDeadlineSeconds"] = json!(600);
    let next = apply(&live, &deploy(2, "x:2"), &writer("helm"), false).unwrap();
    assert!(next["spec"].get("paused").is_none(), "{next}");
    assert_eq!(
        next["metadata"]["labels"]["tier"], "web",
        "`other` still applies it"
    );
    assert_eq!(next["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(
        next["spec"]["template"]["spec"]["containers"][0]["image"],
        "x:2"
    );
}

#[test]
fn an_update_takes_the_fields_it_changes_from_the_applier() {
    let live = created_by("helm", deploy(2, "x:1"));
    let mut scaled = live.clone();
    scaled["spec"]["replicas"] = json!(4);
    record_update(&live, &mut scaled, &writer("kubectl-scale"));
    let entries = scaled["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (&entries[1]["manager"], &entries[1]["operation"]),
        (&json!("kubectl-scale"), &json!("Update"))
    );
    assert_eq!(
        entries[1]["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(entries[0]["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    // helm applying its old replicas now conflicts with the scaler (with its time).
    let err = apply(&scaled, &deploy(2, "x:1"), &writer("helm"), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-scale\" using apps/v1 at 2026-01-01T00:00:00Z: .spec.replicas"
    );
}

#[test]
fn several_conflicts_are_listed_by_manager() {
    let live = created_by("helm", deploy(2, "x:1"));
    let err = apply(&live, &deploy(3, "x:9"), &writer("b"), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"helm\" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name=\"c\"].image"
    );
}

#[test]
fn a_write_through_scale_is_its_own_entry_and_named_so_in_a_conflict() {
    let live = created_by("helm", deploy(2, "x:1"));
    let mut scaled = live.clone();
    scaled["spec"]["replicas"] = json!(4);
    let scaler = Writer {
        subresource: Some("scale"),
        ..writer("kubectl")
    };
    record_update(&live, &mut scaled, &scaler);
    assert_eq!(
        scaled["metadata"]["managedFields"][1]["subresource"],
        "scale"
    );
    let err = apply(&scaled, &deploy(2, "x:1"), &writer("helm"), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl\" with subresource \"scale\" using apps/v1 at 2026-01-01T00:00:00Z: .spec.replicas"
    );
}

#[test]
fn a_write_that_is_not_an_apply_sets_managed_fields_as_the_api_does() {
    let live = created_by("helmdeck", deploy(2, "x:1"));
    let mut handed = live["metadata"]["managedFields"].clone();
    handed[0]["manager"] = json!("helm");
    // Given entries replace the live ones; the write changed nothing else, so no entry is added.
    let mut new = live.clone();
    record_write(&live, &mut new, Some(&handed), &writer("kubectl-patch"));
    assert_eq!(new["metadata"]["managedFields"], handed);
    // helm now owns what helmdeck applied: its apply of a new value does not conflict.
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 5}});
    assert!(apply(&new, &body, &writer("helm"), false).is_ok());
    assert!(apply(&live, &body, &writer("helm"), false).is_err());
    // `[{}]` and `[]` clear them, and nothing is tracked after.
    for reset in [json!([{}]), json!([])] {
        let mut cleared = live.clone();
        cleared["spec"]["replicas"] = json!(3);
        record_write(&live, &mut cleared, Some(&reset), &writer("kubectl-patch"));
        assert!(
            cleared["metadata"].get("managedFields").is_none(),
            "{reset}"
        );
    }
    // Absent or undecodable: the live ones stay, and the writer gets what it changed.
    let bad = json!([{"manager": "x", "operation": "Delete", "apiVersion": "v1",
        "fieldsType": "FieldsV1", "fieldsV1": {}}]);
    for asked in [None, Some(&bad)] {
        let mut changed = live.clone();
        changed["spec"]["replicas"] = json!(3);
        record_write(&live, &mut changed, asked, &writer("kubectl-patch"));
        let managers: Vec<&str> = changed["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["helmdeck", "kubectl-patch"], "{asked:?}");
    }
}
