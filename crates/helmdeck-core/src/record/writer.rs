//! Writes a record as the deploy runs: one line per event, written and flushed as it comes, so
//! a killed deploy leaves every event up to the kill readable.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::engine::event::Event;
use crate::engine::scrub::Scrub;
use crate::engine::state::DeployState;
use crate::record::{Header, Line};

/// Where one copy of the record goes.
enum Sink {
    File(PathBuf, std::fs::File),
    /// `--events -`: the same lines on standard output.
    Stdout,
}

/// The record of one run, written to every sink.
pub struct Recorder {
    sinks: Vec<Sink>,
    scrub: Scrub,
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct OpenError {
    pub path: String,
    pub source: std::io::Error,
}

/// Creates `path` for a record: exclusively (an existing file, or a symlink planted there, is
/// never written through) and readable by the owner alone (records hold logs).
pub fn create(path: &Path) -> Result<std::fs::File, OpenError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| OpenError {
            path: path.display().to_string(),
            source,
        })
}

/// Makes a directory that already existed as private as one this creates: records hold logs,
/// so a group- or world-accessible directory (a 0777 one made by hand or by an old umask) is
/// tightened to 0700. One owned by another user is refused, not changed: it is not ours to fix,
/// and whoever owns it could read or replace what is written there.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(std::io::Error::other(format!(
            "owned by uid {}, not by this user (uid {me}): refused; records are written only to a directory of one's own",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// A new file for this run in `dir` (made 0700 when missing, tightened to 0700 when not), named from the kube context the
/// run used and the release; then the
/// release's oldest records beyond [`crate::record::KEEP_PER_RELEASE`] are deleted.
pub fn create_in(dir: &Path, header: &Header) -> Result<(PathBuf, std::fs::File), OpenError> {
    let fail = |source| OpenError {
        path: dir.display().to_string(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(fail)?;
    private_dir(dir).map_err(fail)?;
    let prefix = crate::record::release_prefix(
        header
            .kube_context
            .as_deref()
            .or(header.plan.context.as_deref()),
        &header.plan.namespace,
        &header.plan.release,
    );
    // Now, to the millisecond (the header's start has whole seconds): names sort in start order.
    let started = jiff::Timestamp::now();
    // A collision (two runs in one millisecond, one pid reused) only costs a retry.
    for attempt in 0..8u32 {
        let suffix = format!(
            "{:x}{:x}",
            std::process::id(),
            jiff::Timestamp::now().subsec_nanosecond() as u32 ^ attempt
        );
        let path = dir.join(crate::record::file_name(&prefix, &started, &suffix));
        match create(&path) {
            Ok(file) => {
                crate::record::list::prune(dir, &prefix, crate::record::KEEP_PER_RELEASE);
                return Ok((path, file));
            }
            Err(e) if e.source.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(fail(std::io::Error::from(
        std::io::ErrorKind::AlreadyExists,
    )))
}

impl Recorder {
    pub fn new(scrub: Scrub) -> Recorder {
        Recorder {
            sinks: vec![],
            scrub,
        }
    }

    pub fn to_file(mut self, path: PathBuf, file: std::fs::File) -> Recorder {
        self.sinks.push(Sink::File(path, file));
        self
    }

    pub fn to_stdout(mut self) -> Recorder {
        self.sinks.push(Sink::Stdout);
        self
    }

    /// The file the record is kept in, if any.
    pub fn path(&self) -> Option<&Path> {
        self.sinks.iter().find_map(|s| match s {
            Sink::File(p, _) => Some(p.as_path()),
            Sink::Stdout => None,
        })
    }

    pub fn header(&mut self, header: &Header) {
        let mut value = serde_json::to_value(header).unwrap_or_default();
        self.scrub.value(&mut value);
        self.line(&value);
    }

    /// One event, as `state` (the engine's, just after applying it) timed it.
    pub fn event(&mut self, event: &Event, state: &DeployState) {
        let line = Line {
            t: state.now_secs,
            wall: state.stamped_wall(event),
            event: event.clone(),
        };
        let mut value = serde_json::to_value(&line).unwrap_or_default();
        self.scrub.value(&mut value);
        self.line(&value);
    }

    fn line(&mut self, value: &serde_json::Value) {
        let mut text = value.to_string();
        text.push('\n');
        // A sink that fails is dropped with one line on stderr: the record is a by-product, the
        // deploy goes on.
        self.sinks.retain_mut(|sink| {
            let written = match sink {
                Sink::File(_, f) => f.write_all(text.as_bytes()).and_then(|_| f.flush()),
                Sink::Stdout => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(text.as_bytes()).and_then(|_| out.flush())
                }
            };
            if let Err(e) = &written {
                let what = match sink {
                    Sink::File(p, _) => p.display().to_string(),
                    Sink::Stdout => "standard output".into(),
                };
                let _ = writeln!(
                    std::io::stderr(),
                    "helmdeck: recording to {what} stopped: {e}"
                );
            }
            written.is_ok()
        });
    }
}
