//! The machine-readable report (`--report FILE.json`): the verdict and the evidence behind it.
//! Never holds values or Secret data: only what the state holds, which is sanitized text.

use serde_json::{Value, json};

use crate::engine::event::Step;
use crate::engine::state::DeployState;

pub const REPORT_VERSION: u32 = 1;

pub fn build(state: &DeployState) -> Value {
    let verdict = state.verdict.as_ref();
    let steps: Vec<Value> = Step::ALL
        .iter()
        .map(|step| {
            let s = state.steps.get(step);
            let outcome = s.and_then(|s| s.outcome.as_ref());
            json!({
                "step": step.name(),
                "status": match outcome {
                    None if s.and_then(|s| s.started_at.as_ref()).is_some() => json!("unfinished"),
                    None => json!("not-run"),
                    Some(o) => serde_json::to_value(o).ok().and_then(|v| v.get("status").cloned()).unwrap_or(json!("unknown")),
                },
                "reason": outcome.and_then(|o| serde_json::to_value(o).ok()).and_then(|v| v.get("reason").cloned()),
                "start": s.and_then(|s| s.started_at.clone()),
                "end": s.and_then(|s| s.ended_at.clone()),
                "seconds": s.and_then(|s| Some(s.ended_secs? - s.started_secs?)),
            })
        })
        .collect();
    let workloads: Vec<Value> = state
        .workloads
        .values()
        .map(|w| {
            json!({
                "kind": w.kind, "namespace": w.namespace, "name": w.name, "optional": w.optional, "optionalBecause": w.optional_because,
                "ready": w.ready, "failed": w.failed, "message": w.message,
                "replicas": {"desired": w.desired, "ready": w.ready_replicas, "updated": w.updated, "available": w.available},
                "podCauses": w.pod_causes, "notes": w.notes,
            })
        })
        .collect();
    let hooks: Vec<Value> = state
        .hooks
        .iter()
        .map(|h| json!({"name": h.name, "kind": h.kind, "events": h.events, "weight": h.weight, "phase": h.phase,
                        "startedAt": h.started_at, "completedAt": h.completed_at}))
        .collect();
    let notes: Vec<Value> = state
        .notes
        .iter()
        .map(|n| json!({"step": n.step, "level": n.level, "text": n.text}))
        .collect();
    json!({
        "reportVersion": REPORT_VERSION,
        "verdict": verdict.map(|v| json!({"code": v.code, "outcome": v.outcome, "reason": v.reason, "evidence": v.evidence, "next": v.next})),
        "release": state.plan.release,
        "namespace": state.plan.namespace,
        "chart": state.plan.chart,
        "only": state.plan.only,
        "dryRun": state.plan.dry_run,
        "revisionBefore": state.revision_before,
        "revision": state.revision,
        "steps": steps,
        "workloads": workloads,
        "hooks": hooks,
        "helm": {
            "exited": state.helm.exited,
            "exitCode": state.helm.exit_code,
            "signal": state.helm.signal,
            "cancelled": state.helm.cancelled,
            "stderrTail": state.helm.stderr_tail,
        },
        "watchErrors": state.degraded,
        "notes": notes,
    })
}
