//! Over HTTP against a running simulator: LIST with `limit` and `continue` answers in pages
//! as the API server does (one resourceVersion for the whole list, every object once), and
//! refuses a malformed (400) or expired (410) token.

use std::collections::BTreeSet;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::kinds_tests::{get, sim};
use super::resources::ids;
use super::run::Running;

const PODS: &str = "/api/v1/namespaces/apps/pods";

/// `n` pods that no scheduler picks up (so nothing rewrites them while the test lists).
fn create_pods(sim: &Running, n: usize) -> BTreeSet<String> {
    let store = &sim.server.sim.store;
    (0..n)
        .map(|i| {
            let name = format!("pod-{i:05}");
            let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]}});
            store.create(*ids::PODS, Some("apps"), pod).unwrap();
            name
        })
        .collect()
}

/// A GET that asks for a Table, as kubectl get does; the body parsed.
async fn get_table(sim: &Running, path: &str) -> Value {
    get_as(sim, path, "application/json;as=Table;v=v1;g=meta.k8s.io").await
}

/// A GET with this `Accept`; the body parsed.
async fn get_as(sim: &Running, path: &str, accept: &str) -> Value {
    let mut stream = TcpStream::connect(sim.addr).await.unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: sim\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {page}"))
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn token(page: &Value) -> Option<String> {
    page["metadata"]["continue"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

#[tokio::test]
async fn a_list_with_a_limit_comes_in_pages_of_one_resource_version_naming_every_pod_once() {
    let sim = sim().await;
    let created = create_pods(&sim, 1200);
    let mut seen = Vec::new();
    let mut pages = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let path = match &next {
            None => format!("{PODS}?limit=500"),
            Some(t) => format!("{PODS}?limit=500&continue={t}"),
        };
        let (code, page) = get(&sim, &path).await;
        assert_eq!(code, 200, "{page}");
        assert!(names(&page).len() <= 500, "a page over the limit");
        seen.extend(names(&page));
        next = token(&page);
        pages.push(page);
        if next.is_none() || pages.len() > 10 {
            break;
        }
    }
    assert_eq!(pages.len(), 3, "1,200 pods in pages of 500");
    let rvs: BTreeSet<&str> = pages
        .iter()
        .map(|p| p["metadata"]["resourceVersion"].as_str().unwrap())
        .collect();
    assert_eq!(rvs.len(), 1, "every page has the first page's rv: {rvs:?}");
    assert_eq!(pages[0]["metadata"]["remainingItemCount"], json!(700));
    assert_eq!(pages[1]["metadata"]["remainingItemCount"], json!(200));
    assert!(pages[2]["metadata"].get("remainingItemCount").is_none());
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    assert_eq!(seen.len(), unique.len(), "a pod served twice");
    assert_eq!(unique, created);
    // The token is the API server's: base64url JSON naming the rv and where to go on.
    let first = token(&pages[0]).unwrap();
    let doc: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(first).unwrap()).unwrap();
    assert_eq!(doc["v"], "meta.k8s.io/v1");
    assert_eq!(doc["start"], "apps/pod-00499\u{0}");
    // As Tables (kubectl get), the same pages.
    let table = get_table(&sim, &format!("{PODS}?limit=500")).await;
    assert_eq!(table["rows"].as_array().unwrap().len(), 500);
    // Its token goes on from the same pod; its rv is the store's at that later LIST (the
    // simulator's controllers may have written since the first page), so only `start` is held.
    let table_token = token(&table).expect("a Table page goes on");
    let table_doc: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(table_token).unwrap()).unwrap();
    assert_eq!(table_doc["start"], doc["start"]);
}

#[tokio::test]
async fn limit_from_the_watch_cache_is_ignored_and_a_malformed_token_is_a_bad_request() {
    let sim = sim().await;
    create_pods(&sim, 5);
    for query in [
        "limit=2&resourceVersion=0",
        "limit=2&resourceVersionMatch=NotOlderThan",
    ] {
        let (code, list) = get(&sim, &format!("{PODS}?{query}")).await;
        assert_eq!(code, 200, "{list}");
        assert_eq!(names(&list).len(), 5, "{query}: the whole list");
        assert!(token(&list).is_none(), "{query}");
    }
    let bad_json = URL_SAFE_NO_PAD.encode("{not json");
    let no_start = URL_SAFE_NO_PAD.encode(r#"{"v":"meta.k8s.io/v1","rv":5,"start":""}"#);
    for bad in ["%%%", "bm90IGpzb24", bad_json.as_str(), no_start.as_str()] {
        let (code, status) = get(&sim, &format!("{PODS}?limit=2&continue={bad}")).await;
        assert_eq!(code, 400, "{bad}: {status}");
        assert_eq!(status["reason"], "BadRequest", "{status}");
    }
}

#[tokio::test]
async fn a_token_older_than_the_watch_log_is_expired() {
    let sim = sim().await;
    create_pods(&sim, 5);
    let (code, first) = get(&sim, &format!("{PODS}?limit=2")).await;
    assert_eq!(code, 200, "{first}");
    let next = token(&first).expect("more pods than the limit");
    let store = &sim.server.sim.store;
    // The log forgets every change from the next write on: the list's rv is gone from it.
    store.set_log_bytes(0);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later"}});
    store.create(*ids::CONFIGMAPS, Some("apps"), cm).unwrap();
    let (code, status) = get(&sim, &format!("{PODS}?limit=2&continue={next}")).await;
    assert_eq!(code, 410, "{status}");
    assert_eq!(status["reason"], "Expired", "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("The provided continue parameter is too old"),
        "{status}"
    );
    // As the API server: a fresh token in the Status goes on from the newest state (an
    // inconsistent list), after the last pod the first page served.
    let fresh = status["metadata"]["continue"]
        .as_str()
        .expect("a fresh continue token");
    let (code, rest) = get(&sim, &format!("{PODS}?limit=10&continue={fresh}")).await;
    assert_eq!(code, 200, "{rest}");
    let mut all = names(&first);
    all.extend(names(&rest));
    assert_eq!(all.len(), 5, "each pod once: {all:?}");
    assert!(token(&rest).is_none(), "{rest}");
}

/// As kube's `list_metadata` and `get_metadata` ask (helmdeck lists helm's release records
/// so): metadata only, never a Secret's data, with the selectors applied.
#[tokio::test]
async fn metadata_only_lists_and_gets_leave_out_everything_but_metadata() {
    let sim = sim().await;
    let store = &sim.server.sim.store;
    for (name, owner) in [("sh.helm.release.v1.web.v1", "helm"), ("other", "me")] {
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "labels": {"owner": owner}},
            "data": {"release": "c2VjcmV0"}, "type": "helm.sh/release.v1"});
        store.create(*ids::SECRETS, Some("apps"), secret).unwrap();
    }
    let secrets = "/api/v1/namespaces/apps/secrets";
    let list = get_as(
        &sim,
        &format!("{secrets}?labelSelector=owner%3Dhelm"),
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
    )
    .await;
    assert_eq!(list["kind"], "PartialObjectMetadataList", "{list}");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    assert!(list["metadata"]["resourceVersion"].is_string(), "{list}");
    assert_eq!(names(&list), ["sh.helm.release.v1.web.v1"]);
    let item = &list["items"][0];
    assert_eq!(item["kind"], "PartialObjectMetadata");
    assert_eq!(item["metadata"]["labels"]["owner"], "helm");
    assert!(
        item.get("data").is_none() && item.get("type").is_none(),
        "{item}"
    );
    let one = get_as(
        &sim,
        &format!("{secrets}/other"),
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(one["kind"], "PartialObjectMetadata", "{one}");
    assert_eq!(one["metadata"]["name"], "other");
    assert!(one.get("data").is_none(), "{one}");
    // Plain JSON still gets the whole object.
    let (_, full) = get(&sim, &format!("{secrets}/other")).await;
    assert_eq!(full["data"]["release"], "c2VjcmV0");
}
