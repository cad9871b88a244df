//! Over HTTP against a running simulator: every row of the kind table round-trips
//! create/get/put/merge-patch/list/watch/delete; CRDs register and unregister their kinds;
//! `dryRun=All` writes nothing; admission answers as the API server does; strict field
//! validation only where a schema exists; the scale subresource.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::resources::{self, RESOURCES, ResourceType};
use super::run::{self, Running};
use super::{Scenario, crd};

pub(super) async fn sim() -> Running {
    let scenario = Scenario::parse("namespaces: [apps]\n", "kinds").unwrap();
    let sim = run::start(scenario, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    // The node controller registers the nodes just after start; rv checks wait for that.
    while !sim.server.sim.store.counts().contains_key("Node") {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    sim
}

/// One request on its own connection; the status code and the raw body (a watch's body
/// still has its chunk framing, which the tests only search).
async fn http(
    sim: &Running,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<&Value>,
) -> (u16, String) {
    let mut stream = TcpStream::connect(sim.addr).await.unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: sim\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

/// Opens a watch and reads until `needle` shows up (or 5 s pass); what was read.
async fn watch_until(sim: &Running, path: &str, needle: &str) -> String {
    let mut stream = TcpStream::connect(sim.addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: sim\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let read = async {
        while !seen.contains(needle) {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), read).await;
    seen
}

pub(super) async fn get(sim: &Running, path: &str) -> (u16, Value) {
    let (code, body) = http(sim, "GET", path, "application/json", None).await;
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

async fn send(sim: &Running, method: &str, path: &str, ct: &str, body: &Value) -> (u16, Value) {
    let (code, text) = http(sim, method, path, ct, Some(body)).await;
    (code, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn rv(sim: &Running) -> u64 {
    sim.server.sim.store.current_rv()
}

pub fn widget_crd(group: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wdg"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})
}

/// The smallest object of `rt` the simulator accepts.
fn minimal(rt: &ResourceType) -> Value {
    let name = format!("t-{}", rt.singular);
    let mut obj =
        json!({"apiVersion": rt.api_version(), "kind": rt.kind, "metadata": {"name": name}});
    let template = json!({"metadata": {"labels": {"app": "t"}},
        "spec": {"containers": [{"name": "c", "image": "x:1"}]}});
    match rt.kind {
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => {
            obj["spec"] = json!({"selector": {"matchLabels": {"app": "t"}}, "template": template});
        }
        "Pod" => obj["spec"] = template["spec"].clone(),
        "CustomResourceDefinition" => obj = widget_crd("roundtrip.test.io"),
        _ => {}
    }
    obj
}

#[tokio::test]
async fn every_row_of_the_kind_table_round_trips_over_http() {
    let sim = sim().await;
    for rt in RESOURCES {
        let obj = minimal(rt);
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let coll = rt.collection_path(Some("apps"));
        let item = format!("{coll}/{name}");
        let before = rv(&sim);
        let (code, created) = send(&sim, "POST", &coll, "application/json", &obj).await;
        assert_eq!(code, 201, "create {}: {created}", rt.kind);
        assert_eq!(created["kind"], rt.kind);
        assert_eq!(
            created["metadata"].get("namespace").is_some(),
            rt.namespaced,
            "{}",
            rt.kind
        );
        let (code, got) = get(&sim, &item).await;
        assert_eq!(
            (code, &got["metadata"]["uid"]),
            (200, &created["metadata"]["uid"]),
            "get {}",
            rt.kind
        );
        // PUT the object back with a label, then a merge patch adds an annotation: both keep
        // what the other wrote and move the resourceVersion.
        let mut put = got.clone();
        put["metadata"]["labels"] = json!({"round": "trip"});
        let (code, replaced) = send(&sim, "PUT", &item, "application/json", &put).await;
        assert_eq!(code, 200, "put {}: {replaced}", rt.kind);
        assert_eq!(
            replaced["metadata"]["labels"]["round"], "trip",
            "put {}",
            rt.kind
        );
        assert_ne!(
            replaced["metadata"]["resourceVersion"], got["metadata"]["resourceVersion"],
            "put {}",
            rt.kind
        );
        let (code, _) = send(&sim, "PUT", &item, "application/json", &put).await;
        assert_eq!(code, 409, "a stale put of {}", rt.kind);
        let (code, patched) = send(
            &sim,
            "PATCH",
            &item,
            "application/merge-patch+json",
            &json!({"metadata": {"annotations": {"patched": "yes"}}}),
        )
        .await;
        assert_eq!(code, 200, "merge patch {}: {patched}", rt.kind);
        assert_eq!(
            (
                &patched["metadata"]["annotations"]["patched"],
                &patched["metadata"]["labels"]["round"]
            ),
            (&json!("yes"), &json!("trip")),
            "merge patch {}",
            rt.kind
        );
        assert_eq!(
            get(&sim, &item).await.1["metadata"]["annotations"]["patched"],
            "yes",
            "stored patch {}",
            rt.kind
        );
        let (code, list) = get(&sim, &coll).await;
        assert_eq!(code, 200);
        assert_eq!(list["kind"], format!("{}List", rt.kind));
        assert!(
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["metadata"]["name"] == name),
            "list {}",
            rt.kind
        );
        let watch = format!("{coll}?watch=true&resourceVersion={before}");
        let added = format!(
            "{{\"object\":{{\"apiVersion\":\"{}\",\"kind\":\"{}\"",
            rt.api_version(),
            rt.kind
        );
        let events = watch_until(&sim, &watch, &added).await;
        assert!(
            events.starts_with("HTTP/1.1 200")
                && events.contains(&added)
                && events.contains("\"type\":\"ADDED\"")
                && events.contains(&format!("\"{name}\"")),
            "watch {}: {events}",
            rt.kind
        );
        let (code, _) = http(&sim, "DELETE", &item, "application/json", None).await;
        assert_eq!(code, 200, "delete {}", rt.kind);
        let (code, _) = get(&sim, &item).await;
        assert_eq!(code, 404, "gone {}", rt.kind);
    }
}

#[tokio::test]
async fn discovery_and_openapi_cover_every_group_version() {
    let sim = sim().await;
    let (_, apis) = get(&sim, "/apis").await;
    let (_, openapi) = get(&sim, "/openapi/v3").await;
    for rt in RESOURCES {
        let gv = rt.api_version();
        let path = if rt.group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{gv}")
        };
        let (code, list) = get(&sim, &path).await;
        assert_eq!(code, 200, "{gv}");
        assert!(
            list["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["name"] == rt.plural),
            "{} in {gv}",
            rt.plural
        );
        if !rt.group.is_empty() {
            assert!(
                apis["groups"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|g| g["name"] == rt.group),
                "{} in /apis",
                rt.group
            );
        }
        let url = openapi["paths"][path.trim_start_matches('/')]["serverRelativeURL"]
            .as_str()
            .unwrap_or_else(|| panic!("{gv} in /openapi/v3"));
        let (code, doc) = get(&sim, url).await;
        assert_eq!(code, 200, "{url}");
        let kinds: Vec<&Value> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|p| &p["patch"]["x-kubernetes-group-version-kind"]["kind"])
            .collect();
        assert!(kinds.contains(&&json!(rt.kind)), "{} in {url}", rt.kind);
    }
}

#[tokio::test]
async fn a_crd_serves_its_kind_until_it_is_deleted() {
    let sim = sim().await;
    let group = "crdlife.test.io";
    let (code, crd) = send(
        &sim,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "application/json",
        &widget_crd(group),
    )
    .await;
    assert_eq!(code, 201, "{crd}");
    let established = crd["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    assert!(established, "{crd}");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");

    let (code, list) = get(&sim, &format!("/apis/{group}/v1")).await;
    assert_eq!(code, 200);
    let names: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["widgets", "widgets/status"]);
    assert_eq!(list["resources"][0]["shortNames"], json!(["wdg"]));
    let (_, apis) = get(&sim, "/apis").await;
    assert!(
        apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == group)
    );
    let (code, doc) = get(&sim, &format!("/openapi/v3/apis/{group}/v1")).await;
    assert_eq!(code, 200);
    assert!(
        doc["components"]["schemas"]["io.test.crdlife.v1.Widget"]["properties"]["spec"].is_object(),
        "{doc}"
    );

    let coll = format!("/apis/{group}/v1/namespaces/apps/widgets");
    let cr = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1}});
    let (code, created) = send(&sim, "POST", &coll, "application/json", &cr).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    let item = format!("{coll}/w1");
    let (code, patched) = send(
        &sim,
        "PATCH",
        &item,
        "application/merge-patch+json",
        &json!({"spec": {"size": 2}}),
    )
    .await;
    assert_eq!((code, &patched["spec"]["size"]), (200, &json!(2)));
    assert_eq!(patched["metadata"]["generation"], 2);
    let (code, patched) = send(
        &sim,
        "PATCH",
        &item,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/size", "value": 3}]),
    )
    .await;
    assert_eq!((code, &patched["spec"]["size"]), (200, &json!(3)));
    let (code, status) = send(
        &sim,
        "PATCH",
        &item,
        "application/strategic-merge-patch+json",
        &json!({"spec": {"size": 4}}),
    )
    .await;
    assert_eq!(
        code, 415,
        "strategic merge is refused for custom resources: {status}"
    );
    let (code, status) = send(
        &sim,
        "PATCH",
        &format!("{coll}/w2?fieldManager=helm&fieldValidation=Strict"),
        "application/apply-patch+yaml",
        &json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
            "metadata": {"name": "w2"}, "spec": {"size": 1, "colour": "red"}}),
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "strict decoding error: unknown field \"spec.colour\""
    );
    let (code, _) = send(
        &sim,
        "PATCH",
        &format!("{coll}/w2?fieldManager=helm&fieldValidation=Strict"),
        "application/apply-patch+yaml",
        &json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
            "metadata": {"name": "w2"}, "spec": {"size": 1}}),
    )
    .await;
    assert_eq!(code, 201);

    let (code, _) = http(
        &sim,
        "DELETE",
        &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(get(&sim, &format!("/apis/{group}/v1")).await.0, 404);
    assert_eq!(get(&sim, &item).await.0, 404);
    let (_, apis) = get(&sim, "/apis").await;
    assert!(
        !apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == group)
    );
    assert!(
        !sim.server.sim.store.counts().contains_key("Widget"),
        "its objects went with it"
    );
}

#[tokio::test]
async fn dry_run_validates_and_writes_nothing() {
    let sim = sim().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}});
    let coll = "/api/v1/namespaces/apps/configmaps";
    let before = rv(&sim);
    let (code, answer) = send(
        &sim,
        "POST",
        &format!("{coll}?dryRun=All"),
        "application/json",
        &cm,
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(
        answer["metadata"]["namespace"], "apps",
        "answered as if stored"
    );
    let (code, _) = send(
        &sim,
        "PATCH",
        &format!("{coll}/dry2?dryRun=All&fieldManager=kubectl"),
        "application/apply-patch+yaml",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry2"}}),
    )
    .await;
    assert_eq!(code, 201);
    let (code, _) = send(
        &sim,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All",
        "application/json",
        &widget_crd("dry.test.io"),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(rv(&sim), before, "no write, no rv bump");
    assert_eq!(get(&sim, &format!("{coll}/dry")).await.0, 404);
    assert_eq!(
        get(&sim, "/apis/dry.test.io/v1").await.0,
        404,
        "a dry-run CRD serves nothing"
    );

    let (code, _) = send(&sim, "POST", coll, "application/json", &cm).await;
    assert_eq!(code, 201);
    let before = rv(&sim);
    let (code, _) = send(
        &sim,
        "PATCH",
        &format!("{coll}/dry?dryRun=All"),
        "application/merge-patch+json",
        &json!({"data": {"a": "b"}}),
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = http(
        &sim,
        "DELETE",
        &format!("{coll}/dry?dryRun=All"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(rv(&sim), before);
    let (_, stored) = get(&sim, &format!("{coll}/dry")).await;
    assert!(stored.get("data").is_none(), "{stored}");
    let bad = send(
        &sim,
        "POST",
        &format!("{coll}?dryRun=Maybe"),
        "application/json",
        &cm,
    )
    .await;
    assert_eq!(bad.0, 400);
    let invalid =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid"}});
    let (code, status) = send(
        &sim,
        "POST",
        &format!("{coll}?dryRun=All"),
        "application/json",
        &invalid,
    )
    .await;
    assert_eq!(code, 422, "dry run still validates: {status}");
}

#[tokio::test]
async fn admission_answers_as_the_api_server_does() {
    let sim = sim().await;
    let cm =
        |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    let (code, status) = send(
        &sim,
        "POST",
        "/api/v1/namespaces/nope/configmaps",
        "application/json",
        &cm("a"),
    )
    .await;
    assert_eq!(
        (code, status["message"].as_str()),
        (404, Some("namespaces \"nope\" not found"))
    );
    let cr = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "system:test", "namespace": "apps"}, "rules": []});
    let (code, _) = send(
        &sim,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/apps/clusterroles",
        "application/json",
        &cr,
    )
    .await;
    assert_eq!(code, 404, "a cluster-scoped kind has no namespaced URL");
    let (code, stored) = send(
        &sim,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "application/json",
        &cr,
    )
    .await;
    assert_eq!(code, 201, "{stored}");
    assert!(
        stored["metadata"].get("namespace").is_none(),
        "stored without its namespace"
    );
    let (code, status) = send(
        &sim,
        "POST",
        "/api/v1/namespaces/apps/configmaps",
        "application/json",
        &cm("Bad_Name"),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    let (code, status) = send(
        &sim,
        "POST",
        "/api/v1/namespaces/apps/secrets",
        "application/json",
        &cm("kind-mismatch"),
    )
    .await;
    assert_eq!(code, 400, "{status}");
    let (code, _) = send(
        &sim,
        "POST",
        "/apis/apps/v1/namespaces/apps/deployments",
        "application/json",
        &json!({"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "x"}}),
    )
    .await;
    assert_eq!(code, 400, "apiVersion mismatch");
    let vwc = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "hook"}, "webhooks": [{"name": "v.example.com", "admissionReviewVersions": ["v1"],
        "sideEffects": "None", "clientConfig": {"url": "https://127.0.0.1:1/never"}}]});
    let (code, _) = send(
        &sim,
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        "application/json",
        &vwc,
    )
    .await;
    assert_eq!(code, 201);
    let (code, _) = send(
        &sim,
        "POST",
        "/api/v1/namespaces/apps/configmaps",
        "application/json",
        &cm("after-hook"),
    )
    .await;
    assert_eq!(code, 201, "webhooks are stored, never called");
}

#[test]
fn interned_custom_kinds_are_not_served_by_other_simulators() {
    let a = super::Store::new();
    let b = super::Store::new();
    let crd = widget_crd("isolated.test.io");
    a.create(*resources::ids::CRDS, None, crd.clone()).unwrap();
    assert!(
        a.resolve_path("isolated.test.io", "v1", "widgets")
            .is_some()
    );
    assert!(
        b.resolve_path("isolated.test.io", "v1", "widgets")
            .is_none()
    );
    assert!(crd::served_versions(&crd).is_ok());
}

/// A Widget CRD whose v1 declares a scale subresource at non-default places.
fn scalable_crd(group: &str) -> Value {
    let mut crd = widget_crd(group);
    crd["spec"]["versions"][0]["subresources"]["scale"] = json!({
        "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.ready",
        "labelSelectorPath": ".status.selector"});
    crd
}

#[tokio::test]
async fn the_scale_subresource_reads_and_writes_the_parents_replicas() {
    let sim = sim().await;
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web", "tier": "front"}},
            "template": {"metadata": {"labels": {"app": "web", "tier": "front"}},
                "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}});
    let coll = "/apis/apps/v1/namespaces/apps/deployments";
    let (code, created) = send(&sim, "POST", coll, "application/json", &deploy).await;
    assert_eq!(code, 201, "{created}");
    let scale = format!("{coll}/web/scale");
    let (code, got) = get(&sim, &scale).await;
    assert_eq!(code, 200, "{got}");
    assert_eq!(
        (&got["apiVersion"], &got["kind"]),
        (&json!("autoscaling/v1"), &json!("Scale"))
    );
    assert_eq!(got["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(got["spec"]["replicas"], 1);
    assert_eq!(got["status"]["selector"], "app=web,tier=front");
    assert!(got.get("template").is_none() && got["spec"].get("template").is_none());

    let mut stale = got.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    stale["spec"]["replicas"] = json!(5);
    let (code, _) = send(&sim, "PUT", &scale, "application/json", &stale).await;
    assert_eq!(code, 409, "a stale Scale is the parent's conflict");
    // The deployment controller's status writes move the parent's rv under a GET-then-PUT:
    // retry on a conflict with a fresh Scale, as `kubectl scale` does.
    let (mut code, mut answer) = (0, Value::Null);
    for _ in 0..20 {
        let (_, mut put) = get(&sim, &scale).await;
        put["spec"]["replicas"] = json!(2);
        (code, answer) = send(&sim, "PUT", &scale, "application/json", &put).await;
        if code != 409 {
            break;
        }
    }
    assert_eq!(
        (code, &answer["spec"]["replicas"]),
        (200, &json!(2)),
        "{answer}"
    );
    let generation = |o: &Value| o["metadata"]["generation"].as_i64().unwrap();
    let mut last = generation(&created);
    let (_, parent) = get(&sim, &format!("{coll}/web")).await;
    assert_eq!(parent["spec"]["replicas"], 2);
    assert!(generation(&parent) > last, "a scale is a spec change");
    last = generation(&parent);
    // The Scale's resourceVersion is the parent's at the write; the controllers may have
    // written the parent's status since, never before.
    let version = |o: &Value| {
        o["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap()
    };
    assert!(version(&answer) <= version(&parent), "{answer} {parent}");
    assert!(version(&answer) > version(&created), "{answer}");

    for (want, (ct, body)) in (3..).zip([
        (
            "application/merge-patch+json",
            json!({"spec": {"replicas": 3}}),
        ),
        (
            "application/strategic-merge-patch+json",
            json!({"spec": {"replicas": 4}}),
        ),
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]),
        ),
        (
            "application/apply-patch+yaml",
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "web"}, "spec": {"replicas": 6}}),
        ),
    ]) {
        let (code, answer) =
            send(&sim, "PATCH", &format!("{scale}?fieldManager=t"), ct, &body).await;
        assert_eq!(
            (code, &answer["spec"]["replicas"]),
            (200, &json!(want)),
            "{ct}: {answer}"
        );
        let (_, parent) = get(&sim, &format!("{coll}/web")).await;
        assert_eq!(parent["spec"]["replicas"], want, "{ct}");
        assert!(generation(&parent) > last, "{ct} bumps the generation");
        last = generation(&parent);
    }
    let (code, answer) = send(
        &sim,
        "PATCH",
        &format!("{scale}?dryRun=All"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 9}}),
    )
    .await;
    assert_eq!((code, &answer["spec"]["replicas"]), (200, &json!(9)));
    // The controllers keep writing the parent's status, so the store's resourceVersion is no
    // witness here: the parent's spec and generation are.
    let (_, parent) = get(&sim, &format!("{coll}/web")).await;
    assert_eq!(
        (&parent["spec"]["replicas"], generation(&parent)),
        (&json!(6), last),
        "a dry-run scale writes nothing"
    );
    let (code, status) = send(
        &sim,
        "PATCH",
        &scale,
        "application/merge-patch+json",
        &json!({"spec": {"replicas": -1}}),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    let (code, _) = http(&sim, "DELETE", &scale, "application/json", None).await;
    assert_eq!(code, 405);
    let (code, _) = get(&sim, &format!("{coll}/nope/scale")).await;
    assert_eq!(code, 404);

    // Kinds without a scale subresource: no /scale at all.
    let ds = minimal(&RESOURCES[resources::by_kind("apps/v1", "DaemonSet").unwrap()]);
    let ds_coll = "/apis/apps/v1/namespaces/apps/daemonsets";
    assert_eq!(
        send(&sim, "POST", ds_coll, "application/json", &ds).await.0,
        201
    );
    let ds_scale = format!("{ds_coll}/t-daemonset/scale");
    assert_eq!(get(&sim, &ds_scale).await.0, 404);
    let (code, _) = send(
        &sim,
        "PATCH",
        &ds_scale,
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 3}}),
    )
    .await;
    assert_eq!(code, 404);

    // A custom kind: the CRD's paths, and no /scale where its version declares none.
    let group = "scale.test.io";
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(
        send(&sim, "POST", crds, "application/json", &scalable_crd(group))
            .await
            .0,
        201
    );
    assert_eq!(
        send(
            &sim,
            "POST",
            crds,
            "application/json",
            &widget_crd("noscale.test.io")
        )
        .await
        .0,
        201
    );
    let (_, list) = get(&sim, &format!("/apis/{group}/v1")).await;
    let sub = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "widgets/scale")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        (&sub["group"], &sub["version"], &sub["kind"]),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale")),
        "{list}"
    );
    let wcoll = format!("/apis/{group}/v1/namespaces/apps/widgets");
    let cr = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 1}});
    assert_eq!(
        send(&sim, "POST", &wcoll, "application/json", &cr).await.0,
        201
    );
    let (code, _) = send(
        &sim,
        "PATCH",
        &format!("{wcoll}/w/status"),
        "application/merge-patch+json",
        &json!({"status": {"ready": 1, "selector": "app=w"}}),
    )
    .await;
    assert_eq!(code, 200);
    let (code, got) = get(&sim, &format!("{wcoll}/w/scale")).await;
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["spec"]["replicas"], 1);
    assert_eq!(got["status"], json!({"replicas": 1, "selector": "app=w"}));
    let (code, answer) = send(
        &sim,
        "PATCH",
        &format!("{wcoll}/w/scale"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 4}}),
    )
    .await;
    assert_eq!(
        (code, &answer["spec"]["replicas"]),
        (200, &json!(4)),
        "{answer}"
    );
    let (_, w) = get(&sim, &format!("{wcoll}/w")).await;
    assert_eq!(
        (&w["spec"]["size"], &w["metadata"]["generation"]),
        (&json!(4), &json!(2)),
        "{w}"
    );
    let other = "/apis/noscale.test.io/v1/namespaces/apps/widgets";
    let cr =
        json!({"apiVersion": "noscale.test.io/v1", "kind": "Widget", "metadata": {"name": "w"}});
    assert_eq!(
        send(&sim, "POST", other, "application/json", &cr).await.0,
        201
    );
    assert_eq!(get(&sim, &format!("{other}/w/scale")).await.0, 404);
}

#[tokio::test]
async fn strict_field_validation_refuses_unknown_fields_only_where_a_schema_exists() {
    let sim = sim().await;
    // A built-in kind has no schema here: an unknown field passes, as docs/simulator.md says.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "strict"},
        "data": {"a": "b"}, "colour": "red"});
    let (code, created) = send(
        &sim,
        "POST",
        "/api/v1/namespaces/apps/configmaps?fieldValidation=Strict",
        "application/json",
        &cm,
    )
    .await;
    assert_eq!(code, 201, "{created}");
    let group = "strict.test.io";
    let (code, _) = send(
        &sim,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "application/json",
        &widget_crd(group),
    )
    .await;
    assert_eq!(code, 201);
    let coll = format!("/apis/{group}/v1/namespaces/apps/widgets");
    let cr = |name: &str, spec: Value| {
        json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
            "metadata": {"name": name}, "spec": spec})
    };
    let (code, status) = send(
        &sim,
        "POST",
        &format!("{coll}?fieldValidation=Strict"),
        "application/json",
        &cr("w1", json!({"size": 1, "colour": "red"})),
    )
    .await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "strict decoding error: unknown field \"spec.colour\""
    );
    assert_eq!(
        get(&sim, &format!("{coll}/w1")).await.0,
        404,
        "nothing stored"
    );
    let (code, _) = send(
        &sim,
        "POST",
        &format!("{coll}?fieldValidation=Strict"),
        "application/json",
        &cr("w1", json!({"size": 1})),
    )
    .await;
    assert_eq!(code, 201, "a known field passes");
    // Without Strict it is accepted, as under the API server's default (Warn).
    let (code, _) = send(
        &sim,
        "POST",
        &coll,
        "application/json",
        &cr("w2", json!({"size": 1, "colour": "red"})),
    )
    .await;
    assert_eq!(code, 201);
}

#[tokio::test]
async fn openapi_v2_requests_are_counted_in_the_stats() {
    let sim = sim().await;
    assert_eq!(get(&sim, "/_sim/stats").await.1["openapiV2"], 0);
    let _ = get(&sim, "/openapi/v3").await;
    assert_eq!(get(&sim, "/_sim/stats").await.1["openapiV2"], 0);
    let (code, _) = get(&sim, "/openapi/v2?timeout=32s").await;
    assert_eq!(
        code, 404,
        "never served: the v3 documents are what clients use"
    );
    assert_eq!(get(&sim, "/_sim/stats").await.1["openapiV2"], 1);
}

/// The API server generates a Job's selector and template labels in the create itself: the
/// create's answer has them, so a client's GET-then-PUT never looks like a template change.
#[tokio::test]
async fn a_created_job_carries_its_generated_selector_in_the_create_answer() {
    let sim = sim().await;
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "x:1"}]}}}});
    let coll = "/apis/batch/v1/namespaces/apps/jobs";
    let (code, created) = send(&sim, "POST", coll, "application/json", &job).await;
    assert_eq!(code, 201, "{created}");
    let uid = created["metadata"]["uid"].as_str().expect("a uid");
    assert_eq!(
        created["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let labels = &created["spec"]["template"]["metadata"]["labels"];
    assert_eq!(
        (
            &labels["batch.kubernetes.io/controller-uid"],
            &labels["job-name"]
        ),
        (&json!(uid), &created["metadata"]["name"]),
        "{created}"
    );
}

#[tokio::test]
async fn the_watch_log_is_bounded_by_bytes_and_a_watch_from_before_it_is_expired() {
    let sim = sim().await;
    let store = &sim.server.sim.store;
    store.set_log_bytes(256 << 10);
    let before = rv(&sim);
    let blob = "x".repeat(16 << 10);
    let coll = "/api/v1/namespaces/apps/configmaps";
    let mut rvs = Vec::new();
    // 1 MiB of ConfigMaps: four times the bound, in far fewer events than the count bound.
    for i in 0..64 {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("big-{i}")}, "data": {"blob": blob}});
        let (code, created) = send(&sim, "POST", coll, "application/json", &cm).await;
        assert_eq!(code, 201, "{created}");
        rvs.push(
            created["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        let (held, bound) = store.log_bytes();
        assert!(held <= bound, "the log holds {held} bytes, over {bound}");
    }
    let expired = watch_until(
        &sim,
        &format!("{coll}?watch=true&resourceVersion={before}"),
        "Expired",
    )
    .await;
    assert!(
        expired.contains("\"code\":410") && expired.contains("\"reason\":\"Expired\""),
        "{expired}"
    );
    // A watch from a version the log still holds resumes with what followed it.
    let resumed = watch_until(
        &sim,
        &format!("{coll}?watch=true&resourceVersion={}", rvs[62]),
        "big-63",
    )
    .await;
    assert!(
        resumed.contains("\"type\":\"ADDED\"") && !resumed.contains("Expired"),
        "{resumed}"
    );
}
