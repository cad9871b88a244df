//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "helmdeck", version, about = "Run a Helm deploy step by step, live, with one exit code that says what happened")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a simulated Kubernetes API on loopback, driven by a scenario (for demos and tests).
    Sim {
        /// Scenario name (from assets/scenarios) or path to a scenario YAML file.
        #[arg(long, default_value = "all-green")]
        scenario: String,
        /// Address to listen on (loopback only; port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Write a kubeconfig that points at the simulator here.
        #[arg(long)]
        kubeconfig_out: Option<PathBuf>,
        /// List the embedded scenarios and exit.
        #[arg(long)]
        list: bool,
    },
}
