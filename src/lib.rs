//! helmdeck: run a Helm deploy step by step, live, and say in one exit code what happened.
//!
//! The crate is split by job: `engine` runs the split deploy and decides the verdict, `rollout`
//! judges readiness, `helm` drives helm and reads its records, `cluster` talks to Kubernetes,
//! `inspect` is the post-mortem, `sim` is the simulated cluster behind the demo and the tests.
//! Only `ui` knows about the terminal; only `demo` and `main` know about `sim` (what both need,
//! such as `time`, lives outside it).

pub mod advice;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod demo;
pub mod engine;
pub mod exit;
pub mod gha;
pub mod glob;
pub mod headless;
pub mod helm;
pub mod inspect;
pub mod junit;
pub mod record;
pub mod rollout;
pub mod signals;
pub mod sim;
pub mod text;
pub mod time;
pub mod ui;
pub mod validate;

#[cfg(test)]
mod layers;
