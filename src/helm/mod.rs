//! Helm: its release records (and, later, the helm process itself).

mod error;
pub mod hooks;
pub mod locate;
pub mod process;
pub mod release;
pub mod status;

pub use error::HelmError;
