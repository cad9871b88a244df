//! The machine-readable report (`--report FILE.json`): the verdict and the evidence behind it.
//! Never holds values or Secret data: only what the state holds, which is sanitized text.
//!
//! A run writes it as it starts (`"state": "running"`, no verdict), so a run that is killed
//! never leaves an older verdict behind, then at each verdict (`"finished"`: the screen stays
//! open after it, and `R` may decide it again) and at its exit. Each write
//! is atomic: a temporary file in the same directory, synced, then renamed over the path.

use std::path::Path;

use serde_json::{Value, json};

use crate::engine::event::{HookView, Step, StepOutcome};
use crate::engine::state::{DeployState, PlanSummary};

/// 2: `state` (running, finished); a verdict may be `null` (still running) or the usage code 2.
pub const REPORT_VERSION: u32 = 2;

/// The report of a run that has not ended: the plan, no verdict.
pub fn running(plan: &PlanSummary) -> Value {
    build(&DeployState::new(plan.clone()))
}

/// The report of a run that ended without a verdict of the engine's: refused before it started
/// (code 2, `usage`), or stopped by an error of helmdeck's own (code 1, `failed`).
pub fn ended(state: &DeployState, code: i32, reason: &str) -> Value {
    let mut report = build(state);
    let outcome = if code == 2 { "usage" } else { "failed" };
    report["state"] = json!("finished");
    report["verdict"] = json!({"code": code, "outcome": outcome, "reason": crate::text::plain(reason),
                               "evidence": [], "next": null});
    report
}

/// The report of the state so far: `finished` once the state holds the verdict.
pub fn build(state: &DeployState) -> Value {
    let verdict = state.verdict.as_ref();
    let steps = steps_section(state);
    let workloads = workloads_section(state);
    let (hooks, tests) = hooks_and_tests(state);
    let notes: Vec<Value> = state
        .notes
        .iter()
        .map(|n| json!({"step": n.step, "level": n.level, "text": n.text}))
        .collect();
    json!({
        "reportVersion": REPORT_VERSION,
        "state": if verdict.is_some() { "finished" } else { "running" },
        "verdict": verdict.map(|v| json!({"code": v.code(), "outcome": v.outcome, "reason": v.reason, "evidence": v.evidence, "next": v.next})),
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
        "tests": tests,
        "helm": {
            "exited": state.helm.exited,
            "exitCode": state.helm.exit_code,
            "signal": state.helm.signal,
            "cancelled": state.helm.cancelled,
            "stderrTail": state.helm.stderr_tail,
        },
        "watchErrors": state.degraded,
        "notes": notes,
        "rollback": state.rollback,
        "plan": plan_section(state),
    })
}

/// Each step with its status, reason and times. The plan step is listed only when it ran
/// (`--plan`), the test step only when `--test` ran it: other runs keep the four steps.
fn steps_section(state: &DeployState) -> Vec<Value> {
    let planned = state.steps.contains_key(&Step::Plan);
    let ran_test = state.steps.contains_key(&Step::Test);
    std::iter::once(Step::Preflight)
        .chain(planned.then_some(Step::Plan))
        .chain(Step::ALL.into_iter().skip(1))
        .chain(ran_test.then_some(Step::Test))
        .collect::<Vec<_>>()
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
                "seconds": s.and_then(|s| Some(millis(s.ended_secs? - s.started_secs?))),
            })
        })
        .collect()
}

/// Each workload the rollout judged, with the pods it owns counted.
fn workloads_section(state: &DeployState) -> Vec<Value> {
    // Counted in one pass over the pods: a scan per workload was workloads × pods string
    // comparisons (2,000 × 20,000 at the scale bench, most of the time before the verdict).
    let mut owned: std::collections::HashMap<(&str, &str), (usize, usize)> =
        std::collections::HashMap::new();
    for p in state.pods.values() {
        let (total, old) = owned
            .entry((p.namespace.as_str(), p.owner.as_str()))
            .or_default();
        *total += 1;
        *old += usize::from(!p.current);
    }
    state
        .workloads
        .values()
        .map(|w| {
            // Every pod the workload owns, old revision and new: `ready: false` beside full
            // counts is then explained by the old pods still there.
            let reference = format!("{}/{}", w.kind, w.name);
            let (total, old) = owned
                .get(&(w.namespace.as_str(), reference.as_str()))
                .copied()
                .unwrap_or_default();
            json!({
                "kind": w.kind, "namespace": w.namespace, "name": w.name, "optional": w.optional, "optionalBecause": w.optional_because,
                "ready": w.ready, "failed": w.failed, "message": w.message,
                "replicas": {"desired": w.desired, "ready": w.ready_replicas, "updated": w.updated, "available": w.available,
                             "total": total, "old": old},
                "podCauses": w.pod_causes, "notes": w.notes,
            })
        })
        .collect()
}

/// The hooks (the init step's Job last, as the hook it replaces) and, apart, the test hooks
/// with the command that reruns them.
fn hooks_and_tests(state: &DeployState) -> (Vec<Value>, Vec<Value>) {
    let (tests, hooks): (Vec<&HookView>, Vec<&HookView>) =
        state.hooks.iter().partition(|h| is_test(h));
    let mut hooks: Vec<Value> = hooks
        .into_iter()
        .map(|h| json!({"name": h.name, "kind": h.kind, "events": h.events, "weight": h.weight, "phase": h.phase,
                        "startedAt": h.started_at, "completedAt": h.completed_at, "uid": null}))
        .collect();
    hooks.push(init_hook(state));
    let test_command = crate::advice::join(
        &[
            vec![
                "helm".to_string(),
                "test".into(),
                state.plan.release.clone(),
            ],
            crate::advice::helm_scope(&state.plan.namespace, state.plan.context.as_deref()),
        ]
        .concat(),
    );
    let tests: Vec<Value> = tests
        .into_iter()
        .map(|h| {
            json!({"name": h.name, "kind": h.kind, "events": h.events, "weight": h.weight,
                        "phase": h.phase, "next": format!("run `{test_command}`")})
        })
        .collect();
    (hooks, tests)
}

/// The plan (`--plan`): counts and objects with how they change. Never a diff: the report
/// keeps no manifest text, so no value can reach it.
fn plan_section(state: &DeployState) -> Value {
    use crate::engine::plan::Change;
    let Some(plan) = &state.changes else {
        // A plan step that failed says why; no plan step (or one not ended) is null.
        return match state.outcome(crate::engine::event::Step::Plan) {
            Some(crate::engine::event::StepOutcome::Failed { reason }) => {
                json!({"error": crate::text::plain(reason)})
            }
            _ => Value::Null,
        };
    };
    let objects: Vec<Value> = plan
        .objects
        .iter()
        .map(|o| {
            json!({"apiVersion": o.api_version, "kind": o.kind, "namespace": o.namespace, "name": o.name,
                   "change": o.change, "willRoll": o.will_roll, "refused": o.refused, "note": o.note})
        })
        .collect();
    json!({
        "firstInstall": plan.first_install,
        "declined": state.plan_declined,
        "counts": {"added": plan.count(Change::Added), "removed": plan.count(Change::Removed),
                   "changed": plan.count(Change::Changed), "unchanged": plan.unchanged},
        "objects": objects,
    })
}

/// Seconds rounded to the millisecond: the clock's noise below it tells a reader nothing.
fn millis(secs: f64) -> f64 {
    (secs * 1000.0).round() / 1000.0
}

/// A `helm test` hook: run by `helm test`, never by a deploy.
fn is_test(h: &HookView) -> bool {
    h.events.iter().any(|e| e.starts_with("test"))
}

/// The init Job as a hook of the run (`events: ["init"]`), as the hooks pane shows it.
fn init_hook(state: &DeployState) -> Value {
    let step = state.steps.get(&Step::Init);
    let phase = match (&state.plan.init_job, step.and_then(|s| s.outcome.as_ref())) {
        (None, _) => "not configured",
        (Some(_), Some(StepOutcome::Succeeded)) => "Succeeded",
        (Some(_), Some(StepOutcome::Failed { .. } | StepOutcome::Cancelled)) => "Failed",
        (Some(_), Some(StepOutcome::Skipped { .. })) => "skipped",
        (Some(_), None) if step.and_then(|s| s.started_at.as_ref()).is_some() => "Running",
        // Not started: a finished run never got to it; a running one has not yet.
        (Some(_), None) if state.verdict.is_some() => "skipped",
        (Some(_), None) => "pending",
    };
    let reason = match step.and_then(|s| s.outcome.as_ref()) {
        Some(StepOutcome::Failed { reason } | StepOutcome::Skipped { reason }) => {
            Some(reason.clone())
        }
        Some(StepOutcome::Cancelled) => Some("cancelled".to_string()),
        _ => None,
    };
    json!({"name": state.plan.init_job, "kind": "Job", "events": ["init"], "weight": null,
           "phase": phase, "reason": reason,
           "startedAt": step.and_then(|s| s.started_at.clone()),
           "completedAt": step.and_then(|s| s.ended_at.clone()),
           "uid": state.init_uid})
}

/// Writes `report` to `path` atomically: a temporary file beside it, synced, then renamed over
/// it. A symlink at `path` is replaced, never followed; a reader sees the old report or the new
/// one, never a part.
pub fn write(path: &Path, report: &Value) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(report).map_err(std::io::Error::other)?;
    json.push(b'\n');
    crate::atomic::write(path, &json, crate::atomic::Access::Shared, "report")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> PlanSummary {
        PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            chart: "./chart".into(),
            ..PlanSummary::default()
        }
    }

    #[test]
    fn a_running_report_has_no_verdict() {
        let r = running(&plan());
        assert_eq!(r["reportVersion"], 2);
        assert_eq!(r["state"], "running");
        assert_eq!(r["verdict"], Value::Null);
        assert_eq!(r["release"], "demo");
        assert!(
            r["steps"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["status"] == "not-run")
        );
    }

    #[test]
    fn an_ended_run_says_why_with_its_code() {
        let usage = ended(
            &DeployState::new(plan()),
            2,
            "--timeout: \"soon\" is not a duration",
        );
        assert_eq!(usage["state"], "finished");
        assert_eq!(usage["verdict"]["code"], 2);
        assert_eq!(usage["verdict"]["outcome"], "usage");
        assert_eq!(
            usage["verdict"]["reason"],
            "--timeout: \"soon\" is not a duration"
        );
        let failed = ended(&DeployState::new(plan()), 1, "internal error\u{1b}[2J");
        assert_eq!(failed["verdict"]["outcome"], "failed");
        assert_eq!(failed["verdict"]["reason"], "internal error");
    }

    fn schema() -> jsonschema::Validator {
        let schema: Value =
            serde_json::from_str(include_str!("../../../../docs/report.schema.json")).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    }

    fn assert_valid(report: &Value) {
        let errors: Vec<String> = schema()
            .iter_errors(report)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}\n{report:#}");
    }

    /// A failed init after a failed post-upgrade hook, with a test hook beside them.
    fn init_failed() -> DeployState {
        use crate::engine::event::{Event, PodView, StepOutcome};
        use crate::helm::hooks::HookPhase;
        let mut s = DeployState::new(PlanSummary {
            init_job: Some("demo-init".into()),
            ..plan()
        });
        let hook = |name: &str, event: &str, phase| HookView {
            name: name.into(),
            kind: "Job".into(),
            events: vec![event.into()],
            weight: 0,
            phase,
            started_at: None,
            completed_at: None,
        };
        s.apply(
            &Event::Hooks {
                hooks: vec![
                    hook("demo-migrate", "post-upgrade", HookPhase::Failed),
                    hook("demo-test", "test", HookPhase::NotInThisRun),
                ],
            },
            0.5,
            "t0",
        );
        for (pod, job) in [
            ("demo-migrate-x1", "demo-migrate"),
            ("demo-init-y2", "demo-init"),
        ] {
            s.apply(
                &Event::Pod(PodView {
                    name: pod.into(),
                    namespace: "apps".into(),
                    owner: format!("Job/{job}"),
                    phase: "Failed".into(),
                    ready: false,
                    restarts: 0,
                    node: None,
                    current: true,
                    causes: vec!["Error (exit 3)".into()],
                    containers: vec!["main".into()],
                    container_states: Vec::new(),
                }),
                1.0,
                "t1",
            );
            s.apply(
                &Event::Log {
                    pod: pod.into(),
                    container: "main".into(),
                    text: format!("{job}: boom"),
                },
                1.0,
                "t1",
            );
        }
        for step in [Step::Preflight, Step::Upgrade, Step::Rollout] {
            s.apply(&Event::StepStarted { step }, 0.1234567, "t0");
            s.apply(
                &Event::StepEnded {
                    step,
                    outcome: StepOutcome::Succeeded,
                },
                1.0,
                "t1",
            );
        }
        s.apply(&Event::StepStarted { step: Step::Init }, 2.0, "t2");
        s.apply(
            &Event::InitJob {
                name: "demo-init".into(),
                uid: "u-1".into(),
                run: None,
            },
            2.0,
            "t2",
        );
        s.apply(
            &Event::StepEnded {
                step: Step::Init,
                outcome: StepOutcome::Failed {
                    reason: "Job demo-init failed: BackoffLimitExceeded".into(),
                },
            },
            3.0,
            "t3",
        );
        let v = crate::engine::verdict::decide(&s);
        s.apply(&Event::Verdict(v), 3.0, "t3");
        s
    }

    #[test]
    fn every_kind_of_report_matches_the_schema() {
        assert_valid(&running(&plan()));
        assert_valid(&ended(&DeployState::new(plan()), 2, "bad"));
        assert_valid(&ended(&DeployState::new(plan()), 1, "internal"));
        let r = build(&init_failed());
        assert_valid(&r);
        let hooks = r["hooks"].as_array().unwrap();
        assert_eq!(hooks.len(), 2, "the failed hook and the init Job: {r:#}");
        let init = &hooks[1];
        assert_eq!(init["events"], json!(["init"]));
        assert_eq!(
            (&init["phase"], &init["uid"]),
            (&json!("Failed"), &json!("u-1"))
        );
        assert_eq!(r["tests"][0]["name"], "demo-test");
        assert_eq!(r["tests"][0]["next"], "run `helm test demo -n apps`");
        assert_eq!(
            r["steps"][0]["seconds"], 0.877,
            "rounded to the millisecond"
        );
        let evidence: Vec<&str> = r["verdict"]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e.as_str())
            .collect();
        for line in [
            "hook demo-migrate: 1 attempt (1 pod, 0 restarts), last: pod demo-migrate-x1: Error (exit 3)",
            "hook demo-migrate: log demo-migrate-x1/main: demo-migrate: boom",
            "init Job demo-init: log demo-init-y2/main: demo-init: boom",
        ] {
            assert!(evidence.contains(&line), "{line} in {evidence:#?}");
        }
    }

    #[test]
    fn each_workload_counts_the_pods_it_owns_in_its_namespace() {
        use crate::engine::event::{Event, PodView, WorkloadView};
        let mut s = DeployState::new(plan());
        for ns in ["apps", "other"] {
            s.apply(
                &Event::Workload(WorkloadView::ready_web(ns, "rolled out")),
                0.1,
                "t0",
            );
        }
        let pod = |name: &str, namespace: &str, owner: &str, current: bool| PodView {
            name: name.into(),
            namespace: namespace.into(),
            owner: owner.into(),
            phase: "Running".into(),
            ready: current,
            restarts: 0,
            node: None,
            current,
            causes: vec![],
            containers: vec!["main".into()],
            container_states: Vec::new(),
        };
        // apps/web: two current, one old; other/web: one old; a pod of another owner and one
        // of `web` in a namespace without that workload count for neither.
        for p in [
            pod("web-a", "apps", "Deployment/web", true),
            pod("web-b", "apps", "Deployment/web", true),
            pod("web-old", "apps", "Deployment/web", false),
            pod("web-o", "other", "Deployment/web", false),
            pod("db-0", "apps", "StatefulSet/web", true),
            pod("web-x", "elsewhere", "Deployment/web", true),
        ] {
            s.apply(&Event::Pod(p), 0.2, "t0");
        }
        let r = build(&s);
        let counts: Vec<(String, Value, Value)> = r["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["namespace"].as_str().unwrap().to_string(),
                    w["replicas"]["total"].clone(),
                    w["replicas"]["old"].clone(),
                )
            })
            .collect();
        assert_eq!(
            counts,
            vec![
                ("apps".into(), json!(3), json!(1)),
                ("other".into(), json!(1), json!(1)),
            ]
        );
    }

    #[test]
    fn writes_replace_the_file_and_a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious.txt");
        std::fs::write(&target, "keep me").unwrap();
        let path = dir.path().join("report.json");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        write(&path, &running(&plan())).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        assert!(
            !std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let read: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(read["state"], "running");
        write(&path, &ended(&DeployState::new(plan()), 2, "bad")).unwrap();
        let read: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(read["state"], "finished");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
        assert!(write(&dir.path().join("missing/r.json"), &running(&plan())).is_err());
    }
}
