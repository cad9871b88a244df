//! The simulator at scale: 1,000 Deployments with 10 replicas each (10,000 pods), created over
//! HTTP with kube-rs, rolled out by the controllers, watched by a kube-rs watcher.
//!
//! Records: time to create, time until every Deployment is rolled out (as `kubectl rollout
//! status` would judge it), store events per second, a LIST of all pods, and peak RSS.
//! Run: `cargo bench --bench sim_scale` (optionally `-- 200 5` for workloads and replicas).
//!
//! By default the simulator runs in this process, so its peak RSS includes the client's (a
//! deserialized LIST of every pod among it). With `--process` it runs as its own `helmdeck sim`
//! process and its peak RSS (VmHWM) is read from /proc apart from the client's: the figure
//! for "what the simulator costs".

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Client, Config};

use helmdeck::rollout::readiness::{self, Progress};
use helmdeck::sim::{Scenario, run};

/// A `/proc/PID/status` memory field (`VmHWM` peak, `VmRSS` now) in MiB.
fn proc_mib(pid: &str, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn peak_rss_mib() -> f64 {
    proc_mib("self", "VmHWM:")
}

fn rss_mib() -> f64 {
    proc_mib("self", "VmRSS:")
}

/// Where the simulator runs: in this process, or as a `helmdeck sim` child.
enum Sim {
    InProcess(run::Running),
    Process(std::process::Child),
}

impl Drop for Sim {
    // A failed assertion must not leave a simulator serving behind the bench.
    fn drop(&mut self) {
        if let Sim::Process(child) = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Sim {
    /// The current resourceVersion, as a LIST answers it.
    async fn rv(&self, client: &Client) -> u64 {
        if let Sim::InProcess(r) = self {
            return r.server.sim.store.current_rv();
        }
        let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
        let list = ns
            .list(&ListParams::default())
            .await
            .expect("list namespaces");
        list.metadata
            .resource_version
            .and_then(|rv| rv.parse().ok())
            .unwrap_or(0)
    }
}

const SCENARIO: &str =
    "namespaces: [apps]\nnodes: 50\ntick: 200ms\ndefaults: {start_after: 1s, ready_after: 1s}\n";

/// `helmdeck sim` as a child on a scenario file; its URL from the `ready` line.
fn spawn_sim(dir: &std::path::Path) -> (std::process::Child, String) {
    use std::io::BufRead;
    let scenario = dir.join("scale.yaml");
    std::fs::write(&scenario, SCENARIO).expect("write the scenario");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .args(["sim", "--scenario"])
        .arg(&scenario)
        .stdout(std::process::Stdio::piped())
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("spawn helmdeck sim");
    let out = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    std::io::BufReader::new(out)
        .read_line(&mut line)
        .expect("read the ready line");
    let url = line
        .strip_prefix("ready ")
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("helmdeck sim said {line:?}, not ready"))
        .to_string();
    (child, url)
}

/// What a client's first contact costs: `/apis`, every group-version, and every OpenAPI v3
/// document, as kubectl and helm fetch them.
async fn discovery_round(client: &Client) -> Duration {
    let t = Instant::now();
    let get = |path: String| async move {
        let req = hyper::Request::get(path)
            .body(Vec::new())
            .expect("a GET request");
        client
            .request::<serde_json::Value>(req)
            .await
            .expect("discovery answers 200 with JSON")
    };
    let apis = get("/apis".into()).await;
    for g in apis["groups"].as_array().into_iter().flatten() {
        let gv = g["preferredVersion"]["groupVersion"].as_str().unwrap_or("");
        get(format!("/apis/{gv}")).await;
    }
    let openapi = get("/openapi/v3".into()).await;
    for p in openapi["paths"].as_object().into_iter().flatten() {
        get(p.1["serverRelativeURL"].as_str().unwrap_or("").to_string()).await;
    }
    t.elapsed()
}

fn deployment(i: usize, replicas: i32) -> Deployment {
    let name = format!("w{i:04}");
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"app.kubernetes.io/instance": "scale", "app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name, "app.kubernetes.io/instance": "scale"}},
                "spec": {"containers": [{"name": "c", "image": "example/app:1"}]}}}
    }))
    .expect("a valid Deployment")
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` does not: then a small smoke run
    // keeps the benchmark from rotting without costing the test suite minutes.
    let benching = std::env::args().any(|a| a == "--bench");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (default_workloads, default_replicas) = if benching { (1000, 10) } else { (20, 2) };
    let workloads: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(default_workloads);
    let replicas: i32 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default_replicas);
    let separate = std::env::args().any(|a| a == "--process");
    let dir = tempfile::tempdir().expect("a temp dir");
    let rss_before = rss_mib();
    let t_start = Instant::now();
    let (sim, url) = if separate {
        let (child, url) = spawn_sim(dir.path());
        (Sim::Process(child), url)
    } else {
        let scenario = Scenario::parse(SCENARIO, "bench").expect("bench scenario");
        let running = run::start(scenario, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("start sim");
        let url = running.url();
        (Sim::InProcess(running), url)
    };
    let start_time = t_start.elapsed();
    let start_rss = match &sim {
        Sim::InProcess(_) => rss_mib() - rss_before,
        Sim::Process(c) => proc_mib(&c.id().to_string(), "VmRSS:"),
    };
    let mut config = Config::new(url.parse().unwrap());
    config.default_namespace = "apps".into();
    let client = Client::try_from(config).unwrap();
    let discovery_time = discovery_round(&client).await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), "apps");
    let rv_start = sim.rv(&client).await;

    // A watcher judging readiness, as helmdeck's rollout step does.
    let watch_api = api.clone();
    let all_ready = tokio::spawn(async move {
        let mut done: BTreeMap<String, bool> = BTreeMap::new();
        let stream = watcher::watcher(
            watch_api,
            watcher::Config::default().labels("app.kubernetes.io/instance=scale"),
        );
        let mut stream = std::pin::pin!(stream);
        let mut events = 0u64;
        while let Ok(Some(ev)) = stream.try_next().await {
            events += 1;
            if let Event::Apply(d) | Event::InitApply(d) = ev {
                let name = d.metadata.name.clone().unwrap_or_default();
                done.insert(name, readiness::deployment(&d).progress == Progress::Done);
                if done.len() == workloads && done.values().all(|d| *d) {
                    return (Instant::now(), events);
                }
            }
        }
        (Instant::now(), events)
    });

    let t0 = Instant::now();
    futures::stream::iter(0..workloads)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &deployment(i, replicas))
                    .await
                    .expect("create")
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    let created = t0.elapsed();
    let (ready_at, watch_events) = tokio::time::timeout(Duration::from_secs(900), all_ready)
        .await
        .expect("rollout within 15 minutes")
        .unwrap();
    let rolled_out = ready_at.duration_since(t0);
    let rv_end = sim.rv(&client).await;

    let pods: Api<Pod> = Api::namespaced(client.clone(), "apps");
    let t1 = Instant::now();
    let list = pods.list(&ListParams::default()).await.expect("list pods");
    let list_time = t1.elapsed();
    let store_events = rv_end - rv_start;

    let where_ = if separate {
        "simulator in its own process"
    } else {
        "simulator in this process"
    };
    println!("sim_scale: {workloads} Deployments x {replicas} replicas ({where_})");
    println!(
        "  simulator start               {:>8.2} ms  (+{start_rss:.1} MiB RSS)",
        start_time.as_secs_f64() * 1000.0
    );
    println!(
        "  discovery + OpenAPI, all GVs  {:>8.2} ms",
        discovery_time.as_secs_f64() * 1000.0
    );
    println!(
        "  create (HTTP, 16 in flight)   {:>8.2} s",
        created.as_secs_f64()
    );
    println!(
        "  all rolled out after          {:>8.2} s",
        rolled_out.as_secs_f64()
    );
    println!(
        "  store events                  {store_events:>8}  ({:.0}/s over the rollout)",
        store_events as f64 / rolled_out.as_secs_f64()
    );
    println!("  watch events seen by kube-rs  {watch_events:>8}");
    println!(
        "  LIST of {} pods               {:>8.3} s",
        list.items.len(),
        list_time.as_secs_f64()
    );
    match &sim {
        Sim::InProcess(_) => println!(
            "  peak RSS (sim + client)       {:>8.1} MiB",
            peak_rss_mib()
        ),
        Sim::Process(child) => {
            let pid = child.id().to_string();
            println!(
                "  peak RSS, simulator alone     {:>8.1} MiB  (now {:.1} MiB)",
                proc_mib(&pid, "VmHWM:"),
                proc_mib(&pid, "VmRSS:")
            );
            println!(
                "  peak RSS, client alone        {:>8.1} MiB",
                peak_rss_mib()
            );
        }
    }
    assert_eq!(
        list.items.len(),
        workloads * replicas as usize,
        "every pod exists"
    );
}
