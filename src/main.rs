use std::io::IsTerminal;

use clap::Parser;
use color_eyre::eyre::{Result, WrapErr, eyre};
use tokio_util::sync::CancellationToken;

use helmdeck::cli::{Cli, Command, DeployArgs, InspectArgs};
use helmdeck::config::DeployPlan;
use helmdeck::engine::state::DeployState;
use helmdeck::engine::{report, run};
use helmdeck::headless::Headless;
use helmdeck::helm::locate;
use helmdeck::signals::Signals;
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
        Command::Inspect(args) => runtime.block_on(inspect(args)),
        Command::Demo {
            scenario,
            headless,
            helm,
            report,
        } => runtime.block_on(demo(scenario, headless, helm, report)),
    }
}

/// The TUI takes over when stdout is a terminal and `--headless` is not given; the one place
/// every command decides it.
fn wants_tui(headless: bool) -> bool {
    !headless && std::io::stdout().is_terminal()
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
    let state = if wants_tui(args.headless) {
        // The TUI handles SIGINT/SIGTERM/SIGHUP itself (Ctrl+C is a key in raw mode).
        helmdeck::ui::run_deploy(prepared, CancellationToken::new(), None).await?
    } else {
        deploy_headless(prepared).await?
    };
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
    let state = if wants_tui(headless) {
        let title = format!("demo · {}", demo.scenario_name);
        helmdeck::ui::run_deploy(demo.prepared, CancellationToken::new(), Some(title)).await?
    } else {
        println!(
            "helmdeck demo · scenario {}: {}",
            demo.scenario_name, demo.description
        );
        deploy_headless(demo.prepared).await?
    };
    finish(&state, report.as_deref())
}

/// The deploy in plain lines. SIGINT/SIGTERM cancel it: helm gets one SIGTERM (never SIGKILL)
/// and is waited for, and the run ends at its verdict.
async fn deploy_headless(prepared: run::Prepared) -> Result<DeployState> {
    let cancel = CancellationToken::new();
    let mut signals = Signals::install()?;
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        signals.recv().await;
        eprintln!("helmdeck: cancelling (helm gets SIGTERM and is waited for)");
        on_signal.cancel();
    });
    let mut printer = Headless::default();
    run::deploy(prepared, cancel, |event, state| printer.print(event, state)).await
}

/// `--json` wins, then the TUI, else plain text. Errors are setup failures (bad arguments, an
/// unreadable kubeconfig), which become exit 2.
async fn inspect(args: InspectArgs) -> Result<i32> {
    let reader = std::sync::Arc::new(helmdeck::inspect::Reader::connect(&args).await?);
    let inspection = reader.first().await;
    if !args.json && wants_tui(args.headless) {
        return helmdeck::ui::run_inspect(inspection, move || {
            let reader = reader.clone();
            async move { reader.read().await }
        })
        .await;
    }
    helmdeck::inspect::print(&inspection, args.json)
}

/// Writes the report (if asked) and returns the verdict's exit code. The cluster was touched by
/// now, so a missing verdict or an unwritable report is exit 1 (fail closed), never the usage 2.
fn finish(state: &DeployState, report_path: Option<&std::path::Path>) -> Result<i32> {
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
    let namespace = plan.namespace_or(&cluster.default_namespace).to_string();
    helmdeck::engine::steps::init_objects::check_toggle(&plan, &helm, &namespace).await?;
    Ok(run::Prepared {
        plan,
        helm,
        helm_version,
        cluster,
        helm_env: vec![],
    })
}
