//! helmdeck's core: the split deploy and everything it judges with, and no terminal.
//!
//! `engine` runs the split deploy and decides the verdict, `rollout` judges readiness, `helm`
//! drives helm and reads its records, `cluster` talks to Kubernetes, `record` writes and reads
//! a run's events, `inspect` is the post-mortem's model. Renderers (the TUI, headless lines,
//! JUnit) live in the `helmdeck` crate above this one; the simulated cluster is a crate of its
//! own that this one never names.

pub mod advice;
pub mod atomic;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod engine;
pub mod exit;
pub mod helm;
pub mod inspect;
pub mod record;
pub mod rollout;
pub mod signals;
pub mod validate;

pub use helmdeck_formats::{glob, text, time};
