//! The terminal UI (being built).
