//! Helm: its release records (and, later, the helm process itself).

pub mod release;
