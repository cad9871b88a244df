//! Running helm as a child process: stream its output line by line, cancel it gently.
//!
//! Cancelling sends helm exactly one SIGTERM and then waits for it to exit by itself, never
//! SIGKILL: helm reacts to SIGTERM by marking the new revision `failed` (semantics §4.3), while a
//! killed helm leaves it `pending-upgrade`, which locks every later upgrade until someone repairs
//! the release by hand.

use std::collections::VecDeque;
use std::fmt;
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::helm::HelmError;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Every fallible function here fails with a [`HelmError`].
type Result<T, E = HelmError> = std::result::Result<T, E>;

/// Longest line delivered; the rest of a longer line is counted, not kept, so one runaway line
/// (a manifest dumped by `--debug`, say) cannot grow memory without bound.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// How many of the last stderr lines `HelmExit` keeps; helm's error is at the end.
const TAIL_LINES: usize = 20;

/// Lines in flight between the pipe readers and the consumer. When full, the readers stop
/// reading and helm blocks on its pipe: backpressure instead of buffering.
const LINE_QUEUE: usize = 256;

/// After helm exits, how long to keep reading for output still in the pipes. Normally the pipes
/// close together with helm; this only matters when a grandchild (a plugin, a credential helper)
/// inherited them and lives on.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What to run: the binary, its arguments and extra environment (added to ours).
#[derive(Clone)]
pub struct HelmRun {
    pub bin: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// Arguments may carry `--set` secrets and env values tokens, so Debug shows neither.
impl fmt::Debug for HelmRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env_keys: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("HelmRun")
            .field("bin", &self.bin)
            .field("args", &redact_args(&self.args))
            .field("env_keys", &env_keys)
            .finish()
    }
}

/// Which pipe a line came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// How helm ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HelmExit {
    /// Exit code, when helm exited normally.
    pub code: Option<i32>,
    /// The signal that ended helm, when one did (it handles SIGTERM itself, so this means
    /// something else killed it, or the signal came before helm installed its handler).
    pub signal: Option<i32>,
    /// We sent the SIGTERM (cancellation was requested while helm ran).
    pub cancelled: bool,
    /// The last 20 stderr lines, oldest first.
    pub stderr_tail: Vec<String>,
    /// helm's pid and its start stamp ([`crate::helm::spawn::start_stamp`]), read while it
    /// ran: what a record keeps to tell later whether this helm is still alive.
    #[serde(default)]
    pub pid: Option<u32>,
    #[serde(default)]
    pub start: Option<String>,
}

/// How helm ended, in the words both screens print: `exit 1`, `signal 9` or `unknown exit`.
pub fn exit_words(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown exit".into(),
    }
}

impl HelmExit {
    /// Helm exited 0. A cancellation that came too late to stop helm still counts: the
    /// release was then written as helm reported, so `cancelled` is for the caller to weigh.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs helm, calling `on_line` for every output line as it arrives (each pipe in order; the two
/// pipes interleave as they come), until helm has exited and its pipes are drained.
///
/// On `cancel`, sends one SIGTERM and keeps streaming until helm exits by itself. Dropping the
/// returned future does not kill helm either (`kill_on_drop(false)`): an orphaned helm finishes
/// its upgrade and writes a final status, which is better than a stuck `pending-upgrade`; only
/// helmdeck's own death sends it the SIGTERM a cancel would (`PR_SET_PDEATHSIG`, see `spawn`).
///
/// A token cancelled before the call starts nothing and returns `cancelled: true` with no code.
pub async fn run(
    run: HelmRun,
    mut on_line: impl FnMut(Stream, String) + Send,
    cancel: CancellationToken,
) -> Result<HelmExit> {
    if cancel.is_cancelled() {
        return Ok(HelmExit {
            code: None,
            signal: None,
            cancelled: true,
            stderr_tail: Vec::new(),
            pid: None,
            start: None,
        });
    }

    let mut cmd = Command::new(&run.bin);
    cmd.args(&run.args)
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false)
        // helm gets a process group of its own, so the terminal's job-control signals reach
        // helmdeck only: Ctrl+C (SIGINT) goes to the foreground group, which helm is then not
        // in, and helmdeck forwards exactly one SIGTERM. Sharing our group, helm would see the
        // terminal's SIGINT *and* our SIGTERM, and Ctrl+\ (SIGQUIT) would kill it outright —
        // Go dies on SIGQUIT — leaving the release `pending-upgrade`. One owner decides when
        // helm is cancelled, and it is helmdeck.
        .process_group(0);
    // From the spawner thread, with SIGTERM at helmdeck's death (see `spawn`).
    let mut child = crate::helm::spawn::spawn(cmd)
        .await
        .map_err(|source| HelmError::Start {
            bin: run.bin.clone(),
            source,
        })?;
    // Valid until the child is reaped, which only `wait` below does; we signal only before that.
    let pid = child.id();
    let start = pid.and_then(crate::helm::spawn::start_stamp);
    let stdout = child.stdout.take().ok_or(HelmError::NotPiped("stdout"))?;
    let stderr = child.stderr.take().ok_or(HelmError::NotPiped("stderr"))?;

    let (tx, mut rx) = mpsc::channel(LINE_QUEUE);
    let out_reader = tokio::spawn(pump(stdout, Stream::Stdout, tx.clone()));
    let err_reader = tokio::spawn(pump(stderr, Stream::Stderr, tx));

    let mut tail: VecDeque<String> = VecDeque::with_capacity(TAIL_LINES);
    let mut cancelled = false;
    let mut status = None;
    let mut pipes_open = true;
    let drain_deadline = tokio::time::sleep(Duration::MAX);
    tokio::pin!(drain_deadline);
    let wait = child.wait();
    tokio::pin!(wait);

    while status.is_none() || pipes_open {
        tokio::select! {
            biased;
            // Never after the exit: once reaped, the pid may belong to someone else.
            () = cancel.cancelled(), if !cancelled && status.is_none() => {
                cancelled = true;
                if let Some(pid) = pid {
                    terminate(pid);
                }
            }
            line = rx.recv(), if pipes_open => match line {
                Some((stream, text)) => {
                    if stream == Stream::Stderr {
                        if tail.len() == TAIL_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(text.clone());
                    }
                    on_line(stream, text);
                }
                None => pipes_open = false,
            },
            exited = &mut wait, if status.is_none() => {
                status = Some(exited.map_err(HelmError::Wait)?);
                drain_deadline
                    .as_mut()
                    .reset(tokio::time::Instant::now() + DRAIN_GRACE);
            }
            () = &mut drain_deadline, if status.is_some() && pipes_open => break,
        }
    }
    // Only reached with the readers still running when a grandchild holds the pipes open.
    out_reader.abort();
    err_reader.abort();

    let status = status.ok_or(HelmError::StatusLost)?;
    Ok(HelmExit {
        code: status.code(),
        signal: status.signal(),
        cancelled,
        stderr_tail: tail.into(),
        pid,
        start,
    })
}

/// Sends SIGTERM to helm (the process only, not its group: helm's own children are its
/// business, and it cleans up after itself on SIGTERM).
fn terminate(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers and touches no memory of ours. The pid is our child,
    // not yet reaped, so it cannot have been reused. ESRCH (it just exited) needs no handling:
    // the wait branch reports the exit either way.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
}

/// Reads one pipe to its end, sending capped lines.
///
/// When the consumer is gone (the `run` future was dropped) it keeps reading and discards: a
/// closed pipe would kill helm with SIGPIPE at its next write, possibly mid-upgrade, which is
/// exactly the `pending-upgrade` outcome `kill_on_drop(false)` is there to avoid.
async fn pump<R: AsyncRead + Unpin>(pipe: R, stream: Stream, tx: mpsc::Sender<(Stream, String)>) {
    let mut reader = BufReader::new(pipe);
    let mut line = LineBuf::default();
    let mut consumer_gone = false;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A read error on a pipe means it is gone: end the stream as at EOF.
            Err(_) => &[],
        };
        if chunk.is_empty() {
            if let Some(text) = line.take_partial() {
                // The consumer may be gone already; nothing is left to do either way.
                let _ = tx.send((stream, text)).await;
            }
            return;
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                line.push(&chunk[..i]);
                (i + 1, Some(line.take()))
            }
            None => {
                line.push(chunk);
                (chunk.len(), None)
            }
        };
        reader.consume(used);
        if let Some(text) = done
            && !consumer_gone
            && tx.send((stream.clone(), text)).await.is_err()
        {
            consumer_gone = true;
        }
    }
}

/// One line being assembled: at most `MAX_LINE_BYTES` kept, the rest counted.
#[derive(Default)]
struct LineBuf {
    kept: Vec<u8>,
    dropped: usize,
    /// Whether anything at all arrived since the last line, so an empty line is still a line.
    started: bool,
}

impl LineBuf {
    fn push(&mut self, bytes: &[u8]) {
        self.started = true;
        let room = MAX_LINE_BYTES.saturating_sub(self.kept.len());
        let keep = room.min(bytes.len());
        self.kept.extend_from_slice(&bytes[..keep]);
        self.dropped += bytes.len() - keep;
    }

    /// The completed line (its `\n` already removed), lossily decoded.
    fn take(&mut self) -> String {
        let mut kept = std::mem::take(&mut self.kept);
        let mut dropped = std::mem::take(&mut self.dropped);
        self.started = false;
        if dropped == 0 {
            // CRLF output (rare from helm, but plugins exist) would leave a stray `\r`.
            if kept.last() == Some(&b'\r') {
                kept.pop();
            }
        } else if let Err(e) = std::str::from_utf8(&kept) {
            // The cut may split a character; move its leading bytes to the dropped count
            // rather than show a replacement character that is not in helm's output.
            if e.error_len().is_none() {
                dropped += kept.len() - e.valid_up_to();
                kept.truncate(e.valid_up_to());
            }
        }
        let mut text = String::from_utf8_lossy(&kept).into_owned();
        if dropped > 0 {
            text.push_str(&format!("…[truncated {dropped} bytes]"));
        }
        text
    }

    /// At end of stream: the last line when it had no trailing newline.
    fn take_partial(&mut self) -> Option<String> {
        self.started.then(|| self.take())
    }
}

/// Flags whose values are `key=value` pairs that may hold secrets.
const VALUE_FLAGS: [&str; 5] = [
    "--set",
    "--set-string",
    "--set-json",
    "--set-file",
    "--set-literal",
];

/// Flags whose whole value is a credential.
const SECRET_FLAGS: [&str; 2] = ["--password", "--kube-token"];

const MASK: &str = "***";

/// Arguments fit to print: values of `--set`, `--set-string`, `--set-json`, `--set-file` and
/// `--set-literal` become `key=***` (both `--set k=v` and `--set=k=v`), and credentials given as
/// `--password` or `--kube-token` become `***`. Keys stay visible, values never: when a value's
/// extent is unclear (quotes, braces), more is masked, never less. The one exception is a
/// `--set` value that is exactly `true` or `false`: a switch, not a secret, and the form of the
/// init toggle helmdeck adds itself (`--set initJob.enabled=false`).
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut value_of: Option<&str> = None;
    for arg in args {
        if let Some(flag) = value_of.take() {
            out.push(redact_value(flag, arg));
            continue;
        }
        if let Some((flag, value)) = arg.split_once('=')
            && let Some(flag) = redacted_flag(flag)
        {
            out.push(format!("{flag}={}", redact_value(flag, value)));
            continue;
        }
        value_of = redacted_flag(arg);
        out.push(arg.clone());
    }
    out
}

fn redacted_flag(arg: &str) -> Option<&'static str> {
    VALUE_FLAGS
        .iter()
        .chain(SECRET_FLAGS.iter())
        .find(|f| **f == arg)
        .copied()
}

fn redact_value(flag: &str, value: &str) -> String {
    if SECRET_FLAGS.contains(&flag) {
        return MASK.into();
    }
    // helm takes a literal value whole, commas included: a single pair.
    if flag == "--set-literal" {
        return redact_pair(value);
    }
    split_top_level(value, b',')
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((_, "true" | "false")) if flag == "--set" => pair.to_string(),
            _ => redact_pair(pair),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `key=value` → `key=***`. Without a top-level `=` the text is not a pair we understand (a
/// `--set-json` object, a malformed pair), so all of it is masked.
fn redact_pair(pair: &str) -> String {
    if pair.is_empty() {
        return String::new();
    }
    match split_top_level(pair, b'=').first() {
        Some(key) if key.len() < pair.len() => format!("{key}={MASK}"),
        _ => MASK.into(),
    }
}

/// Splits at `sep` where it is outside quotes, brackets and braces and not escaped with `\`.
///
/// helm's `--set` grammar knows `\,` escapes and `{a,b}` lists; `--set-json` values are JSON
/// with quoted strings and nesting. Tracking all of these for every flag can only merge pieces
/// helm would split (masking more), never split what helm keeps together (leaking a value).
fn split_top_level(s: &str, sep: u8) -> Vec<&str> {
    let bytes = s.as_bytes();
    let mut parts = Vec::new();
    let (mut start, mut depth, mut quoted, mut escaped) = (0usize, 0usize, false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' => escaped = true,
            b'"' => quoted = !quoted,
            _ if quoted => {}
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ if b == sep && depth == 0 => {
                // `sep` is ASCII, so `i` is a char boundary.
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    type Lines = Arc<Mutex<Vec<(Stream, String)>>>;

    /// The fake helm is run as `/bin/sh script`, not executed directly: exec'ing a file this
    /// process just wrote can fail with ETXTBSY when another test thread forks meanwhile.
    fn fake_helm(dir: &Path, body: &str) -> HelmRun {
        let script = dir.join("helm");
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("write fake helm");
        HelmRun {
            bin: PathBuf::from("/bin/sh"),
            args: vec![script.display().to_string()],
            env: vec![("FAKE_DIR".into(), dir.display().to_string())],
        }
    }

    async fn run_collect(run_: HelmRun, cancel: CancellationToken) -> (HelmExit, Lines) {
        let lines: Lines = Arc::default();
        let sink = lines.clone();
        let exit = bounded(run(
            run_,
            move |s, l| sink.lock().expect("lock").push((s, l)),
            cancel,
        ))
        .await;
        (exit, lines)
    }

    /// A hang is a failure, not a stuck test run. Generous: only a broken `run` gets near it.
    async fn bounded(fut: impl Future<Output = Result<HelmExit>>) -> HelmExit {
        tokio::time::timeout(Duration::from_secs(60), fut)
            .await
            .expect("run returned within 60 s")
            .expect("run fake helm")
    }

    fn on(lines: &Lines, stream: Stream) -> Vec<String> {
        let lines = lines.lock().expect("lock");
        lines
            .iter()
            .filter(|(s, _)| *s == stream)
            .map(|(_, l)| l.clone())
            .collect()
    }

    #[tokio::test]
    async fn lines_arrive_on_their_stream_in_order_and_the_code_is_kept() {
        let t = tempfile::tempdir().expect("tempdir");
        let body = r#"
echo 'Release "demo" does not exist. Installing it now.'
echo 'warn one' >&2
echo "env $HELMDECK_TEST"
echo 'Error: UPGRADE FAILED: boom' >&2
printf 'no newline at the end'
exit 3"#;
        let mut r = fake_helm(t.path(), body);
        r.env.push(("HELMDECK_TEST".into(), "passed".into()));
        let (exit, lines) = run_collect(r, CancellationToken::new()).await;
        assert_eq!(
            on(&lines, Stream::Stdout),
            [
                "Release \"demo\" does not exist. Installing it now.",
                "env passed",
                "no newline at the end",
            ]
        );
        assert_eq!(
            on(&lines, Stream::Stderr),
            ["warn one", "Error: UPGRADE FAILED: boom"]
        );
        assert_eq!(exit.code, Some(3));
        assert_eq!(exit.signal, None);
        assert!(!exit.cancelled);
        assert!(!exit.success());
        assert_eq!(
            exit.stderr_tail,
            ["warn one", "Error: UPGRADE FAILED: boom"]
        );
    }

    #[tokio::test]
    async fn success_is_exit_zero() {
        let t = tempfile::tempdir().expect("tempdir");
        let (exit, _) = run_collect(fake_helm(t.path(), "exit 0"), CancellationToken::new()).await;
        assert!(exit.success(), "{exit:?}");
    }

    #[tokio::test]
    async fn cancel_sends_one_sigterm_and_waits_for_helm_to_exit() {
        let t = tempfile::tempdir().expect("tempdir");
        // Like helm: print the cancel notice on the first signal, exit 1 afterwards. The short
        // sleeps let the shell run its trap promptly.
        let body = r#"
trap 'echo TERM >> "$FAKE_DIR/signals"; echo "Release demo has been cancelled."; echo "Error: UPGRADE FAILED: context canceled" >&2; exit 1' TERM
trap 'echo INT >> "$FAKE_DIR/signals"' INT
echo ready
while :; do sleep 0.05; done"#;
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let lines: Lines = Arc::default();
        let sink = lines.clone();
        let exit = bounded(run(
            fake_helm(t.path(), body),
            move |s, l| {
                if l == "ready" {
                    trigger.cancel();
                }
                sink.lock().expect("lock").push((s, l));
            },
            cancel,
        ))
        .await;
        assert!(exit.cancelled);
        assert_eq!(exit.code, Some(1), "helm exited by itself: {exit:?}");
        assert_eq!(exit.signal, None, "not killed: {exit:?}");
        let signals = std::fs::read_to_string(t.path().join("signals")).expect("signals file");
        assert_eq!(signals, "TERM\n");
        // What helm printed after the signal was still streamed.
        assert_eq!(
            on(&lines, Stream::Stdout),
            ["ready", "Release demo has been cancelled."]
        );
        assert_eq!(
            exit.stderr_tail,
            ["Error: UPGRADE FAILED: context canceled"]
        );
    }

    #[tokio::test]
    async fn a_grandchild_holding_the_pipes_does_not_hold_up_the_result() {
        let t = tempfile::tempdir().expect("tempdir");
        // The background job inherits stdout and outlives the fake helm by far.
        let body = r#"
sleep 120 &
echo $! > "$FAKE_DIR/grandchild"
echo done
exit 0"#;
        let (exit, lines) = run_collect(fake_helm(t.path(), body), CancellationToken::new()).await;
        let grandchild = std::fs::read_to_string(t.path().join("grandchild")).expect("pid file");
        if let Ok(pid) = grandchild.trim().parse::<libc::pid_t>() {
            // SAFETY: kill(2) touches no memory; this is the sleep the test itself started.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        assert_eq!(exit.code, Some(0));
        assert_eq!(on(&lines, Stream::Stdout), ["done"]);
    }

    #[tokio::test]
    async fn dropping_the_run_leaves_helm_running_to_the_end() {
        let t = tempfile::tempdir().expect("tempdir");
        // Output after the drop must not hit a closed pipe (SIGPIPE would kill the fake). The
        // first late line makes the readers notice the consumer is gone; the pause lets them
        // react before the next writes.
        let body = r#"
echo started
sleep 0.3
echo late; echo late >&2
sleep 0.3
i=0; while [ $i -lt 200 ]; do echo "later $i"; echo "later $i" >&2; i=$((i+1)); done
touch "$FAKE_DIR/finished""#;
        let (seen_tx, seen_rx) = tokio::sync::oneshot::channel::<()>();
        let mut seen_tx = Some(seen_tx);
        let running = run(
            fake_helm(t.path(), body),
            move |_, l| {
                if l == "started"
                    && let Some(tx) = seen_tx.take()
                {
                    let _ = tx.send(());
                }
            },
            CancellationToken::new(),
        );
        tokio::select! {
            _ = running => panic!("the fake helm ended before the drop"),
            _ = seen_rx => {}
        }
        let finished = t.path().join("finished");
        for _ in 0..600 {
            if finished.exists() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the fake helm did not finish after the run was dropped");
    }

    #[tokio::test]
    async fn cancelled_before_start_runs_nothing() {
        let t = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let body = r#"touch "$FAKE_DIR/ran""#;
        let (exit, lines) = run_collect(fake_helm(t.path(), body), cancel).await;
        assert!(exit.cancelled);
        assert_eq!(exit.code, None);
        assert!(lines.lock().expect("lock").is_empty());
        assert!(!t.path().join("ran").exists());
    }

    #[tokio::test]
    async fn helm_runs_in_its_own_process_group() {
        let t = tempfile::tempdir().expect("tempdir");
        // Field 5 of /proc/PID/stat is the process group; `$$` is the fake helm's pid.
        let body = r#"echo "$$ $(cut -d' ' -f5 /proc/$$/stat)""#;
        let (_, lines) = run_collect(fake_helm(t.path(), body), CancellationToken::new()).await;
        let out = on(&lines, Stream::Stdout);
        let ids: Vec<i64> = out[0]
            .split(' ')
            .map(|n| n.parse().expect("number"))
            .collect();
        // SAFETY: getpgrp(2) cannot fail and touches no memory.
        let ours = i64::from(unsafe { libc::getpgrp() });
        assert_eq!(ids[0], ids[1], "helm leads its own group");
        assert_ne!(ids[1], ours, "and it is not ours");
    }

    #[tokio::test]
    async fn a_one_megabyte_line_is_capped_and_the_stream_goes_on() {
        let t = tempfile::tempdir().expect("tempdir");
        let body = "head -c 1000000 /dev/zero | tr '\\000' x; echo; echo after";
        let (exit, lines) = run_collect(fake_helm(t.path(), body), CancellationToken::new()).await;
        assert_eq!(exit.code, Some(0));
        let out = on(&lines, Stream::Stdout);
        assert_eq!(
            out.len(),
            2,
            "{:?}",
            out.iter().map(String::len).collect::<Vec<_>>()
        );
        let marker = format!("…[truncated {} bytes]", 1_000_000 - MAX_LINE_BYTES);
        assert!(
            out[0].ends_with(&marker),
            "{}",
            &out[0][MAX_LINE_BYTES - 10..]
        );
        assert_eq!(out[0].len(), MAX_LINE_BYTES + marker.len());
        assert!(out[0][..MAX_LINE_BYTES].bytes().all(|b| b == b'x'));
        assert_eq!(out[1], "after");
    }

    #[tokio::test]
    async fn stderr_tail_keeps_the_last_twenty_lines() {
        let t = tempfile::tempdir().expect("tempdir");
        let body = "i=1; while [ $i -le 30 ]; do echo \"e$i\" >&2; i=$((i+1)); done; exit 1";
        let (exit, lines) = run_collect(fake_helm(t.path(), body), CancellationToken::new()).await;
        assert_eq!(on(&lines, Stream::Stderr).len(), 30);
        let want: Vec<String> = (11..=30).map(|i| format!("e{i}")).collect();
        assert_eq!(exit.stderr_tail, want);
    }

    #[tokio::test]
    async fn invalid_utf8_is_decoded_lossily() {
        let t = tempfile::tempdir().expect("tempdir");
        let body = r"printf 'a\377b\r\n\n'";
        let (_, lines) = run_collect(fake_helm(t.path(), body), CancellationToken::new()).await;
        assert_eq!(on(&lines, Stream::Stdout), ["a\u{fffd}b", ""]);
    }

    #[tokio::test]
    async fn a_missing_binary_is_an_error_naming_it() {
        let r = HelmRun {
            bin: PathBuf::from("/nonexistent/helm"),
            args: vec![],
            env: vec![],
        };
        let err = run(r, |_, _| {}, CancellationToken::new())
            .await
            .expect_err("cannot start");
        assert!(format!("{err:#}").contains("/nonexistent/helm"), "{err:#}");
        assert!(
            matches!(&err, HelmError::Start { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
            "{err:?}"
        );
    }

    #[test]
    fn line_cut_does_not_split_a_character() {
        let mut line = LineBuf::default();
        let mut bytes = vec![b'a'; MAX_LINE_BYTES - 1];
        bytes.extend_from_slice("é and more".as_bytes());
        line.push(&bytes);
        let text = line.take();
        let rest = "é and more".len();
        assert_eq!(
            text,
            format!(
                "{}…[truncated {rest} bytes]",
                "a".repeat(MAX_LINE_BYTES - 1)
            )
        );
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn redaction_table() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["--set", "a=1"], &["--set", "a=***"]),
            (&["--set=a.b=secret"], &["--set=a.b=***"]),
            (&["--set", "a=1,b=2"], &["--set", "a=***,b=***"]),
            (
                &["--set-string", "pw=x\\,y,u=z"],
                &["--set-string", "pw=***,u=***"],
            ),
            (&["--set", "list={p,q},n=1"], &["--set", "list=***,n=***"]),
            (&["--set", "arr[0].k=v"], &["--set", "arr[0].k=***"]),
            (
                &["--set-file", "cert=/tmp/c.pem"],
                &["--set-file", "cert=***"],
            ),
            (&["--set-literal", "k=a,b=c"], &["--set-literal", "k=***"]),
            (
                &["--set-json", r#"cfg={"p":"x,y=z"},n=[1,2]"#],
                &["--set-json", "cfg=***,n=***"],
            ),
            (&["--set-json", r#"{"a":"s=1"}"#], &["--set-json", "***"]),
            (&["--set", "novalue"], &["--set", "***"]),
            // A switch is shown, in `--set` only; anything longer or quoted stays masked.
            (
                &["--set", "initJob.enabled=false,b=true,c=True,d=truex"],
                &["--set", "initJob.enabled=false,b=true,c=***,d=***"],
            ),
            (&["--set=a=true"], &["--set=a=true"]),
            (&["--set", r#"a="true""#], &["--set", "a=***"]),
            (&["--set-string", "a=true"], &["--set-string", "a=***"]),
            (&["--set-json", "a=false"], &["--set-json", "a=***"]),
            (&["--set", r#"q="a,b=c""#], &["--set", "q=***"]),
            (&["--password", "hunter2"], &["--password", "***"]),
            (&["--kube-token=abc"], &["--kube-token=***"]),
            (
                &["upgrade", "--install", "demo", "./chart", "-f", "v.yaml"],
                &["upgrade", "--install", "demo", "./chart", "-f", "v.yaml"],
            ),
            (&["--settings", "x=1"], &["--settings", "x=1"]),
            (&["--set"], &["--set"]),
        ];
        for (input, want) in cases {
            assert_eq!(redact_args(&strings(input)), strings(want), "{input:?}");
        }
    }

    #[test]
    fn debug_of_a_run_hides_values() {
        let r = HelmRun {
            bin: PathBuf::from("helm"),
            args: strings(&["--set", "pw=hunter2"]),
            env: vec![("HELM_KUBETOKEN".into(), "tok3n".into())],
        };
        let shown = format!("{r:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("tok3n"),
            "{shown}"
        );
        assert!(
            shown.contains("pw=***") && shown.contains("HELM_KUBETOKEN"),
            "{shown}"
        );
    }
}
