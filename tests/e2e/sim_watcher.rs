//! A kube-rs watcher against the simulator sees every change, resumes after dropped watches
//! and relists after a 410.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config};

use helmdeck::sim::Scenario;
use helmdeck::sim::run;

async fn client(url: &str) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    config.default_namespace = "apps".into();
    Client::try_from(config).unwrap()
}

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("v".to_string(), value.to_string())])),
        ..Default::default()
    }
}

/// Writes 30 ConfigMap changes while faults hit the watch, and checks the watcher's final
/// view has every last value.
async fn watcher_converges(scenario: &str) -> (u64, u64) {
    watcher_converges_with(scenario).await.0
}

/// As [`watcher_converges`], also returning how many watch requests the simulator served.
async fn watcher_converges_with(scenario: &str) -> ((u64, u64), u64) {
    let scenario = Scenario::parse(scenario, "test").unwrap();
    let sim = run::start(scenario, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = client(&sim.url()).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "apps");
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let (mut inits, mut restarts) = (0u64, 0u64);
    let stream = watcher::watcher(api.clone(), watcher::Config::default());
    let mut stream = std::pin::pin!(stream);
    let writer = {
        let api = api.clone();
        tokio::spawn(async move {
            for i in 0..30 {
                let name = format!("cm-{}", i % 10);
                match api.get_opt(&name).await.unwrap() {
                    Some(mut c) => {
                        c.data = cm(&name, &i.to_string()).data;
                        api.replace(&name, &PostParams::default(), &c)
                            .await
                            .unwrap();
                    }
                    None => {
                        api.create(&PostParams::default(), &cm(&name, &i.to_string()))
                            .await
                            .unwrap();
                    }
                }
                tokio::time::sleep(Duration::from_millis(60)).await;
            }
        })
    };
    let want: BTreeMap<String, String> = (20..30)
        .map(|i| (format!("cm-{}", i % 10), i.to_string()))
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while seen != want {
        let next = tokio::time::timeout_at(deadline, stream.try_next()).await;
        match next {
            Err(_) => panic!("watcher did not converge: seen {seen:?}"),
            Ok(Err(e)) => {
                // The watcher reports the error and retries; count it as a restart.
                restarts += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(Ok(None)) => panic!("watch stream ended"),
            Ok(Ok(Some(event))) => match event {
                Event::Init => {
                    inits += 1;
                }
                Event::InitApply(c) | Event::Apply(c) => {
                    let name = c.metadata.name.clone().unwrap();
                    let v = c
                        .data
                        .as_ref()
                        .and_then(|d| d.get("v"))
                        .cloned()
                        .unwrap_or_default();
                    seen.insert(name, v);
                }
                Event::Delete(c) => {
                    seen.remove(&c.metadata.name.unwrap());
                }
                Event::InitDone => {}
            },
        }
    }
    writer.await.unwrap();
    let watches = sim
        .server
        .stats
        .watches
        .load(std::sync::atomic::Ordering::Relaxed);
    ((inits, restarts), watches)
}

#[tokio::test]
async fn watcher_sees_every_change() {
    let (inits, _) = watcher_converges("namespaces: [apps]\n").await;
    assert_eq!(inits, 1, "no relist without faults");
}

#[tokio::test]
async fn watcher_resumes_after_dropped_watches_without_relisting() {
    let ((inits, _), watches) = watcher_converges_with(
        "namespaces: [apps]\nfaults:\n  - {at: 300ms, anchor: start, do: drop_watches}\n  - {at: 800ms, anchor: start, do: drop_watches}\n",
    )
    .await;
    assert_eq!(inits, 1, "a dropped watch resumes from its rv; no relist");
    assert!(
        watches >= 3,
        "two drops mean at least three watch requests, saw {watches}"
    );
}

#[tokio::test]
async fn watcher_relists_after_410() {
    let (inits, _) = watcher_converges(
        "namespaces: [apps]\nfaults:\n  - {at: 500ms, anchor: start, do: gone_next_watch}\n  - {at: 600ms, anchor: start, do: drop_watches}\n",
    )
    .await;
    // The re-watch after the drop gets the 410, which forces a relist: a second Init.
    assert!(
        inits >= 2,
        "expected a relist after the 410, saw {inits} inits"
    );
}
