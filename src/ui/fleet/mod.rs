//! The fleet screen: one release deployed to many targets at once. A list with one row per
//! target (its step strip, gating pods ready, where it stands) and the fleet's summary; Enter
//! opens a target's own deploy screen, Esc comes back. The engine's side is
//! [`crate::engine::fleet`]: this module only reads its members.

mod list;
mod live;
mod state;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;

pub use live::run_fleet;
