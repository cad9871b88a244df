//! What a child process used: by `wait4` (its own plus the children it waited for), and its
//! own alone, from /proc while it runs and once it has exited but is not yet reaped.

use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Resources of a finished child: exit success, CPU seconds (user + system) and peak RSS in
/// MiB, including the children it waited for.
pub struct Usage {
    pub ok: bool,
    pub cpu: f64,
    pub rss_mib: f64,
}

pub fn wait_usage(child: Child) -> Usage {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unreaped child; status and ru are valid for writes.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        cpu: secs(ru.ru_utime) + secs(ru.ru_stime),
        rss_mib: ru.ru_maxrss as f64 / 1024.0,
    }
}

/// Fields of /proc/PID/stat after the parenthesised command name (state is the first).
fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    rest.split_whitespace().map(str::to_string).collect()
}

fn ticks(fields: &[String], from: usize, count: usize) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    fields
        .iter()
        .skip(from)
        .take(count)
        .filter_map(|x| x.parse::<f64>().ok())
        .sum::<f64>()
        / hz
}

/// User plus system CPU seconds a live process has used so far, its own threads only.
pub fn cpu_so_far(pid: u32) -> f64 {
    // utime and stime are the 12th and 13th fields after the name.
    ticks(&stat_fields(pid), 11, 2)
}

/// A finished child's usage by wait4 and its own CPU seconds (not its children's): it is
/// waited for without being reaped (`waitid` with `WNOWAIT`), its final /proc/PID/stat read,
/// then reaped. wait4's rusage adds the children it waited for (helm, for helmdeck).
pub fn wait_own(child: Child) -> (Usage, f64) {
    let pid = child.id();
    // SAFETY: an all-zero siginfo_t is a valid value for waitid to overwrite.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unreaped child; info is valid for writes.
    let rc = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
    assert_eq!(rc, 0, "waitid: {}", std::io::Error::last_os_error());
    let own = cpu_so_far(pid);
    (wait_usage(child), own)
}

/// The peak resident set (VmHWM, MiB) of a live process, sampled until it exits or the
/// sampler is stopped: the kernel keeps it per process, so the last value read is the peak
/// up to that moment. An exited (zombie) process has no VmHWM left to read.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<f64>,
}

impl Sampler {
    pub fn start(pid: u32, every: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut peak_kib = 0u64;
            while !flag.load(Ordering::Relaxed) {
                let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                    break;
                };
                let hwm = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
                match hwm {
                    Some(kib) => peak_kib = peak_kib.max(kib),
                    None => break,
                }
                std::thread::sleep(every);
            }
            peak_kib as f64 / 1024.0
        });
        Sampler { stop, handle }
    }

    /// The peak seen, in MiB.
    pub fn finish(self) -> f64 {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// VmHWM of a live process now, in MiB (0 when it cannot be read).
pub fn hwm_now(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}
