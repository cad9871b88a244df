use super::*;
use crate::engine::event::{Event, HookView, PodView, WorkloadView};
use crate::engine::state::PlanSummary;

fn workload(name: &str, optional: bool, ready: bool) -> WorkloadView {
    WorkloadView {
        kind: "Deployment".into(),
        namespace: "apps".into(),
        name: name.into(),
        optional,
        optional_because: optional.then(|| "--optional".into()),
        ready,
        failed: false,
        message: if ready {
            "successfully rolled out".into()
        } else {
            "1 of 2 updated replicas are available".into()
        },
        desired: 2,
        ready_replicas: 1,
        updated: 2,
        available: 1,
        generation: 1,
        created: None,
        pod_causes: if ready {
            vec![]
        } else {
            vec!["pod x: CrashLoopBackOff (exit 1)".into()]
        },
        evidence: vec![],
        notes: vec![],
    }
}

fn state(outcomes: &[(Step, StepOutcome)], workloads: &[WorkloadView]) -> DeployState {
    let mut s = DeployState::new(PlanSummary {
        release: "demo".into(),
        namespace: "apps".into(),
        chart: "./chart".into(),
        ..Default::default()
    });
    s.revision_before = Some(4);
    s.deployed_before = Some(4);
    for w in workloads {
        s.apply(&Event::Workload(w.clone()), 0.0, "t");
    }
    for (step, outcome) in outcomes {
        s.apply(
            &Event::StepEnded {
                step: *step,
                outcome: outcome.clone(),
            },
            1.0,
            "t",
        );
    }
    s
}

fn ok() -> StepOutcome {
    StepOutcome::Succeeded
}
fn failed(r: &str) -> StepOutcome {
    StepOutcome::Failed { reason: r.into() }
}
fn skipped() -> StepOutcome {
    StepOutcome::Skipped {
        reason: "not configured".into(),
    }
}

use Step::*;

#[test]
fn banner_words_and_codes() {
    assert_eq!(
        (Outcome::Landed.title(), Outcome::Landed.code()),
        ("LANDED", 0)
    );
    assert_eq!(
        (Outcome::Failed.title(), Outcome::Failed.code()),
        ("FAILED", 1)
    );
    assert_eq!(
        (
            Outcome::LiveInitIncomplete.title(),
            Outcome::LiveInitIncomplete.code()
        ),
        ("LIVE — INIT INCOMPLETE", 3)
    );
}

#[test]
fn all_steps_succeeded_is_landed() {
    let s = state(
        &[
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, ok()),
        ],
        &[workload("web", false, true)],
    );
    let v = decide(&s);
    assert_eq!((v.code(), v.outcome), (0, Outcome::Landed));
    assert_eq!(v.reason, "1/1 gating workloads ready");
    assert!(v.next.is_none());
}

#[test]
fn optional_not_ready_does_not_gate_but_is_reported() {
    let s = state(
        &[
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, skipped()),
        ],
        &[workload("web", false, true), workload("gpu", true, false)],
    );
    let v = decide(&s);
    assert_eq!(v.code(), 0);
    assert!(v.reason.contains("1 optional not ready"), "{}", v.reason);
    assert!(
        v.evidence
            .iter()
            .any(|e| e.starts_with("optional Deployment/gpu not ready")),
        "{:?}",
        v.evidence
    );
}

#[test]
fn each_failing_live_step_is_exit_1() {
    for step in [Preflight, Upgrade, Rollout] {
        let outcomes: Vec<(Step, StepOutcome)> = [Preflight, Upgrade, Rollout, Init]
            .iter()
            .map(|s| (*s, if *s == step { failed("boom") } else { ok() }))
            .collect();
        let v = decide(&state(&outcomes, &[workload("web", false, true)]));
        assert_eq!(v.code(), 1, "{step:?}");
        assert!(
            v.reason.starts_with(step.name()) && v.reason.ends_with("boom"),
            "{}",
            v.reason
        );
    }
}

#[test]
fn init_failure_after_a_good_rollout_is_exit_3_with_the_rerun_command() {
    let mut s = state(
        &[
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, failed("Job demo-init failed")),
        ],
        &[workload("web", false, true)],
    );
    s.plan.init_toggle = Some("initJob.enabled".into());
    s.plan.init_job = Some("demo-init".into());
    s.plan.timeout_secs = 600;
    let v = decide(&s);
    assert_eq!((v.code(), v.outcome), (3, Outcome::LiveInitIncomplete));
    // Runnable as printed: every init setting, no value (advice.rs has the whole rule).
    assert_eq!(
        v.next.as_deref(),
        Some(
            "helmdeck deploy demo ./chart -n apps --init-toggle initJob.enabled \
             --init-job demo-init --timeout 600s --only init"
        )
    );
}

#[test]
fn a_rollback_is_told_after_the_failure_and_never_changes_the_code() {
    let view = |status: &str, reason: Option<&str>| crate::engine::event::RollbackView {
        from: 3,
        to: 2,
        revision: Some(4),
        status: serde_json::from_value(serde_json::json!(status)).expect("a rollback status"),
        reason: reason.map(String::from),
    };
    let failed_rollout = [
        (Preflight, ok()),
        (Upgrade, ok()),
        (Rollout, failed("boom")),
    ];
    let mut s = state(&failed_rollout, &[workload("web", false, true)]);
    s.rollback = Some(view("rolled-back", None));
    let v = decide(&s);
    assert_eq!(
        (v.code(), v.reason.as_str()),
        (1, "rollout failed: boom; rolled back to 2")
    );
    s.rollback = Some(view("failed", Some("revision 4 did not roll out: x")));
    assert_eq!(
        decide(&s).reason,
        "rollout failed: boom; rollback failed too: revision 4 did not roll out: x"
    );
    // A verdict that is not 1 is never rewritten (the rollback only follows a failure).
    let mut landed = state(&all_ok(), &[workload("web", false, true)]);
    landed.rollback = Some(view("rolled-back", None));
    assert!(!decide(&landed).reason.contains("rolled back"));
}

#[test]
fn after_a_rollback_the_next_step_is_the_history_never_another_rollback() {
    let failed_rollout = [
        (Preflight, ok()),
        (Upgrade, ok()),
        (Rollout, failed("boom")),
    ];
    let mut s = state(&failed_rollout, &[workload("web", false, false)]);
    s.revision = Some(5);
    s.plan.context = Some("prod eu".into());
    assert_eq!(
        decide(&s).next.as_deref(),
        Some("helm rollback demo 4 -n apps --kube-context 'prod eu'"),
        "before a rollback, the rollback is the advice"
    );
    for status in [RollbackStatus::RolledBack, RollbackStatus::Failed] {
        s.rollback = Some(crate::engine::event::RollbackView {
            from: 5,
            to: 4,
            revision: Some(6),
            status,
            reason: None,
        });
        let v = decide(&s);
        assert_eq!(
            v.next.as_deref(),
            Some("helm history demo -n apps --kube-context 'prod eu'"),
            "{status:?}"
        );
    }
}

#[test]
fn cancel_is_1_except_during_init_where_it_is_3() {
    let v = decide(&state(
        &[(Preflight, ok()), (Upgrade, StepOutcome::Cancelled)],
        &[],
    ));
    assert_eq!((v.code(), v.reason.as_str()), (1, "cancelled"));
    let v = decide(&state(
        &[
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, StepOutcome::Cancelled),
        ],
        &[workload("w", false, true)],
    ));
    assert_eq!((v.code(), v.reason.as_str()), (3, "cancelled during init"));
}

#[test]
fn a_step_without_an_outcome_fails_closed() {
    for missing in [Preflight, Upgrade, Rollout, Init] {
        let outcomes: Vec<(Step, StepOutcome)> = [Preflight, Upgrade, Rollout, Init]
            .iter()
            .filter(|s| **s != missing)
            .map(|s| (*s, ok()))
            .collect();
        let v = decide(&state(&outcomes, &[workload("web", false, true)]));
        assert_eq!(v.code(), 1, "missing {missing:?}");
        assert!(v.reason.contains("evidence missing"), "{}", v.reason);
    }
}

#[test]
fn a_rollout_success_contradicted_by_the_workloads_fails_closed() {
    let all_ok = [
        (Preflight, ok()),
        (Upgrade, ok()),
        (Rollout, ok()),
        (Init, ok()),
    ];
    let v = decide(&state(&all_ok, &[workload("web", false, false)]));
    assert_eq!(v.code(), 1);
    assert!(
        v.reason.contains("Deployment/web not ready"),
        "{}",
        v.reason
    );
    let v = decide(&state(&all_ok, &[workload("gpu", true, true)]));
    assert_eq!(v.code(), 1, "only optional workloads: nothing gated");
    assert!(v.reason.contains("no gating workload"), "{}", v.reason);
}

fn all_ok() -> [(Step, StepOutcome); 4] {
    [
        (Preflight, ok()),
        (Upgrade, ok()),
        (Rollout, ok()),
        (Init, ok()),
    ]
}

#[test]
fn a_dry_run_is_its_own_outcome_never_landed() {
    let mut s = state(&all_ok(), &[workload("web", false, true)]);
    s.plan.dry_run = true;
    let v = decide(&s);
    assert_eq!((v.code(), v.outcome), (0, Outcome::DryRun));
    assert_eq!(
        (v.outcome.title(), v.reason.as_str()),
        ("DRY RUN", "nothing was written")
    );
}

#[test]
fn the_landed_reason_names_the_init_job_and_its_time() {
    let mut s = state(&all_ok(), &[workload("web", false, true)]);
    s.plan.init_job = Some("demo-init".into());
    s.apply(&Event::StepStarted { step: Init }, 20.0, "t");
    s.apply(
        &Event::StepEnded {
            step: Init,
            outcome: ok(),
        },
        32.2,
        "t",
    );
    assert_eq!(
        decide(&s).reason,
        "1/1 gating workloads ready; init Job demo-init succeeded in 12 s"
    );
    let mut s = state(
        &[
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, ok()),
            (Init, skipped()),
        ],
        &[workload("web", false, true)],
    );
    s.plan.init_job = Some("demo-init".into());
    assert_eq!(
        decide(&s).reason,
        "1/1 gating workloads ready; init skipped: not configured"
    );
}

#[test]
fn on_delete_pods_left_on_the_old_revision_are_said_after_an_upgrade_only() {
    let mut sts = workload("db", false, true);
    sts.kind = "StatefulSet".into();
    sts.updated = 0;
    sts.notes = vec![crate::rollout::readiness::ON_DELETE_NOTE.into()];
    let upgraded = state(&all_ok(), &[sts.clone()]);
    let v = decide(&upgraded);
    assert_eq!(v.code(), 0);
    assert_eq!(
        v.reason,
        "1/1 gating workloads ready; 2 pods still on the old revision until deleted"
    );
    assert!(
        v.evidence.contains(
            &"StatefulSet/db: 2 pods still on the old revision until deleted (OnDelete)".into()
        ),
        "{:?}",
        v.evidence
    );
    let mut first = state(&all_ok(), &[sts]);
    first.revision_before = None;
    let v = decide(&first);
    assert_eq!(v.reason, "1/1 gating workloads ready");
    assert!(v.evidence.is_empty(), "{:?}", v.evidence);
}

#[test]
fn durations_keep_a_tenth_only_under_ten_seconds() {
    assert_eq!(seconds_words(9.94), "9.9 s");
    assert_eq!(seconds_words(10.0), "10 s");
    assert_eq!(seconds_words(-1.0), "0.0 s");
}

#[test]
fn an_on_delete_workload_whose_pods_all_moved_gets_no_note() {
    let mut sts = workload("db", false, true);
    sts.kind = "StatefulSet".into();
    sts.notes = vec![crate::rollout::readiness::ON_DELETE_NOTE.into()];
    let v = decide(&state(&all_ok(), &[sts]));
    assert_eq!(v.reason, "1/1 gating workloads ready");
    assert!(v.evidence.is_empty(), "{:?}", v.evidence);
}

/// A failed Job's evidence holds its own pods' logs, also of a pod deleted since (its
/// name starts with the Job's), never another Job's whose name merely shares the prefix.
#[test]
fn a_failed_jobs_cause_holds_its_own_logs_only() {
    let mut s = state(&[], &[]);
    let pod = |name: &str, owner: &str| PodView {
        name: name.into(),
        namespace: "apps".into(),
        owner: owner.into(),
        phase: "Failed".into(),
        ready: false,
        restarts: 0,
        node: None,
        current: true,
        causes: vec!["Failed: Error (exit 1)".into()],
        containers: vec!["c".into()],
        container_states: Vec::new(),
    };
    for p in [
        pod("demo-seed-abc", "Job/demo-seed"),
        pod("demo-seed-extra-xyz", "Job/demo-seed-extra"),
    ] {
        s.pods.insert(("apps".into(), p.name.clone()), p);
    }
    for (key, line) in [
        ("demo-seed-abc/c", "listed pod"),
        ("demo-seed-gone/c", "deleted pod"),
        ("demo-seed-extra-xyz/c", "another job"),
        ("other-1/c", "unrelated"),
    ] {
        s.logs.insert(key.into(), [line.to_string()].into());
    }
    let got = job_cause(&s, "hook demo-seed", "demo-seed");
    assert_eq!(
        got,
        [
            "hook demo-seed: 1 attempt (1 pod, 0 restarts), last: pod demo-seed-abc: Failed: \
             Error (exit 1)",
            "hook demo-seed: log demo-seed-abc/c: listed pod",
            "hook demo-seed: log demo-seed-gone/c: deleted pod",
        ]
    );
}

/// A Job that failed several times is ONE line with its attempts counted (pods made for
/// restartPolicy Never, restarts in a pod for OnFailure), not a line per pod; only the last
/// pod's log is kept.
#[test]
fn a_job_that_failed_several_times_is_one_line_with_its_attempts() {
    let mut s = state(&[], &[]);
    let pod = |name: &str, phase: &str, restarts: i32| PodView {
        name: name.into(),
        namespace: "apps".into(),
        owner: "Job/demo-init".into(),
        phase: phase.into(),
        ready: false,
        restarts,
        node: None,
        current: true,
        causes: vec![format!("{phase}: Error (exit 2)")],
        containers: vec!["init".into()],
        container_states: Vec::new(),
    };
    for p in [
        pod("demo-init-a", "Failed", 0),
        pod("demo-init-b", "Failed", 0),
        pod("demo-init-c", "Running", 4),
    ] {
        s.pods.insert(("apps".into(), p.name.clone()), p);
    }
    for name in ["demo-init-a", "demo-init-b", "demo-init-c"] {
        s.logs
            .insert(format!("{name}/init"), [format!("{name} said")].into());
    }
    let got = job_cause(&s, "init Job demo-init", "demo-init");
    assert_eq!(
        got,
        [
            "init Job demo-init: 7 attempts (3 pods, 4 restarts), last: pod demo-init-c: \
             Running: Error (exit 2)",
            "init Job demo-init: log demo-init-c/init: demo-init-c said",
        ]
    );
}

#[test]
fn skipped_steps_count_as_done_for_only_modes() {
    let v = decide(&state(
        &[
            (Preflight, ok()),
            (Upgrade, skipped()),
            (Rollout, skipped()),
            (Init, ok()),
        ],
        &[],
    ));
    assert_eq!(v.code(), 0);
    assert_eq!(v.reason, "every step succeeded");
}

#[test]
fn evidence_names_blockers_failed_and_skipped_hooks() {
    let mut s = state(
        &[(Preflight, ok()), (Upgrade, failed("helm exited 1"))],
        &[workload("web", false, false)],
    );
    let hook = |name: &str, phase: HookPhase| HookView {
        name: name.into(),
        kind: "Job".into(),
        events: vec!["post-upgrade".into()],
        weight: 0,
        phase,
        started_at: None,
        completed_at: None,
    };
    s.apply(
        &Event::Hooks {
            hooks: vec![
                hook("init", HookPhase::Succeeded),
                hook("seed", HookPhase::Failed),
                hook("later", HookPhase::Skipped),
                hook("stuck", HookPhase::Running),
            ],
        },
        2.0,
        "t",
    );
    let v = decide(&s);
    assert_eq!(v.code(), 1);
    assert!(
        v.evidence
            .contains(&"hook seed (post-upgrade) failed".to_string()),
        "{:?}",
        v.evidence
    );
    assert!(
        v.evidence
            .contains(&"hook later (post-upgrade) skipped: never ran".to_string()),
        "{:?}",
        v.evidence
    );
    assert!(
        v.evidence.contains(&"hook stuck left Running".to_string()),
        "{:?}",
        v.evidence
    );
    assert!(
        !v.evidence.iter().any(|e| e.contains("hook init")),
        "succeeded hooks are not problems"
    );
    assert!(
        v.evidence
            .iter()
            .any(|e| e.contains("Deployment/web not ready") && e.contains("CrashLoopBackOff"))
    );
}

#[test]
fn rollback_is_suggested_after_a_failed_upgrade_only_when_it_wrote_a_revision() {
    let mut s = state(&[(Preflight, ok()), (Upgrade, failed("render error"))], &[]);
    s.revision = Some(4);
    assert_eq!(
        decide(&s).next,
        None,
        "nothing new was written: nothing to roll back"
    );
    s.revision = None;
    assert_eq!(decide(&s).next, None, "no record read: no suggestion");
    s.revision = Some(5);
    assert_eq!(
        decide(&s).next.as_deref(),
        Some("helm rollback demo 4 -n apps")
    );
    s.plan.context = Some("prod".into());
    assert_eq!(
        decide(&s).next.as_deref(),
        Some("helm rollback demo 4 -n apps --kube-context prod")
    );
    s.revision_before = None;
    assert_eq!(
        decide(&s).next,
        None,
        "a first install has nothing to roll back to"
    );
}

#[test]
fn no_rollback_is_suggested_once_the_release_was_uninstalled() {
    let mut s = state(
        &[
            (Preflight, ok()),
            (Upgrade, failed("release demo was uninstalled")),
        ],
        &[],
    );
    s.revision = Some(5);
    assert!(decide(&s).next.is_some(), "the state without the uninstall");
    s.apply(&crate::engine::event::Event::Uninstalled, 1.0, "");
    assert_eq!(decide(&s).next, None, "no record is left to roll back to");
}

#[test]
fn rollback_is_suggested_after_a_failed_rollout() {
    let mut s = state(
        &[
            (Preflight, ok()),
            (Upgrade, ok()),
            (Rollout, failed("timed out")),
        ],
        &[workload("web", false, false)],
    );
    s.revision = Some(5);
    let v = decide(&s);
    assert_eq!(v.next.as_deref(), Some("helm rollback demo 4 -n apps"));
}

#[test]
fn rollback_names_the_last_deployed_revision_never_a_failed_one() {
    // Revisions 3 (deployed) and 4 (failed, an earlier run) before this run wrote 5.
    let mut s = state(&[(Preflight, ok()), (Upgrade, failed("timed out"))], &[]);
    s.deployed_before = Some(3);
    s.revision = Some(5);
    let v = decide(&s);
    assert_eq!(v.next.as_deref(), Some("helm rollback demo 3 -n apps"));
    assert!(
        !v.evidence
            .iter()
            .any(|e| e.contains("no deployed revision"))
    );
    // Nothing deployed before (an install that failed, then this upgrade): no command.
    s.deployed_before = None;
    s.plan.context = Some("prod".into());
    let v = decide(&s);
    assert_eq!(v.next, None);
    assert!(
        v.evidence.contains(
            &"no deployed revision of demo to roll back to (see helm history demo -n apps \
              --kube-context prod)"
                .to_string()
        ),
        "{:?}",
        v.evidence
    );
}

#[test]
fn a_multi_line_helm_error_is_whole_in_the_evidence() {
    let reason = "Error: UPGRADE FAILED: 2 errors occurred: * a * b";
    let mut s = state(&[(Preflight, ok()), (Upgrade, failed(reason))], &[]);
    s.helm.stderr_tail = vec![
        "a warning first".into(),
        "Error: UPGRADE FAILED: 2 errors occurred:".into(),
        "\t* a".into(),
        "\t* b".into(),
    ];
    let v = decide(&s);
    assert_eq!(v.reason, format!("upgrade failed: {reason}"));
    assert_eq!(
        v.evidence[..3],
        [
            "helm: Error: UPGRADE FAILED: 2 errors occurred:",
            "helm: * a",
            "helm: * b"
        ]
    );
    // A one-line error is the reason already; the evidence does not repeat it.
    s.helm.stderr_tail = vec!["Error: UPGRADE FAILED: timed out".into()];
    assert!(!decide(&s).evidence.iter().any(|e| e.starts_with("helm: ")));
}

#[test]
fn a_blocker_outside_the_release_namespace_is_named_with_its_own() {
    let elsewhere = WorkloadView {
        namespace: "monitoring".into(),
        ..workload("exporter", false, false)
    };
    let v = decide(&state(
        &[
            (Step::Preflight, StepOutcome::Succeeded),
            (Step::Upgrade, StepOutcome::Succeeded),
            (Step::Rollout, StepOutcome::Succeeded),
        ],
        &[workload("web", false, true), elsewhere],
    ));
    assert_eq!(v.code(), 1);
    assert!(
        v.reason
            .contains("Deployment/monitoring/exporter not ready"),
        "{}",
        v.reason
    );
    assert!(
        v.evidence[0].starts_with("Deployment/monitoring/exporter not ready: "),
        "{:?}",
        v.evidence
    );
}

#[test]
fn a_landed_deploy_whose_test_step_fails_is_cancelled_or_never_ends_is_1() {
    let landed = [
        (Preflight, ok()),
        (Upgrade, ok()),
        (Rollout, ok()),
        (Init, ok()),
    ];
    let with_test = |test: Option<StepOutcome>| {
        let mut s = state(&landed, &[workload("web", false, true)]);
        s.apply(&Event::StepStarted { step: Test }, 1.0, "t");
        if let Some(outcome) = test {
            s.apply(
                &Event::StepEnded {
                    step: Test,
                    outcome,
                },
                2.0,
                "t",
            );
        }
        decide(&s)
    };
    let failed = with_test(Some(StepOutcome::Failed {
        reason: "test-connection failed".into(),
    }));
    assert_eq!(
        (failed.code(), failed.reason.as_str()),
        (1, "test failed: test-connection failed")
    );
    let cancelled = with_test(Some(StepOutcome::Cancelled));
    assert_eq!(
        (cancelled.code(), cancelled.reason.as_str()),
        (1, "cancelled during test")
    );
    let unfinished = with_test(None);
    assert_eq!(
        (unfinished.code(), unfinished.reason.as_str()),
        (1, "test did not report an outcome (evidence missing)")
    );
    let passed = with_test(Some(ok()));
    assert_eq!((passed.code(), passed.outcome), (0, Outcome::Landed));
}

/// A pod failed by its second initContainer: the cause names it, and of the pod's logs only
/// that initContainer's is evidence (the one that ran fine before it is not the cause).
#[test]
fn a_job_failed_by_an_init_container_keeps_that_containers_log() {
    use crate::engine::event::ContainerView;
    let mut s = state(&[], &[]);
    let state_of = |name: &str, init: bool, state: &str| ContainerView {
        name: name.into(),
        init,
        state: state.into(),
        restarts: 0,
    };
    let pod = PodView {
        name: "demo-load-x".into(),
        namespace: "apps".into(),
        owner: "Job/demo-load".into(),
        phase: "Failed".into(),
        ready: false,
        restarts: 0,
        node: None,
        current: true,
        causes: vec!["init container fetch: Failed: Error (exit 1)".into()],
        containers: vec!["load".into()],
        container_states: vec![
            state_of("probe", true, "completed"),
            state_of("fetch", true, "terminated: Error (exit 1)"),
            state_of("load", false, "waiting: PodInitializing"),
        ],
    };
    s.pods.insert(("apps".into(), pod.name.clone()), pod);
    for (container, line) in [("probe", "probing"), ("fetch", "403 Forbidden")] {
        s.logs.insert(
            format!("demo-load-x/{container}"),
            [line.to_string()].into(),
        );
    }
    let got = job_cause(&s, "hook demo-load", "demo-load");
    assert_eq!(
        got,
        [
            "hook demo-load: 1 attempt (1 pod, 0 restarts), last: pod demo-load-x: init \
             container fetch: Failed: Error (exit 1)",
            "hook demo-load: log demo-load-x/fetch: 403 Forbidden",
        ]
    );
}
