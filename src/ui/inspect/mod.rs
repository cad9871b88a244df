//! The `helmdeck inspect` screen: the post-mortem of a release, drawn from one collected
//! [`crate::inspect::Inspection`]. A header with the inspected revision and its status, the lock
//! (or unreadable-revision) banner, then the history, the hooks in execution order and the
//! workloads (the deploy screen's own pane); Enter opens a hook's evidence (pods, exit codes,
//! termination messages, log tails, events), a workload's pods and events, or a revision's
//! record. Static: nothing is polled; `r` reads the release again.
//!
//! Everything shown was sanitized by the collector; cells are still cut by display width
//! ([`crate::ui::fit`]).

mod data;
mod evidence;
mod header;
mod help;
mod history;
mod hooks;
mod live;
mod screen;
mod state;
mod text_drills;
mod workload;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;

pub use live::run_inspect;
