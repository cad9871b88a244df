//! The subset that needs no fault injection (issue 11 item 7): it runs against any cluster when
//! `HELMDECK_E2E_KUBECONFIG` names its kubeconfig (each test in a namespace of its own, removed
//! at the end), else on a simulator. scripts/test.sh runs it against a `helmdeck sim` started
//! as a separate process, so the path is exercised in CI.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::{DeployRun, Sim, repo, tool};

/// tests/charts/portable: busybox with real commands, so a real cluster and the simulator
/// (which honours node selectors and a shell `exit N`) behave alike without scenario rules.
fn portable_chart() -> PathBuf {
    repo().join("tests/charts/portable")
}

/// The PodScheduled reason of the first pod matching `selector` ("" while there is none).
fn scheduled_reason(cluster: &Sim, selector: &str) -> String {
    let out = cluster.kubectl(&[
        "get",
        "pods",
        "-n",
        &cluster.namespace,
        "-l",
        selector,
        "-o",
        "jsonpath={.items[0].status.conditions[?(@.type==\"PodScheduled\")].reason}",
    ]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn deploy_portable(cluster: &Sim, extra: &[&str]) -> DeployRun {
    let report = format!("report-{}.json", std::process::id());
    let mut args = vec!["--timeout", "120s"];
    args.extend_from_slice(extra);
    cluster.deploy_chart(&portable_chart(), &report, &args)
}

/// The init step on the portable chart: its `initJob` toggle and Job.
const INIT: [&str; 4] = [
    "--init-toggle",
    "initJob.enabled",
    "--init-job",
    "demo-init",
];

#[test]
fn portable_all_green_lands_with_exit_0() {
    let cluster = Sim::portable("all-green");
    let mut args = vec!["--set", "allKinds=true"];
    args.extend(INIT);
    let run = deploy_portable(&cluster, &args);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["namespace"], cluster.namespace.as_str());
    for (kind, name) in [
        ("Deployment", "demo-app"),
        ("StatefulSet", "demo-store"),
        ("DaemonSet", "demo-agent"),
    ] {
        let w = run.workload(kind, name);
        assert_eq!(w["namespace"], cluster.namespace.as_str(), "{w}");
        assert_eq!(w["ready"], true, "{kind}/{name}: {w}");
    }
    assert_eq!(run.init_hook()["phase"], "Succeeded", "{}", run.describe());
}

#[test]
fn portable_a_second_deploy_upgrades_to_revision_2() {
    let cluster = Sim::portable("all-green");
    let first = deploy_portable(&cluster, &["--set", "allKinds=true"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    // A new pod-template annotation: every workload rolls, with no other image to pull.
    let second = deploy_portable(
        &cluster,
        &["--set", "allKinds=true", "--set", "note=second"],
    );
    assert_eq!(second.code, Some(0), "{}", second.describe());
    assert_eq!(second.report["revision"], 2, "{}", second.describe());
    for (kind, name) in [
        ("Deployment", "demo-app"),
        ("StatefulSet", "demo-store"),
        ("DaemonSet", "demo-agent"),
    ] {
        assert_eq!(second.workload(kind, name)["ready"], true, "{kind}/{name}");
        let out = cluster.kubectl(&[
            "get",
            &kind.to_lowercase(),
            name,
            "-n",
            &cluster.namespace,
            "-o",
            "jsonpath={.spec.template.metadata.annotations.helmdeck\\.io/note}",
        ]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "second",
            "{kind}/{name}"
        );
    }
}

#[test]
fn portable_an_optional_workload_no_node_can_take_stays_pending_and_lands() {
    let cluster = Sim::portable("all-green");
    let run = deploy_portable(&cluster, &["--set", "pending.enabled=true"]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let pending = run.workload("Deployment", "demo-pending");
    assert_eq!(pending["optional"], true, "{pending}");
    assert_eq!(pending["ready"], false, "{pending}");
    assert_eq!(run.workload("Deployment", "demo-app")["ready"], true);
    assert_eq!(
        scheduled_reason(&cluster, "app=demo-pending"),
        "Unschedulable"
    );
}

#[test]
fn portable_a_failing_init_job_is_exit_3() {
    let cluster = Sim::portable("all-green");
    let run = deploy_portable(
        &cluster,
        &[
            "--init-toggle",
            "initJob.enabled",
            "--init-job",
            "demo-init",
            "--set",
            "initJob.exitCode=3",
        ],
    );
    assert_eq!(run.code, Some(3), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "live-init-incomplete");
    assert!(run.reason().contains("demo-init"), "{}", run.reason());
    assert_eq!(run.init_hook()["phase"], "Failed", "{}", run.describe());
}

#[test]
fn portable_a_failing_post_upgrade_hook_is_exit_1_naming_it() {
    let cluster = Sim::portable("all-green");
    let first = deploy_portable(&cluster, &[]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let run = deploy_portable(
        &cluster,
        &[
            "--set",
            "upgradeHook.enabled=true",
            "--set",
            "upgradeHook.exitCode=1",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert_eq!(run.step("upgrade")["status"], "failed");
    assert!(
        run.reason().contains("demo-after-upgrade"),
        "{}",
        run.reason()
    );
}

#[test]
fn portable_a_pending_upgrade_lock_stops_deploy_at_preflight() {
    let cluster = Sim::portable("all-green");
    let first = deploy_portable(&cluster, &[]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    // A lock made the way one happens for real: helm killed while it waits on a pre-upgrade
    // hook (here one no node can take), leaving revision 2 pending-upgrade.
    let chart = portable_chart();
    let mut helm = cluster
        .client_command(
            &tool("helm"),
            &[
                "upgrade",
                "demo",
                chart.to_str().expect("a UTF-8 path"),
                "-n",
                &cluster.namespace,
                "--set",
                "blockingHook.enabled=true",
                "--timeout",
                "5m",
            ],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run helm upgrade");
    let deadline = Instant::now() + Duration::from_secs(60);
    while scheduled_reason(&cluster, "job-name=demo-blocking") != "Unschedulable" {
        assert!(
            Instant::now() < deadline,
            "the hook's pod never became Unschedulable"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    helm.kill().expect("SIGKILL helm");
    let _ = helm.wait();
    // The lock is seconds old: without a zero minimum age it reads as a deploy in progress.
    let run = deploy_portable(&cluster, &["--lock-min-age", "0s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let reason = run.reason();
    assert!(reason.contains("revision 2 is pending-upgrade"), "{reason}");
    let rollback = format!("helm rollback demo 1 -n {}", cluster.namespace);
    assert!(reason.contains(&rollback), "{reason}");
    assert_eq!(
        run.report["helm"]["exited"], false,
        "helm upgrade must not run"
    );
}
