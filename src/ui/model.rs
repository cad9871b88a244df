//! What the panes list, derived from the borrowed state: the row order, filters, the pods and
//! events of a drill-down target. Keys and rendering both use these, so a selection always
//! means the row on screen. The helm pane's lines are here too: its scrolling keys count them.

use crate::engine::event::{
    HookView, KubeEventView, Level, PodView, Standing, Step, StepOutcome, WorkloadKey, WorkloadView,
};
use crate::engine::state::DeployState;
use crate::helm::hooks::HookPhase;
use crate::helm::process::exit_words;
use crate::ui::{ansi, fit};

/// Where a thing stands: glyph + word + colour, never colour alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Done,
    Running,
    Failed,
    Pending,
    Skipped,
    Cancelled,
    Optional,
}

/// The progressing spinner's frames.
pub const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];

impl Mark {
    /// The marks a workload can have are the plain-text output's glyphs ([`Standing::glyph`]),
    /// so the screen and headless lines never disagree; the screen adds a spinner.
    pub fn glyph(self, tick: u64) -> &'static str {
        match self {
            Mark::Done => Standing::Ready.glyph(),
            Mark::Running => SPINNER[(tick % SPINNER.len() as u64) as usize],
            Mark::Failed | Mark::Cancelled => Standing::Failed.glyph(),
            Mark::Pending => "·",
            Mark::Skipped => "–",
            Mark::Optional => Standing::Optional.glyph(),
        }
    }
}

pub fn step_mark(state: &DeployState, step: Step) -> Mark {
    match state.steps.get(&step) {
        None => Mark::Pending,
        Some(s) => match &s.outcome {
            None if state.verdict.is_some() => Mark::Failed,
            None => Mark::Running,
            Some(StepOutcome::Succeeded) => Mark::Done,
            Some(StepOutcome::Failed { .. }) => Mark::Failed,
            Some(StepOutcome::Skipped { .. }) => Mark::Skipped,
            Some(StepOutcome::Cancelled) => Mark::Cancelled,
        },
    }
}

pub fn workload_mark(w: &WorkloadView) -> Mark {
    match w.standing() {
        Standing::Ready => Mark::Done,
        Standing::Optional => Mark::Optional,
        Standing::Failed => Mark::Failed,
        Standing::Rolling => Mark::Running,
    }
}

fn matches(filter: &str, fields: &[&str]) -> bool {
    if filter.is_empty() {
        return true;
    }
    let f = filter.to_lowercase();
    fields.iter().any(|s| s.to_lowercase().contains(&f))
}

/// A selection's key: `Kind/name`, or `Kind/namespace/name` outside the release namespace
/// (names repeat across namespaces).
pub fn workload_key(state: &DeployState, w: &WorkloadView) -> String {
    w.reference(&state.plan.namespace)
}

/// Gating workloads first, then optional ones, each by name: the order never changes while a
/// deploy runs, whatever their state. The filter also matches the namespace when more than
/// one is shown.
pub fn workload_rows<'a>(state: &'a DeployState, filter: &str) -> Vec<&'a WorkloadView> {
    let namespaces = state.many_namespaces();
    let mut rows: Vec<&WorkloadView> = state
        .workloads
        .values()
        .filter(|w| {
            // Without a filter every row stays; skip gathering its fields (every frame).
            if filter.is_empty() {
                return true;
            }
            let optional = if w.optional { "optional" } else { "" };
            let mut fields = vec![
                w.kind.as_str(),
                w.name.as_str(),
                w.message.as_str(),
                optional,
            ];
            if namespaces {
                fields.push(w.namespace.as_str());
            }
            fields.extend(w.pod_causes.iter().map(String::as_str));
            matches(filter, &fields)
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.optional, &a.name, &a.kind, &a.namespace).cmp(&(
            b.optional,
            &b.name,
            &b.kind,
            &b.namespace,
        ))
    });
    rows
}

/// The keys of [`workload_rows`], in their order.
pub fn workload_keys(state: &DeployState, filter: &str) -> Vec<String> {
    workload_rows(state, filter)
        .into_iter()
        .map(|w| workload_key(state, w))
        .collect()
}

/// A row of the hooks pane: a hook of the release, or the init Job helmdeck runs itself.
#[derive(Debug, Clone)]
pub struct HookRow<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub events: String,
    pub weight: Option<i64>,
    pub mark: Mark,
    /// The phase in words (`Succeeded`, `skipped`, `init step`).
    pub phase: String,
    pub started_at: Option<&'a str>,
    pub completed_at: Option<&'a str>,
    pub init: bool,
    pub not_in_run: bool,
}

impl HookRow<'_> {
    pub fn key(&self) -> String {
        if self.init {
            format!("init:{}", self.name)
        } else {
            self.name.to_string()
        }
    }
}

fn hook_mark(phase: HookPhase) -> Mark {
    match phase {
        HookPhase::Succeeded => Mark::Done,
        HookPhase::Failed => Mark::Failed,
        HookPhase::Skipped => Mark::Skipped,
        HookPhase::Running => Mark::Running,
        HookPhase::Unknown | HookPhase::NeverRan | HookPhase::NotInThisRun => Mark::Pending,
    }
}

/// `pre-install,pre-upgrade` → `pre-install/upgrade`: events grouped by their stage.
pub fn compact_events(events: &[String]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for e in events {
        let (stage, what) = match e.split_once('-') {
            Some((s, w)) if s == "pre" || s == "post" => (s, w),
            _ => ("", e.as_str()),
        };
        match groups
            .iter_mut()
            .find(|(s, _)| *s == stage && !stage.is_empty())
        {
            Some((_, ws)) => ws.push(what),
            None => groups.push((stage, vec![what])),
        }
    }
    groups
        .into_iter()
        .map(|(s, ws)| {
            if s.is_empty() {
                ws.join(",")
            } else {
                format!("{s}-{}", ws.join("/"))
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn hook_row(h: &HookView) -> HookRow<'_> {
    HookRow {
        name: &h.name,
        kind: &h.kind,
        events: compact_events(&h.events),
        weight: Some(h.weight),
        mark: hook_mark(h.phase),
        phase: h.phase.to_string(),
        started_at: h.started_at.as_deref(),
        completed_at: h.completed_at.as_deref(),
        init: false,
        not_in_run: h.phase == HookPhase::NotInThisRun,
    }
}

/// Pre-hooks before post-hooks, then by weight and name (helm's order); the init Job last.
pub fn hook_rows<'a>(state: &'a DeployState, filter: &str) -> Vec<HookRow<'a>> {
    let mut hooks: Vec<&HookView> = state.hooks.iter().collect();
    // The order they run in: pre-hooks, post-hooks, the init step, then `--test`'s test pods.
    let is_test = |h: &HookView| h.events.iter().any(|e| e == "test");
    let stage = |h: &HookView| {
        if h.events.iter().any(|e| e.starts_with("pre-")) {
            0
        } else if is_test(h) {
            2
        } else {
            1
        }
    };
    hooks.sort_by(|a, b| (stage(a), a.weight, &a.name).cmp(&(stage(b), b.weight, &b.name)));
    let tests = hooks.iter().filter(|h| stage(h) == 2).count();
    let mut rows: Vec<HookRow> = hooks.into_iter().map(hook_row).collect();
    let tests = rows.split_off(rows.len() - tests);
    if let Some(job) = state.plan.init_job.as_deref() {
        let step = state.steps.get(&Step::Init);
        let mark = step_mark(state, Step::Init);
        let phase = match (mark, step.and_then(|s| s.outcome.as_ref())) {
            (_, Some(StepOutcome::Skipped { reason })) => format!("skipped: {reason}"),
            (_, Some(StepOutcome::Failed { .. })) => HookPhase::Failed.to_string(),
            (_, Some(StepOutcome::Cancelled)) => "cancelled".into(),
            (Mark::Done, _) => HookPhase::Succeeded.to_string(),
            (Mark::Running, _) => HookPhase::Running.to_string(),
            (Mark::Failed, _) => "did not finish".into(),
            _ => "pending".into(),
        };
        rows.push(HookRow {
            name: job,
            kind: "Job",
            events: "init step".into(),
            weight: None,
            mark,
            phase,
            started_at: step.and_then(|s| s.started_at.as_deref()),
            completed_at: step.and_then(|s| s.ended_at.as_deref()),
            init: true,
            not_in_run: false,
        });
    }
    rows.extend(tests);
    rows.retain(|r| matches(filter, &[r.name, r.kind, &r.events, &r.phase]));
    rows
}

/// What a drill-down shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Workload {
        kind: String,
        namespace: String,
        name: String,
    },
    /// A hook's Job, or the init Job (`init`).
    Job { name: String, init: bool },
}

impl Target {
    pub fn workload(w: &WorkloadView) -> Target {
        Target::Workload {
            kind: w.kind.clone(),
            namespace: w.namespace.clone(),
            name: w.name.clone(),
        }
    }

    /// The workload it shows, as the state keys it.
    pub fn workload_key(&self) -> Option<WorkloadKey> {
        match self {
            Target::Workload {
                kind,
                namespace,
                name,
            } => Some((kind.clone(), namespace.clone(), name.clone())),
            Target::Job { .. } => None,
        }
    }

    /// What its pods name as their owner (`Kind/name`; the namespace is the pod's own).
    pub fn owner(&self) -> String {
        match self {
            Target::Workload { kind, name, .. } => format!("{kind}/{name}"),
            Target::Job { name, .. } => format!("Job/{name}"),
        }
    }

    /// The namespace a workload target lives in; a Job's pods are the release's.
    fn namespace(&self) -> Option<&str> {
        match self {
            Target::Workload { namespace, .. } => Some(namespace),
            Target::Job { .. } => None,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Target::Workload { name, .. } | Target::Job { name, .. } => name,
        }
    }
}

/// The target's pods: the current revision's first, then by name.
pub fn pods_of<'a>(state: &'a DeployState, target: &Target) -> Vec<&'a PodView> {
    let owner = target.owner();
    let namespace = target.namespace();
    let mut pods: Vec<&PodView> = state
        .pods
        .values()
        .filter(|p| p.owner == owner && namespace.is_none_or(|n| p.namespace == n))
        .collect();
    pods.sort_by(|a, b| (!a.current, &a.name).cmp(&(!b.current, &b.name)));
    pods
}

/// The keys of [`pods_of`] (pod names), in their order: borrowed, as each frame asks for them.
pub fn pod_keys<'a>(state: &'a DeployState, target: &Target) -> Vec<&'a str> {
    pods_of(state, target)
        .into_iter()
        .map(|p| p.name.as_str())
        .collect()
}

/// Events about the target, its ReplicaSets and its pods, newest first.
pub fn events_of<'a>(
    state: &'a DeployState,
    target: &Target,
    pods: &[&PodView],
) -> Vec<&'a KubeEventView> {
    let name = target.name();
    let namespace = target.namespace();
    let prefix = format!("{name}-");
    // Looked up per event: at thousands of pods a scan per event would cost every frame.
    let pods: std::collections::HashSet<&str> = pods.iter().map(|p| p.name.as_str()).collect();
    let mut out: Vec<(usize, &KubeEventView)> = state
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| namespace.is_none_or(|n| e.namespace == n))
        .filter(|(_, e)| {
            let obj = e
                .object
                .split_once('/')
                .map_or(e.object.as_str(), |(_, n)| n);
            obj == name || obj.starts_with(&prefix) || pods.contains(obj)
        })
        .collect();
    out.sort_by(|(ia, a), (ib, b)| (b.last_seen.as_deref(), ib).cmp(&(a.last_seen.as_deref(), ia)));
    out.into_iter().map(|(_, e)| e).collect()
}

/// The last exit code a pod's causes mention (`exit 137`).
pub fn last_exit(causes: &[String]) -> Option<String> {
    causes.iter().find_map(|c| {
        let at = c.find("exit ")?;
        let digits: String = c[at + 5..]
            .chars()
            .take_while(|ch| ch.is_ascii_digit() || *ch == '-')
            .collect();
        (!digits.is_empty()).then_some(digits)
    })
}

/// kubectl's message without the repeated workload name: `Waiting for deployment "x" rollout
/// to finish: 1 of 3 updated replicas are available...` → `1 of 3 updated replicas are available`.
pub fn short_message(w: &WorkloadView) -> String {
    let mut m = w.message.trim();
    if let Some(at) = m.find("rollout to finish: ") {
        m = &m[at + "rollout to finish: ".len()..];
    }
    for word in ["deployment", "daemon set", "statefulset", "StatefulSet"] {
        let quoted = format!("{word} \"{}\" ", w.name);
        if let Some(rest) = m.strip_prefix(&quoted) {
            m = rest;
        }
    }
    m.trim_end_matches("...").trim_end_matches('.').to_string()
}

/// A pod cause without its `pod NAME: ` prefix.
pub fn cause_only(cause: &str) -> &str {
    match cause.strip_prefix("pod ").and_then(|r| r.split_once(": ")) {
        Some((_, rest)) => rest,
        None => cause,
    }
}

/// One line of the helm pane, borrowed from the state: a step's note, a line helm printed (with
/// its escapes), or how helm exited.
pub enum HelmPaneLine<'a> {
    Note(Level, &'a str),
    Helm { stderr: bool, raw: &'a str },
    Exit(String, bool),
}

impl HelmPaneLine<'_> {
    /// The text a filter matches: what the operator reads, without escapes.
    fn plain(&self) -> String {
        match self {
            HelmPaneLine::Note(_, t) => fit::inert(t).into_owned(),
            HelmPaneLine::Helm { raw, .. } => ansi::plain_text(raw),
            HelmPaneLine::Exit(t, _) => t.clone(),
        }
    }
}

fn exit_line(state: &DeployState) -> Option<HelmPaneLine<'_>> {
    let h = &state.helm;
    if !h.exited {
        return None;
    }
    let how = exit_words(h.exit_code, h.signal);
    let cancelled = if h.cancelled {
        ", cancelled (SIGTERM sent)"
    } else {
        ""
    };
    Some(HelmPaneLine::Exit(
        format!("· helm exited ({how}{cancelled})"),
        h.exit_code == Some(0),
    ))
}

/// Every line of the helm pane in order: preflight notes, the helm command, helm's output, its exit, then the
/// notes of the later steps.
pub fn helm_lines<'a>(state: &'a DeployState, filter: &str) -> Vec<HelmPaneLine<'a>> {
    let mut out = Vec::new();
    let notes = |step: Step| state.notes.iter().filter(move |n| n.step == step);
    out.extend(notes(Step::Preflight).map(|n| HelmPaneLine::Note(n.level, &n.text)));
    let mut upgrade = notes(Step::Upgrade).peekable();
    if let Some(cmd) = upgrade.next_if(|n| n.text.starts_with("helm ")) {
        out.push(HelmPaneLine::Note(cmd.level, &cmd.text));
    }
    out.extend(
        state
            .helm
            .lines
            .iter()
            .map(|(stderr, raw)| HelmPaneLine::Helm {
                stderr: *stderr,
                raw,
            }),
    );
    out.extend(exit_line(state));
    out.extend(upgrade.map(|n| HelmPaneLine::Note(n.level, &n.text)));
    out.extend(
        notes(Step::Rollout)
            .chain(notes(Step::Init))
            .map(|n| HelmPaneLine::Note(n.level, &n.text)),
    );
    if !filter.is_empty() {
        let f = filter.to_lowercase();
        out.retain(|l| l.plain().to_lowercase().contains(&f));
    }
    out
}

/// How many lines the helm pane lists (what its scrolling keys move within).
pub fn helm_line_count(state: &DeployState, filter: &str) -> usize {
    helm_lines(state, filter).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_messages() {
        assert_eq!(
            last_exit(&["CrashLoopBackOff (exit 137, 4 restarts)".into()]).as_deref(),
            Some("137")
        );
        assert_eq!(last_exit(&["Unschedulable: x".into()]), None);
        assert_eq!(
            cause_only("pod demo-x: Unschedulable: 0/3 nodes"),
            "Unschedulable: 0/3 nodes"
        );
        assert_eq!(cause_only("OOMKilled"), "OOMKilled");
        let ev = |v: &[&str]| compact_events(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(ev(&["pre-install", "pre-upgrade"]), "pre-install/upgrade");
        assert_eq!(ev(&["post-upgrade", "test"]), "post-upgrade,test");
    }
}
