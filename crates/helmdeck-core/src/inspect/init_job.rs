//! The init Job of the newest run (issue 22 item 8): the Job helmdeck's init step created
//! (labelled `helmdeck.io/run` and the release's instance label), or the one `--init-job`
//! names, with its pods, the container that failed (an initContainer when that is what
//! failed), log tails and events. A Job that is gone is explained from what remembers it:
//! helmdeck's newest local record of the release, or helm's hook record (a plain `helm
//! upgrade` with the toggle on runs it as a hook).

use crate::rollout::objects::EventSummary as Event;
use k8s_openapi::api::batch::v1::Job;
use kube::api::ListParams;
use kube::{Api, Client};

use crate::engine::event::{PodView, Step, StepOutcome};
use crate::engine::state::DeployState;
use crate::helm::hooks::HookPhase;
use crate::helm::status::HookRecord;
use crate::inspect::evidence;
use crate::inspect::model::{ContainerEvidence, HookEvidence, HookPod, InitJobView, InspectedHook};
use crate::text;

/// The label helmdeck's init step puts on the objects of one run.
pub const RUN_LABEL: &str = "helmdeck.io/run";

/// What helmdeck's newest local record of the release says about its init step.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedInit {
    pub job: String,
    /// The uid of the Job that run created, when it got that far.
    pub uid: Option<String>,
    /// When that run started (RFC 3339).
    pub started: String,
    pub outcome: Option<StepOutcome>,
    /// The Job's pods as the run last saw them, with their containers' log lines.
    pub pods: Vec<HookPod>,
    pub failed_container: Option<String>,
}

/// The newest local record of the release in `namespace` that ran an init step.
pub fn recorded_init(release: &str, namespace: &str) -> Option<RecordedInit> {
    let dir = crate::record::default_dir()?;
    let mut entries: Vec<_> = crate::record::list::entries(&dir, Some(release))
        .into_iter()
        .filter(|e| e.namespace == namespace && !e.started.is_empty())
        .collect();
    entries.sort_by(|a, b| b.started.cmp(&a.started));
    entries.into_iter().find_map(|e| {
        let state = crate::record::reader::read(&e.path).ok()?.fold();
        let job = state.plan.init_job.clone()?;
        let (pods, failed_container) = recorded_pods(&state, &job);
        Some(RecordedInit {
            job,
            uid: state.init_uid.clone(),
            started: e.started.clone(),
            outcome: state.outcome(Step::Init).cloned(),
            pods,
            failed_container,
        })
    })
}

/// The Job's pods as a run's record last saw them, the last attempt last (as `hook_evidence`
/// orders them), and the container that failed that attempt.
fn recorded_pods(state: &DeployState, job: &str) -> (Vec<HookPod>, Option<String>) {
    let owner = format!("Job/{job}");
    let mut mine: Vec<&PodView> = state.pods.values().filter(|p| p.owner == owner).collect();
    // A pod view has no creation time: a pod still running is the last attempt, else the one
    // restarted most.
    mine.sort_by_key(|p| {
        (
            !matches!(p.phase.as_str(), "Failed" | "Succeeded"),
            p.restarts,
        )
    });
    let failed = mine
        .last()
        .and_then(|p| p.failed_container())
        .map(str::to_string);
    let pods = mine
        .into_iter()
        .map(|p| HookPod {
            name: p.name.clone(),
            phase: p.phase.clone(),
            node: p.node.clone(),
            created: None,
            causes: p.causes.clone(),
            containers: p
                .container_states
                .iter()
                .map(|c| {
                    let log = state
                        .logs
                        .get(&format!("{}/{}", p.name, c.name))
                        .map(|l| {
                            let skip = l.len().saturating_sub(RECORDED_LOG_LINES);
                            l.iter().skip(skip).cloned().collect()
                        })
                        .unwrap_or_default();
                    ContainerEvidence {
                        name: c.name.clone(),
                        init: c.init,
                        restarts: c.restarts,
                        state: c.state.clone(),
                        log,
                        ..ContainerEvidence::default()
                    }
                })
                .collect(),
        })
        .collect();
    (pods, failed)
}

/// Log lines of a recorded container shown, as many as inspect asks the cluster for.
const RECORDED_LOG_LINES: usize = 50;

/// Reads the init Job: `wanted` (`--init-job`) or the newest Job of the release that carries
/// the run label. None when there is no init Job to speak of.
pub async fn collect(
    client: &Client,
    release: &str,
    namespace: &str,
    wanted: Option<&str>,
    events: &[Event],
    hooks: &[InspectedHook],
    warnings: &mut Vec<String>,
) -> Option<InitJobView> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let labelled = format!("{RUN_LABEL},app.kubernetes.io/instance={release}");
    let newest = match jobs.list(&ListParams::default().labels(&labelled)).await {
        Ok(list) => newest_job(list.items, wanted),
        Err(e) => {
            warnings.push(format!(
                "cannot list the init Jobs ({labelled}): {}",
                text::plain(&e.to_string())
            ));
            None
        }
    };
    // `--init-job` names a Job helm may have run as a hook (no run label): read it by name.
    let found = match (newest, wanted) {
        (Some(job), _) => Some(job),
        (None, Some(name)) => jobs.get_opt(name).await.ok().flatten(),
        (None, None) => None,
    };
    let recorded = recorded_init(release, namespace);
    let Some(job) = found else {
        let name = wanted
            .map(str::to_string)
            .or_else(|| recorded.as_ref().map(|r| r.job.clone()))?;
        let note = gone_note(&name, namespace, recorded.as_ref(), hooks);
        // What the run saw of it, when its record is about this Job.
        let seen = recorded.filter(|r| r.job == name && !r.pods.is_empty());
        return Some(InitJobView {
            name: text::plain(&name),
            note: Some(note),
            failed_container: seen.as_ref().and_then(|r| r.failed_container.clone()),
            live: seen.map(|r| HookEvidence {
                kind: "Job".into(),
                name: text::plain(&name),
                pods: r.pods,
                notes: vec![format!(
                    "from helmdeck's record of the run of {}",
                    r.started
                )],
                ..HookEvidence::default()
            }),
            ..InitJobView::default()
        });
    };
    let name = job.metadata.name.clone().unwrap_or_default();
    let record = HookRecord {
        name: name.clone(),
        kind: "Job".into(),
        ..HookRecord::default()
    };
    let mut live = evidence::hook_evidence(client, namespace, &record, events).await;
    let mut failed = live.pods.last().and_then(failed_container);
    // A failed Job's controller deletes its pods: the run's record still has them.
    let same_job =
        |r: &&RecordedInit| r.job == name && r.uid.is_some() && r.uid == job.metadata.uid;
    if live.pods.is_empty()
        && let Some(r) = recorded.as_ref().filter(same_job)
        && !r.pods.is_empty()
    {
        live.pods = r.pods.clone();
        live.notes.push(format!(
            "its pods are gone; pods, containers and log lines from helmdeck's record of the run of {}",
            r.started
        ));
        failed = r.failed_container.clone();
    }
    Some(InitJobView {
        name: text::plain(&name),
        run: job
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(RUN_LABEL))
            .map(|r| text::plain(r)),
        failed_container: failed,
        live: Some(live),
        note: None,
    })
}

/// The newest Job (by creation, then name), only `wanted` when given.
fn newest_job(jobs: Vec<Job>, wanted: Option<&str>) -> Option<Job> {
    jobs.into_iter()
        .filter(|j| wanted.is_none_or(|w| j.metadata.name.as_deref() == Some(w)))
        .max_by_key(|j| {
            (
                j.metadata.creation_timestamp.as_ref().map(|t| t.0),
                j.metadata.name.clone(),
            )
        })
}

/// The container that failed the pod: the first, in the order they run (initContainers
/// first), that exited non-zero, now or in its last run.
pub fn failed_container(pod: &HookPod) -> Option<String> {
    pod.containers
        .iter()
        .find(|c| {
            let now = c.terminated.as_ref().map(|t| t.exit_code);
            let last = c.last_terminated.as_ref().map(|t| t.exit_code);
            now.is_some_and(|code| code != 0)
                || (now.is_none() && last.is_some_and(|code| code != 0))
        })
        .map(|c| c.name.clone())
}

/// Why the Job is not there, from whatever remembers it.
fn gone_note(
    name: &str,
    namespace: &str,
    recorded: Option<&RecordedInit>,
    hooks: &[InspectedHook],
) -> String {
    let gone = format!("Job {name} no longer exists in {namespace}");
    if let Some(r) = recorded.filter(|r| r.job == name) {
        let run = format!("helmdeck's run of {}", r.started);
        return match &r.outcome {
            Some(StepOutcome::Succeeded) => format!(
                "{gone}: it succeeded in {run} and was deleted after it succeeded (its hook-delete-policy)"
            ),
            Some(StepOutcome::Failed { reason }) => {
                format!("{gone}: it failed in {run}: {}", text::plain(reason))
            }
            Some(other) => format!("{gone}: the init step of {run} ended {other:?}"),
            None => format!("{gone}: the init step of {run} did not end"),
        };
    }
    let hook = hooks
        .iter()
        .find(|h| h.record.name == name && h.record.kind == "Job");
    match hook.map(|h| &h.record) {
        Some(h)
            if h.phase == HookPhase::Succeeded
                && h.delete_policies.iter().any(|p| p == "hook-succeeded") =>
        {
            format!(
                "{gone}: it ran as a helm hook, succeeded, and was deleted after it succeeded (hook-succeeded)"
            )
        }
        Some(h) => format!("{gone}: it ran as a helm hook ({})", h.phase.word()),
        None => format!("{gone}, and no record of this release names it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::model::{ContainerEvidence, Termination};

    fn container(
        name: &str,
        init: bool,
        exit: Option<i32>,
        last: Option<i32>,
    ) -> ContainerEvidence {
        let t = |code: i32| Termination {
            exit_code: code,
            ..Termination::default()
        };
        ContainerEvidence {
            name: name.into(),
            init,
            terminated: exit.map(t),
            last_terminated: last.map(t),
            ..ContainerEvidence::default()
        }
    }

    /// The initContainer that exited non-zero (now, or in its last run while it backs off)
    /// is the failed one, before the app container that never ran.
    #[test]
    fn the_failed_container_is_the_first_that_exited_non_zero() {
        let pod = |containers| HookPod {
            containers,
            ..HookPod::default()
        };
        let crash_looping = pod(vec![
            container("wait-db", true, Some(0), None),
            container("configure", true, None, Some(1)),
            container("app", false, None, None),
        ]);
        assert_eq!(
            failed_container(&crash_looping).as_deref(),
            Some("configure")
        );
        let app_failed = pod(vec![
            container("wait-db", true, Some(0), None),
            container("app", false, Some(2), None),
        ]);
        assert_eq!(failed_container(&app_failed).as_deref(), Some("app"));
        let recovered = pod(vec![container("configure", true, Some(0), Some(1))]);
        assert_eq!(failed_container(&recovered), None, "it succeeded on retry");
    }

    #[test]
    fn a_job_gone_after_success_says_so() {
        let recorded = RecordedInit {
            job: "demo-init".into(),
            uid: None,
            pods: Vec::new(),
            failed_container: None,
            started: "2026-12-02T09:00:00Z".into(),
            outcome: Some(StepOutcome::Succeeded),
        };
        let note = gone_note("demo-init", "apps", Some(&recorded), &[]);
        assert!(note.contains("deleted after it succeeded"), "{note}");
        let hook = InspectedHook {
            record: HookRecord {
                name: "demo-init".into(),
                kind: "Job".into(),
                phase: HookPhase::Succeeded,
                delete_policies: vec!["hook-succeeded".into()],
                ..HookRecord::default()
            },
            in_this_run: true,
            live: None,
        };
        let note = gone_note("demo-init", "apps", None, &[hook]);
        assert!(
            note.contains("helm hook") && note.contains("deleted after it succeeded"),
            "{note}"
        );
        let note = gone_note("demo-init", "apps", None, &[]);
        assert!(note.contains("no record"), "{note}");
    }
}
