use std::io::IsTerminal;

use clap::Parser;
use color_eyre::eyre::{Result, WrapErr, eyre};
use tokio_util::sync::CancellationToken;

use helmdeck::cli::{Cli, Command, DeployArgs};
use helmdeck::config::DeployPlan;
use helmdeck::engine::{report, run};
use helmdeck::headless::Headless;
use helmdeck::helm::locate;
use helmdeck::{cluster, sim};

/// Exit code for anything caught before the first cluster request.
const USAGE: i32 = 2;

fn main() {
    let code = match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("helmdeck: {e:?}");
            USAGE
        }
    };
    std::process::exit(code);
}

fn real_main() -> Result<i32> {
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
        Command::Sim {
            scenario,
            listen,
            kubeconfig_out,
            ..
        } => {
            runtime.block_on(sim::run::run(sim::run::SimArgs {
                scenario,
                listen,
                kubeconfig_out,
            }))?;
            Ok(0)
        }
        Command::Deploy(args) => runtime.block_on(deploy(*args)),
        Command::Inspect(args) => runtime.block_on(helmdeck::inspect::run(args)),
        Command::Demo {
            scenario,
            headless,
            helm,
            report,
        } => runtime.block_on(demo(scenario, headless, helm, report)),
    }
}

/// Usage problems become exit 2 with a one-line message; the deploy itself exits 0, 1 or 3.
async fn deploy(args: DeployArgs) -> Result<i32> {
    let prepared = match prepare(&args).await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("helmdeck: {e:#}");
            return Ok(USAGE);
        }
    };
    let headless = args.headless || !std::io::stdout().is_terminal();
    let cancel = CancellationToken::new();
    if !headless {
        // The TUI handles SIGINT/SIGTERM/SIGHUP itself (Ctrl+C is a key in raw mode).
        let state = helmdeck::ui::run_deploy(prepared, cancel, None).await?;
        return finish(&state, args.report.as_deref());
    }
    spawn_signal_handler(cancel.clone())?;
    let mut printer = Headless::default();
    let state = run::deploy(prepared, cancel, |event, state| printer.print(event, state)).await?;
    finish(&state, args.report.as_deref())
}

async fn demo(
    scenario: String,
    headless: bool,
    helm: Option<std::path::PathBuf>,
    report: Option<std::path::PathBuf>,
) -> Result<i32> {
    let demo = match helmdeck::demo::prepare(&scenario, helm.as_deref()).await {
        Ok(d) => d,
        Err(e) => {
            eprintln!("helmdeck demo: {e:#}");
            return Ok(USAGE);
        }
    };
    let headless = headless || !std::io::stdout().is_terminal();
    if !headless {
        let title = format!("demo · {}", demo.scenario_name);
        let state =
            helmdeck::ui::run_deploy(demo.prepared, CancellationToken::new(), Some(title)).await?;
        return finish(&state, report.as_deref());
    }
    println!(
        "helmdeck demo · scenario {}: {}",
        demo.scenario_name, demo.description
    );
    let cancel = CancellationToken::new();
    spawn_signal_handler(cancel.clone())?;
    let mut printer = Headless::default();
    let state = run::deploy(demo.prepared, cancel, |event, state| {
        printer.print(event, state)
    })
    .await?;
    finish(&state, report.as_deref())
}

/// Writes the report (if asked) and returns the verdict's exit code. The cluster was touched by
/// now, so a missing verdict or an unwritable report is exit 1 (fail closed), never the usage 2.
fn finish(
    state: &helmdeck::engine::state::DeployState,
    report_path: Option<&std::path::Path>,
) -> Result<i32> {
    let Some(verdict) = state.verdict.clone() else {
        eprintln!("helmdeck: the deploy ended without a verdict (fail closed)");
        return Ok(1);
    };
    if let Some(path) = report_path {
        let written = serde_json::to_string_pretty(&report::build(state))
            .wrap_err("encoding the report")
            .and_then(|json| {
                std::fs::write(path, json)
                    .wrap_err_with(|| format!("writing the report {}", path.display()))
            });
        if let Err(e) = written {
            eprintln!("helmdeck: {e:#} (fail closed: exit 1)");
            return Ok(1);
        }
    }
    Ok(verdict.code)
}

async fn prepare(args: &DeployArgs) -> Result<run::Prepared> {
    let plan = DeployPlan::from_args(args)?;
    let helm = locate::find_helm(plan.helm.as_deref()).map_err(|e| eyre!("{e}"))?;
    let helm_version = locate::helm_version(&helm)
        .await
        .wrap_err_with(|| format!("{} does not run", helm.display()))?;
    let cluster = cluster::client::connect(plan.context.as_deref()).await?;
    Ok(run::Prepared {
        plan,
        helm,
        helm_version,
        cluster,
        helm_env: vec![],
    })
}

/// SIGINT/SIGTERM cancel the deploy: helm gets one SIGTERM (never SIGKILL) and is waited for.
fn spawn_signal_handler(cancel: CancellationToken) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt()).wrap_err("installing the SIGINT handler")?;
    let mut term = signal(SignalKind::terminate()).wrap_err("installing the SIGTERM handler")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        eprintln!("helmdeck: cancelling (helm gets SIGTERM and is waited for)");
        cancel.cancel();
    });
    Ok(())
}
