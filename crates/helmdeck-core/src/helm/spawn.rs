//! Starting helm so that it never outlives helmdeck unnoticed, and telling later whether a helm
//! that ran is still alive.
//!
//! helm runs in a process group of its own (see [`crate::helm::process`]), so nothing reaches it
//! when helmdeck dies: a SIGKILL of helmdeck (the OOM killer, `kill -9`, a CI runner's hard
//! timeout) used to leave helm running on its own, writing the release as it pleased. Instead,
//! helm is started with `PR_SET_PDEATHSIG(SIGTERM)`: when helmdeck dies, by any means, the kernel
//! sends helm the same one SIGTERM a cancel sends, and helm ends as on Ctrl+C (an upgrade marks
//! its revision `failed`; a `helm rollback`, which handles no signal, stops where it is).
//!
//! The kernel sends that signal when the *thread* that forked helm exits, not the process. A
//! tokio worker may be replaced (`block_in_place`) and a blocking-pool thread exits when idle,
//! so helm is forked by one dedicated thread that lives as long as the process and does nothing
//! else.

use std::io;
use std::sync::Mutex;
use std::sync::mpsc;

use tokio::process::{Child, Command};

type Job = Box<dyn FnOnce() + Send>;

/// The spawner thread's queue, started on first use and never stopped.
static SPAWNER: Mutex<Option<mpsc::Sender<Job>>> = Mutex::new(None);

fn spawner() -> io::Result<mpsc::Sender<Job>> {
    let mut slot = SPAWNER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(tx) = slot.as_ref() {
        return Ok(tx.clone());
    }
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("helm-spawner".into())
        .spawn(move || {
            // Lives until the process ends: the queue's sender is kept in SPAWNER forever.
            for job in rx {
                job();
            }
        })?;
    *slot = Some(tx.clone());
    Ok(tx)
}

/// Spawns `cmd` from the spawner thread, with `PR_SET_PDEATHSIG(SIGTERM)` set in the child.
/// Must be called within a tokio runtime (the child is registered with it for `wait`).
pub async fn spawn(mut cmd: Command) -> io::Result<Child> {
    set_parent_death_signal(&mut cmd);
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = handle.enter();
        // The receiver is gone only when the caller was dropped; the child then runs on, as a
        // dropped run's helm does (see `process::run`), and the SIGTERM at our death still holds.
        let _ = tx.send(cmd.spawn());
    });
    spawner()?
        .send(job)
        .map_err(|_| io::Error::other("the helm spawner thread is gone"))?;
    rx.await
        .map_err(|_| io::Error::other("the helm spawner thread dropped the spawn"))?
}

#[cfg(target_os = "linux")]
fn set_parent_death_signal(cmd: &mut Command) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and only makes async-signal-safe
    // system calls (prctl, getppid, kill), touching no memory shared with the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // helmdeck died between the fork and the prctl: the signal would never come.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGTERM);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn set_parent_death_signal(_cmd: &mut Command) {}

/// When process `pid` started, in clock ticks after boot (`/proc/PID/stat` field 22), with the
/// boot it belongs to: with the pid, what names one process across pid reuse and reboots.
pub fn start_stamp(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or `)`: split after the
    // last `)`, where field 3 starts; field 22 is then the 20th.
    let (_, rest) = stat.rsplit_once(')')?;
    let ticks = rest.split_whitespace().nth(19)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(format!("{}:{ticks}", boot.trim()))
}

/// Whether the process that had `start` (from [`start_stamp`]) as `pid` still runs. A zombie
/// (exited, not yet reaped) counts as ended.
pub fn alive(pid: u32, start: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state == "Z" || state == "X");
    !zombie && start_stamp(pid).as_deref() == Some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_under_its_own_stamp_and_not_under_another() {
        let me = std::process::id();
        let stamp = start_stamp(me).expect("our own stamp");
        assert!(alive(me, &stamp));
        assert!(
            !alive(me, "another-boot:1"),
            "a reused pid is not the same process"
        );
        assert!(!alive(u32::MAX - 1, &stamp), "no such process");
    }

    #[tokio::test]
    async fn a_child_outlives_the_short_lived_thread_that_asked_for_it() {
        // The spawner thread outlives the caller's thread: a child spawned from a short-lived
        // thread's runtime keeps running after that thread exits.
        let child = std::thread::spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async {
                let mut cmd = Command::new("/bin/sleep");
                cmd.arg("30").kill_on_drop(false);
                spawn(cmd).await.expect("spawned").id().expect("a pid")
            })
        })
        .join()
        .expect("the thread");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let stamp = start_stamp(child);
        assert!(
            stamp.as_deref().is_some_and(|s| alive(child, s)),
            "the child died with the thread that asked for it"
        );
        // SAFETY: kill(2) touches no memory; this is the sleep the test started.
        unsafe {
            libc::kill(child as libc::pid_t, libc::SIGKILL);
        }
    }
}
