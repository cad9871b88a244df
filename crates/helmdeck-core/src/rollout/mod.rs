//! Pure rollout logic for the workloads a release gates on: no I/O, no UI.
//!
//! `readiness` answers "has this workload rolled out?" with `kubectl rollout status`'s rules
//! and wording (semantics.md §1) plus the stricter rules of decisions.md. `diagnosis` answers
//! "why is this pod not ready?" from the pod's status and its Events, and tells new pods from
//! old ones. `optional` answers "does this workload gate at all?" (deny list and annotations).

pub mod budget;
pub mod diagnosis;
pub mod fail_fast;
pub mod objects;
pub mod optional;
pub mod readiness;

pub use diagnosis::PodCause;
pub use readiness::{Counts, JobProgress, Progress, Readiness};
