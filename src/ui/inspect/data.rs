//! What the inspect screen lists, derived from the collected [`Inspection`]: the rows of each
//! pane in their order, the keys a selection remembers, and the one-line summary of a hook's
//! evidence. Keys and rendering both use these, so a selection always means the row on screen.

use ratatui::style::{Modifier, Style};

use crate::engine::event::KubeEventView;
use crate::engine::state::{DeployState, PlanSummary};
use crate::helm::hooks::HookPhase;
use crate::helm::status::HookRecord;
use crate::inspect::model::{
    ContainerEvidence, HistoryRow, HookEvidence, HookPod, InitJobView, InspectedHook, Inspection,
    Termination,
};
use crate::ui::model::{self, Mark, Target};
use crate::ui::panes::DeployFrame;
use crate::ui::theme::Theme;

/// The inspection and, for the panes shared with the deploy screen, its workloads, pods and
/// events as a deploy state (so the workloads pane and the drill-down model serve unchanged).
pub struct Inspected {
    pub inspection: Inspection,
    pub mirror: DeployState,
    /// When it was read: ages are relative to this (`None` leaves them blank).
    pub now: Option<jiff::Timestamp>,
}

impl Inspected {
    pub fn new(mut inspection: Inspection, now: Option<jiff::Timestamp>) -> Inspected {
        // The init Job is listed last among the hooks (event `init`, as the deploy screen
        // lists it), so Enter shows its pods, containers, log tails and events the same way.
        // A Job helm ran as a hook (`--init-job` naming it) already has its row.
        let row = inspection.init_job.as_ref().map(init_job_row);
        if let Some(row) =
            row.filter(|r| !inspection.hooks.iter().any(|h| hook_key(h) == hook_key(r)))
        {
            inspection.hooks.push(row);
        }
        let mut mirror = DeployState::new(PlanSummary {
            release: inspection.release.clone(),
            namespace: inspection.namespace.clone(),
            chart: inspection
                .info
                .as_ref()
                .map(|i| i.chart.clone())
                .unwrap_or_default(),
            ..PlanSummary::default()
        });
        for w in &inspection.workloads {
            mirror.workloads.insert(w.key(), w.clone());
        }
        for p in &inspection.pods {
            mirror
                .pods
                .insert((p.namespace.clone(), p.name.clone()), p.clone());
        }
        mirror.events.extend(inspection.events.iter().cloned());
        Inspected {
            inspection,
            mirror,
            now,
        }
    }

    /// The newest stored revision.
    pub fn newest(&self) -> Option<i64> {
        self.inspection.history.iter().map(|r| r.revision).max()
    }
}

/// The init Job as a hook row: its phase from the live Job's status, its evidence (or, for a
/// Job that is gone, the note that says why) as a hook's.
fn init_job_row(j: &InitJobView) -> InspectedHook {
    let status = j
        .live
        .as_ref()
        .and_then(|l| l.status.as_deref())
        .unwrap_or("");
    let phase = if status.starts_with("Failed") {
        HookPhase::Failed
    } else if status.starts_with("Complete") {
        HookPhase::Succeeded
    } else if status.starts_with("Running") {
        HookPhase::Running
    } else {
        HookPhase::Unknown
    };
    let mut live = j.live.clone().unwrap_or_else(|| HookEvidence {
        kind: "Job".into(),
        name: j.name.clone(),
        ..HookEvidence::default()
    });
    live.notes.extend(j.note.iter().cloned());
    if let Some(c) = &j.failed_container {
        live.notes.insert(0, format!("failed container: {c}"));
    }
    InspectedHook {
        record: HookRecord {
            name: j.name.clone(),
            kind: "Job".into(),
            events: vec!["init".into()],
            phase,
            ..HookRecord::default()
        },
        in_this_run: true,
        live: Some(live),
    }
}

/// Everything a frame of the inspect screen is drawn from, borrowed.
pub struct InspectFrame<'a> {
    pub data: &'a Inspected,
    pub theme: Theme,
}

impl<'a> InspectFrame<'a> {
    pub fn inspection(&self) -> &'a Inspection {
        &self.data.inspection
    }

    /// What the deploy screen's panes draw from, for the panes the inspect screen shares.
    pub fn deploy_frame(&self) -> DeployFrame<'a> {
        DeployFrame {
            state: &self.data.mirror,
            theme: self.theme,
            title: None,
            context: None,
            elapsed: 0.0,
            now: self.data.now,
            history: &[],
        }
    }
}

/// Dimmed: hooks that never ran (DIM plus grey; DIM alone without colour).
pub fn dimmed(t: &Theme) -> Style {
    t.muted().add_modifier(Modifier::DIM)
}

pub fn matches(filter: &str, fields: &[&str]) -> bool {
    if filter.is_empty() {
        return true;
    }
    let f = filter.to_lowercase();
    fields.iter().any(|s| s.to_lowercase().contains(&f))
}

/// A release status as glyph, word and style.
pub fn status_mark(status: &str, t: &Theme) -> (&'static str, Style) {
    match status {
        "deployed" => ("✓", t.ok()),
        "failed" => ("✗", t.bad()),
        s if s.starts_with("pending-") || s == "uninstalling" => ("◐", t.warn()),
        "superseded" => ("·", t.muted()),
        "uninstalled" => ("–", t.muted()),
        _ => ("·", Style::new()),
    }
}

pub fn history_key(r: &HistoryRow) -> String {
    r.revision.to_string()
}

/// The stored revisions, oldest first, narrowed by the filter.
pub fn history_rows<'a>(i: &'a Inspection, filter: &str) -> Vec<&'a HistoryRow> {
    i.history
        .iter()
        .filter(|r| {
            let rev = r.revision.to_string();
            matches(
                filter,
                &[
                    &rev,
                    &r.status,
                    &r.chart,
                    &r.app_version,
                    &r.description,
                    r.error.as_deref().unwrap_or(""),
                ],
            )
        })
        .collect()
}

pub fn history_keys(i: &Inspection, filter: &str) -> Vec<String> {
    history_rows(i, filter)
        .into_iter()
        .map(history_key)
        .collect()
}

pub fn hook_key(h: &InspectedHook) -> String {
    format!("{}/{}", h.record.kind, h.record.name)
}

pub fn hook_mark(phase: HookPhase) -> Mark {
    match phase {
        HookPhase::Succeeded => Mark::Done,
        HookPhase::Failed => Mark::Failed,
        HookPhase::Running | HookPhase::Unknown => Mark::Running,
        // Records hold no judged phases; placed as the deploy screen shows them.
        HookPhase::NeverRan | HookPhase::NotInThisRun => Mark::Pending,
        HookPhase::Skipped => Mark::Skipped,
    }
}

/// The hooks in helm's execution order (as collected), narrowed by the filter.
pub fn hook_rows<'a>(i: &'a Inspection, filter: &str) -> Vec<&'a InspectedHook> {
    i.hooks
        .iter()
        .filter(|h| {
            let r = &h.record;
            let events = r.events.join(",");
            let run = if h.in_this_run {
                ""
            } else {
                HookPhase::NotInThisRun.word()
            };
            matches(filter, &[&r.name, &r.kind, &events, r.phase.word(), run])
        })
        .collect()
}

pub fn hook_keys(i: &Inspection, filter: &str) -> Vec<String> {
    hook_rows(i, filter).into_iter().map(hook_key).collect()
}

pub fn find_hook<'a>(i: &'a Inspection, key: &str) -> Option<&'a InspectedHook> {
    i.hooks.iter().find(|h| hook_key(h) == key)
}

/// The run a container's exit code comes from: this one, else the one before a restart.
pub fn exit_of(c: &ContainerEvidence) -> Option<&Termination> {
    c.terminated.as_ref().or(c.last_terminated.as_ref())
}

/// `exit 1 (Error)`, `exit 137 (OOMKilled, signal 9)`.
pub fn exit_words(t: &Termination) -> String {
    let mut s = format!("exit {}", t.exit_code);
    match (&t.reason, t.signal) {
        (Some(r), Some(sig)) => s.push_str(&format!(" ({r}, signal {sig})")),
        (Some(r), None) => s.push_str(&format!(" ({r})")),
        (None, Some(sig)) => s.push_str(&format!(" (signal {sig})")),
        (None, None) => {}
    }
    s
}

/// The container that tells why a pod failed: the first with a non-zero exit, else the first.
fn telling_container(p: &HookPod) -> Option<&ContainerEvidence> {
    p.containers
        .iter()
        .find(|c| exit_of(c).is_some_and(|t| t.exit_code != 0))
        .or(p.containers.first())
}

/// The newest pod by creation, then by position.
fn newest<'a>(pods: impl Iterator<Item = (usize, &'a HookPod)>) -> Option<&'a HookPod> {
    pods.max_by(|(ia, a), (ib, b)| (&a.created, ia).cmp(&(&b.created, ib)))
        .map(|(_, p)| p)
}

/// The pod and container that tell how a hook's last attempt ended: the newest pod with a
/// non-zero exit (else the newest pod), and in it the first container with a non-zero exit
/// (else its first container).
pub fn telling(h: &InspectedHook) -> Option<(&HookPod, Option<&ContainerEvidence>)> {
    let e = h.live.as_ref()?;
    let failed = |p: &HookPod| {
        p.containers
            .iter()
            .any(|c| exit_of(c).is_some_and(|t| t.exit_code != 0))
    };
    let pod = newest(e.pods.iter().enumerate().filter(|(_, p)| failed(p)))
        .or_else(|| newest(e.pods.iter().enumerate()))?;
    Some((pod, telling_container(pod)))
}

/// The line that says why a container ended: its termination message, else its last log line.
pub fn why_line(c: &ContainerEvidence) -> Option<&str> {
    exit_of(c)
        .and_then(|t| t.message.as_deref())
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .or_else(|| c.log.iter().rev().map(|l| l.trim()).find(|l| !l.is_empty()))
}

/// One line about a hook's live evidence for its row: the exit code and the line that says
/// why (the termination message, else the last log line), or what became of the Job.
pub fn evidence_summary(h: &InspectedHook) -> Option<String> {
    let e = h.live.as_ref()?;
    if !e.found {
        return Some(
            e.notes
                .first()
                .cloned()
                .unwrap_or_else(|| format!("the {} no longer exists", e.kind)),
        );
    }
    let mut parts: Vec<String> = Vec::new();
    match telling(h) {
        Some((_, Some(c))) => {
            parts.push(exit_of(c).map_or_else(|| c.state.clone(), exit_words));
            parts.extend(why_line(c).map(String::from));
        }
        Some((pod, None)) if !pod.causes.is_empty() => parts.push(pod.causes[0].clone()),
        _ => parts.extend(e.status.clone().or_else(|| e.notes.first().cloned())),
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The pods of a hook's evidence, as collected.
pub fn hook_pods(h: &InspectedHook) -> &[HookPod] {
    h.live.as_ref().map(|e| e.pods.as_slice()).unwrap_or(&[])
}

pub fn hook_pod_keys(h: &InspectedHook) -> Vec<String> {
    hook_pods(h).iter().map(|p| p.name.clone()).collect()
}

/// The lines of a log narrowed by the filter.
pub fn filtered<'a>(lines: &'a [String], filter: &str) -> Vec<&'a str> {
    let f = filter.to_lowercase();
    lines
        .iter()
        .map(String::as_str)
        .filter(|l| f.is_empty() || l.to_lowercase().contains(&f))
        .collect()
}

/// The hook drill-down's selected pod (`pod`, by name), its shown container (`container`, an
/// index that wraps) and that container's log lines narrowed by the filter. Takes the drill's
/// values rather than the drill, so the keys and the evidence pane share it from below both.
pub fn shown_log<'a>(
    h: &'a InspectedHook,
    pod: Option<&str>,
    container: usize,
    filter: &str,
) -> Option<(&'a HookPod, &'a ContainerEvidence, Vec<&'a str>)> {
    let pods = hook_pods(h);
    let key = pod?;
    let pod = pods.iter().find(|p| p.name == key)?;
    if pod.containers.is_empty() {
        return None;
    }
    let c = &pod.containers[container % pod.containers.len()];
    Some((pod, c, filtered(&c.log, filter)))
}

/// The events about a workload drill-down's target (its ReplicaSets and pods too), narrowed by
/// the filter: what the drill lists and what its scrolling keys count.
pub fn workload_events<'a>(
    data: &'a Inspected,
    target: &Target,
    filter: &str,
) -> Vec<&'a KubeEventView> {
    let pods = model::pods_of(&data.mirror, target);
    model::events_of(&data.mirror, target, &pods)
        .into_iter()
        .filter(|e| matches(filter, &[&e.object, &e.kind, &e.reason, &e.message]))
        .collect()
}

/// The manifest's lines narrowed by the filter.
pub fn manifest_lines<'a>(i: &'a Inspection, filter: &str) -> Vec<&'a str> {
    let f = filter.to_lowercase();
    i.manifest
        .as_deref()
        .unwrap_or("")
        .lines()
        .filter(|l| f.is_empty() || l.to_lowercase().contains(&f))
        .collect()
}

/// `2026-12-01 10:00:00` (UTC), or the text as it came when it does not parse.
pub fn when(at: &str, wide: bool) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(t) if wide => t.strftime("%Y-%m-%d %H:%M:%S").to_string(),
        Ok(t) => t.strftime("%m-%d %H:%M").to_string(),
        Err(_) => at.to_string(),
    }
}

/// `8m ago`, relative to when the release was read.
pub fn ago(at: &str, now: Option<jiff::Timestamp>) -> Option<String> {
    let secs = crate::ui::fit::since(at, now?)?;
    Some(format!(
        "{} ago",
        crate::time::age(secs as i64, crate::time::AgeStyle::Short)
    ))
}
