//! helmdeck: run a Helm deploy step by step, live, and say in one exit code what happened.
//!
//! The crate is split by job: `sim` is the simulated cluster used by the demo and the tests,
//! `helm` reads and drives Helm, `glob` holds the name patterns shared by the deny list and the
//! scenarios. Only `ui` (later) knows about the terminal.

pub mod cli;
pub mod config;
pub mod demo;
pub mod engine;
pub mod glob;
pub mod headless;
pub mod helm;
pub mod inspect;
pub mod cluster;
pub mod rollout;
pub mod sim;
pub mod text;
pub mod ui;
