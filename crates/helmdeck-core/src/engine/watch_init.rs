//! `watch --init-job NAME` when that Job is a hook of the watched revision (a plain-helm deploy
//! with the init toggle on): helm ran it and wrote how it ended into the release record, and a
//! hook that succeeded is usually gone already (`hook-succeeded`). So the record's phase is the
//! init's outcome; waiting for the Job would wait for one that will not come.

use color_eyre::eyre::WrapErr;
use k8s_openapi::api::batch::v1::Job;
use kube::Api;

use crate::cluster::releases;
use crate::engine::event::{Step, StepOutcome};
use crate::engine::steps::{Ctx, StepError};
use crate::helm::hooks::{self, HookPhase, RunKind};
use crate::helm::status::{self, ReleaseStatus};
use crate::text;

/// Which hooks the revision's operation ran: a rollback's are the rollback events.
pub fn run_kind_of(record: &ReleaseStatus) -> RunKind {
    if hooks::is_rollback(&record.status, &record.description) {
        RunKind::Rollback
    } else if record.version == 1 {
        RunKind::Install
    } else {
        RunKind::Upgrade
    }
}

/// The init step's outcome from the hook `job` in `record`, or None when `job` is no Job hook of
/// the release (then the Job is someone else's to create, and the watch waits for it).
pub fn outcome_from_hook(record: &ReleaseStatus, job: &str) -> Option<(StepOutcome, String)> {
    let run = run_kind_of(record);
    let judged = hooks::judge(&record.hooks, run);
    let hook = judged
        .iter()
        .find(|h| h.record.kind == "Job" && text::plain(&h.record.name) == job)?;
    let (name, version) = (text::plain(job), record.version);
    let events = text::plain(&hook.record.events.join(","));
    let said = format!("Job {name} is a {events} hook of revision {version}");
    let failed = |why: String| StepOutcome::Failed { reason: why };
    Some(match hook.outcome {
        HookPhase::Succeeded => (
            StepOutcome::Succeeded,
            format!("{said}: Succeeded in helm's record (judged from it, not waited for)"),
        ),
        // A failed hook fails helm, so the record step already ended 1 naming it; this is
        // reached only if helm someday records a failed hook on a deployed revision.
        HookPhase::Failed => (
            failed(format!(
                "hook Job {name} failed in revision {version} (helm's record)"
            )),
            format!("{said}: Failed in helm's record"),
        ),
        HookPhase::NotInThisRun => (
            StepOutcome::Skipped {
                reason: format!("{said}, not of this {} run", run.post_event()),
            },
            format!("{said}: not part of this revision's operation"),
        ),
        // Settled revision: helm is done with its hooks, so the Job will not come.
        phase @ (HookPhase::Skipped | HookPhase::NeverRan) => (
            failed(format!(
                "hook Job {name} never ran in revision {version} ({phase}: hooks disabled or \
                 helm stopped before it)"
            )),
            format!("{said}: {phase} in helm's record"),
        ),
        phase @ (HookPhase::Running | HookPhase::Unknown) => (
            failed(format!(
                "hook Job {name} left {phase} in revision {version}: helm ended while it ran"
            )),
            format!("{said}: {phase} in helm's record"),
        ),
    })
}

/// Reads the newest revision's record and judges the init from its hook `job`, saying whether
/// the Job is still there. None: `job` is no hook of the release.
pub async fn from_hook(ctx: &Ctx, job: &str) -> Result<Option<StepOutcome>, StepError> {
    let (client, namespace) = (&ctx.cluster.client, ctx.namespace());
    let revisions = releases::revisions(client, namespace, &ctx.plan.release)
        .await
        .wrap_err("reading the release records")?;
    let Some(newest) = revisions.last() else {
        return Ok(None);
    };
    let value = releases::record(client, namespace, &newest.secret_name)
        .await
        .wrap_err_with(|| format!("reading the record of revision {}", newest.version))?;
    let record = status::from_release_json(&value)
        .map_err(|e| StepError::RecordUnreadable(e.to_string()))?;
    let Some((outcome, said)) = outcome_from_hook(&record, job) else {
        return Ok(None);
    };
    ctx.emit.info(Step::Init, said);
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let present = jobs
        .get_opt(job)
        .await
        .wrap_err_with(|| format!("reading Job {job}"))?
        .is_some();
    if !present {
        ctx.emit.info(
            Step::Init,
            format!(
                "Job {} is no longer in the cluster (helm deletes a hook by its \
                 hook-delete-policy, hook-succeeded once it succeeded)",
                text::plain(job)
            ),
        );
    }
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::helm::status::HookRecord;

    fn record(version: i64, hooks: &[(&str, &str, &[&str], HookPhase)]) -> ReleaseStatus {
        ReleaseStatus {
            version,
            status: "deployed".into(),
            description: "Upgrade complete".into(),
            hooks: hooks
                .iter()
                .map(|(name, kind, events, phase)| HookRecord {
                    name: (*name).into(),
                    kind: (*kind).into(),
                    events: events.iter().map(|e| (*e).to_string()).collect(),
                    phase: *phase,
                    ..HookRecord::default()
                })
                .collect(),
            ..ReleaseStatus::default()
        }
    }

    const POST: &[&str] = &["post-install", "post-upgrade"];

    #[test]
    fn a_hook_init_job_is_judged_from_its_recorded_phase() {
        let job = "trust-flip-xnat-init";
        let outcome = |phase: HookPhase| {
            let r = record(2, &[(job, "Job", POST, phase)]);
            outcome_from_hook(&r, job).map(|(o, _)| o)
        };
        assert_eq!(outcome(HookPhase::Succeeded), Some(StepOutcome::Succeeded));
        for phase in [
            HookPhase::Failed,
            HookPhase::NeverRan,
            HookPhase::Running,
            HookPhase::Unknown,
        ] {
            let Some(StepOutcome::Failed { reason }) = outcome(phase) else {
                panic!("{phase}: a hook that did not succeed fails the init");
            };
            assert!(reason.contains(job), "{reason}");
        }
        let (_, said) =
            outcome_from_hook(&record(2, &[(job, "Job", POST, HookPhase::Succeeded)]), job)
                .expect("a hook");
        assert!(
            said.contains("post-install,post-upgrade hook of revision 2"),
            "{said}"
        );
    }

    #[test]
    fn a_job_that_is_no_hook_of_the_release_is_waited_for() {
        let job = "demo-init";
        // Not in the record at all (the seed's `make xnat-init`), or a hook of another kind.
        assert_eq!(outcome_from_hook(&record(1, &[]), job), None);
        let r = record(1, &[(job, "Pod", POST, HookPhase::Succeeded)]);
        assert_eq!(outcome_from_hook(&r, job), None);
        let r = record(1, &[("demo-init-2", "Job", POST, HookPhase::Succeeded)]);
        assert_eq!(outcome_from_hook(&r, job), None);
    }

    #[test]
    fn a_hook_of_other_events_is_no_init_of_this_run() {
        let job = "demo-init";
        let r = record(1, &[(job, "Job", &["post-upgrade"], HookPhase::NeverRan)]);
        assert!(matches!(
            outcome_from_hook(&r, job),
            Some((StepOutcome::Skipped { .. }, _))
        ));
    }
}
