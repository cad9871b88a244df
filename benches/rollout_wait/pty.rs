//! A program on a pseudo-terminal that is its controlling terminal, its output fed to a VT100
//! screen as a terminal would show it (`vt100` crate), answering the cursor-position query a
//! TUI makes while it sets up.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::procs::cpu_so_far;

pub const ROWS: u16 = 48;
pub const COLS: u16 = 160;

fn openpty(rows: u16, cols: u16) -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: the out-pointers are valid; name and termios may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty returned two fresh descriptors we now own.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

/// Starts `cmd` on a fresh 160x48 pty as its controlling terminal (stderr discarded).
pub fn spawn(mut cmd: Command) -> (Child, std::fs::File) {
    let (master, slave) = openpty(ROWS, COLS);
    cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    drop(cmd);
    drop(slave);
    (child, master)
}

/// The ready count in the Workloads pane's title (`Workloads  R/T ready`), as on screen. The
/// word also stands in the key bar and the help, so the one followed by `R/T ready` counts.
fn ready_on_screen(screen: &vt100::Screen) -> Option<usize> {
    let text = screen.contents();
    text.match_indices("Workloads").find_map(|(at, word)| {
        let after = text[at + word.len()..].trim_start();
        let (count, rest) = after.split_once('/')?;
        let total_len = rest.chars().take_while(char::is_ascii_digit).count();
        (total_len > 0 && rest[total_len..].starts_with(" ready"))
            .then(|| count.parse().ok())
            .flatten()
    })
}

/// What the screen showed over a program's life.
pub struct Followed {
    /// When a verdict banner (`LANDED`/`FAILED`) first stood on screen.
    pub verdict: Option<Instant>,
    pub first_screen: Option<Instant>,
    /// When the ready count in the Workloads title first reached each value.
    pub counts: Vec<Instant>,
    /// CPU share of one core over `idle` after the verdict.
    pub idle_cpu: f64,
    /// The screen's text when it was told to stop, else its last.
    pub last: String,
}

/// Follows the screen of the program `pid` on `master` until it closes the pty. With
/// `verdict_then`, once a verdict banner is on screen the program is left alone that long (its
/// idle CPU) and then gets `q`; `q` is also sent once `stop` is set (a peer that has no
/// verdict of its own).
pub fn follow(
    master: std::fs::File,
    pid: u32,
    verdict_then: Option<Duration>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Followed> {
    let mut writer = master.try_clone().unwrap();
    let mut master = master;
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("a terminal size is not zero");
        let mut parser = vt100::Parser::new(size(ROWS), size(COLS), 0);
        let mut out = Followed {
            verdict: None,
            first_screen: None,
            counts: Vec::new(),
            idle_cpu: 0.0,
            last: String::new(),
        };
        let (tx, rx) = std::sync::mpsc::channel::<Option<Vec<u8>>>();
        std::thread::spawn(move || {
            loop {
                match master.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => {
                        if tx.send(Some(buf[..k].to_vec())).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = tx.send(None);
        });
        let mut idle_from: Option<(Instant, f64)> = None;
        let mut quit_sent = false;
        loop {
            let chunk = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Some(c)) => Some(c),
                Ok(None) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(_) => break,
            };
            let now = Instant::now();
            if let Some(c) = chunk {
                parser.process(&c);
                // A terminal answers the cursor-position query the TUI makes while it sets up;
                // without an answer it (rightly) falls back to plain lines.
                if c.windows(4).any(|w| w == b"\x1b[6n") {
                    let (row, col) = parser.screen().cursor_position();
                    let _ = write!(writer, "\x1b[{};{}R", row + 1, col + 1);
                }
                if let Some(r) = ready_on_screen(parser.screen()) {
                    out.first_screen.get_or_insert(now);
                    while out.counts.len() < r {
                        out.counts.push(now);
                    }
                }
                if verdict_then.is_some() && out.verdict.is_none() {
                    let text = parser.screen().contents();
                    if text.contains("LANDED") || text.contains("FAILED") {
                        out.verdict = Some(now);
                        idle_from = Some((now, cpu_so_far(pid)));
                    }
                }
            }
            if let (Some((t, cpu)), Some(idle)) = (idle_from, verdict_then)
                && now.duration_since(t) >= idle
            {
                let spent = now.duration_since(t).as_secs_f64();
                if spent > 0.0 {
                    out.idle_cpu = (cpu_so_far(pid) - cpu) / spent;
                }
                idle_from = None;
                let _ = writer.write_all(b"q");
            }
            if !quit_sent && stop.load(Ordering::Relaxed) {
                quit_sent = true;
                // The screen it showed, before `q` clears it.
                out.last = parser.screen().contents();
                let _ = writer.write_all(b"q");
            }
        }
        if out.last.is_empty() {
            out.last = parser.screen().contents();
        }
        // The last screen, to check by eye that the TUI (not its plain fallback) was measured.
        if std::env::var_os("BENCH_SCREEN").is_some() {
            eprintln!("{}", out.last);
        }
        out
    })
}
