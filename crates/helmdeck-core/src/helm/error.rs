//! Why running helm failed. Typed, so a caller can tell a binary that would not start from one
//! that ran and failed (and see the io error underneath); each message names one layer, and the
//! edges print the whole chain (`{:#}`), as they did with eyre.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

#[derive(Debug, thiserror::Error)]
pub enum HelmError {
    /// The upgrade's helm could not be started.
    #[error("starting helm ({})", .bin.display())]
    Start {
        bin: PathBuf,
        #[source]
        source: io::Error,
    },
    /// One of helm's pipes was not set up (a bug here, not a helm problem).
    #[error("helm's {0} was not piped")]
    NotPiped(&'static str),
    #[error("waiting for helm to exit")]
    Wait(#[source] io::Error),
    #[error("helm's exit status was lost")]
    StatusLost,
    #[error("`{} version` did not answer within {secs}s", .bin.display())]
    VersionTimeout { bin: PathBuf, secs: u64 },
    /// `helm version` could not be started (ETXTBSY, ENOENT, EACCES are in `source`).
    #[error("running `{} version`", .bin.display())]
    VersionRun {
        bin: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("`{} version` failed ({status}): {stderr}", .bin.display())]
    VersionFailed {
        bin: PathBuf,
        status: ExitStatus,
        stderr: String,
    },
    #[error("`{} version` printed nothing", .bin.display())]
    VersionEmpty { bin: PathBuf },
}
