//! The live evidence of a hook that did not succeed: its Job (or Pod), the Job's pods, each
//! container's exit and termination message, the tail of each container's log, and the events
//! about all of them. Read-only; every string is sanitized.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod};

use crate::rollout::objects::{EventSummary as Event, PodSummary};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, LogParams};
use kube::{Api, Client};

use crate::engine::event::KubeEventView;
use crate::helm::hooks::HookPhase;
use crate::helm::status::HookRecord;
use crate::inspect::model::{ContainerEvidence, HookEvidence, HookPod, Termination};
use crate::inspect::workloads;
use crate::rollout::diagnosis;
use crate::rollout::readiness::{self, JobProgress};
use crate::text;

/// Log lines kept per container.
pub const LOG_TAIL: i64 = 50;
/// Bytes of log asked for per container (a cap on lines that are very long).
const LOG_BYTES: i64 = 256 * 1024;

/// The hooks whose live object tells more than the record: those that did not succeed.
pub fn needs_evidence(h: &HookRecord) -> bool {
    matches!(
        h.phase,
        HookPhase::Failed | HookPhase::Running | HookPhase::Unknown
    ) && matches!(h.kind.as_str(), "Job" | "Pod")
}

fn uid(meta: &ObjectMeta) -> &str {
    meta.uid.as_deref().unwrap_or("")
}

/// Events about one of `uids` (or, when an event lacks a uid, about `kind/name`), oldest first.
fn events_about(events: &[Event], uids: &[&str], names: &[(&str, &str)]) -> Vec<KubeEventView> {
    workloads::chronological(events.iter().filter(|e| {
        let o = &e.involved_object;
        match o.uid.as_deref().filter(|u| !u.is_empty()) {
            Some(u) => uids.contains(&u),
            None => names
                .iter()
                .any(|(k, n)| o.kind.as_deref() == Some(*k) && o.name.as_deref() == Some(*n)),
        }
    }))
}

/// The live Job (or Pod) of a hook that did not succeed: its pods, their containers' exits and
/// log tails, and the events about all of them.
pub async fn hook_evidence(
    client: &Client,
    ns: &str,
    hook: &HookRecord,
    events: &[Event],
) -> HookEvidence {
    let mut ev = HookEvidence {
        kind: text::plain(&hook.kind),
        name: text::plain(&hook.name),
        ..HookEvidence::default()
    };
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let (meta, pods) = match hook_object(client, ns, hook, &pods_api, &mut ev).await {
        Ok(object) => object,
        Err(note) => {
            ev.notes.push(note);
            return ev;
        }
    };
    ev.found = true;
    ev.created = meta.creation_timestamp.as_ref().map(|t| t.0.to_string());
    if let Some(note) = later_run_note(hook, ev.created.as_deref()) {
        ev.notes.push(note);
    }
    let mut pods = pods;
    pods.sort_by(|a, b| {
        (
            a.metadata.creation_timestamp.as_ref().map(|t| t.0),
            &a.metadata.name,
        )
            .cmp(&(
                b.metadata.creation_timestamp.as_ref().map(|t| t.0),
                &b.metadata.name,
            ))
    });
    let mut uids = vec![uid(&meta)];
    let mut names = vec![(hook.kind.as_str(), hook.name.as_str())];
    for pod in &pods {
        uids.push(uid(&pod.metadata));
        names.push(("Pod", pod.metadata.name.as_deref().unwrap_or("")));
    }
    ev.events = events_about(events, &uids, &names);
    for pod in &pods {
        ev.pods.push(hook_pod(&pods_api, pod, events).await);
    }
    ev
}

/// The hook's Job (its counts and state into `ev`) with the Job's pods, or the hook Pod. `Err`
/// is the note that says why there is nothing to show.
async fn hook_object(
    client: &Client,
    ns: &str,
    hook: &HookRecord,
    pods_api: &Api<Pod>,
    ev: &mut HookEvidence,
) -> Result<(ObjectMeta, Vec<Pod>), String> {
    if hook.kind != "Job" {
        let pod = found(pods_api.get_opt(&hook.name).await, "the Pod", "")?;
        ev.status = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .map(text::plain);
        return Ok((pod.metadata.clone(), vec![pod]));
    }
    let job = Api::<Job>::namespaced(client.clone(), ns)
        .get_opt(&hook.name)
        .await;
    let job = found(job, "the Job", ": its pods and logs went with it")?;
    let st = job.status.clone().unwrap_or_default();
    (ev.active, ev.succeeded, ev.failed) = (
        st.active.unwrap_or(0),
        st.succeeded.unwrap_or(0),
        st.failed.unwrap_or(0),
    );
    ev.status = Some(text::plain(&match readiness::job(&job) {
        JobProgress::Complete => "Complete".to_string(),
        JobProgress::Running { .. } => "Running".to_string(),
        JobProgress::Failed { reason, message } => [reason, message]
            .into_iter()
            .filter(|s| !s.is_empty())
            .fold("Failed".to_string(), |acc, s| format!("{acc}: {s}")),
    }));
    let params = ListParams::default().labels(&format!("job-name={}", hook.name));
    let pods = match pods_api.list(&params).await {
        Ok(l) => l
            .items
            .into_iter()
            .filter(|p| owned_by(&p.metadata, uid(&job.metadata)))
            .collect(),
        Err(e) => {
            ev.notes.push(format!(
                "cannot list the Job's pods: {}",
                text::plain(&e.to_string())
            ));
            Vec::new()
        }
    };
    Ok((job.metadata, pods))
}

/// The object a get found, else the note for the operator: `what` is gone (`gone_too` says
/// what went with it) or cannot be read.
fn found<T>(got: Result<Option<T>, kube::Error>, what: &str, gone_too: &str) -> Result<T, String> {
    match got {
        Ok(Some(object)) => Ok(object),
        Ok(None) => Err(format!(
            "{what} no longer exists (removed by a hook-delete-policy or a later run){gone_too}"
        )),
        Err(e) => Err(format!(
            "cannot read {what}: {}",
            text::plain(&e.to_string())
        )),
    }
}

/// A pod of the Job; with no uid to compare (objects built by hand), the `job-name` label decides.
fn owned_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    owner_uid.is_empty()
        || meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.uid == owner_uid)
}

/// Hook objects keep their name across runs: a Job created after this hook run ended belongs
/// to a later revision's run.
fn later_run_note(hook: &HookRecord, created: Option<&str>) -> Option<String> {
    let ended: jiff::Timestamp = hook.completed_at.as_deref()?.parse().ok()?;
    let created: jiff::Timestamp = created?.parse().ok()?;
    (created.as_second() > ended.as_second() + 1).then(|| {
        format!("this {} was created at {created}, after this revision's run of the hook ended: it belongs to a later run", hook.kind)
    })
}

async fn hook_pod(api: &Api<Pod>, pod: &Pod, events: &[Event]) -> HookPod {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let spec = pod.spec.clone().unwrap_or_default();
    let statuses: BTreeMap<(bool, String), ContainerStatus> = status
        .init_container_statuses
        .iter()
        .flatten()
        .map(|c| ((true, c.name.clone()), c.clone()))
        .chain(
            status
                .container_statuses
                .iter()
                .flatten()
                .map(|c| ((false, c.name.clone()), c.clone())),
        )
        .collect();
    let declared = spec
        .init_containers
        .iter()
        .flatten()
        .map(|c| (true, c.name.clone()))
        .chain(spec.containers.iter().map(|c| (false, c.name.clone())));
    let mut containers = Vec::new();
    for (init, container) in declared {
        containers.push(
            container_evidence(
                api,
                &name,
                init,
                &container,
                statuses.get(&(init, container.clone())),
            )
            .await,
        );
    }
    HookPod {
        name: text::plain(&name),
        phase: text::plain(status.phase.as_deref().unwrap_or("Unknown")),
        node: spec.node_name.as_deref().map(text::plain),
        created: pod
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        causes: diagnosis::pod_causes(&PodSummary::of(pod), &events.iter().collect::<Vec<_>>())
            .iter()
            .map(|c| text::plain(&c.summary()))
            .collect(),
        containers,
    }
}

fn termination(t: &ContainerStateTerminated) -> Termination {
    Termination {
        exit_code: t.exit_code,
        signal: t.signal,
        reason: t.reason.as_deref().map(text::plain),
        message: t
            .message
            .as_deref()
            .map(text::plain)
            .filter(|m| !m.is_empty()),
        finished_at: t.finished_at.as_ref().map(|f| f.0.to_string()),
    }
}

async fn container_evidence(
    api: &Api<Pod>,
    pod: &str,
    init: bool,
    name: &str,
    status: Option<&ContainerStatus>,
) -> ContainerEvidence {
    let state = status.and_then(|s| s.state.as_ref());
    let terminated = state.and_then(|s| s.terminated.as_ref()).map(termination);
    let last_terminated = status
        .and_then(|s| s.last_state.as_ref())
        .and_then(|s| s.terminated.as_ref())
        .map(termination);
    let state_word = match state {
        Some(s) if s.terminated.is_some() => "terminated".to_string(),
        Some(s) if s.running.is_some() => "running".to_string(),
        Some(s) => match s.waiting.as_ref().and_then(|w| w.reason.as_deref()) {
            Some(reason) => format!("waiting: {}", text::plain(reason)),
            None => "waiting".to_string(),
        },
        None => "unknown".to_string(),
    };
    let mut ev = ContainerEvidence {
        name: text::plain(name),
        init,
        restarts: status.map_or(0, |s| s.restart_count),
        state: state_word,
        terminated,
        last_terminated,
        ..ContainerEvidence::default()
    };
    let logs = |previous: bool| LogParams {
        container: Some(name.to_string()),
        tail_lines: Some(LOG_TAIL),
        limit_bytes: Some(LOG_BYTES),
        previous,
        ..LogParams::default()
    };
    match api.logs(pod, &logs(false)).await {
        Ok(text) if !text.trim().is_empty() || ev.last_terminated.is_none() => {
            ev.log = log_lines(&text)
        }
        Ok(_) | Err(_) if ev.last_terminated.is_some() => match api.logs(pod, &logs(true)).await {
            Ok(text) => {
                ev.log = log_lines(&text);
                ev.log_previous = true;
            }
            Err(e) => ev.log_error = Some(text::plain(&e.to_string())),
        },
        Ok(_) => {}
        Err(e) => ev.log_error = Some(text::plain(&e.to_string())),
    }
    ev
}

/// The last [`LOG_TAIL`] lines, each made inert.
fn log_lines(log: &str) -> Vec<String> {
    let lines: Vec<&str> = log.lines().collect();
    let from = lines.len().saturating_sub(LOG_TAIL as usize);
    lines[from..].iter().map(|l| text::plain(l)).collect()
}
