//! The inspection as plain text (`--headless`, or stdout not a terminal): the same sections as
//! the screen, top to bottom. Every cluster string in the inspection is already sanitized.

use std::fmt::Write as _;

use crate::engine::event::WorkloadView;
use crate::helm::hooks::HookPhase;
use crate::inspect::digest;
use crate::inspect::evidence::LOG_TAIL;
use crate::inspect::model::{
    ContainerEvidence, HistoryRow, HookEvidence, HookPod, InspectedHook, Inspection, Termination,
};
use crate::time::{self, AgeStyle};

pub fn render(i: &Inspection) -> String {
    let mut out = String::new();
    header(&mut out, i);
    history(&mut out, i);
    lock(&mut out, i);
    hooks(&mut out, i);
    init_job(&mut out, i);
    workloads(&mut out, i);
    if !i.warnings.is_empty() {
        out.push_str("\nWarnings\n");
        for w in &i.warnings {
            let _ = writeln!(out, "  ! {w}");
        }
    }
    if let (Some(m), Some(rev)) = (&i.manifest, i.revision) {
        let _ = writeln!(out, "\nManifest of revision {rev} (Secret values masked)");
        out.push_str(m);
        if !m.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn header(out: &mut String, i: &Inspection) {
    match (&i.info, &i.error) {
        (Some(info), _) => {
            let _ = writeln!(
                out,
                "{} {} · {} · revision {} ({}) · {} · {} (app {})",
                status_glyph(&info.status),
                i.release,
                i.namespace,
                info.revision,
                info.operation.name(),
                info.status,
                info.chart,
                info.app_version
            );
            if !info.description.is_empty() {
                let _ = writeln!(out, "  {}", info.description);
            }
        }
        (None, error) => {
            let _ = writeln!(
                out,
                "✗ {} · {} · {}",
                i.release,
                i.namespace,
                error.as_deref().unwrap_or("nothing to inspect")
            );
        }
    }
}

/// The width of a column of `cells` (in characters; 0 when there are none).
fn widest<S: AsRef<str>>(cells: impl Iterator<Item = S>) -> usize {
    cells.map(|c| c.as_ref().chars().count()).max().unwrap_or(0)
}

fn status_glyph(status: &str) -> &'static str {
    match status {
        "deployed" => "✓",
        "failed" => "✗",
        s if s.starts_with("pending-") => "◐",
        _ => "·",
    }
}

fn history(out: &mut String, i: &Inspection) {
    if i.history.is_empty() {
        return;
    }
    out.push_str("\nHistory\n");
    let width = |f: fn(&HistoryRow) -> &str, min: usize| widest(i.history.iter().map(f)).max(min);
    let (wu, ws, wc, wa) = (
        width(|r| &r.updated, 7),
        width(|r| &r.status, 6),
        width(|r| &r.chart, 5),
        width(|r| &r.app_version, 11),
    );
    let _ = writeln!(
        out,
        "     REV  {:wu$}  {:ws$}  {:wc$}  {:wa$}  DESCRIPTION",
        "UPDATED", "STATUS", "CHART", "APP VERSION"
    );
    for r in &i.history {
        let mark = if Some(r.revision) == i.revision {
            "▸"
        } else {
            " "
        };
        match &r.error {
            None => {
                let _ = writeln!(
                    out,
                    "  {mark} {:>4}  {:wu$}  {:ws$}  {:wc$}  {:wa$}  {}",
                    r.revision, r.updated, r.status, r.chart, r.app_version, r.description
                );
            }
            Some(e) => {
                let label = r.label_status();
                let _ = writeln!(
                    out,
                    "  {mark} {:>4}  ✗ unreadable{label}, {} {}: {e}",
                    r.revision,
                    r.storage.kubectl_name(),
                    r.object
                );
            }
        }
    }
}

fn lock(out: &mut String, i: &Inspection) {
    let Some(l) = &i.lock else { return };
    out.push_str("\nLock\n");
    let since = match (&l.since, l.age_seconds) {
        (Some(s), Some(a)) => format!(" since {s} ({} ago)", time::age(a, AgeStyle::TwoUnits)),
        (Some(s), None) => format!(" since {s}"),
        _ => String::new(),
    };
    let _ = writeln!(out, "  ◐ revision {} is {}{since}", l.revision, l.status);
    if let Some(good) = l.last_deployed {
        let _ = writeln!(out, "    last deployed revision: {good}");
    }
    let _ = writeln!(out, "    {}", l.note);
    let _ = writeln!(out, "    fix: {}", l.command);
}

fn phase_glyph(phase: HookPhase) -> &'static str {
    match phase {
        HookPhase::Succeeded => "✓",
        HookPhase::Failed => "✗",
        HookPhase::Running | HookPhase::Unknown => "◐",
        // Records hold no judged phases; placed as the deploy screen shows them.
        HookPhase::NeverRan | HookPhase::NotInThisRun => "·",
        HookPhase::Skipped => "–",
    }
}

fn hooks(out: &mut String, i: &Inspection) {
    let Some(info) = &i.info else { return };
    if i.hooks.is_empty() {
        let _ = writeln!(out, "\nHooks of revision {}: none", info.revision);
        return;
    }
    let _ = writeln!(
        out,
        "\nHooks of revision {} ({}, in execution order)",
        info.revision,
        info.operation.name()
    );
    let wn = widest(i.hooks.iter().map(|h| &h.record.name)).max(4);
    let wk = widest(i.hooks.iter().map(|h| &h.record.kind)).max(4);
    let we = widest(i.hooks.iter().map(|h| h.record.events.join(","))).max(6);
    let _ = writeln!(
        out,
        "    WEIGHT  {:wn$}  {:wk$}  {:we$}  PHASE",
        "NAME", "KIND", "EVENTS"
    );
    for h in &i.hooks {
        let r = &h.record;
        let extra = if h.in_this_run {
            String::new()
        } else {
            format!(" (not part of an {})", info.operation.name())
        };
        let _ = writeln!(
            out,
            "    {:>6}  {:wn$}  {:wk$}  {:we$}  {} {}{extra}",
            r.weight,
            r.name,
            r.kind,
            r.events.join(","),
            phase_glyph(r.phase),
            r.phase.word()
        );
    }
    for h in &i.hooks {
        if let Some(live) = &h.live {
            hook_evidence(out, h, live);
        }
    }
}

/// The newest run's init Job: its live evidence as a hook's, or why it is gone.
fn init_job(out: &mut String, i: &Inspection) {
    let Some(j) = &i.init_job else {
        return;
    };
    let run = j
        .run
        .as_deref()
        .map(|r| format!(", run {r}"))
        .unwrap_or_default();
    let _ = writeln!(out, "\nInit Job {}{run}", j.name);
    if let Some(note) = &j.note {
        let _ = writeln!(out, "  note: {note}");
    }
    if let Some(c) = &j.failed_container {
        let _ = writeln!(out, "  failed container: {c}");
    }
    if let Some(e) = &j.live {
        pods_and_events(out, e);
    }
}

fn hook_evidence(out: &mut String, h: &InspectedHook, e: &HookEvidence) {
    let _ = writeln!(
        out,
        "\nHook {} ({}, {})",
        e.name,
        e.kind,
        h.record.phase.word()
    );
    if e.found && e.kind != "Job" {
        let status = e.status.as_deref().unwrap_or("unknown");
        let _ = writeln!(out, "  Pod: {status}");
    }
    pods_and_events(out, e);
}

/// A Job's (or hook Pod's) notes, pods with their containers and logs, and events.
fn pods_and_events(out: &mut String, e: &HookEvidence) {
    if e.found && e.kind == "Job" {
        let status = e.status.as_deref().unwrap_or("unknown");
        let _ = writeln!(
            out,
            "  Job: {status} · {} active, {} succeeded, {} failed",
            e.active, e.succeeded, e.failed
        );
    }
    for note in &e.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    let last = e.pods.last();
    for p in &e.pods {
        let node = p.node.as_deref().unwrap_or("–");
        let causes = if p.causes.is_empty() {
            String::new()
        } else {
            format!("  {}", p.causes.join("; "))
        };
        // A retried Job's earlier attempts usually end exactly as its last one: one line
        // each, and the last attempt's containers and log in full.
        let alike = last.is_some_and(|l| !std::ptr::eq(l, p) && ended_alike(p, l));
        let same = if alike {
            "  (exit and log as the last attempt's, below)"
        } else {
            ""
        };
        let _ = writeln!(out, "  pod {}  {}  {node}{causes}{same}", p.name, p.phase);
        if alike {
            continue;
        }
        for c in &p.containers {
            container(out, c);
        }
    }
    if !e.events.is_empty() {
        out.push_str("  events\n");
        let lines = digest::digest(&e.events);
        let wr = widest(lines.iter().map(|l| l.event.reason.as_str()));
        for line in &lines {
            let ev = &line.event;
            let when = ev.last_seen.as_deref().unwrap_or("–");
            let count = match line.fold_note() {
                note if !note.is_empty() => format!(" ({note})"),
                _ if ev.count > 1 => format!(" (×{})", ev.count),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "    {when}  {:7}  {:wr$}  {}: {}{count}",
                ev.kind, ev.reason, ev.object, ev.message
            );
        }
    }
}

/// Two attempts of a hook that ended the same way: phase, causes, and every container's
/// state, exit, termination message and log (not when they ran or where).
fn ended_alike(a: &HookPod, b: &HookPod) -> bool {
    let exit = |t: &Option<Termination>| {
        t.as_ref()
            .map(|t| (t.exit_code, t.signal, t.reason.clone(), t.message.clone()))
    };
    let key = |c: &ContainerEvidence| {
        (
            (c.name.clone(), c.init, c.restarts, c.state.clone()),
            (exit(&c.terminated), exit(&c.last_terminated)),
            (c.log.clone(), c.log_previous, c.log_error.clone()),
        )
    };
    a.phase == b.phase
        && a.causes == b.causes
        && a.containers.len() == b.containers.len()
        && a.containers
            .iter()
            .zip(&b.containers)
            .all(|(x, y)| key(x) == key(y))
}

fn container(out: &mut String, c: &ContainerEvidence) {
    let kind = if c.init {
        "init container"
    } else {
        "container"
    };
    let mut line = format!("    {kind} {}: {}", c.name, c.state);
    if let Some(t) = &c.terminated {
        let _ = write!(line, ", exit {}", t.exit_code);
        if let Some(r) = &t.reason {
            let _ = write!(line, " ({r})");
        }
    }
    if c.restarts > 0 {
        let _ = write!(line, ", {} restarts", c.restarts);
    }
    if let Some(t) = &c.last_terminated {
        let _ = write!(
            line,
            "; last run exit {}{}",
            t.exit_code,
            t.reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        );
    }
    out.push_str(&line);
    out.push('\n');
    for m in [&c.terminated, &c.last_terminated]
        .into_iter()
        .flatten()
        .filter_map(|t| t.message.as_deref())
    {
        let _ = writeln!(out, "      termination message: {m}");
    }
    if let Some(e) = &c.log_error {
        let _ = writeln!(out, "      log unavailable: {e}");
    } else if !c.log.is_empty() {
        let which = if c.log_previous { ", previous run" } else { "" };
        let lines = if c.log.len() as i64 >= LOG_TAIL {
            format!("last {LOG_TAIL} lines")
        } else {
            format!("{} lines", c.log.len())
        };
        let _ = writeln!(out, "      log ({lines}{which}):");
        for l in &c.log {
            let _ = writeln!(out, "        │ {l}");
        }
    }
}

fn workloads(out: &mut String, i: &Inspection) {
    if i.revision_absent() {
        return;
    }
    let _ = writeln!(
        out,
        "\nWorkloads (app.kubernetes.io/instance={})",
        i.release
    );
    if i.workloads.is_empty() {
        out.push_str("  none found\n");
        return;
    }
    let wn = widest(i.workloads.iter().map(|w| w.name.as_str()));
    // A namespace column only when the workloads span more than one (`namespaceOverride`).
    let many = i
        .workloads
        .iter()
        .any(|w| w.namespace != i.workloads[0].namespace);
    let nn = widest(i.workloads.iter().map(|w| w.namespace.as_str()));
    let ready = |w: &WorkloadView| format!("{}/{}", w.ready_replicas, w.desired);
    // As wide as the widest count (`3000/3000`), so the messages line up at any replica count.
    let rn = widest(i.workloads.iter().map(ready)).max(5);
    for w in &i.workloads {
        let namespace = if many {
            format!("{:nn$}  ", w.namespace)
        } else {
            String::new()
        };
        let glyph = w.standing().glyph();
        let tag = if w.optional { "optional · " } else { "" };
        let _ = writeln!(
            out,
            "  {glyph} {:11}  {namespace}{:wn$}  {:>rn$}  {tag}{}",
            w.kind,
            w.name,
            ready(w),
            w.message
        );
        for c in &w.pod_causes {
            let _ = writeln!(out, "      {c}");
        }
        for n in &w.notes {
            let _ = writeln!(out, "      note: {n}");
        }
    }
}
