//! helmdeck's rollout wait against the alternatives, side by side on the same simulator.
//!
//! At N (default 200) Deployments × 2 replicas, ready 1–4 s after creation:
//! - helmdeck `deploy --only rollout --headless`;
//! - helmdeck's TUI (the same, on a pseudo-terminal; `q` once the verdict is on screen);
//! - `kubectl rollout status` per workload, in turn (the usual deploy script);
//! - `helm upgrade --install --wait` of a chart with the same N Deployments;
//!
//! then helmdeck alone on the scale scenario (crates/helmdeck-sim/scenarios/scale.yaml): SCALE (default
//! 2,000) workloads of the three kinds, 10 pods each, some optional and crash-looping or
//! unschedulable.
//!
//! Reports, per method: wall time, lag after the last workload became ready (as a watcher in
//! this process saw it, by helmdeck's readiness rules), API requests by verb, the client's CPU
//! seconds and peak RSS (wait4 on the child: its own plus any child it waited for), and for
//! headless helmdeck p50/p99 from a workload's ready write to helmdeck's line about it.
//! One line per method also goes to stdout as `BENCH {json}` for scripts/plot-bench.py.
//!
//! Between the two, one Deployment × BIG (default 3,000) pods upgraded by `helmdeck deploy`,
//! headless and on a pty, on a simulator in its own process, with kdash beside the TUI when it
//! is on PATH (big.rs); and the headless start taken apart per request (start.rs).
//!
//! Run: `cargo bench --bench rollout_wait -- [N] [--scale SCALE] [--tui-pods PODS] [--big PODS]
//! [--skip-helm] [--no-kdash] [--only-methods | --only-big | --only-scale | --only-fleet]`.
//! The fleet runs (fleet.rs): 1, 2, 5 and 10 targets × N, at once and in turn.
//! Under `cargo test --all-targets` a small smoke run only (N=4, no helm, no scale run, the
//! upgrade at 30 pods without kdash, a fleet of 1 and 2 targets).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kube::api::{Api, PostParams};
use kube::runtime::watcher;
use kube::{Client, Config, ResourceExt};
use serde_json::{Value, json};

use helmdeck::rollout::readiness::{self, Progress};
use helmdeck::sim::{Scenario, run};

mod big;
mod fleet;
mod procs;
mod pty;
mod start;

use procs::{Usage, wait_usage};

/// Ready 1, 2, 3 or 4 seconds after creation, by name suffix.
const SCENARIO: &str = "namespaces: [apps]\nnodes: 10\nworkloads:\n  - {match: '*-a', start_after: 500ms, ready_after: 500ms}\n  - {match: '*-b', start_after: 1s, ready_after: 1s}\n  - {match: '*-c', start_after: 1500ms, ready_after: 1500ms}\n  - {match: '*-d', start_after: 2s, ready_after: 2s}\n";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn name(i: usize) -> String {
    format!("w{i:03}-{}", ["a", "b", "c", "d"][i % 4])
}

fn labels(name: &str) -> Value {
    json!({"app.kubernetes.io/instance": "bench", "app": name})
}

fn deployment(name: &str, replicas: i32) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels(name)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels(name)},
                "spec": {"containers": [{"name": "c", "image": "example/app:1"}]}}}})
}

/// The scale run's workload `i`: 70% Deployments, 20% StatefulSets, 10% DaemonSets (10 nodes),
/// 10 pods each; one in 25 optional and crash-looping or never scheduled.
fn scale_workload(i: usize) -> (&'static str, String, Value) {
    let role = match i % 50 {
        1 => "optcrash".to_string(),
        2 => "optpending".to_string(),
        _ => ["a", "b", "c", "d"][i % 4].to_string(),
    };
    let name = format!("w{i:04}-{role}");
    let pod = json!({"metadata": {"labels": labels(&name)},
        "spec": {"containers": [{"name": "c", "image": "example/app:1"}]}});
    let selector = json!({"matchLabels": {"app": name}});
    match i % 10 {
        0..=6 => ("Deployment", name.clone(), deployment(&name, 10)),
        7 | 8 => (
            "StatefulSet",
            name.clone(),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "labels": labels(&name)},
            "spec": {"replicas": 10, "serviceName": name, "selector": selector, "template": pod}}),
        ),
        _ => (
            "DaemonSet",
            name.clone(),
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "labels": labels(&name)},
            "spec": {"selector": selector, "template": pod}}),
        ),
    }
}

/// When each workload first became ready, by `Kind/name`, as a watcher in this process saw
/// it: the reference the methods' lag and latency are measured against.
type ReadyAt = Arc<Mutex<HashMap<String, Instant>>>;

fn watch_ready<K>(
    api: Api<K>,
    kind: &'static str,
    judge: fn(&K) -> Progress,
    at: ReadyAt,
) -> tokio::task::JoinHandle<()>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher::watcher(api, watcher::Config::default()));
        while let Some(ev) = stream.next().await {
            let objs = match ev {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => vec![o],
                _ => continue,
            };
            let now = Instant::now();
            for o in objs {
                if judge(&o) == Progress::Done {
                    at.lock()
                        .unwrap()
                        .entry(format!("{kind}/{}", o.name_any()))
                        .or_insert(now);
                }
            }
        }
    })
}

struct Bench {
    sim: run::Running,
    dir: tempfile::TempDir,
    ready: ReadyAt,
    /// The reference watches: aborted with the simulator, or they would retry against a
    /// closed port through every later run, on the cores being measured.
    watches: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Bench {
    fn drop(&mut self) {
        for w in &self.watches {
            w.abort();
        }
    }
}

impl Bench {
    async fn start(scenario: &str) -> Bench {
        let sim = run::start(
            Scenario::parse(scenario, "bench").unwrap(),
            "127.0.0.1:0".parse().unwrap(),
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        run::write_kubeconfig(&dir.path().join("kubeconfig"), &sim.url(), "apps").unwrap();
        let client = self::client(&sim);
        let ready: ReadyAt = Arc::default();
        let watches = vec![
            watch_ready(
                Api::<Deployment>::namespaced(client.clone(), "apps"),
                "Deployment",
                |d| readiness::deployment(d).progress,
                ready.clone(),
            ),
            watch_ready(
                Api::<StatefulSet>::namespaced(client.clone(), "apps"),
                "StatefulSet",
                |s| readiness::statefulset(s).progress,
                ready.clone(),
            ),
            watch_ready(
                Api::<DaemonSet>::namespaced(client, "apps"),
                "DaemonSet",
                |d| readiness::daemonset(d).progress,
                ready.clone(),
            ),
        ];
        // Let the reference watches list before anything is counted.
        tokio::time::sleep(Duration::from_millis(300)).await;
        Bench {
            sim,
            dir,
            ready,
            watches,
        }
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    async fn create(&self, objects: Vec<(&'static str, String, Value)>) {
        let client = client(&self.sim);
        futures::stream::iter(objects)
            .map(|(kind, _, obj)| {
                let client = client.clone();
                async move {
                    let pp = PostParams::default();
                    match kind {
                        "Deployment" => drop(
                            Api::<Deployment>::namespaced(client, "apps")
                                .create(&pp, &serde_json::from_value(obj).unwrap())
                                .await
                                .unwrap(),
                        ),
                        "StatefulSet" => drop(
                            Api::<StatefulSet>::namespaced(client, "apps")
                                .create(&pp, &serde_json::from_value(obj).unwrap())
                                .await
                                .unwrap(),
                        ),
                        _ => drop(
                            Api::<DaemonSet>::namespaced(client, "apps")
                                .create(&pp, &serde_json::from_value(obj).unwrap())
                                .await
                                .unwrap(),
                        ),
                    }
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<_>>()
            .await;
    }

    /// The simulator's log of recent requests (`METHOD URI` per line), its own `/_sim/` ones
    /// left out. Fetch it outside a measured window: the fetch is itself a request.
    async fn request_log(&self) -> Vec<String> {
        without_sim(self.request_log_raw().await)
    }

    /// The same log, the simulator's own requests kept (the last line is this fetch).
    async fn request_log_raw(&self) -> Vec<String> {
        let req = hyper::Request::get("/_sim/requests")
            .body(Vec::new())
            .unwrap();
        let text = client(&self.sim).request_text(req).await.unwrap();
        text.lines().map(str::to_string).collect()
    }

    fn requests_served(&self) -> u64 {
        self.sim.server.stats.requests.load(Ordering::Relaxed)
    }

    fn by_verb(&self) -> BTreeMap<String, u64> {
        serde_json::from_value(self.sim.server.stats.to_json()["byVerb"].clone()).unwrap()
    }

    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("HOME", self.dir.path())
            .env("HELM_BIN", repo().join(".tools/bin/helm"))
            .env("HELM_CACHE_HOME", self.dir.path().join(".cache/helm"))
            .env("HELM_CONFIG_HOME", self.dir.path().join(".config/helm"))
            .env("HELM_DATA_HOME", self.dir.path().join(".local/share/helm"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    /// Time of the last ready transition among `expected` workloads, once all are ready.
    fn last_ready(&self, expected: usize) -> Option<Instant> {
        let at = self.ready.lock().unwrap();
        (at.len() >= expected)
            .then(|| at.values().max().copied())
            .flatten()
    }
}

fn without_sim(log: Vec<String>) -> Vec<String> {
    log.into_iter().filter(|l| !l.contains(" /_sim/")).collect()
}

fn client(sim: &run::Running) -> Client {
    let mut config = Config::new(sim.url().parse().unwrap());
    config.default_namespace = "apps".into();
    Client::try_from(config).unwrap()
}

struct Measured {
    method: String,
    n: usize,
    wall: Duration,
    lag: Option<Duration>,
    verbs: BTreeMap<String, u64>,
    cpu: f64,
    rss_mib: f64,
    /// p50 and p99 seconds from a workload's ready write to helmdeck's line about it.
    latency: Option<(f64, f64)>,
    /// The headless latency again, paired as the TUI row must pair it (the k-th ready with the
    /// k-th line, not by name): how much of the TUI's figure the pairing alone can make.
    by_rank: Option<(f64, f64)>,
    /// Each request by LIST/GET/WATCH and path, where the window's log was read.
    attributed: BTreeMap<String, u64>,
    /// Writes the simulator committed during the window (its resourceVersion moved by this
    /// much): the event stream the client had to follow.
    writes: u64,
    ok: bool,
    /// Each request of helmdeck's start with its time after spawn and helmdeck's own CPU.
    start: Vec<(String, f64, f64)>,
    /// Own CPU seconds, the helm children it waited for not counted.
    own_cpu: Option<f64>,
    /// Own peak RSS (VmHWM sampled while it runs), MiB: `rss_mib` is wait4's, the largest of
    /// helmdeck and the children it waited for, and helmdeck's `helm version` child alone
    /// peaks at 45-47 MiB.
    own_rss_mib: Option<f64>,
}

impl Measured {
    fn requests(&self) -> u64 {
        self.verbs.values().sum()
    }
}

fn diff(after: BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .into_iter()
        .map(|(k, v)| {
            let b = before.get(&k).copied().unwrap_or(0);
            (k, v - b)
        })
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// The requests of a window, as `LIST|GET|WATCH path` with their counts: a GET whose last
/// path segment is a resource collection (no name after it) is a LIST.
fn attribute(before: &[String], after: &[String]) -> BTreeMap<String, u64> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for l in before {
        *seen.entry(l.as_str()).or_default() += 1;
    }
    let mut out = BTreeMap::new();
    for l in after {
        if let Some(n) = seen.get_mut(l.as_str())
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        *out.entry(classify(l)).or_default() += 1;
    }
    out
}

/// A logged request (`METHOD URI`) as `LIST|GET|WATCH path`: a GET whose last path segment is
/// a resource collection (no name after it) is a LIST.
fn classify(l: &str) -> String {
    let (method, uri) = l.split_once(' ').unwrap_or(("?", l));
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    // /api/v1[/namespaces/NS]/PLURAL[/NAME] or /apis/G/V[/namespaces/NS]/PLURAL[/NAME]
    let base = if segments.first() == Some(&"api") {
        2
    } else {
        3
    };
    let rest = segments.len().saturating_sub(base);
    let namespaced = segments.get(base) == Some(&"namespaces") && rest >= 3;
    let collection = if namespaced { rest == 3 } else { rest == 1 };
    let verb = match method {
        "GET"
            if query
                .split('&')
                .any(|q| q == "watch=true" || q == "watch=1") =>
        {
            "WATCH"
        }
        "GET" if collection => "LIST",
        m => m,
    };
    format!("{verb} {path}")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// What a window starts from: the request counts by verb and the resourceVersion.
struct Before {
    verbs: BTreeMap<String, u64>,
    rv: u64,
}

impl Bench {
    fn before(&self) -> Before {
        Before {
            verbs: self.by_verb(),
            rv: self.sim.server.sim.store.current_rv(),
        }
    }
}

fn finish(
    b: &Bench,
    method: &str,
    n: usize,
    start: Instant,
    ended: Instant,
    before: &Before,
    usage: Usage,
) -> Measured {
    let rv_before = before.rv;
    let before = &before.verbs;
    Measured {
        method: method.to_string(),
        n,
        wall: ended - start,
        lag: b
            .last_ready(n)
            .map(|last| ended.saturating_duration_since(last)),
        verbs: diff(b.by_verb(), before),
        cpu: usage.cpu,
        rss_mib: usage.rss_mib,
        latency: None,
        by_rank: None,
        attributed: BTreeMap::new(),
        writes: b.sim.server.sim.store.current_rv() - rv_before,
        ok: usage.ok,
        start: Vec::new(),
        own_cpu: None,
        own_rss_mib: None,
    }
}

const HELMDECK: &str = env!("CARGO_BIN_EXE_helmdeck");

/// How often helmdeck's own VmHWM is read while it runs.
const OWN_RSS_EVERY: Duration = Duration::from_millis(20);

fn rollout_args(optional: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec![
        "deploy",
        "bench",
        ".",
        "-n",
        "apps",
        "--only",
        "rollout",
        "--timeout",
        "300s",
    ];
    for o in optional {
        args.extend(["--optional", o]);
    }
    args
}

async fn helmdeck_headless(
    b: &Bench,
    n: usize,
    optional: &[&'static str],
    method: &str,
) -> Measured {
    let log_before = b.request_log().await;
    let before = b.before();
    let start = Instant::now();
    let mut args = rollout_args(optional);
    args.push("--headless");
    let mut child = b
        .command(Path::new(HELMDECK), &args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = b.sim.server.clone();
    let stamper = start::Stamper::start(child.id(), start, move || {
        server.stats.requests.load(Ordering::Relaxed)
    });
    let own_rss = procs::Sampler::start(child.id(), OWN_RSS_EVERY);
    // Each workload's first ✓ line, timed as it arrives.
    let lines = std::thread::spawn(move || {
        let mut seen: HashMap<String, Instant> = HashMap::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let now = Instant::now();
            let mut words = line.split_whitespace().skip_while(|w| *w != "rollout");
            if words.next().is_some()
                && words.next() == Some("✓")
                && let Some(key) = words.next()
            {
                seen.entry(key.to_string()).or_insert(now);
            }
        }
        seen
    });
    let (usage, own) = tokio::task::spawn_blocking(move || procs::wait_own(child))
        .await
        .unwrap();
    let ended = Instant::now();
    let seen = lines.join().unwrap();
    let mut m = finish(b, method, n, start, ended, &before, usage);
    m.own_rss_mib = Some(own_rss.finish());
    let requests_now = b.requests_served();
    let raw = b.request_log_raw().await;
    m.start = stamper.finish(&raw, requests_now);
    m.own_cpu = Some(own);
    m.attributed = attribute(&log_before, &without_sim(raw));
    let ready = b.ready.lock().unwrap();
    let mut lat: Vec<f64> = seen
        .iter()
        .filter_map(|(k, t)| {
            ready
                .get(k)
                .map(|r| t.saturating_duration_since(*r).as_secs_f64())
        })
        .collect();
    lat.sort_by(f64::total_cmp);
    if !lat.is_empty() {
        m.latency = Some((percentile(&lat, 0.5), percentile(&lat, 0.99)));
    }
    let mut refs: Vec<Instant> = seen.keys().filter_map(|k| ready.get(k).copied()).collect();
    let mut lines: Vec<Instant> = seen
        .iter()
        .filter(|(k, _)| ready.contains_key(*k))
        .map(|(_, t)| *t)
        .collect();
    refs.sort();
    lines.sort();
    let mut ranked: Vec<f64> = refs
        .iter()
        .zip(&lines)
        .map(|(r, l)| l.saturating_duration_since(*r).as_secs_f64())
        .collect();
    ranked.sort_by(f64::total_cmp);
    if !ranked.is_empty() {
        m.by_rank = Some((percentile(&ranked, 0.5), percentile(&ranked, 0.99)));
    }
    m
}

/// How long an open screen is watched after its verdict, for its idle CPU.
// /proc counts CPU in 10 ms clock ticks: over 10 s that resolves 0.1% of a core.
const IDLE: Duration = Duration::from_secs(10);

/// The TUI on a 160x48 pseudo-terminal that is its controlling terminal, its output fed to
/// a VT100 screen as a terminal would show it. Each rise of the ready count in the Workloads
/// title is timed against the reference watcher (p50/p99 change → screen); once a verdict
/// banner is on screen the process is left alone for `IDLE` (its idle CPU), then gets `q`.
/// Its lag is to the verdict on screen.
async fn helmdeck_tui(
    b: &Bench,
    n: usize,
    optional: &[&'static str],
    method: &str,
) -> (Measured, f64) {
    let before = b.before();
    let start = Instant::now();
    let (child, master) = pty::spawn(b.command(Path::new(HELMDECK), &rollout_args(optional)));
    let own_rss = procs::Sampler::start(child.id(), OWN_RSS_EVERY);
    let screen = pty::follow(master, child.id(), Some(IDLE), Arc::default());
    let usage = tokio::task::spawn_blocking(move || wait_usage(child))
        .await
        .unwrap();
    let pty::Followed {
        verdict,
        first_screen,
        counts,
        idle_cpu,
        ..
    } = screen.join().unwrap();
    let ended = verdict.unwrap_or_else(Instant::now);
    let mut m = finish(b, method, n, start, ended, &before, usage);
    m.own_rss_mib = Some(own_rss.finish());
    // The k-th workload to become ready against the k-th rise of the count on screen; those
    // ready before the first screen measure start-up, not a change, and are left out.
    let mut ready: Vec<Instant> = b.ready.lock().unwrap().values().copied().collect();
    ready.sort();
    let first = first_screen.unwrap_or(ended);
    let before_screen = ready.iter().filter(|r| **r < first).count();
    let mut lat: Vec<f64> = ready
        .iter()
        .zip(&counts)
        .skip(before_screen)
        .map(|(r, s)| s.saturating_duration_since(*r).as_secs_f64())
        .collect();
    lat.sort_by(f64::total_cmp);
    if !lat.is_empty() {
        m.latency = Some((percentile(&lat, 0.5), percentile(&lat, 0.99)));
    }
    (m, idle_cpu)
}

async fn kubectl_sequential(b: &Bench, n: usize) -> Measured {
    let before = b.before();
    let start = Instant::now();
    let mut total = Usage {
        ok: true,
        cpu: 0.0,
        rss_mib: 0.0,
    };
    for i in 0..n {
        let target = format!("deployment/{}", name(i));
        let child = b
            .command(
                &repo().join(".tools/bin/kubectl"),
                &["rollout", "status", &target, "-n", "apps", "--timeout=300s"],
            )
            .spawn()
            .unwrap();
        let u = tokio::task::spawn_blocking(move || wait_usage(child))
            .await
            .unwrap();
        total.ok &= u.ok;
        total.cpu += u.cpu;
        total.rss_mib = total.rss_mib.max(u.rss_mib);
    }
    let ended = Instant::now();
    finish(
        b,
        "kubectl rollout status, each in turn",
        n,
        start,
        ended,
        &before,
        total,
    )
}

/// A chart of the same N Deployments, for `helm upgrade --wait`.
fn write_chart(dir: &Path, n: usize) -> PathBuf {
    let chart = dir.join("bench-chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: bench\nversion: 0.1.0\n",
    )
    .unwrap();
    let docs: Vec<String> = (0..n)
        .map(|i| serde_json::to_string(&deployment(&name(i), 2)).unwrap())
        .collect();
    // JSON is YAML: one document per Deployment.
    std::fs::write(chart.join("templates/all.yaml"), docs.join("\n---\n")).unwrap();
    chart
}

async fn helm_wait(b: &Bench, n: usize) -> Measured {
    let chart = write_chart(b.dir.path(), n);
    let before = b.before();
    let start = Instant::now();
    let child = b
        .command(
            &repo().join(".tools/bin/helm"),
            &[
                "upgrade",
                "--install",
                "bench",
                chart.to_str().unwrap(),
                "-n",
                "apps",
                "--wait",
                "--timeout",
                "15m",
            ],
        )
        .spawn()
        .unwrap();
    let usage = tokio::task::spawn_blocking(move || wait_usage(child))
        .await
        .unwrap();
    let ended = Instant::now();
    finish(
        b,
        "helm upgrade --install --wait",
        n,
        start,
        ended,
        &before,
        usage,
    )
}

fn print(results: &[Measured]) {
    println!(
        "  {:<44} {:>5} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>13} {:>8} {:>9}  ok  requests by verb",
        "method",
        "N",
        "wall s",
        "lag s",
        "CPU s",
        "RSS MiB",
        "own MiB",
        "requests",
        "p50/p99 s",
        "writes",
        "CPU ms/1k"
    );
    for r in results {
        let lag = r
            .lag
            .map_or("-".into(), |l| format!("{:.3}", l.as_secs_f64()));
        let lat = r
            .latency
            .map_or("-".into(), |(a, b)| format!("{a:.3}/{b:.3}"));
        println!(
            "  {:<44} {:>5} {:>8.2} {:>8} {:>7.2} {:>8.1} {:>8} {:>8} {:>13} {:>8} {:>9.1}  {:<3} {:?}",
            r.method,
            r.n,
            r.wall.as_secs_f64(),
            lag,
            r.cpu,
            r.rss_mib,
            r.own_rss_mib.map_or("-".into(), |m| format!("{m:.1}")),
            r.requests(),
            lat,
            r.writes,
            r.cpu * 1e6 / r.writes.max(1) as f64,
            r.ok,
            r.verbs
        );
    }
    for r in results {
        println!(
            "BENCH {}",
            json!({"method": r.method, "n": r.n, "wall": r.wall.as_secs_f64(),
                "lag": r.lag.map(|l| l.as_secs_f64()), "cpu": r.cpu, "rss_mib": r.rss_mib,
                "requests": r.requests(), "verbs": r.verbs, "writes": r.writes,
                "p50": r.latency.map(|l| l.0), "p99": r.latency.map(|l| l.1), "ok": r.ok,
                "own_cpu": r.own_cpu, "own_rss_mib": r.own_rss_mib})
        );
    }
}

/// What to run, from the arguments after `--`.
struct Opts {
    n: usize,
    scale: usize,
    tui_pods: usize,
    /// Pods of the one-Deployment upgrade run (0: not run).
    big: usize,
    with_helm: bool,
    methods: bool,
    /// kdash beside the TUI's upgrade, when on PATH.
    kdash: Option<PathBuf>,
    /// Fleet sizes (targets) of the fleet runs, each target N Deployments.
    fleet: Vec<usize>,
}

fn opts() -> Opts {
    // `cargo bench` passes --bench; under `cargo test --all-targets` a small smoke run only.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benching = args.iter().any(|a| a == "--bench");
    let has = |name: &str| args.iter().any(|a| a == name);
    let number = |name: &str, benched: usize, smoke: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|a| a.parse().ok())
            .unwrap_or(if benching { benched } else { smoke })
    };
    let n: usize = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            a.parse::<usize>().is_ok()
                && (*i == 0 || !["--scale", "--tui-pods", "--big"].contains(&args[i - 1].as_str()))
        })
        .and_then(|(_, a)| a.parse().ok())
        .unwrap_or(if benching { 200 } else { 4 });
    // Each --only-X runs that part alone: the N methods, the big upgrade, the scale runs.
    let only = [
        "--only-methods",
        "--only-big",
        "--only-scale",
        "--only-fleet",
    ]
    .into_iter()
    .find(|f| has(f));
    let part = |flag: &str| only.is_none_or(|o| o == flag);
    let kdash = (benching && !has("--no-kdash"))
        .then(|| on_path("kdash"))
        .flatten();
    Opts {
        n,
        scale: if part("--only-scale") {
            number("--scale", 2000, 0)
        } else {
            0
        },
        tui_pods: if part("--only-scale") {
            number("--tui-pods", 5000, 0)
        } else {
            0
        },
        big: if part("--only-big") {
            number("--big", 3000, 30)
        } else {
            0
        },
        with_helm: benching && !has("--skip-helm"),
        methods: part("--only-methods"),
        kdash,
        fleet: match (part("--only-fleet"), benching) {
            (false, _) => vec![],
            (true, true) => vec![1, 2, 5, 10],
            (true, false) => vec![1, 2],
        },
    }
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `helmdeck --version`: a process's start and exit with nothing else, wall and CPU.
fn process_floor() -> (f64, f64) {
    let start = Instant::now();
    let child = Command::new(HELMDECK)
        .arg("--version")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let usage = wait_usage(child);
    (start.elapsed().as_secs_f64(), usage.cpu)
}

/// The N methods side by side, each on a fresh simulator: the same objects, the same timing
/// rules. Also returns the open screens' idle CPU.
async fn methods(o: &Opts, idle_cpu: &mut Vec<(String, usize, f64)>) -> Vec<Measured> {
    let n = o.n;
    let objects = || {
        (0..n)
            .map(|i| ("Deployment", name(i), deployment(&name(i), 2)))
            .collect::<Vec<_>>()
    };
    let mut results = Vec::new();
    let b = Bench::start(SCENARIO).await;
    b.create(objects()).await;
    results.push(helmdeck_headless(&b, n, &[], "helmdeck deploy --only rollout --headless").await);
    // The previous simulator goes first: its controllers would tick beside the next run.
    drop(b);
    let b = Bench::start(SCENARIO).await;
    b.create(objects()).await;
    let (m, idle) = helmdeck_tui(&b, n, &[], "helmdeck TUI on a pty").await;
    idle_cpu.push((m.method.clone(), m.n, idle));
    results.push(m);
    drop(b);
    let b = Bench::start(SCENARIO).await;
    b.create(objects()).await;
    results.push(kubectl_sequential(&b, n).await);
    if o.with_helm {
        drop(b);
        let b = Bench::start(SCENARIO).await;
        results.push(helm_wait(&b, n).await);
    }
    results
}

/// helmdeck alone on the scale scenario: headless at `scale` workloads, the TUI at `tui_pods`.
async fn scale_runs(o: &Opts, idle_cpu: &mut Vec<(String, usize, f64)>) -> Vec<Measured> {
    let mut results = Vec::new();
    let text =
        std::fs::read_to_string(repo().join("crates/helmdeck-sim/scenarios/scale.yaml")).unwrap();
    if o.scale > 0 {
        let b = Bench::start(&text).await;
        let objects: Vec<_> = (0..o.scale).map(scale_workload).collect();
        let gating = objects
            .iter()
            .filter(|(_, name, _)| !name.contains("-opt"))
            .count();
        b.create(objects).await;
        let mut m = helmdeck_headless(
            &b,
            gating,
            &["*-opt*"],
            "helmdeck --headless, scale scenario",
        )
        .await;
        m.n = o.scale;
        results.push(m);
    }
    if o.tui_pods > 0 {
        // The TUI at `tui_pods` pods: the scale scenario's workloads, 10 pods each.
        let b = Bench::start(&text).await;
        let objects: Vec<_> = (0..o.tui_pods / 10).map(scale_workload).collect();
        let gating = objects
            .iter()
            .filter(|(_, name, _)| !name.contains("-opt"))
            .count();
        b.create(objects).await;
        let (mut m, idle) = helmdeck_tui(
            &b,
            gating,
            &["*-opt*"],
            &format!("helmdeck TUI, scale scenario, {} pods", o.tui_pods),
        )
        .await;
        m.n = o.tui_pods / 10;
        idle_cpu.push((m.method.clone(), m.n, idle));
        results.push(m);
    }
    results
}

fn print_ratios(results: &[Measured]) {
    if let [a, _, k, rest @ ..] = results {
        let ratio = |x: f64, y: f64| if y > 0.0 { x / y } else { f64::NAN };
        println!(
            "  ratio kubectl/helmdeck: lag {:.0}x, requests {:.1}x, CPU {:.1}x",
            ratio(
                k.lag.unwrap_or_default().as_secs_f64(),
                a.lag.unwrap_or_default().as_secs_f64()
            ),
            ratio(k.requests() as f64, a.requests() as f64),
            ratio(k.cpu, a.cpu)
        );
        if let Some(h) = rest.iter().find(|r| r.method.starts_with("helm ")) {
            println!(
                "  ratio helm --wait/helmdeck: lag {:.0}x, requests {:.1}x, CPU {:.1}x",
                ratio(
                    h.lag.unwrap_or_default().as_secs_f64(),
                    a.lag.unwrap_or_default().as_secs_f64()
                ),
                ratio(h.requests() as f64, a.requests() as f64),
                ratio(h.cpu, a.cpu)
            );
        }
    }
}

#[tokio::main]
async fn main() {
    let o = opts();
    assert!(
        repo().join(".tools/bin/kubectl").exists(),
        "run scripts/install-tools.sh first"
    );
    let mut results = Vec::new();
    let mut idle_cpu = Vec::new();
    let floor = process_floor();
    if o.methods {
        results.extend(methods(&o, &mut idle_cpu).await);
    }
    let mut big_rows = Vec::new();
    if o.big > 0 {
        let setup = big::Setup {
            helmdeck: Path::new(HELMDECK),
            tools: repo().join(".tools/bin"),
            pods: o.big,
        };
        big_rows.extend(big::run(&setup, false, None).await);
        big_rows.extend(big::run(&setup, true, o.kdash.as_deref()).await);
    }
    results.extend(scale_runs(&o, &mut idle_cpu).await);
    let fleet_rows = fleet::run(
        Path::new(HELMDECK),
        &repo().join(".tools/bin/helm"),
        o.n,
        &o.fleet,
    )
    .await;
    println!(
        "rollout_wait: N Deployments x 2 replicas, ready 1-4 s after creation (scale: crates/helmdeck-sim/scenarios/scale.yaml)"
    );
    print(&results);
    for r in results.iter().filter(|r| !r.attributed.is_empty()) {
        println!("  requests of {} (N={}), by path:", r.method, r.n);
        for (what, count) in &r.attributed {
            println!("    {count:>4}  {what}");
        }
    }
    for r in results.iter().filter(|r| !r.start.is_empty()) {
        let stamps: Vec<_> = r
            .start
            .iter()
            .map(|(l, ms, cpu)| (classify(l), *ms, *cpu))
            .collect();
        start::print(
            &r.method,
            r.n,
            &stamps,
            r.own_cpu.unwrap_or(f64::NAN),
            floor,
        );
    }
    for r in &results {
        if let Some((p50, p99)) = r.by_rank {
            println!(
                "  {} (N={}): ready → line paired by rank, as the TUI row pairs it: p50 {p50:.3} s, p99 {p99:.3} s",
                r.method, r.n
            );
        }
    }
    for (method, n, idle) in &idle_cpu {
        println!(
            "  idle CPU of the open screen after its verdict ({method}, N={n}): {:.2}% of one core over {} s",
            idle * 100.0,
            IDLE.as_secs()
        );
        println!(
            "BENCH {}",
            json!({"method": format!("{method} idle"), "n": n, "idle_cpu": idle})
        );
    }
    print_ratios(&results);
    big::print(&big_rows);
    fleet::print(&fleet_rows, o.n);
    if o.big > 0 && o.kdash.is_none() {
        println!("  (kdash not on PATH: no peer beside the TUI's upgrade)");
    }
    for peer in big_rows
        .iter()
        .filter(|r| !r.method.starts_with("helmdeck") && !r.ok)
    {
        println!(
            "  note: {} never showed the Deployment's pods on its screen",
            peer.method
        );
    }
    // A method that timed out or failed would make the timings above meaningless.
    let failed: Vec<&str> = results
        .iter()
        .map(|r| (r.method.as_str(), r.ok))
        .chain(
            big_rows
                .iter()
                .filter(|r| r.method.starts_with("helmdeck"))
                .map(|r| (r.method.as_str(), r.ok)),
        )
        .chain(fleet_rows.iter().map(|r| ("helmdeck fleet", r.ok)))
        .filter(|(_, ok)| !ok)
        .map(|(m, _)| m)
        .collect();
    assert!(
        failed.is_empty(),
        "these methods did not see every workload roll out: {failed:?}"
    );
}
