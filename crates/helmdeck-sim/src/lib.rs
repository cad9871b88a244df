//! The simulated cluster: a Kubernetes API subset over HTTP on loopback, with controllers
//! that roll workloads out over time as a scenario says. Real `helm` and `kubectl` talk to it
//! unmodified.

pub mod api_error;
pub mod body;
pub mod controllers;
pub mod crd;
pub mod defaults;
pub mod discovery;
pub mod faults;
#[cfg(test)]
mod kinds_tests;
pub mod logs;
pub mod logs_http;
#[cfg(test)]
mod paging_tests;
pub mod patch;
pub mod protobuf;
pub mod resources;
pub mod run;
pub mod scale;
pub mod scenario;
pub mod seed;
pub mod selector;
pub mod server;
pub mod store;
pub mod table;
pub mod validate;
pub mod watch;

use std::sync::Arc;
use std::time::Instant;

pub use scenario::Scenario;
pub use store::Store;

/// Everything the server and the controllers share.
pub struct SimState {
    pub store: Store,
    pub logs: logs::PodLogs,
    pub scenario: Scenario,
    pub started: Instant,
}

impl SimState {
    pub fn new(scenario: Scenario) -> Arc<Self> {
        Arc::new(SimState {
            store: Store::new(),
            logs: logs::PodLogs::default(),
            scenario,
            started: Instant::now(),
        })
    }
}
