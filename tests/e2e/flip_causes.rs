//! Issue 22, items 3 and 5, on the FLIP-shaped chart deployed WITHOUT the init step: a gating
//! workload that is not ready at the verdict says why (its crashing container's last log lines,
//! the Warning events of its pods and controllers) in the report's evidence, the headless
//! `problems:` block and JUnit; an optional workload keeps its cause on an upgrade.

use crate::flip::{PREFIX, create_trust_secret, deploy_flip};
use crate::support::Sim;

/// The report's verdict reason and evidence as one text, to search in.
fn verdict_text(run: &crate::support::DeployRun) -> String {
    format!(
        "{}\n{}",
        run.reason(),
        run.report["verdict"]["evidence"]
            .as_array()
            .map(|e| e
                .iter()
                .filter_map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join("\n"))
            .unwrap_or_default()
    )
}

/// The headless `problems:` block (up to the verdict line).
fn problems(stdout: &str) -> &str {
    let start = stdout.find("\nproblems:").unwrap_or(stdout.len());
    let end = stdout[start..]
        .find("\nverdict:")
        .map_or(stdout.len(), |e| start + e);
    &stdout[start..end]
}

const CRASH: &str = "FATAL: cannot reach omop-db at trust-release-flip-trust-omop-db:5432";

#[test]
fn a_crash_looping_gating_workload_has_its_last_log_line_in_report_problems_and_junit() {
    let sim = Sim::start_yaml(&format!(
        "namespaces: [apps]\ndefaults: {{start_after: 200ms, ready_after: 200ms}}\n\
         workloads:\n  - match: Deployment/*-trust-api\n    start_after: 200ms\n    crash_loop: 1\n\
         \x20   logs: [\"trust-api 1.9.3 starting\", \"{CRASH}\"]\n"
    ));
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let junit = sim.home().join("crash.xml");
    let run = deploy_flip(
        &sim,
        "crash.json",
        &[
            "--timeout",
            "8s",
            "--junit",
            junit.to_str().expect("a UTF-8 path"),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let api = format!("Deployment/{PREFIX}trust-api");
    assert!(
        run.report["verdict"]["evidence"]
            .as_array()
            .is_some_and(|e| e.iter().any(|l| {
                let l = l.as_str().unwrap_or("");
                l.starts_with(&api) && l.contains("previous instance") && l.ends_with(CRASH)
            })),
        "the previous instance's last log line, under its workload: {}",
        run.describe()
    );
    assert!(
        problems(&run.stdout).contains(CRASH),
        "problems: {}",
        run.describe()
    );
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(xml.contains(CRASH), "JUnit: {xml}");
}

#[test]
fn a_missing_service_account_gives_a_verdict_naming_failed_create_and_the_account() {
    let sim =
        Sim::start_yaml("namespaces: [apps]\ndefaults: {start_after: 200ms, ready_after: 200ms}\n");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let run = deploy_flip(
        &sim,
        "sa.json",
        &[
            "--timeout",
            "8s",
            "--set",
            "serviceAccount.name=trust-api-sa",
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let said = verdict_text(&run);
    assert!(
        said.contains("FailedCreate") && said.contains("serviceaccount \"trust-api-sa\" not found"),
        "{said}\n{}",
        run.describe()
    );
    assert!(
        problems(&run.stdout).contains("FailedCreate"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_missing_secret_gives_a_verdict_naming_the_secret_and_a_missing_key_names_the_key() {
    let sim =
        Sim::start_yaml("namespaces: [apps]\ndefaults: {start_after: 200ms, ready_after: 200ms}\n");
    // Without the hooks (which read the Secret too, so helm would fail on them first), the
    // rollout's workloads wait in CreateContainerConfigError: each names the Secret, with the
    // kubelet's Warning event.
    let mut args = vec!["--timeout", "8s"];
    args.extend(NO_HOOKS);
    let run = deploy_flip(&sim, "secret.json", &args);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let said = verdict_text(&run);
    let api = format!("Deployment/{PREFIX}trust-api: event pod/{PREFIX}trust-api-");
    assert!(
        said.lines().any(|l| l.starts_with(&api)
            && l.contains(" Failed")
            && l.contains("secret \"trust-secrets\" not found")),
        "{said}\n{}",
        run.describe()
    );
    // The Secret exists without one of the keys the pods read: the key is named (here by the
    // trust-seed hook that helm runs first).
    let out = sim.kubectl(&[
        "create",
        "secret",
        "generic",
        "trust-secrets",
        "-n",
        &sim.namespace,
        "--from-literal=xnat-admin-password=pw",
    ]);
    assert!(out.status.success(), "{}", crate::support::text(&out));
    let run = deploy_flip(
        &sim,
        "key.json",
        &["--timeout", "8s", "--set", "global.image.tag=1.9.4"],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let said = verdict_text(&run);
    assert!(
        said.contains("db-password") && said.contains("trust-secrets"),
        "{said}\n{}",
        run.describe()
    );
}

/// No hooks, so helm returns as soon as it applied: the rollout starts while the controllers
/// (one pass a second here) have not yet seen the upgrade.
const NO_HOOKS: [&str; 2] = [
    "--set",
    "xnat.initJob.enabled=false,trustSeed.enabled=false,omopDb.vocabLoad.enabled=false",
];

/// Installs the chart without the GPU client, then upgrades with it, optional, on a cluster
/// with no free GPU: every gating workload is ready at once (unchanged), the client's pods are
/// not there yet when the rollout step first lists (the controllers run once a second here).
fn upgrade_adding_the_gpu_client(scenario: &str) -> crate::support::DeployRun {
    let sim = Sim::start_yaml(scenario);
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let mut args = vec!["--optional", "Deployment/*-fl-client", "--timeout", "30s"];
    args.extend(NO_HOOKS);
    let mut install = args.clone();
    install.extend(["--set", "flClient.enabled=false"]);
    let first = deploy_flip(&sim, "install.json", &install);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let run = deploy_flip(&sim, "upgrade.json", &args);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    run
}

const NO_GPU: &str = "namespaces: [apps]\ntick: 1s\ndefaults: {start_after: 200ms, ready_after: 200ms}\n\
                      node_rules: [{capacity: {nvidia.com/gpu: \"0\"}}]\n";

#[test]
fn the_optional_fl_client_keeps_its_failed_scheduling_cause_on_an_upgrade() {
    let run = upgrade_adding_the_gpu_client(NO_GPU);
    let client = run.workload("Deployment", &format!("{PREFIX}fl-client"));
    let causes = client["podCauses"].to_string();
    assert!(
        causes.contains("Unschedulable") && causes.contains("nvidia.com/gpu"),
        "the optional client's cause: {client}\n{}",
        run.describe()
    );
    assert!(
        run.evidence_has(&format!("optional Deployment/{PREFIX}fl-client not ready"))
            && run.evidence_has("Insufficient nvidia.com/gpu"),
        "{}",
        run.describe()
    );
}

#[test]
fn an_optional_workload_whose_pods_never_come_says_pods_not_seen_yet() {
    // The controller never takes the client up: no ReplicaSet, no pod, nothing to say why.
    let sim = Sim::start_yaml(&format!(
        "{NO_GPU}workloads:\n  - {{match: Deployment/*-fl-client, never_observe: true}}\n"
    ));
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let mut args = vec!["--optional", "Deployment/*-fl-client", "--timeout", "30s"];
    args.extend(NO_HOOKS);
    let run = deploy_flip(&sim, "install.json", &args);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let client = run.workload("Deployment", &format!("{PREFIX}fl-client"));
    assert_eq!(
        client["podCauses"],
        serde_json::json!(["pods not seen yet"]),
        "{client}\n{}",
        run.describe()
    );
    assert!(run.evidence_has("pods not seen yet"), "{}", run.describe());
}
