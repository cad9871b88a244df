//! What the deploy's helm calls read besides the cluster, made once before the first cluster
//! request: the values given on standard input (`-f -`: helm's own stdin is `/dev/null`) and a
//! chart from a repository or an OCI registry, pulled once with its version pinned, so the
//! upgrade and every render read the same bytes. Both live in a private temporary directory
//! that goes with the run.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::DeployPlan;
use crate::helm::args::{self, Arg, Kind};
use crate::validate::InputError;

pub use crate::config::inputs::{Inputs, Pulled};

/// `-f -`/`--values -` in the arguments.
fn reads_stdin_arg(arg: &Arg) -> bool {
    arg.kind == Kind::Values && arg.name == "values" && arg.value.as_deref() == Some("-")
}

impl DeployPlan {
    fn extra_args(&self) -> Vec<Arg> {
        args::parse(&self.extra)
    }

    fn reads_stdin(&self) -> bool {
        self.values.iter().any(|v| v.as_os_str() == "-")
            || self.extra_args().iter().any(reads_stdin_arg)
    }

    /// A chart helm would fetch: not a local directory or archive, and not spelled as a path
    /// (a missing `./chart` is a missing path, not a repository chart).
    fn chart_is_remote(&self) -> bool {
        let chart = self.chart.as_str();
        let path_like = chart.starts_with('.') || chart.starts_with('/') || chart.ends_with(".tgz");
        let fetched = chart.contains("://") || !path_like;
        fetched && !Path::new(chart).exists()
    }

    /// The chart as helm is given it: the pulled copy, else as the plan names it.
    pub fn helm_chart(&self) -> String {
        match self.inputs.pulled() {
            Some(p) => p.dir.display().to_string(),
            None => self.chart.clone(),
        }
    }

    /// The extra arguments of `helm upgrade`: `-f -` names the saved stdin, and a pulled
    /// chart's source flags went to the pull.
    pub fn upgrade_extra(&self) -> Vec<String> {
        let pulled = self.inputs.pulled().is_some();
        let kept: Vec<Arg> = self
            .extra_args()
            .into_iter()
            .filter(|a| !(pulled && a.kind == Kind::ChartSource))
            .map(|a| self.stdin_mapped(a))
            .collect();
        args::words(&kept)
    }

    fn stdin_mapped(&self, arg: Arg) -> Arg {
        if reads_stdin_arg(&arg) {
            arg.with_value(&self.inputs.values_path("-"))
        } else {
            arg
        }
    }

    /// Every values flag the upgrade gets from the user (the plan's, then those after `--`).
    pub fn user_value_args(&self) -> Vec<String> {
        let mut out = self.value_args();
        out.extend(self.extra_value_args());
        out
    }

    /// The values flags among the arguments after `--` (`--set`, `-f`, …), in their order:
    /// the upgrade gets them after the plan's own values and the init toggle, so they win.
    pub fn extra_value_args(&self) -> Vec<String> {
        let extra: Vec<Arg> = self
            .extra_args()
            .into_iter()
            .filter(|a| a.kind == Kind::Values)
            .map(|a| self.stdin_mapped(a))
            .collect();
        args::words(&extra)
    }

    /// The extra arguments `helm template` takes as the upgrade did: render flags, helm's
    /// global flags, and a local chart's source flags.
    pub fn render_extra(&self) -> Vec<String> {
        let pulled = self.inputs.pulled().is_some();
        let kept: Vec<Arg> = self
            .extra_args()
            .into_iter()
            .filter(|a| match a.kind {
                Kind::Render | Kind::Global => true,
                Kind::ChartSource => !pulled,
                Kind::Values | Kind::Upgrade => false,
            })
            .collect();
        args::words(&kept)
    }

    /// The extra arguments a printed `--only init` needs: the chart source (a pulled chart's
    /// version pinned), render and global flags; never values or credentials.
    pub fn advice_extra(&self) -> Vec<String> {
        let pulled = self.inputs.pulled();
        let mut kept: Vec<Arg> = Vec::new();
        let mut pinned = false;
        for arg in self.extra_args() {
            if arg.secret || matches!(arg.kind, Kind::Values | Kind::Upgrade) {
                continue;
            }
            match (pulled, arg.name.as_str()) {
                (Some(_), "devel") => continue,
                (Some(p), "version") => {
                    pinned = true;
                    kept.push(arg.with_value(&p.version));
                }
                _ => kept.push(arg),
            }
        }
        let mut out = args::words(&kept);
        if let Some(p) = pulled.filter(|_| !pinned) {
            out.extend(["--version".to_string(), p.version.clone()]);
        }
        out
    }
}

/// Reads stdin (when `-f -` asks for it) and pulls a remote chart, before the first cluster
/// request. `helm_env` is the environment every helm call gets.
pub async fn resolve(
    plan: &DeployPlan,
    helm: &Path,
    helm_env: &[(String, String)],
) -> Result<Inputs, InputError> {
    let mut inputs = Inputs::default();
    // `--only rollout` renders nothing: no chart to pull.
    let remote = plan.chart_is_remote() && plan.only != Some(crate::cli::Only::Rollout);
    let stdin = plan.reads_stdin();
    if !stdin && !remote {
        return Ok(inputs);
    }
    // Private (0700): it may hold values, which can be secrets.
    let dir = tempfile::Builder::new()
        .prefix("helmdeck-")
        .tempdir()
        .map_err(InputError::TempDir)?;
    if stdin {
        let bytes = tokio::task::spawn_blocking(|| {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map(|_| bytes)
        })
        .await
        .map_err(|e| InputError::Stdin(std::io::Error::other(e)))?
        .map_err(InputError::Stdin)?;
        inputs.stdin_values = Some(save_private(dir.path(), "values-stdin.yaml", &bytes)?);
    }
    if remote {
        inputs.pulled = Some(pull(plan, helm, helm_env, &dir.path().join("chart")).await?);
    }
    inputs.dir = Some(dir);
    Ok(inputs)
}

/// Writes `bytes` to `dir/name`, 0600, whole or not at all (a temporary file renamed).
pub fn save_private(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, InputError> {
    let path = dir.join(name);
    crate::atomic::write(&path, bytes, crate::atomic::Access::Private, "values")
        .map_err(InputError::SaveStdin)?;
    Ok(path)
}

#[derive(Deserialize)]
struct ChartMeta {
    version: String,
}

/// `helm pull CHART --untar` into `into`, with the chart source and global flags the upgrade
/// was given; the chart's directory and exact version.
async fn pull(
    plan: &DeployPlan,
    helm: &Path,
    helm_env: &[(String, String)],
    into: &Path,
) -> Result<Pulled, InputError> {
    let chart = plan.chart.clone();
    let mut argv = vec![
        "pull".to_string(),
        chart.clone(),
        "--untar".into(),
        "--destination".into(),
        into.display().to_string(),
    ];
    let source: Vec<Arg> = plan
        .extra_args()
        .into_iter()
        .filter(|a| matches!(a.kind, Kind::ChartSource | Kind::Global))
        .collect();
    argv.extend(args::words(&source));
    let run = tokio::process::Command::new(helm)
        .args(&argv)
        .envs(helm_env.iter().cloned())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(plan.timeout, run)
        .await
        .map_err(|_| InputError::PullTimeout {
            chart: chart.clone(),
            secs: plan.timeout.as_secs(),
        })?
        .map_err(|error| InputError::PullRun {
            chart: chart.clone(),
            error,
        })?;
    if !out.status.success() {
        // Lines split before they are made plain (plain folds a newline into a space).
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        return Err(InputError::Pull {
            chart,
            message: crate::helm::failure::in_helms_words(
                "helm pull",
                &lines,
                out.status.code(),
                std::os::unix::process::ExitStatusExt::signal(&out.status),
            ),
        });
    }
    let unreadable = |message: String| InputError::Pulled {
        chart: chart.clone(),
        message,
    };
    let mut dirs = std::fs::read_dir(into)
        .map_err(|e| unreadable(format!("{}: {e}", into.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir());
    let (Some(dir), None) = (dirs.next(), dirs.next()) else {
        return Err(unreadable("not exactly one chart directory".into()));
    };
    let meta = std::fs::read_to_string(dir.join("Chart.yaml"))
        .map_err(|e| unreadable(format!("Chart.yaml: {e}")))?;
    let meta: ChartMeta =
        serde_saphyr::from_str(&meta).map_err(|e| unreadable(format!("Chart.yaml: {e}")))?;
    Ok(Pulled {
        dir,
        version: meta.version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn plan(argv: &[&str]) -> DeployPlan {
        let mut full = vec!["helmdeck", "deploy", "demo"];
        full.extend_from_slice(argv);
        let crate::cli::Command::Deploy(args) = crate::cli::Cli::try_parse_from(full)
            .expect("valid flags")
            .command
        else {
            unreachable!()
        };
        DeployPlan::from_args(&args).expect("a plan")
    }

    fn with_inputs(mut plan: DeployPlan, inputs: Inputs) -> DeployPlan {
        plan.inputs = std::sync::Arc::new(inputs);
        plan
    }

    #[test]
    fn a_local_chart_keeps_its_flags_and_values_never_reach_the_advice() {
        let dir = tempfile::tempdir().unwrap();
        let chart = dir.path().to_str().unwrap();
        let p = plan(&[
            chart,
            "--",
            "--set-string",
            "a=secret",
            "--version",
            "1.2.3",
            "--post-renderer",
            "stamp",
            "--history-max",
            "3",
            "--password",
            "pw",
        ]);
        assert_eq!(p.helm_chart(), chart);
        assert_eq!(p.upgrade_extra(), p.extra, "the upgrade gets them as given");
        assert_eq!(
            p.render_extra(),
            [
                "--version",
                "1.2.3",
                "--post-renderer",
                "stamp",
                "--password",
                "pw"
            ]
        );
        assert_eq!(p.user_value_args(), ["--set-string", "a=secret"]);
        assert_eq!(
            p.advice_extra(),
            ["--version", "1.2.3", "--post-renderer", "stamp"]
        );
    }

    #[test]
    fn a_pulled_chart_is_used_in_place_of_its_source_and_the_advice_pins_its_version() {
        let p = plan(&[
            "deckapp",
            "--",
            "--repo",
            "https://charts.example",
            "--version=^0.4",
            "--devel",
            "-f",
            "-",
        ]);
        let p = with_inputs(
            p,
            Inputs {
                dir: None,
                stdin_values: Some(PathBuf::from("/private/values-stdin.yaml")),
                pulled: Some(Pulled {
                    dir: PathBuf::from("/private/chart/deckapp"),
                    version: "0.4.2".into(),
                }),
            },
        );
        assert_eq!(p.helm_chart(), "/private/chart/deckapp");
        assert_eq!(p.upgrade_extra(), ["-f", "/private/values-stdin.yaml"]);
        assert!(p.render_extra().is_empty());
        assert_eq!(
            p.advice_extra(),
            ["--repo", "https://charts.example", "--version=0.4.2"]
        );
        let unpinned = with_inputs(
            plan(&["deckapp"]),
            Inputs {
                pulled: Some(Pulled {
                    dir: PathBuf::from("/x"),
                    version: "0.4.2".into(),
                }),
                ..Inputs::default()
            },
        );
        assert_eq!(unpinned.advice_extra(), ["--version", "0.4.2"]);
    }

    #[test]
    fn only_a_chart_helm_would_fetch_is_pulled() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().to_str().unwrap();
        for (chart, remote) in [
            ("deckapp", true),
            ("repo/deckapp", true),
            ("oci://registry.example/charts/deckapp", true),
            ("https://charts.example/deckapp-0.4.2.tgz", true),
            ("./missing-chart", false),
            ("/missing/chart", false),
            ("missing-0.4.2.tgz", false),
            (local, false),
        ] {
            assert_eq!(plan(&[chart]).chart_is_remote(), remote, "{chart}");
        }
    }

    #[test]
    fn stdin_values_are_saved_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = save_private(dir.path(), "v.yaml", b"a: 1\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a: 1\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let other = dir.path().join("other.yaml");
        std::fs::write(&other, "b: 2\n").unwrap();
        let p = plan(&["c", "-f", "-", "-f", other.to_str().unwrap()]);
        let p = with_inputs(
            p,
            Inputs {
                stdin_values: Some(path.clone()),
                ..Inputs::default()
            },
        );
        assert_eq!(p.value_args()[1], path.display().to_string());
        assert_eq!(p.value_args()[3], other.display().to_string());
    }
}
