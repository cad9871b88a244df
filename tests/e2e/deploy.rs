//! The verdict matrix: `helmdeck deploy` with the real helm against `helmdeck sim`, one
//! scenario per story, asserting exit code and report.

use std::time::Duration;

use crate::support::{Sim, chart_copy, text, with_init};

#[test]
fn all_green_lands_with_exit_0() {
    let sim = Sim::start("all-green");
    let run = sim.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "landed");
    assert_eq!(run.step("init")["status"], "succeeded");
    assert_eq!(run.report["revision"], 1);
    for (kind, name) in [
        ("Deployment", "demo-api"),
        ("Deployment", "demo-web"),
        ("StatefulSet", "demo-db"),
        ("DaemonSet", "demo-agent"),
    ] {
        assert_eq!(run.workload(kind, name)["ready"], true, "{kind}/{name}");
    }
    // The init Job's log lines were streamed.
    assert!(run.stdout.contains("init complete"), "{}", run.describe());
    let init = run.init_hook();
    assert_eq!(init["name"], "demo-init");
    assert_eq!(init["phase"], "Succeeded", "{init}");
    assert!(
        init["uid"].as_str().is_some_and(|u| !u.is_empty()),
        "{init}"
    );
    assert!(
        run.reason().contains("init Job demo-init succeeded in"),
        "{}",
        run.reason()
    );
    // A first install: no OnDelete note.
    assert!(!run.reason().contains("old revision"), "{}", run.reason());
}

/// A deny-list pattern (flag or helmdeck.toml) that matches no workload of the release is a
/// warning naming it, on the headless stream and in the report: a typo must not silently leave
/// a workload gating (issue 22 item 10a). A pattern that matches says nothing.
#[test]
fn an_optional_pattern_that_matches_no_workload_is_a_warning() {
    let sim = Sim::start("all-green");
    let chart = chart_copy(sim.home(), |_, text| text);
    std::fs::write(
        chart.join("helmdeck.toml"),
        "optional = [\"Deployment/*-monitorng\"]\n",
    )
    .unwrap();
    let run = sim.deploy_chart(
        &chart,
        "optional-typo.json",
        &[
            "--timeout",
            "60s",
            "--optional",
            "Deployment/*-gpu-clinet",
            "--optional",
            "Deployment/*-gpu-client",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let warnings: Vec<String> = run.report["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n["level"] == "warn" && n["step"] == "rollout")
        .filter_map(|n| n["text"].as_str().map(str::to_string))
        .filter(|t| t.contains("matches no workload"))
        .collect();
    let tail = ": it makes nothing optional (a typo leaves the workload it meant gating)";
    assert_eq!(
        warnings,
        [
            format!("--optional Deployment/*-monitorng matches no workload of the release{tail}"),
            format!("--optional Deployment/*-gpu-clinet matches no workload of the release{tail}"),
        ],
        "{}",
        run.describe()
    );
    assert!(
        run.stdout
            .contains("warning: --optional Deployment/*-gpu-clinet matches no workload"),
        "{}",
        run.describe()
    );
    assert!(
        !run.stdout
            .contains("--optional Deployment/*-gpu-client matches"),
        "{}",
        run.describe()
    );
}

#[test]
fn optional_pending_workload_on_the_deny_list_still_lands() {
    let sim = Sim::start("optional-pending");
    // Not annotated, denied by the flag instead.
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--set",
        "gpuClient.optional=false",
        "--optional",
        "Deployment/*-gpu-client",
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let gpu = run.workload("Deployment", "demo-gpu-client");
    assert_eq!(gpu["optional"], true);
    assert_eq!(gpu["ready"], false);
    assert!(
        gpu["optionalBecause"]
            .as_str()
            .unwrap()
            .contains("--optional"),
        "{gpu}"
    );
    assert!(
        run.report["verdict"]["evidence"]
            .to_string()
            .contains("Unschedulable"),
        "{}",
        run.describe()
    );
    assert_eq!(run.init_hook()["phase"], "Succeeded", "{}", run.describe());
}

#[test]
fn the_same_pending_workload_not_denied_fails_naming_it() {
    let sim = Sim::start("optional-pending");
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "8s",
        "--set",
        "gpuClient.optional=false",
    ]));
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.reason().contains("demo-gpu-client"), "{}", run.reason());
    assert!(run.reason().contains("Unschedulable"), "{}", run.reason());
    assert_eq!(
        run.workload("Deployment", "demo-gpu-client")["optional"],
        false
    );
    // The rollout failed: init never ran.
    assert_eq!(run.init_hook()["phase"], "skipped", "{}", run.describe());
    assert!(run.evidence_has("Unschedulable"), "{}", run.describe());
}

/// An init Job that fails several times (restartPolicy Never: a new pod per failure) is ONE
/// cause with its attempts counted, in the reason and in the evidence, not a line per pod
/// (issue 22 item 10c).
#[test]
fn an_init_job_that_failed_several_times_is_one_cause_with_its_attempts() {
    let sim = Sim::start("init-fails");
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "90s",
        "--set",
        "initJob.backoffLimit=3",
    ]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let attempts = "init Job demo-init: 4 attempts (4 pods, 0 restarts), last: pod demo-init-";
    let evidence: Vec<&str> = run.report["verdict"]["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    let counted: Vec<&&str> = evidence
        .iter()
        .filter(|e| e.starts_with("init Job demo-init: ") && !e.contains(": log "))
        .collect();
    assert_eq!(counted.len(), 1, "{evidence:#?}");
    assert!(
        counted[0].starts_with(attempts) && counted[0].ends_with(": Failed: Error (exit 2)"),
        "{evidence:#?}"
    );
    // One pod's last words, not every attempt's.
    let said = "error: send invite: dial tcp 10.96.112.9:587: connect: connection refused";
    assert_eq!(
        evidence.iter().filter(|e| e.ends_with(said)).count(),
        1,
        "{evidence:#?}"
    );
    assert!(
        run.reason()
            .contains("; 4 attempts (4 pods, 0 restarts), last: pod demo-init-"),
        "{}",
        run.reason()
    );
    assert_eq!(
        run.reason().matches("pod demo-init-").count(),
        1,
        "{}",
        run.reason()
    );
}

#[test]
fn init_job_failure_is_exit_3_live_init_incomplete() {
    let sim = Sim::start("init-fails");
    let run = sim.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "live-init-incomplete");
    assert_eq!(run.step("rollout")["status"], "succeeded");
    assert!(run.reason().contains("demo-init"), "{}", run.reason());
    assert!(
        run.report["verdict"]["next"]
            .as_str()
            .unwrap()
            .contains("--only init")
    );
    let init = run.init_hook();
    assert_eq!(init["phase"], "Failed", "{init}");
    assert!(
        init["uid"].as_str().is_some_and(|u| !u.is_empty()),
        "{init}"
    );
    // The Job's own last words (crates/helmdeck-sim/scenarios/init-fails.yaml), not just its name.
    assert!(
        run.evidence_has(
            "error: send invite: dial tcp 10.96.112.9:587: connect: connection refused"
        ),
        "{}",
        run.report["verdict"]
    );
}

#[test]
fn chart_rendering_no_init_job_lands_with_init_skipped() {
    let sim = Sim::start("all-green");
    // A toggle that adds no Job at all (a toggle that adds one under another name is exit 2).
    let run = sim.deploy(&[
        "--init-toggle",
        "bootstrap.enabled",
        "--init-job",
        "demo-bootstrap",
        "--timeout",
        "60s",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.step("init")["status"], "skipped");
    assert!(
        run.step("init")["reason"]
            .as_str()
            .unwrap()
            .contains("renders no Job demo-bootstrap with bootstrap.enabled=true")
    );
    assert_eq!(run.init_hook()["phase"], "skipped");
}

#[test]
fn a_later_post_upgrade_hook_failure_is_exit_1_naming_it() {
    let sim = Sim::start("hook-fails");
    let run = sim.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.step("upgrade")["status"], "failed");
    assert!(run.reason().contains("demo-seed"), "{}", run.reason());
    let hooks = run.report["hooks"].as_array().unwrap();
    let phase = |n: &str| {
        hooks
            .iter()
            .find(|h| h["name"] == n)
            .map(|h| h["phase"].as_str().unwrap().to_string())
    };
    assert_eq!(phase("demo-seed").as_deref(), Some("Failed"));
    assert_eq!(phase("demo-migrate").as_deref(), Some("Succeeded"));
    // The failed hook's last log lines are shown, not just helm's one-line error.
    assert!(
        run.stdout.contains("violates foreign key constraint"),
        "{}",
        run.describe()
    );
    // The report carries it too (crates/helmdeck-sim/scenarios/hook-fails.yaml), and init never ran.
    assert!(
        run.evidence_has(
            "error: fixtures/demo/orders.yaml: insert or update on table \"orders\" violates foreign key constraint \"orders_customer_id_fkey\""
        ),
        "{}",
        run.report["verdict"]
    );
    assert_eq!(run.init_hook()["phase"], "skipped", "{}", run.describe());
}

/// While helm runs, the failing hook's pod is shown with its Events (each hook object's own,
/// selected by uid, not the namespace's): before helm exits and the record names the hook.
#[test]
fn a_failing_hooks_pod_events_are_shown_while_helm_runs() {
    let sim = Sim::start("hook-fails");
    let run = sim.deploy(&["--timeout", "60s", "--events", "-", "--no-record"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let events: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .map(|l: serde_json::Value| l["event"].clone())
        .collect();
    let exited = events
        .iter()
        .position(|e| e["type"] == "helm_exited")
        .expect("helm's exit is told");
    let about = |e: &serde_json::Value, prefix: &str| {
        e["type"] == "kube_event" && e["object"].as_str().is_some_and(|o| o.starts_with(prefix))
    };
    let live = events[..exited]
        .iter()
        .filter(|e| about(e, "pod/demo-seed-"))
        .count();
    assert!(
        live > 0,
        "no Event about the seed hook's pod before helm exited: {}",
        run.stdout
    );
    // Only the hook objects' Events: none about the release's workloads or their pods.
    let hooks: Vec<String> = run.report["hooks"]
        .as_array()
        .expect("the hooks")
        .iter()
        .filter_map(|h| h["name"].as_str())
        .flat_map(|h| [format!("pod/{h}-"), format!("job/{h}")])
        .collect();
    let others: Vec<&serde_json::Value> = events[..exited]
        .iter()
        .filter(|e| e["type"] == "kube_event" && !hooks.iter().any(|h| about(e, h)))
        .collect();
    assert!(others.is_empty(), "{others:?}");
}

#[test]
fn immutable_field_upgrade_rejected_is_exit_1() {
    let sim = Sim::start("all-green");
    assert_eq!(sim.deploy(&["--timeout", "60s"]).code, Some(0));
    let run = sim.deploy(&["--timeout", "60s", "--set", "db.storage=5Gi"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.reason().contains("Forbidden"), "{}", run.reason());
    assert_eq!(
        run.report["verdict"]["next"],
        "helm rollback demo 1 -n apps"
    );
}

/// Installs cleanly, then upgrades with a new image tag (generation 2) into the scenario's trap.
fn second_deploy(scenario: &str) -> crate::support::DeployRun {
    let sim = Sim::start(scenario);
    let first = sim.deploy(&["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "first deploy: {}", first.describe());
    sim.deploy(&["--timeout", "6s", "--set", "image.tag=1.4.3"])
}

#[test]
fn new_generation_never_observed_while_old_pods_stay_ready_is_exit_1() {
    let run = second_deploy("never-observed");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("demo-web") && run.reason().contains("spec update to be observed"),
        "{}",
        run.reason()
    );
}

#[test]
fn old_surge_pod_that_never_terminates_is_exit_1() {
    let run = second_deploy("surge-stuck");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("demo-web")
            && run
                .reason()
                .contains("old replicas are pending termination"),
        "{}",
        run.reason()
    );
    // The counts add up: the old surge pod is counted, so `ready: false` beside full
    // ready/updated counts is explained in the report itself.
    let replicas = &run.workload("Deployment", "demo-web")["replicas"];
    assert!(replicas["old"].as_i64() >= Some(1), "{replicas}");
    assert!(
        replicas["total"].as_i64() > replicas["desired"].as_i64(),
        "{replicas}"
    );
    assert_eq!(run.init_hook()["phase"], "not configured");
}

/// Exit 1 because demo-db's revisions never converge, not because it is slow: its pods are all
/// Ready and updated, and the only thing it waits for is currentRevision to reach updateRevision.
#[test]
fn statefulset_revision_never_converging_is_exit_1() {
    let sim = Sim::start("sts-revision-stuck");
    let first = sim.deploy(&["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "first deploy: {}", first.describe());
    let run = sim.deploy(&["--timeout", "6s", "--set", "image.tag=1.4.3"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let out = sim.kubectl(&["get", "statefulset", "demo-db", "-n", "apps", "-o", "json"]);
    let sts: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let update_revision = sts["status"]["updateRevision"].as_str().unwrap_or("");
    assert!(
        !update_revision.is_empty() && sts["status"]["currentRevision"] != update_revision,
        "the scenario must leave the revisions apart: {}",
        sts["status"]
    );
    let db = run.workload("StatefulSet", "demo-db");
    let replicas = &db["replicas"];
    let desired = replicas["desired"].as_i64().unwrap_or(0);
    assert!(desired > 0, "{db}");
    assert_eq!(replicas["ready"], desired, "every pod Ready: {db}");
    assert_eq!(replicas["updated"], desired, "every pod updated: {db}");
    let wording = format!(
        "waiting for statefulset rolling update to complete {desired} pods at revision {update_revision}..."
    );
    assert_eq!(db["message"], wording.as_str(), "{db}");
    assert_eq!(db["ready"], false, "{db}");
    assert_eq!(
        db["podCauses"],
        serde_json::json!([]),
        "no pod is unwell: {db}"
    );
    assert_eq!(
        run.reason(),
        format!("rollout failed: timed out after 6s; not ready: StatefulSet/demo-db: {wording}"),
        "demo-db alone blocks, for its revision only"
    );
}

#[test]
fn progress_deadline_exceeded_fails_fast_well_before_the_timeout() {
    let sim = Sim::start("progress-deadline");
    let run = sim.deploy(&["--timeout", "300s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("exceeded its progress deadline"),
        "{}",
        run.reason()
    );
    // The deadline is 5s; the budget 300s. A 10x margin either way.
    assert!(
        run.elapsed < Duration::from_secs(120),
        "took {:?}",
        run.elapsed
    );
}

#[test]
fn cluster_unreachable_is_exit_1_within_seconds() {
    let sim = Sim::start("all-green");
    // Point the kubeconfig at a port nobody listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let text = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let url = sim.url.clone();
    std::fs::write(
        &sim.kubeconfig,
        text.replace(&url, &format!("http://127.0.0.1:{port}")),
    )
    .unwrap();
    let run = sim.deploy(&[]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.reason().contains("unreachable"), "{}", run.reason());
    assert_eq!(run.step("upgrade")["status"], "not-run");
    assert!(
        run.elapsed < Duration::from_secs(60),
        "took {:?}",
        run.elapsed
    );
}

#[test]
fn no_gating_workloads_fails_closed() {
    let sim = Sim::start("all-green");
    let run = sim.deploy(&["--timeout", "60s", "--optional", "*"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("no gating workloads"),
        "{}",
        run.reason()
    );
}

#[test]
fn pending_upgrade_lock_is_exit_1_without_running_helm() {
    let sim = Sim::start("locked");
    let before = sim.get_json("/_sim/stats");
    let run = sim.deploy(&["--timeout", "60s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(reason.contains("revision 3 is pending-upgrade"), "{reason}");
    assert!(reason.contains("last deployed revision 2"), "{reason}");
    assert!(reason.contains("helm rollback demo 2 -n apps"), "{reason}");
    assert_eq!(
        run.report["helm"]["exited"], false,
        "helm upgrade must not run"
    );
    let after = sim.get_json("/_sim/stats");
    assert_eq!(before["writes"], after["writes"], "nothing was written");
}

/// helmdeck's own watches (the simulator counts faults per watch, by resource, selector and
/// client) get a drop, a 410 and a burst of 500s mid-rollout; after each 410 or 500 the watch
/// starts over with a LIST (never a resumed WATCH), the rollout step's data is re-trusted only
/// after it, and the verdict is still right.
#[test]
fn dropped_watches_a_410_and_500s_mid_rollout_relist_and_still_land() {
    let sim = Sim::start("flaky-watch");
    let run = sim.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "landed");
    for (kind, name) in [
        ("Deployment", "demo-api"),
        ("Deployment", "demo-web"),
        ("StatefulSet", "demo-db"),
        ("DaemonSet", "demo-agent"),
    ] {
        assert_eq!(run.workload(kind, name)["ready"], true, "{kind}/{name}");
    }
    let stats = sim.get_json("/_sim/stats");
    let ours: Vec<&serde_json::Value> = stats["watchFaults"]
        .as_array()
        .unwrap_or_else(|| panic!("no watchFaults in the simulator's stats: {stats}"))
        .iter()
        .filter(|w| w["client"] == "helmdeck")
        .collect();
    let all: String = ours.iter().map(|w| format!("\n  {w}")).collect();
    // A 410 or a 500 is an error to the watch loop: it must start over with a full list.
    for w in &ours {
        for fault in ["gone", "errors500"] {
            assert_eq!(
                w["after"][fault]["watches"], 0,
                "a watch resumed after a {fault} without relisting: {w}"
            );
        }
    }
    // The watches the verdict rests on each got every fault and came back after each.
    for resource in ["deployments.apps", "statefulsets.apps", "daemonsets.apps"] {
        let w = ours
            .iter()
            .find(|w| {
                w["resource"] == resource && w["labelSelector"] == "app.kubernetes.io/instance=demo"
            })
            .unwrap_or_else(|| panic!("no labelled watch of {resource}: {all}"));
        for fault in ["drops", "gone", "errors500"] {
            assert!(
                w[fault].as_u64() > Some(0),
                "{resource} got no {fault}: {w}"
            );
        }
        for fault in ["gone", "errors500"] {
            assert!(
                w["after"][fault]["lists"].as_u64() > Some(0),
                "{resource} did not relist after a {fault}: {w}"
            );
        }
        // A drop is a clean end of stream: resuming from the last resourceVersion is correct.
        let back = &w["after"]["drops"];
        assert!(
            back["watches"].as_u64() > Some(0) || back["lists"].as_u64() > Some(0),
            "{resource} never came back after a drop: {w}"
        );
    }
    assert!(
        run.stdout.contains("failing (retrying)") && run.stdout.contains("re-synced"),
        "the rollout step saw a watch fail and re-sync: {}",
        run.describe()
    );
}

#[test]
fn sigterm_during_helm_exits_1_and_leaves_the_release_failed_not_pending() {
    let (sim, run) = crate::support::signal_during_helm(libc::SIGTERM, "cancel.json");
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.reason(), "cancelled", "{}", run.describe());
    let history = sim.helm_history();
    assert_eq!(history[0]["status"], "failed", "{history}");
}

#[test]
fn only_rollout_attaches_without_running_helm() {
    let sim = Sim::start("all-green");
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let run = sim.deploy(&["--only", "rollout", "--timeout", "60s"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.step("upgrade")["status"], "skipped");
    assert_eq!(run.report["helm"]["exited"], false);
    assert_eq!(run.workload("StatefulSet", "demo-db")["ready"], true);
}

#[test]
fn only_rollout_diagnoses_a_stuck_rollout_someone_else_started() {
    let sim = Sim::start("crashloop");
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let run = sim.deploy(&["--only", "rollout", "--timeout", "6s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.reason().contains("demo-web") && run.reason().contains("CrashLoopBackOff"),
        "{}",
        run.reason()
    );
}

#[test]
fn only_init_reruns_the_init_job_against_the_live_release() {
    let sim = Sim::start("all-green");
    assert_eq!(sim.deploy(&with_init(&["--timeout", "60s"])).code, Some(0));
    let run = sim.deploy(&with_init(&["--only", "init", "--timeout", "60s"]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.step("upgrade")["status"], "skipped");
    assert_eq!(run.step("init")["status"], "succeeded");
    assert!(
        run.stdout.contains("deleted the previous Job demo-init"),
        "{}",
        run.describe()
    );
}

#[test]
fn dry_run_writes_nothing() {
    let sim = Sim::start("all-green");
    let before = sim.get_json("/_sim/stats");
    let run = sim.deploy(&with_init(&[
        "--dry-run",
        "--set",
        "api.secretToken=hunter2",
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let after = sim.get_json("/_sim/stats");
    assert_eq!(
        before["writes"], after["writes"],
        "a dry run wrote to the cluster: {after}"
    );
    assert!(
        run.stdout
            .contains("would run: helm upgrade --install demo"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("api.secretToken=***"),
        "{}",
        run.describe()
    );
    assert!(!run.stdout.contains("hunter2") && !run.report.to_string().contains("hunter2"));
    assert_eq!(run.report["verdict"]["outcome"], "dry-run");
    assert_eq!(run.report["dryRun"], true);
    assert!(
        run.stdout
            .contains("verdict: DRY RUN (exit 0): nothing was written"),
        "{}",
        run.describe()
    );
    assert!(!run.stdout.contains("LANDED"), "{}", run.describe());
}

#[test]
fn usage_errors_exit_2_before_touching_the_cluster() {
    let sim = Sim::start("all-green");
    for (args, says) in [
        (
            vec!["--", "--wait"],
            "--wait is not allowed among the helm arguments",
        ),
        (
            vec!["-f", "/nonexistent/values.yaml"],
            "values file /nonexistent/values.yaml is not readable",
        ),
        (vec!["--helm", "/nonexistent/helm"], "/nonexistent/helm"),
        (
            vec!["--timeout", "soon"],
            "--timeout: \"soon\" is not a duration",
        ),
    ] {
        let run = sim.deploy(&args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.describe());
        assert!(
            run.stderr.starts_with("helmdeck: ") && run.stderr.contains(says),
            "{args:?} should say {says:?}: {}",
            run.describe()
        );
    }
    assert_eq!(
        sim.get_json("/_sim/stats")["requests"],
        1,
        "only the stats request itself"
    );
}

/// The report path is checked before the run (a bad one is exit 2); one that stops taking the
/// report during the run (its directory removed) fails closed at the end.
#[test]
fn an_unwritable_report_fails_closed_with_exit_1() {
    let sim = Sim::start("all-green");
    let dir = sim.home().join("reports");
    std::fs::create_dir(&dir).unwrap();
    let report = dir.join("report.json");
    let chart = crate::support::chart();
    let child = sim
        .helmdeck_command(&[
            "deploy",
            "demo",
            chart.to_str().unwrap(),
            "-n",
            "apps",
            "--headless",
            "--timeout",
            "60s",
            "--report",
            report.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    sim.wait_for("the running report", Duration::from_secs(30), |_| {
        report.exists()
    });
    std::fs::remove_dir_all(&dir).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("verdict: LANDED"),
        "the deploy itself landed"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("writing the report"),
        "{}",
        text(&out)
    );
}

#[test]
fn timeout_names_each_blocker_with_its_pod_level_cause() {
    for (scenario, workload, cause) in [
        ("image-pull", "demo-api", "ImagePullBackOff"),
        ("oom", "demo-api", "OOMKilled"),
        ("readiness-never", "demo-web", "eadiness probe"),
    ] {
        let sim = Sim::start(scenario);
        let run = sim.deploy(&["--timeout", "8s"]);
        assert_eq!(run.code, Some(1), "{scenario}: {}", run.describe());
        let reason = run.reason();
        assert!(
            reason.contains(workload) && reason.contains(cause),
            "{scenario}: {reason}"
        );
        let causes = run.workload("Deployment", workload)["podCauses"].to_string();
        assert!(causes.contains(cause), "{scenario}: {causes}");
        assert!(
            run.evidence_has(cause),
            "{scenario}: {}",
            run.report["verdict"]
        );
        assert_eq!(run.init_hook()["phase"], "not configured", "{scenario}");
    }
}

#[test]
fn crash_loop_timeout_names_the_exit_code_and_restarts() {
    let sim = Sim::start("crashloop");
    let run = sim.deploy(&["--timeout", "8s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    // The container runs again between back-offs; it is still named as crash-looping.
    let at = reason
        .find("CrashLoopBackOff (exit 1, ")
        .unwrap_or_else(|| panic!("no exit code in {reason}"));
    let rest = &reason[at + "CrashLoopBackOff (exit 1, ".len()..];
    let restarts: String = rest.chars().take_while(char::is_ascii_digit).collect();
    assert!(!restarts.is_empty(), "{reason}");
    assert!(rest[restarts.len()..].starts_with(" restart"), "{reason}");
    assert!(!reason.contains("eadiness probe"), "{reason}");
}
