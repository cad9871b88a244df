//! The terminal UI: the live deploy screen (header with the step strip, helm output, workloads,
//! hooks, the verdict banner) and the drill-down. Widgets render from the borrowed
//! [`crate::engine::state::DeployState`]; only [`app::UiState`] (what the operator looks at)
//! changes here. No ratatui type leaves this module.

mod ansi;
pub mod app;
mod cast;
pub mod deck;
// Public only for the fuzz targets in tests/fuzz (width cuts of untrusted text).
#[doc(hidden)]
pub mod fit;
mod fleet;
mod inspect;
mod keybar;
mod layout;
mod live;
pub mod model;
pub mod nav;
pub mod panes;
pub mod plan;
pub mod recover;
mod replay;
pub mod screen;
pub mod theme;
mod tui;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod names_tests;
#[cfg(test)]
mod numbers_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod recover_tests;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;

pub use cast::cast;
pub use fleet::run_fleet;
pub use inspect::run_inspect;
pub use live::{final_frame, run_deploy, run_follow};
pub use panes::help::KEYS;
pub use replay::{
    TICK as REPLAY_TICK, final_frame as replay_final_frame,
    final_frame_at as replay_final_frame_at, run_replay,
};
pub use tui::install_panic_report;
