//! The init step's render side: what `helm template` renders with the toggle on and off, and
//! which Job that makes the init Job.
//!
//! Twice per deploy: offline before the first cluster request, from the values given (a
//! mistyped `--init-job` or a toggle that does not switch the Job is a usage error, exit 2); and
//! after the upgrade, from the values of the revision helm deployed (its record's `config`,
//! exact by construction), from the same chart copy, with the same render flags, and
//! `--is-upgrade` only when helm upgraded (an older revision exists).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::releases;
use crate::config::DeployPlan;
use crate::engine::inputs;
use crate::engine::steps::Ctx;
use crate::engine::steps::init_objects::{self, InitObjectsError};

const RENDER_TIMEOUT: Duration = Duration::from_secs(120);

/// The chart rendered with the toggle off and on.
#[derive(Debug, Clone, Default)]
pub struct Renders {
    pub off: String,
    pub on: String,
}

/// Where the init Job is, when the renders agree with the settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Rendered with the toggle on only: the step runs it.
    Rendered,
    /// The toggle adds no Job at all: the step is skipped.
    NoneEitherWay,
}

/// Why the renders contradict `--init-toggle`/`--init-job`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    #[error(
        "Job {job} is rendered with {toggle}=false too: the toggle does not switch it off, so helm \
         would run it with the release (check --init-toggle)"
    )]
    NotSwitched { job: String, toggle: String },
    #[error("{toggle}=true adds {} but none named {job} (did you mean {closest}?)", jobs(.added))]
    Misnamed {
        job: String,
        toggle: String,
        added: Vec<String>,
        closest: String,
    },
    #[error("cannot read helm template's output: {0}")]
    Unreadable(String),
    /// What the toggle adds cannot run as an init step (a kind it does not apply, a Job the
    /// selector leaves out).
    #[error("{0}")]
    Objects(String),
}

fn jobs(names: &[String]) -> String {
    let noun = if names.len() == 1 { "Job" } else { "Jobs" };
    format!("{noun} {}", names.join(", "))
}

/// The names of the Jobs in rendered YAML.
fn job_names(rendered: &str) -> Result<BTreeSet<String>, Mismatch> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(rendered).map_err(|e| Mismatch::Unreadable(e.to_string()))?;
    Ok(docs
        .iter()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("Job"))
        .filter_map(|d| d.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect())
}

/// The rules: the Job must render with the toggle on and not with it off; a toggle that adds
/// no Job at all leaves the step skipped.
pub fn check(renders: &Renders, toggle: &str, job: &str) -> Result<Found, Mismatch> {
    let (off, on) = (job_names(&renders.off)?, job_names(&renders.on)?);
    if off.contains(job) {
        return Err(Mismatch::NotSwitched {
            job: job.into(),
            toggle: toggle.into(),
        });
    }
    if on.contains(job) {
        return Ok(Found::Rendered);
    }
    let added: Vec<String> = on.difference(&off).cloned().collect();
    let Some(closest) = added.iter().min_by_key(|a| distance(a, job)).cloned() else {
        return Ok(Found::NoneEitherWay);
    };
    Err(Mismatch::Misnamed {
        job: job.into(),
        toggle: toggle.into(),
        added,
        closest,
    })
}

/// Edit distance (Levenshtein), for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// How one render is made besides the toggle.
pub struct RenderArgs<'a> {
    pub plan: &'a DeployPlan,
    pub namespace: &'a str,
    /// The values flags (`-f FILE`, `--set …`).
    pub values: Vec<String>,
    pub is_upgrade: bool,
    pub kube_version: Option<String>,
}

/// `helm template` arguments with the toggle `on` or off.
pub fn template_args(r: &RenderArgs, toggle: &str, on: bool) -> Vec<String> {
    let plan = r.plan;
    let mut args = vec![
        "template".into(),
        plan.release.clone(),
        plan.helm_chart(),
        "-n".into(),
        r.namespace.to_string(),
    ];
    if r.is_upgrade {
        args.push("--is-upgrade".into());
    }
    if let Some(version) = &r.kube_version {
        args.extend(["--kube-version".into(), version.clone()]);
    }
    args.extend(r.values.iter().cloned());
    args.extend(plan.render_extra());
    // Last, so it wins over the same key in the values.
    args.extend(["--set".into(), format!("{toggle}={on}")]);
    args
}

pub(crate) async fn template(
    helm: &Path,
    env: &[(String, String)],
    args: Vec<String>,
) -> Result<String, String> {
    let run = tokio::process::Command::new(helm)
        .args(&args)
        .envs(env.iter().cloned())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(RENDER_TIMEOUT, run)
        .await
        .map_err(|_| "helm template did not finish".to_string())?
        .map_err(|e| format!("running helm template: {e}"))?;
    if !out.status.success() {
        // Lines split before they are made plain (plain folds a newline into a space).
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        return Err(format!(
            "helm template failed: {}",
            crate::helm::failure::in_helms_words(
                "helm template",
                &lines,
                out.status.code(),
                std::os::unix::process::ExitStatusExt::signal(&out.status),
            )
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| "helm template output is not UTF-8".to_string())
}

async fn render_both(
    helm: &Path,
    env: &[(String, String)],
    r: &RenderArgs<'_>,
    toggle: &str,
) -> Result<Renders, String> {
    let (off, on) = tokio::join!(
        template(helm, env, template_args(r, toggle, false)),
        template(helm, env, template_args(r, toggle, true)),
    );
    Ok(Renders { off: off?, on: on? })
}

/// The offline check, before the first cluster request, from the values given. A chart that
/// does not render offline (a required value, a `lookup`) is not judged here: the upgrade
/// says what is wrong, and the init step judges again from the deployed values.
pub async fn check_offline(
    plan: &DeployPlan,
    helm: &Path,
    env: &[(String, String)],
    namespace: &str,
) -> Result<(), Mismatch> {
    let (Some(toggle), Some(job)) = (&plan.init_toggle, &plan.init_job) else {
        return Ok(());
    };
    if plan.only == Some(crate::cli::Only::Rollout) {
        return Ok(());
    }
    let r = RenderArgs {
        plan,
        namespace,
        values: plan.user_value_args(),
        is_upgrade: false,
        kube_version: None,
    };
    let Ok(renders) = render_both(helm, env, &r, toggle).await else {
        return Ok(());
    };
    match check(&renders, toggle, job) {
        Ok(_) => match init_objects::plan(
            &renders.on,
            &renders.off,
            toggle,
            job,
            plan.init_selector.as_ref(),
        ) {
            Err(
                e @ (InitObjectsError::NotApplicable { .. }
                | InitObjectsError::JobNotSelected { .. }),
            ) => Err(Mismatch::Objects(e.to_string())),
            // Output that does not parse is the init step's to report, as a failed render is.
            _ => Ok(()),
        },
        Err(Mismatch::Unreadable(_)) => Ok(()),
        Err(mismatch) => Err(mismatch),
    }
}

/// Both renders from the release's deployed revision: its values (through a private 0600 file,
/// never argv), `--is-upgrade` when an older revision exists, the server's version.
pub async fn from_release(ctx: &Ctx, toggle: &str) -> Result<Renders, String> {
    let (client, namespace, release) = (&ctx.cluster.client, ctx.namespace(), &ctx.plan.release);
    let revisions = releases::revisions(client, namespace, release)
        .await
        .map_err(|e| format!("{e:#}"))?;
    let Some(deployed) = revisions.iter().rev().find(|r| r.status == "deployed") else {
        return Err(format!(
            "release {release} has no deployed revision in {namespace} to run init against"
        ));
    };
    let is_upgrade = revisions.iter().any(|r| r.version < deployed.version);
    let values = releases::values(client, namespace, &deployed.secret_name)
        .await
        .map_err(|e| format!("{e:#}"))?;
    let dir = tempfile::Builder::new()
        .prefix("helmdeck-init-")
        .tempdir()
        .map_err(|e| format!("creating a private temporary directory: {e}"))?;
    let json = serde_json::to_vec(&values).map_err(|e| format!("encoding the values: {e}"))?;
    let file = inputs::save_private(dir.path(), "deployed-values.json", &json)
        .map_err(|e| format!("{e}"))?;
    drop(json);
    let kube_version = ctx
        .cluster
        .client
        .apiserver_version()
        .await
        .ok()
        .map(|v| v.git_version);
    let r = RenderArgs {
        plan: &ctx.plan,
        namespace,
        values: vec!["-f".into(), file.display().to_string()],
        is_upgrade,
        kube_version,
    };
    render_both(&ctx.helm, &ctx.helm_env, &r, toggle).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(kind: &str, name: &str) -> String {
        format!("---\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n")
    }

    fn renders(off: &[&str], on: &[&str]) -> Renders {
        let text = |jobs: &[&str]| {
            let mut s = doc("Service", "demo-init");
            for j in jobs {
                s.push_str(&doc("Job", j));
            }
            s
        };
        Renders {
            off: text(off),
            on: text(on),
        }
    }

    #[test]
    fn the_job_must_render_with_the_toggle_on_only() {
        let r = renders(&["demo-seed"], &["demo-seed", "demo-init"]);
        assert_eq!(
            check(&r, "initJob.enabled", "demo-init"),
            Ok(Found::Rendered)
        );
        let mismatch = check(&r, "initJob.enabled", "demo-initt").unwrap_err();
        assert_eq!(
            mismatch.to_string(),
            "initJob.enabled=true adds Job demo-init but none named demo-initt (did you mean demo-init?)"
        );
        let mismatch = check(&r, "initJob.enabled", "demo-seed").unwrap_err();
        assert!(
            mismatch
                .to_string()
                .starts_with("Job demo-seed is rendered with initJob.enabled=false too"),
            "{mismatch}"
        );
        let none = renders(&["demo-seed"], &["demo-seed"]);
        assert_eq!(
            check(&none, "x.enabled", "demo-bootstrap"),
            Ok(Found::NoneEitherWay)
        );
        assert!(matches!(
            check(
                &Renders {
                    off: "a: [".into(),
                    on: String::new()
                },
                "t",
                "j"
            ),
            Err(Mismatch::Unreadable(_))
        ));
    }

    #[test]
    fn the_closest_added_job_is_suggested() {
        let r = renders(&[], &["demo-cleanup", "demo-init", "demo-initdb"]);
        let mismatch = check(&r, "t", "demo-inti").unwrap_err();
        assert_eq!(
            mismatch.to_string(),
            "t=true adds Jobs demo-cleanup, demo-init, demo-initdb but none named demo-inti (did you mean demo-init?)"
        );
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
