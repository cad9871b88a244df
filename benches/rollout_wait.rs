//! helmdeck's rollout wait against the alternative, side by side: `kubectl rollout status`
//! per workload (sequential, as a deploy script does it). N Deployments of 2 replicas become
//! ready 1–4 s after they are created; each method waits for all of them.
//!
//! Reports, per method: wall time, lag after the last Deployment became ready, and requests
//! the simulated API server answered; then the ratios. Needs `.tools/bin/kubectl`.
//! Run: `cargo bench --bench rollout_wait` (optionally `-- 100` for N).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::{Client, Config};

use helmdeck::sim::{Scenario, run};

fn deployment(i: usize) -> Deployment {
    let name = format!("w{i:03}-{}", ["a", "b", "c", "d"][i % 4]);
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"app.kubernetes.io/instance": "bench", "app": name}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name, "app.kubernetes.io/instance": "bench"}},
                "spec": {"containers": [{"name": "c", "image": "example/app:1"}]}}}
    }))
    .expect("a valid Deployment")
}

/// Ready 1, 2, 3 or 4 seconds after creation, by name suffix.
const SCENARIO: &str = "namespaces: [apps]\nnodes: 10\nworkloads:\n  - {match: '*-a', start_after: 500ms, ready_after: 500ms}\n  - {match: '*-b', start_after: 1s, ready_after: 1s}\n  - {match: '*-c', start_after: 1500ms, ready_after: 1500ms}\n  - {match: '*-d', start_after: 2s, ready_after: 2s}\n";

struct Measured {
    method: &'static str,
    wall: Duration,
    lag: Duration,
    requests: u64,
    ok: bool,
}

async fn fresh_sim(n: usize) -> (run::Running, tempfile::TempDir, Instant) {
    let sim = run::start(
        Scenario::parse(SCENARIO, "bench").unwrap(),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    run::write_kubeconfig(&dir.path().join("kubeconfig"), &sim.url(), "apps").unwrap();
    let mut config = Config::new(sim.url().parse().unwrap());
    config.default_namespace = "apps".into();
    let api: Api<Deployment> = Api::namespaced(Client::try_from(config).unwrap(), "apps");
    let created = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &deployment(i))
                    .await
                    .unwrap()
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    (sim, dir, created)
}

fn requests(sim: &run::Running) -> u64 {
    sim.server
        .stats
        .requests
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// The slowest Deployment is ready about 4 s after creation (the `-d` rule).
const LAST_READY: Duration = Duration::from_secs(4);

async fn helmdeck(n: usize) -> Measured {
    let (sim, dir, created) = fresh_sim(n).await;
    let before = requests(&sim);
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .args([
            "deploy",
            "bench",
            ".",
            "-n",
            "apps",
            "--only",
            "rollout",
            "--headless",
            "--timeout",
            "120s",
        ])
        .env("KUBECONFIG", dir.path().join("kubeconfig"))
        .env("HOME", dir.path())
        .env("HELM_BIN", repo().join(".tools/bin/helm"))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let wall = start.elapsed();
    Measured {
        method: "helmdeck --only rollout",
        wall,
        lag: (created.elapsed()).saturating_sub(LAST_READY),
        requests: requests(&sim) - before,
        ok: status.code() == Some(0),
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

async fn kubectl_sequential(n: usize) -> Measured {
    let (sim, dir, created) = fresh_sim(n).await;
    let before = requests(&sim);
    let start = Instant::now();
    let mut ok = true;
    for i in 0..n {
        let name = deployment(i).metadata.name.unwrap();
        let status = Command::new(repo().join(".tools/bin/kubectl"))
            .args([
                "rollout",
                "status",
                &format!("deployment/{name}"),
                "-n",
                "apps",
                "--timeout=120s",
            ])
            .env("KUBECONFIG", dir.path().join("kubeconfig"))
            .env("HOME", dir.path())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        ok &= status.success();
    }
    let wall = start.elapsed();
    Measured {
        method: "kubectl rollout status, each in turn",
        wall,
        lag: created.elapsed().saturating_sub(LAST_READY),
        requests: requests(&sim) - before,
        ok,
    }
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes --bench; under `cargo test --all-targets` a small smoke run only.
    let benching = std::env::args().any(|a| a == "--bench");
    let n: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .and_then(|a| a.parse().ok())
        .unwrap_or(if benching { 100 } else { 4 });
    assert!(
        repo().join(".tools/bin/kubectl").exists(),
        "run scripts/install-tools.sh first"
    );
    let results = [helmdeck(n).await, kubectl_sequential(n).await];
    println!("rollout_wait: {n} Deployments x 2 replicas, ready 1-4 s after creation");
    println!(
        "  {:<38} {:>8} {:>10} {:>9}  ok",
        "method", "wall s", "lag s", "requests"
    );
    for r in &results {
        println!(
            "  {:<38} {:>8.2} {:>10.2} {:>9}  {}",
            r.method,
            r.wall.as_secs_f64(),
            r.lag.as_secs_f64(),
            r.requests,
            r.ok
        );
    }
    let (a, b) = (&results[0], &results[1]);
    println!(
        "  ratio kubectl/helmdeck: wall {:.1}x, requests {:.1}x",
        b.wall.as_secs_f64() / a.wall.as_secs_f64(),
        b.requests as f64 / a.requests.max(1) as f64
    );
    // A method that timed out or failed would make the timings above meaningless.
    let failed: Vec<&str> = results.iter().filter(|r| !r.ok).map(|r| r.method).collect();
    assert!(
        failed.is_empty(),
        "these methods did not see every Deployment roll out: {failed:?}"
    );
}
