//! Helm: its release records (and, later, the helm process itself).

pub mod args;
mod error;
pub mod failure;
pub mod hooks;
pub mod locate;
pub mod phase;
pub mod process;
pub mod spawn;
pub use helmdeck_formats::release;
pub mod status;

pub use error::HelmError;
