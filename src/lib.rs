//! helmdeck: run a Helm deploy step by step, live, and say in one exit code what happened.
//!
//! This crate is the product on top of the workspace: the renderers (`ui`, the only module that
//! knows the terminal; `headless`; `junit`; `gha`) and `demo`, which wires the simulated cluster
//! to a deploy. The engine and what it judges with live in `helmdeck-core`, the simulated
//! cluster in `helmdeck-sim`, what both share in `helmdeck-formats`; they are re-exported here
//! under the paths the rest of the product uses.

pub use helmdeck_core::{
    advice, atomic, cli, cluster, config, engine, exit, helm, inspect, record, rollout, signals,
    validate,
};
pub use helmdeck_formats::{glob, text, time};
pub use helmdeck_sim as sim;

pub mod demo;
pub mod gha;
pub mod headless;
pub mod junit;
pub mod memory;
pub mod ui;
