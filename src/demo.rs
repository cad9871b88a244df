//! `helmdeck demo`: the whole split deploy against the embedded simulated cluster, with the
//! real helm, of the embedded demo chart or of any chart (`--chart`), with deploy's flags.
//! Everything it writes (kubeconfig, chart copy, helm's caches) lives in a temporary directory
//! that is removed at the end.

use std::path::{Path, PathBuf};
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::cli::{DemoArgs, DeployArgs, DeployFlags};
use crate::config::DeployPlan;
use crate::engine::run::Prepared;
use crate::helm::locate;
use crate::sim::{self, Scenario};

/// The demo chart's files, embedded at build time.
pub const CHART: &[(&str, &[u8])] = &include!(concat!(env!("OUT_DIR"), "/demo_chart.rs"));

pub const RELEASE: &str = "demo";
pub const NAMESPACE: &str = "apps";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A prepared demo: the simulator runs as long as this lives.
pub struct Demo {
    pub prepared: Prepared,
    pub scenario_name: String,
    pub description: String,
    _sim: sim::run::Running,
    _dir: tempfile::TempDir,
}

/// What keeps a demo's simulated cluster and its files alive once its deploy was taken.
pub struct Kept {
    _sim: sim::run::Running,
    _dir: tempfile::TempDir,
}

impl Demo {
    /// The deploy to run, and what must live as long as it runs.
    pub fn into_parts(self) -> (Prepared, Kept) {
        (
            self.prepared,
            Kept {
                _sim: self._sim,
                _dir: self._dir,
            },
        )
    }
}

fn write_chart(dir: &Path) -> Result<PathBuf> {
    let root = dir.join("deckapp");
    for (rel, bytes) in CHART {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .wrap_err_with(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).wrap_err_with(|| format!("writing {}", path.display()))?;
    }
    Ok(root)
}

fn helm_env(dir: &Path, kubeconfig: &Path) -> Vec<(String, String)> {
    let s = |p: PathBuf| p.display().to_string();
    vec![
        ("KUBECONFIG".into(), s(kubeconfig.to_path_buf())),
        ("HELM_CACHE_HOME".into(), s(dir.join("helm/cache"))),
        ("HELM_CONFIG_HOME".into(), s(dir.join("helm/config"))),
        ("HELM_DATA_HOME".into(), s(dir.join("helm/data"))),
        ("HELM_DRIVER".into(), "secret".into()),
    ]
}

/// Why a flag of `deploy` does not apply to a rehearsal; `None` when it does.
fn refused_flag(flags: &DeployFlags) -> Option<&'static str> {
    if flags.kube_context.is_some() {
        return Some(
            "--kube-context: the demo runs against its own simulated cluster (use `helmdeck deploy` for a real one)",
        );
    }
    if !flags.target.is_empty() {
        return Some(
            "--target: the demo's clusters are simulated (rehearse a fleet with --fleet N)",
        );
    }
    if flags.only.is_some() {
        return Some(
            "--only: the demo's simulated cluster starts without the release to attach to",
        );
    }
    None
}

/// The deploy the demo runs: the user's flags, over the scenario's story for the embedded chart.
fn deploy_args(
    args: &DemoArgs,
    chart: String,
    settings: &sim::scenario::DemoSettings,
) -> DeployArgs {
    let mut flags = args.flags.clone();
    if args.chart.is_none() {
        // The scenario's settings tell its story on the demo chart; the user's flags come after
        // them, so they win (helm takes the last --set).
        flags.set = settings.set.iter().cloned().chain(flags.set).collect();
        flags.optional = settings
            .optional
            .iter()
            .cloned()
            .chain(flags.optional)
            .collect();
        flags.init_toggle = flags.init_toggle.or(Some("initJob.enabled".into()));
        flags.init_job = flags.init_job.or(Some("demo-init".into()));
    }
    let timeout = settings.timeout.unwrap_or(DEFAULT_TIMEOUT);
    flags.timeout = flags.timeout.or(Some(format!("{}s", timeout.as_secs())));
    DeployArgs {
        release: args.release.clone(),
        chart,
        flags,
    }
}

/// Starts the simulator for the scenario and prepares the deploy of the chart (the embedded
/// demo chart unless `--chart`) against it. Every input is held to deploy's rules before the
/// simulator starts: a mistake is the usage exit 2.
pub async fn prepare(args: &DemoArgs) -> Result<Demo> {
    let scenario = match args.scenario.as_slice() {
        [] => DEFAULT_SCENARIO,
        [one] => one.as_str(),
        many => {
            return Err(eyre!(
                "--scenario is given {} times: more than one needs --fleet N",
                many.len()
            ));
        }
    };
    prepare_scenario(args, scenario).await
}

/// The scenario a demo without `--scenario` plays.
pub const DEFAULT_SCENARIO: &str = "optional-pending";

/// The scenarios of a `--fleet N` rehearsal, one per simulated cluster: the given ones in
/// turn, else a landing, an optional workload left Pending and a failing init, in turn.
pub fn fleet_scenarios(args: &DemoArgs, n: usize) -> Vec<String> {
    const STORIES: [&str; 3] = ["all-green", "optional-pending", "init-fails"];
    let given: Vec<&str> = if args.scenario.is_empty() {
        STORIES.to_vec()
    } else {
        args.scenario.iter().map(String::as_str).collect()
    };
    given
        .iter()
        .cycle()
        .take(n)
        .map(|s| s.to_string())
        .collect()
}

/// [`prepare`] of one scenario (a demo's, or one simulated cluster of a fleet's).
pub async fn prepare_scenario(args: &DemoArgs, scenario: &str) -> Result<Demo> {
    if let Some(why) = refused_flag(&args.flags) {
        return Err(eyre!(why));
    }
    let parsed = Scenario::load(scenario)?;
    let dir = tempfile::tempdir().wrap_err("creating a temporary directory")?;
    let chart = match &args.chart {
        Some(chart) => chart.clone(),
        None => write_chart(dir.path())?.display().to_string(),
    };
    let deploy = deploy_args(args, chart, &parsed.demo);
    let plan = DeployPlan::from_args(&deploy)?;
    crate::validate::chart(&plan.chart)?;
    let helm = locate::find_helm(plan.helm.as_deref()).map_err(|e| match e {
        // One line for the quick start: what is missing and the command that fixes it.
        locate::LocateError::NotFound { .. } => {
            eyre!("helm not found (looked at --helm, $HELM_BIN, .tools/bin/helm, PATH): run scripts/install-tools.sh")
        }
        other => eyre!("{other}"),
    })?;
    let helm_version = locate::helm_version(&helm)
        .await
        .wrap_err_with(|| format!("{} does not run", helm.display()))?;
    let value_args = plan.value_args_with_extra();
    crate::validate::helm_values(&helm, &[], &value_args).await?;
    let namespace = plan.namespace.clone().unwrap_or_else(|| NAMESPACE.into());
    crate::validate::namespace(&namespace)?;
    let settings = parsed.demo.clone();
    let description = parsed.description.clone();
    let mut parsed = parsed;
    // The release's namespace exists in the rehearsal as it must in a real cluster.
    if !parsed.namespaces.contains(&namespace) {
        parsed.namespaces.push(namespace.clone());
    }
    let running = sim::run::start(parsed, "127.0.0.1:0".parse().expect("a valid address")).await?;
    let kubeconfig = dir.path().join("kubeconfig");
    sim::run::write_kubeconfig(&kubeconfig, &running.url(), &namespace)?;
    let env = helm_env(dir.path(), &kubeconfig);
    let cluster = crate::cluster::client::connect_file(&kubeconfig).await?;
    let mut prepared = Prepared {
        plan,
        helm,
        helm_version,
        cluster,
        helm_env: env,
        asks: Default::default(),
        // The demo's cluster is its own and new: no earlier run of it.
        earlier_runs: None,
        // The demo's simulator is new on every run: no earlier run left anything on it.
        own_locks: Default::default(),
    };
    // Pulls a chart reference and checks the init toggle offline, as deploy does.
    prepared.resolve_inputs().await?;
    if settings.preinstall {
        // The demo's own cluster is touched from here on: a failure is 1, not the usage 2.
        crate::exit::touching_the_cluster();
        preinstall(&prepared).await?;
    }
    Ok(Demo {
        prepared,
        scenario_name: scenario.to_string(),
        description,
        _sim: running,
        _dir: dir,
    })
}

/// The quiet first install of an upgrade story, waited for so the shown deploy is an upgrade
/// of a healthy release: the same chart and values, the init hook switched off.
async fn preinstall(prepared: &Prepared) -> Result<()> {
    let plan = &prepared.plan;
    let mut args: Vec<String> = vec![
        "upgrade".into(),
        "--install".into(),
        plan.release.clone(),
        plan.helm_chart(),
        "-n".into(),
        prepared.namespace().into(),
    ];
    args.extend(plan.value_args());
    args.extend(plan.upgrade_extra());
    if let Some(toggle) = &plan.init_toggle {
        args.extend(["--set".into(), format!("{toggle}=false")]);
    }
    args.extend(["--wait".into(), "--timeout".into(), "60s".into()]);
    let out = tokio::process::Command::new(&prepared.helm)
        .args(&args)
        .envs(prepared.helm_env.iter().cloned())
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .wrap_err("running the demo's first install")?;
    if !out.status.success() {
        return Err(eyre!(
            "the demo's first install failed: {}",
            crate::text::plain_bytes(&out.stderr)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo_args(cli: &[&str]) -> DemoArgs {
        use clap::Parser;
        let argv = ["helmdeck", "demo"].iter().chain(cli).copied();
        match crate::cli::Cli::try_parse_from(argv).expect("demo arguments parse") {
            crate::cli::Cli {
                command: crate::cli::Command::Demo(args),
            } => *args,
            other => panic!("not demo: {other:?}"),
        }
    }

    fn story() -> sim::scenario::DemoSettings {
        sim::scenario::DemoSettings {
            preinstall: false,
            set: vec!["gpuClient.optional=false".into()],
            optional: vec!["Deployment/*-gpu-client".into()],
            timeout: Some(Duration::from_secs(30)),
        }
    }

    #[test]
    fn on_the_demo_chart_the_users_flags_come_after_the_scenarios_story() {
        let args = demo_args(&["--set", "gpuClient.optional=true", "--optional", "*-web"]);
        let deploy = deploy_args(&args, "/tmp/deckapp".into(), &story());
        assert_eq!(
            deploy.set,
            ["gpuClient.optional=false", "gpuClient.optional=true"]
        );
        assert_eq!(deploy.optional, ["Deployment/*-gpu-client", "*-web"]);
        assert_eq!(deploy.init_toggle.as_deref(), Some("initJob.enabled"));
        assert_eq!(deploy.init_job.as_deref(), Some("demo-init"));
        assert_eq!(deploy.timeout.as_deref(), Some("30s"));
        assert_eq!(deploy.release, "demo");
    }

    #[test]
    fn a_chart_of_the_users_gets_its_flags_alone() {
        let args = demo_args(&[
            "--chart",
            "./mychart",
            "--release",
            "web",
            "--set",
            "a=1",
            "--timeout",
            "2m",
            "--",
            "--skip-crds",
        ]);
        let deploy = deploy_args(&args, "./mychart".into(), &story());
        assert_eq!(deploy.set, ["a=1"]);
        assert!(deploy.optional.is_empty(), "{:?}", deploy.optional);
        assert_eq!(deploy.init_toggle, None);
        assert_eq!(deploy.init_job, None);
        assert_eq!(deploy.timeout.as_deref(), Some("2m"));
        assert_eq!(deploy.extra, ["--skip-crds"]);
        assert_eq!(
            (deploy.release.as_str(), deploy.chart.as_str()),
            ("web", "./mychart")
        );
    }

    #[test]
    fn flags_that_need_a_real_cluster_are_refused() {
        assert!(refused_flag(&demo_args(&["--kube-context", "prod"]).flags).is_some());
        assert!(refused_flag(&demo_args(&["--only", "rollout"]).flags).is_some());
        assert_eq!(
            refused_flag(&demo_args(&["--dry-run", "-n", "x"]).flags),
            None
        );
    }

    #[test]
    fn the_chart_is_embedded_whole() {
        let names: Vec<&str> = CHART.iter().map(|(n, _)| *n).collect();
        assert!(names.contains(&"Chart.yaml"), "{names:?}");
        assert!(names.contains(&"values.yaml"));
        assert!(names.iter().any(|n| n.ends_with("init-job.yaml")));
    }
}
