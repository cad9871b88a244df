//! What both sides of helmdeck share — the product and the simulated cluster — and nothing
//! else: helm's release-record codec, timestamps and durations, `Kind/glob` name patterns, and
//! the rule that makes untrusted text inert. It knows no Kubernetes client and no terminal.

pub mod glob;
pub mod release;
pub mod text;
pub mod time;
