//! `helmdeck demo`: the whole split deploy against the embedded simulated cluster, with the
//! real helm. Everything it writes (kubeconfig, chart copy, helm's caches) lives in a temporary
//! directory that is removed at the end.

use std::path::{Path, PathBuf};
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::cli::DeployArgs;
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

/// Starts the simulator for `scenario` and prepares the deploy of the demo chart against it.
pub async fn prepare(scenario: &str, helm_flag: Option<&Path>) -> Result<Demo> {
    let helm = locate::find_helm(helm_flag).map_err(|e| match e {
        // One line for the quick start: what is missing and the command that fixes it.
        locate::LocateError::NotFound { .. } => {
            eyre!("helm not found (looked at --helm, $HELM_BIN, .tools/bin/helm, PATH): run scripts/install-tools.sh")
        }
        other => eyre!("{other}"),
    })?;
    let helm_version = locate::helm_version(&helm)
        .await
        .wrap_err_with(|| format!("{} does not run", helm.display()))?;
    let parsed = Scenario::load(scenario)?;
    let settings = parsed.demo.clone();
    let description = parsed.description.clone();
    let dir = tempfile::tempdir().wrap_err("creating a temporary directory")?;
    let chart = write_chart(dir.path())?;
    let running = sim::run::start(parsed, "127.0.0.1:0".parse().expect("a valid address")).await?;
    let kubeconfig = dir.path().join("kubeconfig");
    sim::run::write_kubeconfig(&kubeconfig, &running.url(), NAMESPACE)?;
    let env = helm_env(dir.path(), &kubeconfig);
    let cluster = crate::cluster::client::connect_file(&kubeconfig).await?;
    let timeout = settings.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let args = DeployArgs {
        release: RELEASE.into(),
        chart: chart.display().to_string(),
        namespace: Some(NAMESPACE.into()),
        values: vec![],
        set: settings.set.clone(),
        kube_context: None,
        init_toggle: Some("initJob.enabled".into()),
        init_job: Some("demo-init".into()),
        optional: settings.optional.clone(),
        timeout: Some(format!("{}s", timeout.as_secs())),
        lock_min_age: None,
        helm: Some(helm.clone()),
        headless: true,
        report: None,
        only: None,
        dry_run: false,
        record: Default::default(),
        extra: vec![],
    };
    let plan = DeployPlan::from_args(&args)?;
    if settings.preinstall {
        // The demo's own cluster is touched from here on: a failure is 1, not the usage 2.
        crate::exit::touching_the_cluster();
        preinstall(&helm, &chart, &env).await?;
    }
    let prepared = Prepared {
        plan,
        helm,
        helm_version,
        cluster,
        helm_env: env,
    };
    Ok(Demo {
        prepared,
        scenario_name: scenario.to_string(),
        description,
        _sim: running,
        _dir: dir,
    })
}

/// The quiet first install of an upgrade story, waited for so the shown deploy is an upgrade
/// of a healthy release.
async fn preinstall(helm: &Path, chart: &Path, env: &[(String, String)]) -> Result<()> {
    let out = tokio::process::Command::new(helm)
        .args([
            "upgrade",
            "--install",
            RELEASE,
            &chart.display().to_string(),
            "-n",
            NAMESPACE,
        ])
        .args([
            "--set",
            "initJob.enabled=false",
            "--wait",
            "--timeout",
            "60s",
        ])
        .envs(env.iter().cloned())
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

    #[test]
    fn the_chart_is_embedded_whole() {
        let names: Vec<&str> = CHART.iter().map(|(n, _)| *n).collect();
        assert!(names.contains(&"Chart.yaml"), "{names:?}");
        assert!(names.contains(&"values.yaml"));
        assert!(names.iter().any(|n| n.ends_with("init-job.yaml")));
    }
}
