//! `helmdeck inspect --json`: one document with the same facts as the screen.
//!
//! Field names are stable (`inspect_version` changes when one is removed or changes meaning)
//! and snake_case, like helm's own JSON. Timestamps are RFC 3339 strings. The document never
//! holds release values (`config`), hook manifests or Secret data; `manifest` appears only
//! with `--show-manifest`, with every Secret's values replaced by `***`.
//!
//! ```text
//! {
//!   "inspect_version": 1,
//!   "release": "demo", "namespace": "apps",
//!   "requested_revision": null,          // --revision, when given
//!   "revision": 2,                       // the revision inspected (null: no records)
//!   "readable": true,                    // it decoded (exit 0); false: exit 1, see "error"
//!   "error": null,
//!   "history": [                         // every stored record, oldest first; the first six
//!     {"revision": 1,                    //   fields are exactly `helm history -o json`'s
//!      "updated": "2026-12-01T00:58:50Z", "status": "superseded",
//!      "chart": "deckapp-0.4.2", "app_version": "1.4.2", "description": "Install complete",
//!      "storage": "secret",              // "secret" | "configmap"
//!      "object": "sh.helm.release.v1.demo.v1",
//!      "error": null}                    // why this record cannot be read (status then from its label)
//!   ],
//!   "lock": null | {"revision": 3, "status": "pending-upgrade", "since": "…", "age_seconds": 1200,
//!                   "last_deployed": 2, "command": "helm rollback demo 2 -n apps", "note": "…"},
//!   "info": null | {"revision": 2, "status": "failed", "description": "…", "chart": "deckapp-0.4.2",
//!                   "app_version": "1.4.2", "first_deployed": "…", "last_deployed": "…",
//!                   "operation": "install" | "upgrade" | "rollback",
//!                   "storage": "secret", "object": "sh.helm.release.v1.demo.v2"},
//!   "hooks": [                           // helm's execution order for the operation
//!     {"order": 0, "name": "demo-migrate", "kind": "Job", "path": "deckapp/templates/migrate-job.yaml",
//!      "events": ["pre-install", "pre-upgrade"], "weight": -5,
//!      "phase": "Succeeded" | "Failed" | "Running" | "Unknown" | "never ran",
//!      "in_this_run": true,              // has an event of the revision's operation
//!      "started_at": "…", "completed_at": "…", "delete_policies": ["before-hook-creation"],
//!      "live": null | {                  // Failed/Running/Unknown Job or Pod hooks only
//!        "kind": "Job", "name": "demo-seed", "found": true, "created": "…",
//!        "status": "Failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
//!        "active": 0, "succeeded": 0, "failed": 2,
//!        "pods": [{"name": "demo-seed-x1", "phase": "Failed", "node": "node-1", "created": "…",
//!                  "causes": ["Failed: Error (exit 1)"],
//!                  "containers": [{"name": "seed", "init": false, "restarts": 0, "state": "terminated",
//!                                  "exit_code": 1,            // state.terminated, else lastState.terminated
//!                                  "terminated": {"exit_code": 1, "signal": null, "reason": "Error",
//!                                                 "message": null, "finished_at": "…"},
//!                                  "last_terminated": null,
//!                                  "log": ["…last 50 lines…"], "log_previous": false, "log_error": null}]}],
//!        "events": [<event>],
//!        "notes": ["…"]}}
//!   ],
//!   "init_job": null | {                 // the newest run's init Job (`helmdeck.io/run`), or --init-job
//!     "name": "demo-init", "run": "…", "found": true, "status": "Failed: BackoffLimitExceeded: …",
//!     "failed_container": "wait-db",     // the first container that exited non-zero (initContainers first)
//!     "note": null,                      // why it is gone: "… deleted after it succeeded …"
//!     "pods": [<as live.pods>], "events": [<event>], "notes": ["…"]},
//!   "workloads": [{"kind": "Deployment", "name": "demo-api", "ready": true, "failed": false,
//!                  "optional": false,
//!                  "optional_because": null,  // "--optional PATTERN" | "annotation KEY" (as deploy's report)
//!                  "message": "deployment \"demo-api\" successfully rolled out",
//!                  "replicas": {"desired": 2, "ready": 2, "updated": 2, "available": 2},
//!                  "generation": 1, "pod_causes": [], "notes": [],
//!                  "pods": [{"name": "…", "phase": "Running", "ready": true, "restarts": 0,
//!                            "node": "node-1", "current": true, "causes": []}]}],
//!   "events": [<event>],                 // about the workloads, their ReplicaSets and pods
//!   "manifest": "…",                     // only with --show-manifest
//!   "warnings": ["cannot list Events: …"]
//! }
//! <event> = {"object": "job/demo-seed", "type": "Warning", "reason": "BackoffLimitExceeded",
//!            "message": "…", "count": 1, "last_seen": "…"}
//! ```

use serde_json::{Value, json};

use crate::engine::event::KubeEventView;
use crate::inspect::model::{
    ContainerEvidence, HistoryRow, HookEvidence, InitJobView, InspectedHook, Inspection,
    Termination,
};

pub const INSPECT_VERSION: u32 = 1;

/// The whole document.
pub fn document(i: &Inspection) -> Value {
    let mut doc = json!({
        "inspect_version": INSPECT_VERSION,
        "release": i.release,
        "namespace": i.namespace,
        "requested_revision": i.requested,
        "revision": i.revision,
        "readable": i.info.is_some(),
        "error": i.error,
        "history": i.history.iter().map(history_entry).collect::<Vec<_>>(),
        "lock": i.lock.as_ref().map(|l| json!({
            "revision": l.revision, "status": l.status, "since": l.since, "age_seconds": l.age_seconds,
            "last_deployed": l.last_deployed, "command": l.command, "note": l.note,
        })),
        "info": i.info.as_ref().map(|r| json!({
            "revision": r.revision, "status": r.status, "description": r.description, "chart": r.chart,
            "app_version": r.app_version, "first_deployed": r.first_deployed, "last_deployed": r.last_deployed,
            "operation": r.operation.name(), "storage": r.storage.kubectl_name(), "object": r.object,
        })),
        "hooks": i.hooks.iter().enumerate().map(|(n, h)| hook(n, h)).collect::<Vec<_>>(),
        "init_job": i.init_job.as_ref().map(init_job),
        "workloads": i.workloads.iter().map(|w| {
            let owner = format!("{}/{}", w.kind, w.name);
            json!({
                "kind": w.kind, "namespace": w.namespace, "name": w.name, "ready": w.ready, "failed": w.failed,
                "optional": w.optional, "optional_because": w.optional_because, "message": w.message,
                "replicas": {"desired": w.desired, "ready": w.ready_replicas, "updated": w.updated, "available": w.available},
                "generation": w.generation, "pod_causes": w.pod_causes, "notes": w.notes,
                "pods": i.pods.iter().filter(|p| p.owner == owner && p.namespace == w.namespace).map(|p| json!({
                    "name": p.name, "phase": p.phase, "ready": p.ready, "restarts": p.restarts,
                    "node": p.node, "current": p.current, "causes": p.causes,
                })).collect::<Vec<_>>(),
            })
        }).collect::<Vec<_>>(),
        "events": i.events.iter().map(event).collect::<Vec<_>>(),
        "warnings": i.warnings,
    });
    if let Some(m) = &i.manifest {
        doc["manifest"] = json!(m);
    }
    doc
}

/// A `helm history -o json` entry, plus where the record lives and why it is unreadable.
pub fn history_entry(r: &HistoryRow) -> Value {
    json!({
        "revision": r.revision, "updated": r.updated, "status": r.status, "chart": r.chart,
        "app_version": r.app_version, "description": r.description,
        "storage": r.storage.kubectl_name(), "object": r.object, "error": r.error,
    })
}

fn hook(order: usize, h: &InspectedHook) -> Value {
    let r = &h.record;
    json!({
        "order": order, "name": r.name, "kind": r.kind, "path": r.path, "events": r.events,
        "weight": r.weight, "phase": r.phase.word(), "in_this_run": h.in_this_run,
        "started_at": r.started_at, "completed_at": r.completed_at, "delete_policies": r.delete_policies,
        "live": h.live.as_ref().map(live),
    })
}

fn init_job(j: &InitJobView) -> Value {
    let live = j.live.as_ref().map(live);
    json!({
        "name": j.name, "run": j.run, "found": j.live.as_ref().is_some_and(|l| l.found),
        "failed_container": j.failed_container, "note": j.note,
        "status": live.as_ref().map(|l| l["status"].clone()),
        "pods": live.as_ref().map_or(json!([]), |l| l["pods"].clone()),
        "events": live.as_ref().map_or(json!([]), |l| l["events"].clone()),
        "notes": live.as_ref().map_or(json!([]), |l| l["notes"].clone()),
    })
}

fn live(e: &HookEvidence) -> Value {
    json!({
        "kind": e.kind, "name": e.name, "found": e.found, "created": e.created, "status": e.status,
        "active": e.active, "succeeded": e.succeeded, "failed": e.failed,
        "pods": e.pods.iter().map(|p| json!({
            "name": p.name, "phase": p.phase, "node": p.node, "created": p.created, "causes": p.causes,
            "containers": p.containers.iter().map(container).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "events": e.events.iter().map(event).collect::<Vec<_>>(),
        "notes": e.notes,
    })
}

fn container(c: &ContainerEvidence) -> Value {
    let exit_code = c
        .terminated
        .as_ref()
        .or(c.last_terminated.as_ref())
        .map(|t| t.exit_code);
    json!({
        "name": c.name, "init": c.init, "restarts": c.restarts, "state": c.state, "exit_code": exit_code,
        "terminated": c.terminated.as_ref().map(termination), "last_terminated": c.last_terminated.as_ref().map(termination),
        "log": c.log, "log_previous": c.log_previous, "log_error": c.log_error,
    })
}

fn termination(t: &Termination) -> Value {
    json!({"exit_code": t.exit_code, "signal": t.signal, "reason": t.reason, "message": t.message, "finished_at": t.finished_at})
}

fn event(e: &KubeEventView) -> Value {
    json!({"object": e.object, "namespace": e.namespace, "type": e.kind, "reason": e.reason, "message": e.message, "count": e.count, "last_seen": e.last_seen})
}

#[cfg(test)]
mod tests;
