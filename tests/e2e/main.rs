//! End-to-end tests: the real helm and kubectl binaries against `helmdeck sim`.
//!
//! One test binary (each links the whole crate); every test starts its own simulator on port
//! 0 with its own HOME and helm directories, so tests run in parallel safely.

mod support;

mod cross_check;
mod deploy;
mod differential;
mod inspect;
mod operators;
mod sim_helm;
mod sim_http;
mod sim_kubectl;
mod sim_watcher;
mod tui;
