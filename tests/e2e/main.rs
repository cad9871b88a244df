//! End-to-end tests: the real helm and kubectl binaries against `helmdeck sim`.
//!
//! One test binary (each links the whole crate); every test starts its own simulator on port
//! 0 with its own HOME and helm directories, so tests run in parallel safely.

mod support;

mod advice;
mod cancels;
mod careless;
mod cast;
mod charts;
mod ci;
mod cross_check;
mod demo_chart;
mod deploy;
mod differential;
mod dry_runs;
mod evidence;
mod exits;
mod fleet;
mod flip;
mod flip_causes;
mod flip_fail_fast;
mod flip_init;
mod flip_init_containers;
mod flip_watch;
mod forbidden;
mod hangup;
mod hostile_records;
mod init_attach;
mod init_hooks;
mod init_render;
mod inspect;
mod masking;
mod namespaces;
mod one_owner;
mod operators;
mod plan;
mod real_cluster;
mod recipes;
mod record;
mod recover;
mod report;
mod sim_helm;
mod sim_http;
mod sim_kinds;
mod sim_kubectl;
mod sim_kubelet;
mod sim_refs;
mod sim_scheduler;
mod sim_watcher;
mod sim_writes;
mod stories;
mod tui;
mod usage;
mod version;
mod watch;
