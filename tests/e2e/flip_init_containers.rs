//! initContainers on the FLIP-shaped chart (issue 22 items 2 and 8): the init step follows an
//! initContainer's log before the app container's, a failed initContainer is named with its
//! log line in the verdict and in `inspect`, and a hook whose initContainer fails names it.

use serde_json::Value;

use crate::flip::{INIT, INIT_JOB, PREFIX, RELEASE, create_trust_secret, deploy_flip};
use crate::support::{Sim, text};

fn init_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = INIT.to_vec();
    v.extend_from_slice(extra);
    v
}

const SETUP_FAILED: &str = "XNAT site setup failed: admin login refused for user admin";

/// `helmdeck inspect trust-release -n apps --json <extra>`: exit code and document.
fn inspect_json(sim: &Sim, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["inspect", RELEASE, "-n", &sim.namespace, "--json"];
    args.extend_from_slice(extra);
    let out = sim
        .helmdeck_command(&args)
        .output()
        .expect("run helmdeck inspect");
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("inspect --json: {e}\n{}", text(&out)));
    (out.status.code(), doc)
}

/// `configure-xnat-web` fails on every run (restartPolicy OnFailure: it restarts in the same
/// pod until the Job's backoffLimit): exit 3, and the verdict names the initContainer and holds
/// its log line; inspect afterwards shows the init Job with the failed initContainer.
#[test]
fn a_failing_init_container_of_the_init_job_is_named_with_its_log_line() {
    let sim = Sim::start_yaml(&format!(
        "namespaces: [apps]\ntime_scale: 100\ninit_containers:\n  - match: '{INIT_JOB}-*'\n    container: configure-xnat-web\n    exit_code: 1\n    logs: [\"{SETUP_FAILED}\"]\n"
    ));
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let run = deploy_flip(&sim, "init-fails.json", &init_args(&["--timeout", "90s"]));
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let reason = run.reason();
    assert!(
        reason.contains("init container configure-xnat-web"),
        "the reason names the initContainer: {reason}\n{}",
        run.describe()
    );
    assert!(
        run.evidence_has(&format!("/configure-xnat-web: {SETUP_FAILED}")),
        "the evidence holds the initContainer's log line: {}\n{}",
        run.report["verdict"],
        run.describe()
    );
    assert!(
        !run.evidence_has("/configure-dcm2niix:"),
        "the app container never ran: {}",
        run.report["verdict"]
    );

    let (code, doc) = inspect_json(&sim, &[]);
    assert_eq!(code, Some(0), "the release is readable: {doc}");
    let init = &doc["init_job"];
    assert_eq!(init["name"], INIT_JOB, "{doc}");
    let pods = init["pods"].as_array().expect("the init Job's pods");
    assert!(!pods.is_empty(), "{init}");
    let containers = pods[0]["containers"].as_array().expect("containers");
    let failed = containers
        .iter()
        .find(|c| c["name"] == "configure-xnat-web")
        .unwrap_or_else(|| panic!("no configure-xnat-web in {init}"));
    assert_eq!(failed["init"], true, "{failed}");
    assert!(
        failed["log"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l == SETUP_FAILED)),
        "the failed initContainer's log tail: {failed}"
    );
    assert!(
        init["failed_container"] == "configure-xnat-web",
        "inspect names the failed initContainer: {init}"
    );

    // The text view says the same.
    let out = sim
        .helmdeck_command(&["inspect", RELEASE, "-n", &sim.namespace, "--headless"])
        .output()
        .expect("run helmdeck inspect");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains(&format!("Init Job {INIT_JOB}")) && shown.contains(SETUP_FAILED),
        "{shown}"
    );
}

/// A successful init run: the live log stream shows the initContainer's lines before the app
/// container's, each tagged with its container; inspect then says the Job was deleted after
/// it succeeded (its `hook-succeeded` policy).
#[test]
fn the_init_step_streams_init_container_logs_before_app_container_logs() {
    let sim = Sim::start_yaml(&format!(
        "namespaces: [apps]\ninit_containers:\n  - match: '{INIT_JOB}-*'\n    container: configure-xnat-web\n    run_for: 2s\n    logs: [\"site configured\", \"pacs orthanc-mock registered\"]\njobs:\n  - match: '{INIT_JOB}'\n    after: 1s\n    logs: [\"dcm2niix configured\"]\n"
    ));
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let run = deploy_flip(&sim, "init-logs.json", &init_args(&["--timeout", "90s"]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let line_of = |needle: &str| {
        run.stdout
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{}", run.describe()))
    };
    let pod = format!("{INIT_JOB}-");
    let site = line_of("/configure-xnat-web │ site configured");
    let pacs = line_of("/configure-xnat-web │ pacs orthanc-mock registered");
    let app = line_of("/configure-dcm2niix │ dcm2niix configured");
    assert!(
        site < pacs && pacs < app,
        "initContainer lines first, in order: {site} {pacs} {app}\n{}",
        run.describe()
    );
    assert!(
        run.stdout
            .lines()
            .nth(app)
            .is_some_and(|l| l.contains(&pod))
    );

    let (code, doc) = inspect_json(&sim, &[]);
    assert_eq!(code, Some(0), "{doc}");
    let init = &doc["init_job"];
    assert_eq!(init["name"], INIT_JOB, "{doc}");
    assert!(
        init["note"]
            .as_str()
            .is_some_and(|n| n.contains("deleted after it succeeded")),
        "inspect says the Job is gone because it succeeded: {init}"
    );
}

/// The `omop-vocab-load` hook (restartPolicy Never, backoffLimit 2) fails in its `fetch-bundle`
/// initContainer: helm fails, exit 1 naming the hook, and the evidence names `fetch-bundle`
/// with its log line.
#[test]
fn a_hook_whose_init_container_fails_names_it_with_its_log_line() {
    const FORBIDDEN: &str =
        "fatal error: An error occurred (403) when calling the HeadObject operation: Forbidden";
    const PROBED: &str = "vocabulary not loaded yet: fetching the bundle";
    let hook = format!("{PREFIX}omop-vocab-load");
    let sim = Sim::start_yaml(&format!(
        "namespaces: [apps]\ninit_containers:\n  - match: '{hook}-*'\n    container: probe-vocab\n    logs: [\"{PROBED}\"]\n  - match: '{hook}-*'\n    container: fetch-bundle\n    exit_code: 1\n    logs: [\"{FORBIDDEN}\"]\n"
    ));
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let run = deploy_flip(&sim, "hook-fails.json", &["--timeout", "90s"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(run.reason().contains(&hook), "{}", run.describe());
    assert!(
        run.evidence_has(&format!(
            "hook {hook}: 3 attempts (3 pods, 0 restarts), last: pod {hook}-"
        )) && run.evidence_has("init container fetch-bundle: Failed: Error (exit 1)"),
        "the cause names fetch-bundle: {}",
        run.report["verdict"]
    );
    assert!(
        run.evidence_has(&format!("/fetch-bundle: {FORBIDDEN}")),
        "the evidence holds fetch-bundle's log line: {}\n{}",
        run.report["verdict"],
        run.describe()
    );
    // The initContainer that succeeded before it is not the cause.
    assert!(
        !run.evidence_has(PROBED),
        "only the failed initContainer's log: {}",
        run.report["verdict"]
    );
}
