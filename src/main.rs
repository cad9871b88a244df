use clap::Parser;
use color_eyre::eyre::Result;

use helmdeck::cli::{Cli, Command};
use helmdeck::sim;

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("helmdeck: {e:?}");
            2
        }
    };
    std::process::exit(code);
}

fn run() -> Result<i32> {
    color_eyre::install()?;
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Sim { list: true, .. } => {
            for (name, text) in sim::scenario::EMBEDDED {
                let description = sim::Scenario::parse(text, name)
                    .map(|s| s.description)
                    .unwrap_or_else(|e| format!("(invalid: {e})"));
                println!("{name:<20} {description}");
            }
            Ok(0)
        }
        Command::Sim { scenario, listen, kubeconfig_out, .. } => {
            runtime.block_on(sim::run::run(sim::run::SimArgs { scenario, listen, kubeconfig_out }))?;
            Ok(0)
        }
    }
}
