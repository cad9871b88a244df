//! Talking to the cluster (kube-rs): the client, the release records, and scoped watches that turn
//! into engine events. Errors fail closed: a watch that is failing never yields "ready".

pub mod client;
pub mod errors;
pub mod releases;
pub mod watch;
