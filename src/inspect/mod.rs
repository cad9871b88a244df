//! `helmdeck inspect`: the post-mortem of a release. (Being built.)

use color_eyre::eyre::Result;

use crate::cli::InspectArgs;

/// Runs the command; returns the exit code (0, or 1 when the requested revision is unreadable).
pub async fn run(args: InspectArgs) -> Result<i32> {
    let _ = args;
    Ok(1)
}
