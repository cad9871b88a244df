//! The split deploy. Steps are async tasks that emit [`event::Event`]s; [`state::DeployState`]
//! folds them; [`verdict::decide`] turns the state into one exit code. No terminal code here.

pub mod advice;
pub mod ask;
// The events' old path, kept: every step, renderer and test names it.
pub use model::event;
pub mod emit;
pub mod fleet;
pub mod inputs;
pub mod logs;
pub mod model;
pub mod plan;
pub mod prepared;
pub mod report;
pub mod run;
pub mod scrub;
pub mod state;
pub mod steps;
pub mod verdict;
pub mod views;
pub mod watch;
pub mod watch_init;
