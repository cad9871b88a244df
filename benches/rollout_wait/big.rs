//! One Deployment × PODS pods (3,000 under `cargo bench`), installed by the real helm, rolled
//! out, then upgraded (its pod template's annotation changed) by `helmdeck deploy`, which runs
//! the real `helm upgrade` itself: headless, then the TUI on a 160x48 pty, each on a fresh
//! simulator. The simulator runs as its own process (`helmdeck sim --kubeconfig-out`) so its
//! peak RSS is its own. helmdeck's peak RSS is the VmHWM of its pid, sampled from /proc until it
//! exits, and its CPU its own (read once it has exited, before it is reaped): `wait4` would add
//! the helm child it waited for. With `kdash` given, kdash runs on another pty against the same
//! simulator during the TUI's rollout, as the peer's figure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Config};
use serde_json::{Value, json};

use helmdeck::rollout::readiness::{self, Progress};

use crate::procs::{self, Sampler};
use crate::pty;

/// How often the peak RSS of a process is read.
const SAMPLE: Duration = Duration::from_millis(20);

/// One row of the run: helmdeck headless, its TUI, or the peer beside the TUI.
pub struct Row {
    pub method: String,
    pub pods: usize,
    /// From the upgrade's start to helmdeck's exit (headless) or verdict on screen (TUI); for
    /// the peer, how long it ran.
    pub wall: f64,
    /// After the Deployment became ready again (new pods all ready, old ones gone).
    pub lag: Option<f64>,
    /// Own CPU seconds, its children not counted.
    pub cpu: f64,
    /// Own peak RSS (VmHWM), MiB.
    pub rss_mib: f64,
    /// The simulator's peak RSS over the install and the upgrade, MiB.
    pub sim_rss_mib: Option<f64>,
    /// Requests the simulator served during the upgrade (helm's and a peer's included).
    pub requests: u64,
    /// Store writes during the upgrade.
    pub writes: u64,
    pub ok: bool,
}

pub struct Setup<'a> {
    pub helmdeck: &'a Path,
    pub tools: PathBuf,
    pub pods: usize,
}

const CHART_TEMPLATE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    app.kubernetes.io/instance: {{ .Release.Name }}
    app.kubernetes.io/name: web
spec:
  replicas: {{ .Values.replicas }}
  strategy:
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ .Release.Name }}
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: {{ .Release.Name }}
        app.kubernetes.io/name: web
      annotations:
        rev: {{ .Values.rev | quote }}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 80}]
          resources: {requests: {cpu: 1m, memory: 1Mi}}
"#;

fn write_chart(dir: &Path, pods: usize) -> PathBuf {
    let chart = dir.join("big-chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        format!("replicas: {pods}\nrev: \"1\"\n"),
    )
    .unwrap();
    std::fs::write(chart.join("templates/deploy.yaml"), CHART_TEMPLATE).unwrap();
    chart
}

/// The simulator's nodes take 110 pods each: room for the pods and the rollout's 25% surge.
fn scenario(pods: usize) -> String {
    let nodes = (pods * 5 / 4).div_ceil(110) + 1;
    format!(
        "description: one big Deployment\nnodes: {nodes}\nnamespaces: [apps]\ntick: 200ms\n\
         defaults:\n  start_after: 500ms\n  ready_after: 1s\n"
    )
}

/// `helmdeck sim` in its own process, and what talks to it.
struct Sim {
    child: Child,
    dir: tempfile::TempDir,
    client: Client,
    helmdeck: PathBuf,
    tools: PathBuf,
}

impl Sim {
    async fn start(setup: &Setup<'_>) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let scn = dir.path().join("scenario.yaml");
        std::fs::write(&scn, scenario(setup.pods)).unwrap();
        let mut child = Command::new(setup.helmdeck)
            .args(["sim", "--listen", "127.0.0.1:0", "--scenario"])
            .arg(&scn)
            .arg("--kubeconfig-out")
            .arg(dir.path().join("kubeconfig"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        // `ready URL kubeconfig=PATH`
        let url = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("helmdeck sim did not start: {line:?}"))
            .to_string();
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let mut config = Config::new(url.parse().unwrap());
        config.default_namespace = "apps".into();
        Sim {
            child,
            dir,
            client: Client::try_from(config).unwrap(),
            helmdeck: setup.helmdeck.to_path_buf(),
            tools: setup.tools.clone(),
        }
    }

    fn command(&self, program: &Path) -> Command {
        let home = self.dir.path();
        let mut cmd = Command::new(program);
        cmd.env("KUBECONFIG", home.join("kubeconfig"))
            .env("HOME", home)
            .env("XDG_STATE_HOME", home.join("state"))
            .env("HELM_BIN", self.tools.join("helm"))
            .env("HELM_CACHE_HOME", home.join(".cache/helm"))
            .env("HELM_CONFIG_HOME", home.join(".config/helm"))
            .env("HELM_DATA_HOME", home.join(".local/share/helm"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn run(&self, program: &Path, args: &[&str]) {
        let status = self.command(program).args(args).status().unwrap();
        assert!(status.success(), "{} {args:?}: {status}", program.display());
    }

    /// The simulator's request count and resourceVersion; the fetch is itself one request.
    async fn stats(&self) -> (u64, u64) {
        let req = hyper::Request::get("/_sim/stats").body(Vec::new()).unwrap();
        let text = self.client.request_text(req).await.unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        (
            v["requests"].as_u64().unwrap_or(0),
            v["resourceVersion"].as_u64().unwrap_or(0),
        )
    }

    fn peak_rss(&self) -> f64 {
        procs::hwm_now(self.child.id())
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// When the Deployment last turned ready after having been not ready, by helmdeck's rules.
/// The watch is to be aborted before the simulator goes.
fn watch_turns_ready(
    client: Client,
    name: &'static str,
) -> (Arc<Mutex<Option<Instant>>>, tokio::task::JoinHandle<()>) {
    let at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let out = at.clone();
    let task = tokio::spawn(async move {
        let api = Api::<Deployment>::namespaced(client, "apps");
        let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut was_done = None;
        while let Some(ev) = stream.next().await {
            let d = match ev {
                Ok(watcher::Event::Apply(d) | watcher::Event::InitApply(d))
                    if d.metadata.name.as_deref() == Some(name) =>
                {
                    d
                }
                _ => continue,
            };
            let done = readiness::deployment(&d).progress == Progress::Done;
            if done && was_done == Some(false) {
                *out.lock().unwrap() = Some(Instant::now());
            }
            was_done = Some(done);
        }
    });
    (at, task)
}

/// A peer on its own pty beside helmdeck, until stopped.
struct Peer {
    name: String,
    child: Child,
    stop: Arc<AtomicBool>,
    screen: std::thread::JoinHandle<pty::Followed>,
    rss: Sampler,
    start: Instant,
}

impl Peer {
    fn start(sim: &Sim, program: &Path) -> Peer {
        let name = program
            .file_name()
            .map_or("peer".into(), |n| n.to_string_lossy().into_owned());
        let start = Instant::now();
        let (child, master) = pty::spawn(sim.command(program));
        let stop = Arc::new(AtomicBool::new(false));
        let screen = pty::follow(master, child.id(), None, stop.clone());
        let rss = Sampler::start(child.id(), SAMPLE);
        Peer {
            name,
            child,
            stop,
            screen,
            rss,
            start,
        }
    }

    /// `q`, then SIGKILL if it has not gone in 5 s; its own CPU and peak RSS.
    async fn finish(self) -> (f64, f64, f64, bool, String) {
        self.stop.store(true, Ordering::Relaxed);
        let wall = self.start.elapsed().as_secs_f64();
        let rss = self.rss.finish();
        let child = self.child;
        let (usage, cpu) = tokio::task::spawn_blocking(move || {
            let pid = child.id();
            let deadline = Instant::now() + Duration::from_secs(5);
            while !exited(pid) {
                if Instant::now() > deadline {
                    // SAFETY: pid is our own unreaped child.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            procs::wait_own(child)
        })
        .await
        .unwrap();
        let last = self.screen.join().map(|f| f.last).unwrap_or_default();
        (wall, cpu, rss, usage.ok, last)
    }
}

/// Whether a child has exited (a zombie, not yet reaped).
fn exited(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .is_none_or(|(_, r)| r.trim_start().starts_with('Z'))
}

/// Installs the chart at rev 1 and waits for its rollout, on a fresh simulator.
async fn installed(setup: &Setup<'_>) -> (Sim, PathBuf) {
    let sim = Sim::start(setup).await;
    let chart = write_chart(sim.dir.path(), setup.pods);
    let helm = sim.tools.join("helm");
    let kubectl = sim.tools.join("kubectl");
    let chart_arg = chart.to_str().unwrap();
    tokio::task::block_in_place(|| {
        sim.run(&helm, &["install", "rel", chart_arg, "-n", "apps"]);
        sim.run(
            &kubectl,
            &[
                "rollout",
                "status",
                "deploy/rel-web",
                "-n",
                "apps",
                "--timeout=900s",
            ],
        );
    });
    (sim, chart)
}

/// The upgrade by helmdeck, headless or on a pty, with `peer` beside it when given.
pub async fn run(setup: &Setup<'_>, tui: bool, peer: Option<&Path>) -> Vec<Row> {
    let (sim, chart) = installed(setup).await;
    let (turned_ready, watch) = watch_turns_ready(sim.client.clone(), "rel-web");
    // Let the reference watch list, and a peer list the pods, before the upgrade.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let peer = peer.map(|p| Peer::start(&sim, p));
    if peer.is_some() {
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    let (requests_before, rv_before) = sim.stats().await;
    let mut cmd = sim.command(&sim.helmdeck);
    cmd.args([
        "deploy",
        "rel",
        chart.to_str().unwrap(),
        "-n",
        "apps",
        "--set",
        "rev=2",
        "--timeout",
        "900s",
    ]);
    let start = Instant::now();
    let (child, screen) = if tui {
        let (child, master) = pty::spawn(cmd);
        let screen = pty::follow(master, child.id(), Some(Duration::ZERO), Arc::default());
        (child, Some(screen))
    } else {
        cmd.arg("--headless");
        (cmd.spawn().unwrap(), None)
    };
    let rss = Sampler::start(child.id(), SAMPLE);
    let (usage, cpu) = tokio::task::spawn_blocking(move || procs::wait_own(child))
        .await
        .unwrap();
    let ok = usage.ok;
    let exited_at = Instant::now();
    let rss_mib = rss.finish();
    let ended = screen
        .and_then(|s| s.join().ok())
        .and_then(|f| f.verdict)
        .unwrap_or(exited_at);
    let (requests_after, rv_after) = sim.stats().await;
    watch.abort();
    let lag = turned_ready
        .lock()
        .unwrap()
        .map(|t| ended.saturating_duration_since(t).as_secs_f64());
    let mut rows = vec![Row {
        method: format!(
            "helmdeck deploy{}, 1 Deployment x {} pods upgraded",
            if tui { " TUI on a pty" } else { " --headless" },
            setup.pods
        ),
        pods: setup.pods,
        wall: (ended - start).as_secs_f64(),
        lag,
        cpu,
        rss_mib,
        sim_rss_mib: Some(sim.peak_rss()),
        // Less the stats fetch that opened the window.
        requests: requests_after.saturating_sub(requests_before + 1),
        writes: rv_after.saturating_sub(rv_before),
        ok,
    }];
    if let Some(peer) = peer {
        // The peer keeps running until helmdeck is done: the same window, the same rollout.
        let name = peer.name.clone();
        let (wall, cpu, rss_mib, _, last) = peer.finish().await;
        // kdash lists pods by name: seeing the Deployment's pods proves it was fed them.
        let listed = last.contains("rel-web-");
        rows.push(Row {
            method: format!("{name} beside the TUI, same rollout"),
            pods: setup.pods,
            wall,
            lag: None,
            cpu,
            rss_mib,
            sim_rss_mib: None,
            requests: 0,
            writes: 0,
            ok: listed,
        });
    }
    rows
}

pub fn print(rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    println!(
        "big: one Deployment x PODS pods installed by helm, rolled out, then upgraded by helmdeck \
         (real helm upgrade inside); helmdeck's own CPU and VmHWM, the simulator's VmHWM (its own process)"
    );
    println!(
        "  {:<62} {:>5} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8}  ok",
        "method", "pods", "wall s", "lag s", "CPU s", "RSS MiB", "sim MiB", "requests", "writes"
    );
    for r in rows {
        let opt = |v: Option<f64>, p: usize| v.map_or("-".into(), |v| format!("{v:.p$}"));
        println!(
            "  {:<62} {:>5} {:>8.2} {:>8} {:>7.2} {:>8.1} {:>8} {:>8} {:>8}  {}",
            r.method,
            r.pods,
            r.wall,
            opt(r.lag, 3),
            r.cpu,
            r.rss_mib,
            opt(r.sim_rss_mib, 1),
            r.requests,
            r.writes,
            r.ok
        );
    }
    for r in rows {
        println!(
            "BENCH {}",
            json!({"big": true, "method": r.method, "n": r.pods, "wall": r.wall, "lag": r.lag,
                "cpu": r.cpu, "rss_mib": r.rss_mib, "sim_rss_mib": r.sim_rss_mib,
                "requests": r.requests, "writes": r.writes, "ok": r.ok})
        );
    }
}
