//! Why a pod is not ready, read from its status (as the kubelet and scheduler write it) and its
//! Events, and whether a pod runs its workload's newest template.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateTerminated};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::rollout::objects::{
    ConditionSummary as PodCondition, ContainerStatusSummary as ContainerStatus,
    EventSummary as Event, PodStatusSummary as PodStatus, PodSummary as Pod,
    ReplicaSetSummary as ReplicaSet,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "cause")]
pub enum PodCause {
    /// PodScheduled=False, reason Unschedulable.
    Unschedulable { message: String },
    /// Waiting in ImagePullBackOff, ErrImagePull, InvalidImageName or ErrImageNeverPull.
    ImagePullBackOff {
        container: String,
        image: String,
        message: String,
    },
    CrashLoopBackOff {
        container: String,
        restarts: i32,
        last_exit_code: Option<i32>,
        last_reason: Option<String>,
    },
    /// The container's current or last run ended OOMKilled.
    OomKilled { container: String, restarts: i32 },
    /// Running but not ready; the message is the kubelet's last `Unhealthy` readiness event.
    ReadinessProbeFailing { container: String, message: String },
    /// Running, not ready, and its readiness probe is not due yet: `initialDelaySeconds` plus
    /// one `periodSeconds` have not passed since the container started.
    Starting { container: String },
    /// Any other waiting reason (ContainerCreating, CreateContainerConfigError, ...).
    ContainerWaiting {
        container: String,
        reason: String,
        message: String,
    },
    /// An initContainer's cause: the pod's app containers wait for it (`Init:...` in kubectl).
    Init {
        container: String,
        waiting: Box<PodCause>,
    },
    /// The pod's phase is Failed; `container` is empty when no container ended (e.g. Evicted).
    Failed {
        container: String,
        exit_code: i32,
        reason: String,
        /// The container's termination message (`terminationMessagePath`), often the one line
        /// that says why; empty when it wrote none.
        message: String,
    },
}

const PROBE_FALLBACK: &str = "readiness probe not passing";

impl PodCause {
    /// One short human line, e.g. `CrashLoopBackOff (exit 1, 4 restarts)`.
    pub fn summary(&self) -> String {
        match self {
            PodCause::Unschedulable { message } => labelled("Unschedulable", message),
            PodCause::ImagePullBackOff { image, .. } => labelled("ImagePullBackOff", image),
            PodCause::CrashLoopBackOff {
                restarts,
                last_exit_code,
                last_reason,
                ..
            } => {
                let last = match (last_exit_code, last_reason) {
                    (Some(code), _) => format!("exit {code}, "),
                    (None, Some(reason)) => format!("{reason}, "),
                    (None, None) => String::new(),
                };
                format!("CrashLoopBackOff ({last}{})", restarts_text(*restarts))
            }
            PodCause::OomKilled { restarts, .. } => {
                format!("OOMKilled ({})", restarts_text(*restarts))
            }
            PodCause::ReadinessProbeFailing { message, .. } => capitalised(first_line(message)),
            PodCause::Starting { .. } => "Starting (readiness probe not due yet)".into(),
            PodCause::ContainerWaiting {
                reason, message, ..
            } => labelled(reason, message),
            PodCause::Init { container, waiting } => {
                format!("init container {container}: {}", waiting.summary())
            }
            PodCause::Failed {
                container, reason, ..
            } if container.is_empty() => labelled("Failed", reason),
            PodCause::Failed {
                exit_code,
                reason,
                message,
                ..
            } => match first_line(message) {
                "" => format!("Failed: {reason} (exit {exit_code})"),
                line => format!("Failed: {reason} (exit {exit_code}): {line}"),
            },
        }
    }
}

/// `label: first line of detail`, or just `label` when there is no detail.
fn labelled(label: &str, detail: &str) -> String {
    match first_line(detail) {
        "" => label.to_string(),
        line => format!("{label}: {line}"),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim()
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

fn restarts_text(restarts: i32) -> String {
    if restarts == 1 {
        "1 restart".into()
    } else {
        format!("{restarts} restarts")
    }
}

pub fn is_pod_ready(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    status
        .and_then(|s| condition(s, "Ready"))
        .is_some_and(|c| c.status == "True")
}

/// The statuses of the pod's containers in the order they run: initContainers, then the app
/// containers.
pub fn container_statuses_in_run_order(pod: &Pod) -> impl Iterator<Item = &ContainerStatus> {
    let status = pod.status.as_ref();
    let init = status.and_then(|s| s.init_container_statuses.as_deref());
    let app = status.and_then(|s| s.container_statuses.as_deref());
    init.into_iter().flatten().chain(app.into_iter().flatten())
}

/// Restarts of every container of the pod, init containers included (as kubectl's RESTARTS).
pub fn pod_restarts(pod: &Pod) -> u64 {
    container_statuses_in_run_order(pod)
        .map(|c| u64::try_from(c.restart_count).unwrap_or(0))
        .sum()
}

/// The pod's container names in the order they run: initContainers, then the app containers.
pub fn containers_in_run_order(pod: &Pod) -> Vec<String> {
    let Some(spec) = pod.spec.as_ref() else {
        return Vec::new();
    };
    spec.init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| c.name.clone())
        .collect()
}

fn condition<'a>(status: &'a PodStatus, kind: &str) -> Option<&'a PodCondition> {
    status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == kind)
}

/// Every reason the pod is not ready, scheduling first, then init containers, then containers.
/// A ready or succeeded pod has none. `events` may be about anything; only the pod's count.
pub fn pod_causes(pod: &Pod, events: &[&Event]) -> Vec<PodCause> {
    pod_causes_at(pod, events, Timestamp::now())
}

/// `pod_causes` as of `now`, which decides whether a readiness probe is due yet.
pub fn pod_causes_at(pod: &Pod, events: &[&Event], now: Timestamp) -> Vec<PodCause> {
    let Some(status) = pod.status.as_ref() else {
        return Vec::new();
    };
    if is_pod_ready(pod) {
        return Vec::new();
    }
    let events: Vec<&Event> = events
        .iter()
        .copied()
        .filter(|e| is_about(e, &pod.metadata))
        .collect();
    match status.phase.as_deref() {
        Some("Succeeded") => return Vec::new(),
        // A failed pod never recovers: what ended it is the whole story.
        Some("Failed") => return failed(status),
        _ => {}
    }
    let init = status
        .init_container_statuses
        .iter()
        .flatten()
        .map(|c| (c, Kind::Init));
    let main = status
        .container_statuses
        .iter()
        .flatten()
        .map(|c| (c, Kind::Main));
    let containers: Vec<PodCause> = init
        .chain(main)
        .filter_map(|(c, kind)| container_cause(pod, c, kind, &events, now))
        .collect();
    // App containers waiting in PodInitializing only wait for the initContainer named already.
    let init_blocks = containers
        .iter()
        .any(|c| matches!(c, PodCause::Init { .. }));
    let waits_for_init = |c: &PodCause| {
        init_blocks
            && matches!(c, PodCause::ContainerWaiting { reason, .. } if reason == "PodInitializing")
    };
    let mut causes: Vec<PodCause> = unschedulable(status, &events)
        .into_iter()
        .chain(containers.into_iter().filter(|c| !waits_for_init(c)))
        .collect();
    // One volume that cannot mount holds every container: say it once.
    let mut seen_volume_events = Vec::new();
    causes.retain(|cause| match cause {
        PodCause::ContainerWaiting {
            reason, message, ..
        } if reason == "FailedMount" || reason == "FailedAttachVolume" => {
            let first = !seen_volume_events.contains(message);
            seen_volume_events.push(message.clone());
            first
        }
        _ => true,
    });
    causes
}

/// The event is about this pod: same uid, or same name and namespace when a uid is missing.
fn is_about(event: &Event, pod: &ObjectMeta) -> bool {
    let target = &event.involved_object;
    if target.kind.as_deref().is_some_and(|k| k != "Pod") {
        return false;
    }
    let uid = |u: &Option<String>| u.clone().filter(|u| !u.is_empty());
    if let (Some(a), Some(b)) = (uid(&target.uid), uid(&pod.uid)) {
        return a == b;
    }
    let namespace = target
        .namespace
        .as_ref()
        .or(event.metadata.namespace.as_ref());
    target.name.is_some() && target.name == pod.name && namespace == pod.namespace.as_ref()
}

/// One cause for the whole pod: the first container that exited non-zero, and the pod's own
/// reason (Evicted, Shutdown, DeadlineExceeded) when it has one, since that explains the rest.
/// A failed initContainer is named as one (`init container fetch-bundle: Failed: Error (exit
/// 1)`): the app containers never ran, so it is the whole story.
fn failed(status: &PodStatus) -> Vec<PodCause> {
    let init = status.init_container_statuses.iter().flatten();
    let all = init.map(|c| (c, Kind::Init)).chain(
        status
            .container_statuses
            .iter()
            .flatten()
            .map(|c| (c, Kind::Main)),
    );
    let mut ended =
        all.filter_map(|(c, kind)| Some((c, kind, c.state.as_ref()?.terminated.as_ref()?)));
    let first = ended.find(|(_, _, t)| t.exit_code != 0);
    let pod_reason = status.reason.clone().filter(|r| !r.is_empty());
    let container_reason = first.and_then(|(_, _, t)| t.reason.clone());
    let cause = PodCause::Failed {
        container: first.map(|(c, _, _)| c.name.clone()).unwrap_or_default(),
        exit_code: first.map_or(0, |(_, _, t)| t.exit_code),
        reason: pod_reason
            .clone()
            .or(container_reason)
            .unwrap_or_else(|| "Failed".into()),
        message: first
            .and_then(|(_, _, t)| t.message.clone())
            .unwrap_or_default(),
    };
    match first {
        // The pod's own reason (Evicted, DeadlineExceeded) explains more than the container.
        Some((c, Kind::Init, _)) if pod_reason.is_none() => vec![PodCause::Init {
            container: c.name.clone(),
            waiting: Box::new(cause),
        }],
        _ => vec![cause],
    }
}

fn unschedulable(status: &PodStatus, events: &[&Event]) -> Option<PodCause> {
    let scheduled = condition(status, "PodScheduled")?;
    if scheduled.status != "False" || scheduled.reason.as_deref() != Some("Unschedulable") {
        return None;
    }
    let from_event = || latest(events, |e| reason_is(e, "FailedScheduling"));
    let message = non_empty(scheduled.message.as_deref())
        .or_else(|| from_event().and_then(|e| e.message.as_deref()))
        .unwrap_or_default();
    Some(PodCause::Unschedulable {
        message: message.to_string(),
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Init,
    Main,
}

impl Kind {
    /// How the kubelet names the container in an event's `involvedObject.fieldPath`.
    fn field_path(self, container: &str) -> String {
        match self {
            Kind::Init => format!("spec.initContainers{{{container}}}"),
            Kind::Main => format!("spec.containers{{{container}}}"),
        }
    }
}

/// A container's cause; an initContainer's is marked as one (its volumes' are the pod's).
fn container_cause(
    pod: &Pod,
    c: &ContainerStatus,
    kind: Kind,
    events: &[&Event],
    now: Timestamp,
) -> Option<PodCause> {
    let cause = own_cause(pod, c, kind, events, now)?;
    let pod_level = matches!(&cause, PodCause::ContainerWaiting { reason, .. }
        if reason == "FailedMount" || reason == "FailedAttachVolume");
    if kind == Kind::Main || pod_level {
        return Some(cause);
    }
    Some(PodCause::Init {
        container: c.name.clone(),
        waiting: Box::new(cause),
    })
}

fn own_cause(
    pod: &Pod,
    c: &ContainerStatus,
    kind: Kind,
    events: &[&Event],
    now: Timestamp,
) -> Option<PodCause> {
    if c.ready {
        return None;
    }
    let container = c.name.clone();
    let state = c.state.as_ref();
    let waiting = state.and_then(|s| s.waiting.as_ref());
    let reason = waiting
        .and_then(|w| w.reason.as_deref())
        .unwrap_or_default();
    let waiting_message = waiting.and_then(|w| w.message.clone()).unwrap_or_default();
    let events: Vec<&Event> = events
        .iter()
        .copied()
        .filter(|e| for_container(e, kind, &c.name))
        .collect();
    if oom_killed(c) && matches!(reason, "" | "CrashLoopBackOff") {
        return Some(PodCause::OomKilled {
            container,
            restarts: c.restart_count,
        });
    }
    let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    // Between two back-offs the container runs again for a moment; a restarted container whose
    // last run ended is still crash-looping, or a timeout then would blame the readiness probe.
    let restarted = c.restart_count > 0 && last.is_some();
    match reason {
        "CrashLoopBackOff" => Some(crash_loop(c, last)),
        "" if restarted => Some(crash_loop(c, last)),
        "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName" | "ErrImageNeverPull" => {
            Some(image_pull(pod, c, waiting_message, &events))
        }
        "" => readiness_probe(pod, c, kind, &events, now),
        "ContainerCreating" | "PodInitializing"
            if kind == Kind::Init || reason == "ContainerCreating" =>
        {
            Some(
                volume_setup(&container, &events).unwrap_or(PodCause::ContainerWaiting {
                    container,
                    reason: reason.to_string(),
                    message: waiting_message,
                }),
            )
        }
        _ => Some(PodCause::ContainerWaiting {
            container,
            reason: reason.to_string(),
            message: waiting_message,
        }),
    }
}

/// A container still being created, with volumes that failed to mount or attach: the kubelet's
/// (or attach-detach controller's) latest event says why, the waiting reason alone does not.
fn volume_setup(container: &str, events: &[&Event]) -> Option<PodCause> {
    let event = latest(events, |e| {
        reason_is(e, "FailedMount") || reason_is(e, "FailedAttachVolume")
    })?;
    Some(PodCause::ContainerWaiting {
        container: container.to_string(),
        reason: event.reason.clone().unwrap_or_default(),
        message: event.message.clone().unwrap_or_default(),
    })
}

fn crash_loop(c: &ContainerStatus, last: Option<&ContainerStateTerminated>) -> PodCause {
    PodCause::CrashLoopBackOff {
        container: c.name.clone(),
        restarts: c.restart_count,
        last_exit_code: last.map(|t| t.exit_code),
        last_reason: last.and_then(|t| t.reason.clone()),
    }
}

/// The back-off text only names the image; the kubelet's latest pull event says what failed.
fn image_pull(pod: &Pod, c: &ContainerStatus, waiting: String, events: &[&Event]) -> PodCause {
    let pull = latest(events, |e| {
        let message = e.message.as_deref().unwrap_or_default();
        reason_is(e, "Failed") && message.starts_with("Failed to pull image")
    });
    PodCause::ImagePullBackOff {
        container: c.name.clone(),
        image: image(pod, c),
        message: pull.and_then(|e| e.message.clone()).unwrap_or(waiting),
    }
}

/// OOMKilled now or on the last run. It is reported only while the container crash-loops or
/// runs; an image or config problem on the restart is the more urgent, present blocker.
fn oom_killed(c: &ContainerStatus) -> bool {
    let ended_oom = |s: Option<&ContainerState>| {
        let terminated = s.and_then(|s| s.terminated.as_ref());
        terminated.and_then(|t| t.reason.as_deref()) == Some("OOMKilled")
    };
    ended_oom(c.state.as_ref()) || ended_oom(c.last_state.as_ref())
}

/// A running, unready container. Plain init containers run unready by design until they exit.
fn readiness_probe(
    pod: &Pod,
    c: &ContainerStatus,
    kind: Kind,
    events: &[&Event],
    now: Timestamp,
) -> Option<PodCause> {
    let running = c.state.as_ref().and_then(|s| s.running.as_ref());
    if running.is_none() || kind == Kind::Init {
        return None;
    }
    let started = running.and_then(|r| r.started_at.as_ref()).map(|t| t.0);
    if let (Some(started), Some(due)) = (started, probe_due_after(pod, &c.name)) {
        // A start in the future (clock skew) counts as just started.
        if now.duration_since(started).as_secs() < due {
            return Some(PodCause::Starting {
                container: c.name.clone(),
            });
        }
    }
    let probe = latest(events, |e| {
        let message = e.message.as_deref().unwrap_or_default();
        reason_is(e, "Unhealthy") && message.starts_with("Readiness probe failed")
    });
    let message = probe
        .and_then(|e| e.message.clone())
        .unwrap_or_else(|| PROBE_FALLBACK.into());
    Some(PodCause::ReadinessProbeFailing {
        container: c.name.clone(),
        message,
    })
}

/// Seconds from the container's start until its readiness probe has had one chance to fail:
/// `initialDelaySeconds` plus one `periodSeconds` (10 by default). `None` without a probe.
fn probe_due_after(pod: &Pod, container: &str) -> Option<i64> {
    let spec = pod.spec.as_ref()?;
    let c = spec.containers.iter().find(|s| s.name == container)?;
    let probe = c.readiness_probe.as_ref()?;
    let delay = probe.initial_delay_seconds.unwrap_or(0).max(0);
    let period = probe.period_seconds.filter(|p| *p > 0).unwrap_or(10);
    Some(i64::from(delay) + i64::from(period))
}

/// The status image is what the kubelet tried; the spec is the fallback before it wrote one.
fn image(pod: &Pod, c: &ContainerStatus) -> String {
    if !c.image.is_empty() {
        return c.image.clone();
    }
    let spec = pod.spec.as_ref();
    let all = spec.into_iter().flat_map(|s| {
        s.containers
            .iter()
            .chain(s.init_containers.iter().flatten())
    });
    let found = all
        .filter(|s| s.name == c.name)
        .find_map(|s| s.image.clone());
    found.unwrap_or_default()
}

/// Events without a field path are about the whole pod, so they count for every container.
fn for_container(e: &Event, kind: Kind, container: &str) -> bool {
    let path = e.involved_object.field_path.as_deref();
    path.is_none_or(|p| p == kind.field_path(container))
}

fn reason_is(e: &Event, reason: &str) -> bool {
    e.reason.as_deref() == Some(reason)
}

fn non_empty(text: Option<&str>) -> Option<&str> {
    text.filter(|t| !t.trim().is_empty())
}

/// The most recent matching event; on equal (or missing) times the later one in the list wins.
fn latest<'a>(events: &[&'a Event], matches: impl Fn(&Event) -> bool) -> Option<&'a Event> {
    events
        .iter()
        .copied()
        .filter(|e| matches(e))
        .max_by_key(|e| event_time(e))
}

fn event_time(e: &Event) -> Option<Timestamp> {
    e.time()
}

/// Does the pod run the owner's newest template? `owner_revision` is the bare hash (a new
/// ReplicaSet's `pod-template-hash`) or a revision name that ends in it (a StatefulSet's
/// `updateRevision`, a DaemonSet's ControllerRevision name, a ReplicaSet's name): DaemonSet
/// pods carry only the hash in `controller-revision-hash`, StatefulSet pods the full name.
pub fn pod_is_current(pod: &Pod, owner_revision: &str) -> bool {
    let Some(labels) = pod.metadata.labels.as_ref() else {
        return false;
    };
    let matches = |hash: &str| {
        !hash.is_empty()
            && (owner_revision == hash
                || owner_revision
                    .strip_suffix(hash)
                    .is_some_and(|prefix| prefix.ends_with('-')))
    };
    ["pod-template-hash", "controller-revision-hash"]
        .iter()
        .filter_map(|key| labels.get(*key))
        .any(|hash| matches(hash))
}

const REVISION: &str = "deployment.kubernetes.io/revision";

/// The Deployment's new ReplicaSet among `rs`: owned by it, with the same revision annotation;
/// else the owned one with the highest revision (the Deployment's annotation can lag).
pub fn new_replicaset<'a>(d: &Deployment, rs: &'a [ReplicaSet]) -> Option<&'a ReplicaSet> {
    let owned: Vec<&ReplicaSet> = rs
        .iter()
        .filter(|r| owned_by(&r.metadata, &d.metadata))
        .collect();
    let want = annotation(&d.metadata, REVISION);
    let same = owned
        .iter()
        .copied()
        .find(|r| want.is_some() && annotation(&r.metadata, REVISION) == want);
    same.or_else(|| {
        owned
            .into_iter()
            .max_by_key(|r| revision_number(&r.metadata))
    })
}

/// The hash that the ReplicaSet's pods carry in `pod-template-hash`, for `pod_is_current`.
pub fn template_hash(rs: &ReplicaSet) -> Option<&str> {
    let from_meta = rs
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("pod-template-hash"));
    let template = rs.spec.as_ref().and_then(|s| s.template.as_ref());
    let from_template = || {
        template?
            .metadata
            .as_ref()?
            .labels
            .as_ref()?
            .get("pod-template-hash")
    };
    from_meta.or_else(from_template).map(String::as_str)
}

/// By uid; by kind and name when the Deployment has no uid (objects built by hand).
fn owned_by(child: &ObjectMeta, owner: &ObjectMeta) -> bool {
    let refs = child.owner_references.as_deref().unwrap_or_default();
    match owner.uid.as_deref().filter(|u| !u.is_empty()) {
        Some(uid) => refs.iter().any(|r| r.uid == uid),
        None => refs
            .iter()
            .any(|r| r.kind == "Deployment" && Some(&r.name) == owner.name.as_ref()),
    }
}

fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

fn revision_number(meta: &ObjectMeta) -> Option<i64> {
    annotation(meta, REVISION)?.trim().parse().ok()
}

#[cfg(test)]
mod tests;
