//! helmdeck's fixed start, taken apart: each request it makes, stamped with when the
//! in-process simulator received it (milliseconds after spawn) and helmdeck's own CPU at
//! that moment (/proc/PID/stat, 10 ms ticks), so the CPU before its first watch can be told
//! by phase (process start and client, the release record, the LISTs).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::procs::cpu_so_far;

/// Polls for this long at most: the start is over well within it.
const SPAN: Duration = Duration::from_secs(5);
const EVERY: Duration = Duration::from_millis(1);

struct Stamp {
    at: Instant,
    requests: u64,
    cpu: f64,
}

pub struct Stamper {
    spawned: Instant,
    requests_at_spawn: u64,
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Vec<Stamp>>,
}

impl Stamper {
    /// `count` reads the simulator's request counter; `spawned` is when helmdeck was started.
    pub fn start(pid: u32, spawned: Instant, count: impl Fn() -> u64 + Send + 'static) -> Stamper {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let requests_at_spawn = count();
        let handle = std::thread::spawn(move || {
            let mut stamps = Vec::new();
            let mut last = requests_at_spawn;
            while !flag.load(Ordering::Relaxed) && spawned.elapsed() < SPAN {
                let requests = count();
                if requests != last {
                    stamps.push(Stamp {
                        at: Instant::now(),
                        requests,
                        cpu: cpu_so_far(pid),
                    });
                    last = requests;
                }
                std::thread::sleep(EVERY);
            }
            stamps
        });
        Stamper {
            spawned,
            requests_at_spawn,
            stop,
            handle,
        }
    }

    /// Each request of the window (`raw_log` is the simulator's log, `/_sim/` lines included,
    /// read once `requests_now` were counted and ending with the read itself) with its time
    /// after spawn and helmdeck's CPU then.
    pub fn finish(self, raw_log: &[String], requests_now: u64) -> Vec<(String, f64, f64)> {
        self.stop.store(true, Ordering::Relaxed);
        let stamps = self.handle.join().unwrap_or_default();
        let n = requests_now.saturating_sub(self.requests_at_spawn) as usize;
        // The last line is the log's own fetch.
        let end = raw_log.len().saturating_sub(1);
        let window = &raw_log[end.saturating_sub(n)..end];
        window
            .iter()
            .enumerate()
            .filter_map(|(k, line)| {
                let number = self.requests_at_spawn + k as u64 + 1;
                let s = stamps.iter().find(|s| s.requests >= number)?;
                Some((
                    line.clone(),
                    (s.at - self.spawned).as_secs_f64() * 1e3,
                    s.cpu,
                ))
            })
            .collect()
    }
}

/// Prints the breakdown, and one `BENCH` line for it.
pub fn print(method: &str, n: usize, stamps: &[(String, f64, f64)], own: f64, floor: (f64, f64)) {
    println!(
        "  start of {method} (N={n}): each request, ms after spawn and helmdeck's own CPU then \
         (its own CPU at exit {own:.2} s; `helmdeck --version` alone: {:.0} ms wall, {:.2} s CPU)",
        floor.0 * 1e3,
        floor.1
    );
    for (line, ms, cpu) in stamps {
        let shown: String = line
            .split('?')
            .next()
            .unwrap_or(line)
            .chars()
            .take(90)
            .collect();
        println!("    {ms:>8.1} ms  CPU {cpu:>5.2} s  {shown}");
    }
    println!(
        "BENCH {}",
        json!({"method": format!("{method} start"), "n": n, "own_cpu": own,
            "floor_wall": floor.0, "floor_cpu": floor.1,
            "requests": stamps.iter().map(|(l, ms, cpu)| json!({"request": l, "ms": ms, "cpu": cpu}))
                .collect::<Vec<_>>()})
    );
}
