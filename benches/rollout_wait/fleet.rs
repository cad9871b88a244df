//! A fleet: T targets, one simulator and kube context each, one `KUBECONFIG` listing them all;
//! `helmdeck deploy bench CHART --headless --target fleet-1 … --target fleet-T` of a chart of N
//! Deployments (2 replicas, ready 1–4 s after creation), so each target runs the whole deploy
//! (its own `helm upgrade --install`, then the rollout wait over N workloads), all at once and
//! in turn (`--parallel 1`). Per run: wall time, helmdeck's own CPU seconds (its helm children
//! not counted) and own peak RSS (VmHWM of its pid), and per target the growth over one target
//! (CPU and RSS ÷ T ÷ the one target's): at or under 1 is at most linear in targets.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use helmdeck::sim::{Scenario, run};

use super::{SCENARIO, procs, write_chart};

pub struct Row {
    pub targets: usize,
    pub at_once: bool,
    pub wall: Duration,
    pub own_cpu: f64,
    pub rss_mib: f64,
    pub ok: bool,
}

/// How many times the one-target run is repeated: its median is what the others are divided
/// by (one run of it read 0.28 s and 0.48 s of CPU on two runs of the same tree).
const BASE_RUNS: usize = 3;

/// The fleet at each size in `sizes`, at once and (beyond one target) in turn, on fresh
/// simulators each time; one target [`BASE_RUNS`] times.
pub async fn run(helmdeck: &Path, helm: &Path, n: usize, sizes: &[usize]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &t in sizes {
        let times = if t == 1 { BASE_RUNS } else { 1 };
        for _ in 0..times {
            rows.push(one(helmdeck, helm, n, t, true).await);
        }
        if t > 1 {
            rows.push(one(helmdeck, helm, n, t, false).await);
        }
    }
    rows
}

/// The median of the one-target runs: (own CPU, own peak RSS).
fn base(rows: &[Row]) -> Option<(f64, f64)> {
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs.get(xs.len() / 2).copied()
    };
    let ones: Vec<&Row> = rows.iter().filter(|r| r.targets == 1).collect();
    Some((
        median(ones.iter().map(|r| r.own_cpu).collect())?,
        median(ones.iter().map(|r| r.rss_mib).collect())?,
    ))
}

async fn one(helmdeck: &Path, helm: &Path, n: usize, targets: usize, at_once: bool) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let mut sims = Vec::with_capacity(targets);
    let mut kubeconfigs = Vec::with_capacity(targets);
    for i in 1..=targets {
        let sim = run::start(
            Scenario::parse(SCENARIO, "bench-fleet").unwrap(),
            "127.0.0.1:0".parse().unwrap(),
        )
        .await
        .unwrap();
        let path = dir.path().join(format!("kubeconfig-{i}"));
        run::write_kubeconfig_named(&path, &sim.url(), "apps", &format!("fleet-{i}")).unwrap();
        kubeconfigs.push(path);
        sims.push(sim);
    }
    let chart = write_chart(dir.path(), n);
    let mut args: Vec<String> = [
        "deploy",
        "bench",
        chart.to_str().unwrap(),
        "-n",
        "apps",
        "--timeout",
        "300s",
        "--headless",
        "--no-record",
    ]
    .map(String::from)
    .to_vec();
    for i in 1..=targets {
        args.extend(["--target".into(), format!("fleet-{i}")]);
    }
    if !at_once {
        args.extend(["--parallel".into(), "1".into()]);
    }
    let start = Instant::now();
    let child = std::process::Command::new(helmdeck)
        .args(&args)
        .current_dir(dir.path())
        .env("KUBECONFIG", std::env::join_paths(&kubeconfigs).unwrap())
        .env("HOME", dir.path())
        .env("HELM_BIN", helm)
        .env("HELM_CACHE_HOME", dir.path().join(".cache/helm"))
        .env("HELM_CONFIG_HOME", dir.path().join(".config/helm"))
        .env("HELM_DATA_HOME", dir.path().join(".local/share/helm"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sampler = procs::Sampler::start(child.id(), Duration::from_millis(20));
    let (usage, own) = tokio::task::spawn_blocking(move || procs::wait_own(child))
        .await
        .unwrap();
    let own_rss = sampler.finish();
    let wall = start.elapsed();
    drop(sims);
    Row {
        targets,
        at_once,
        wall,
        own_cpu: own,
        rss_mib: own_rss,
        ok: usage.ok,
    }
}

/// The table, with each run's growth per target over one target, and a `BENCH` line each.
pub fn print(rows: &[Row], n: usize) {
    if rows.is_empty() {
        return;
    }
    println!(
        "fleet: T targets, each a deploy of a chart of {n} Deployments x 2 replicas, one simulator per target"
    );
    println!(
        "  {:<8} {:>3} {:>8} {:>9} {:>9} {:>12} {:>12}",
        "run", "T", "wall s", "own CPU s", "own RSS", "CPU/T ÷ one", "RSS/T ÷ one"
    );
    let one = base(rows);
    if let Some((cpu, rss)) = one {
        println!("  one target, median of its runs: own CPU {cpu:.2} s, own RSS {rss:.1} MiB");
    }
    for r in rows {
        let growth = |x: f64, base: Option<f64>| match base {
            Some(b) if b > 0.0 => format!("{:.2}", x / r.targets as f64 / b),
            _ => "-".into(),
        };
        let how = if r.at_once { "at once" } else { "in turn" };
        println!(
            "  {how:<8} {:>3} {:>8.2} {:>9.2} {:>9.1} {:>12} {:>12}{}",
            r.targets,
            r.wall.as_secs_f64(),
            r.own_cpu,
            r.rss_mib,
            growth(r.own_cpu, one.map(|o| o.0)),
            growth(r.rss_mib, one.map(|o| o.1)),
            if r.ok { "" } else { "  (FAILED)" }
        );
        println!(
            "BENCH {}",
            json!({"method": format!("fleet {how}"), "n": n, "targets": r.targets,
                "wall": r.wall.as_secs_f64(), "own_cpu": r.own_cpu, "rss_mib": r.rss_mib,
                "ok": r.ok})
        );
    }
}
