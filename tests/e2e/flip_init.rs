//! The FLIP-shaped chart's init step as it ships (issue 22 item 1): its toggle adds, beside the
//! xnat-init hook Job, a plain ConfigMap the Job mounts. The init step applies it (server-side,
//! with helm's adoption metadata), keeps it, replaces it on the next run, and hands its fields
//! to helm so a later plain `helm upgrade` with the toggle on adopts and changes it.

use serde_json::Value;

use crate::flip::{
    INIT, INIT_JOB, PREFIX, RELEASE, create_trust_secret, deploy_flip, helm_install_flip,
};
use crate::support::{Sim, printed_commands, stdout_json, text};

const CS_CONFIG: &str = "trust-release-flip-trust-xnat-cs-config";
const SELECTOR: &str = "app.kubernetes.io/component=xnat-init";

fn with_init(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = INIT.to_vec();
    v.extend_from_slice(extra);
    v
}

/// The ConfigMap as the cluster holds it, managed fields included; `None` when it is gone.
fn cs_config(sim: &Sim) -> Option<Value> {
    let out = sim.kubectl(&[
        "get",
        "configmap",
        CS_CONFIG,
        "-n",
        &sim.namespace,
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    if out.status.success() {
        return Some(stdout_json(&out));
    }
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("NotFound"),
        "{}",
        text(&out)
    );
    None
}

fn meta<'v>(obj: &'v Value, map: &str, key: &str) -> &'v str {
    obj["metadata"][map][key].as_str().unwrap_or("")
}

fn line_of(haystack: &str, needle: &str) -> usize {
    haystack
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{haystack}"))
}

/// Deploys the chart as it ships, with the init step, and checks the ConfigMap the step
/// applied: the run's id.
fn deploy_and_check(sim: &Sim, report: &str, extra: &[&'static str]) -> String {
    let run = deploy_flip(sim, report, &with_init(extra));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.step("init")["status"], "succeeded");
    let applied = format!("applied ConfigMap {CS_CONFIG}");
    assert!(
        line_of(&run.stdout, &applied) < line_of(&run.stdout, &format!("created Job {INIT_JOB}")),
        "applied before the Job: {}",
        run.describe()
    );
    assert!(!run.stdout.contains("not applied"), "{}", run.describe());
    let in_report = run.report["notes"].as_array().is_some_and(|notes| {
        notes
            .iter()
            .any(|n| n["step"] == "init" && n["text"] == applied.as_str())
    });
    assert!(in_report, "the report's init step: {}", run.report["notes"]);
    // Kept after the init, as the Job left it.
    let cm = cs_config(sim).expect("the ConfigMap is kept");
    assert_eq!(meta(&cm, "labels", "app.kubernetes.io/instance"), RELEASE);
    assert_eq!(
        meta(&cm, "labels", "app.kubernetes.io/component"),
        "xnat-init"
    );
    assert_eq!(meta(&cm, "labels", "app.kubernetes.io/managed-by"), "Helm");
    assert_eq!(
        meta(&cm, "annotations", "meta.helm.sh/release-name"),
        RELEASE
    );
    assert_eq!(
        meta(&cm, "annotations", "meta.helm.sh/release-namespace"),
        sim.namespace
    );
    let run_id = meta(&cm, "labels", "helmdeck.io/run").to_string();
    assert!(!run_id.is_empty(), "{cm}");
    // Its fields handed to helm once the step ended.
    let managers: Vec<(&str, &str)> = cm["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or(""),
                e["operation"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(managers, [("helm", "Apply")], "{cm}");
    run_id
}

#[test]
fn the_flip_chart_lands_with_its_config_map_applied_by_the_init_step_and_replaced_next_run() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let first = deploy_and_check(&sim, "first.json", &["--timeout", "60s"]);
    let cm = cs_config(&sim).expect("kept");
    assert_eq!(cm["data"]["pacs-label"], "orthanc-mock");

    // The next run replaces it: this run's label, the values it deployed with.
    let second = deploy_and_check(
        &sim,
        "second.json",
        &[
            "--set",
            "xnat.initJob.pacsLabel=pacs-two",
            "--timeout",
            "60s",
        ],
    );
    assert_ne!(second, first, "a new run");
    let cm = cs_config(&sim).expect("kept");
    assert_eq!(cm["data"]["pacs-label"], "pacs-two");
}

#[test]
fn the_init_selector_selects_the_same_objects_and_must_select_the_job() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    deploy_and_check(
        &sim,
        "selected.json",
        &["--init-selector", SELECTOR, "--timeout", "60s"],
    );

    // A selector that leaves the Job out: exit 2 naming it, before any cluster request.
    let before = sim.get_json("/_sim/stats")["requests"].as_u64();
    let run = deploy_flip(
        &sim,
        "omop.json",
        &with_init(&["--init-selector", "app.kubernetes.io/component=omop"]),
    );
    assert_eq!(run.code, Some(2), "{}", run.describe());
    let err = run.stderr.trim();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&format!(
            "init Job {INIT_JOB} does not match --init-selector app.kubernetes.io/component=omop"
        )),
        "{err}"
    );
    let after = sim.get_json("/_sim/stats")["requests"].as_u64();
    assert_eq!(after.map(|n| n - 1), before, "no cluster request");

    // Not a label selector at all: exit 2 too.
    let run = deploy_flip(
        &sim,
        "bad.json",
        &with_init(&["--init-selector", "xnat-init"]),
    );
    assert_eq!(run.code, Some(2), "{}", run.describe());
    assert!(
        run.stderr.contains("--init-selector \"xnat-init\""),
        "{}",
        run.describe()
    );
}

#[test]
fn a_plain_helm_upgrade_with_the_toggle_on_adopts_and_changes_the_config_map() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    deploy_and_check(&sim, "deck.json", &["--timeout", "60s"]);
    // Helm 4 upgrades a release it installed by server-side apply the same way, without
    // --force-conflicts: a field helmdeck still owned would be a 409 conflict here.
    let out = helm_install_flip(
        &sim,
        &[
            "--set",
            "xnat.initJob.enabled=true",
            "--set",
            "xnat.initJob.pacsLabel=pacs-by-helm",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let cm = cs_config(&sim).expect("adopted, not deleted");
    assert_eq!(cm["data"]["pacs-label"], "pacs-by-helm");
    // Helm's now: it no longer applies helmdeck's run label.
    assert_eq!(meta(&cm, "labels", "helmdeck.io/run"), "", "{cm}");
    let manifest = sim.helm(&["get", "manifest", RELEASE, "-n", &sim.namespace]);
    assert!(
        String::from_utf8_lossy(&manifest.stdout).contains(CS_CONFIG),
        "in the release: {}",
        text(&manifest)
    );
}

#[test]
fn helm_uninstall_leaves_the_init_objects_and_the_readme_command_removes_them() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    deploy_and_check(&sim, "deck.json", &["--timeout", "60s"]);
    let out = sim.helm(&["uninstall", RELEASE, "-n", &sim.namespace]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(cs_config(&sim).is_some(), "helm removes only its manifest");
    // The command docs/init.md gives, as written there.
    let out = sim.run_printed(&format!(
        "kubectl delete configmap,secret,serviceaccount,role,rolebinding -n {} -l \
         'app.kubernetes.io/instance={RELEASE},helmdeck.io/run'",
        sim.namespace
    ));
    assert!(out.status.success(), "{}", text(&out));
    assert!(cs_config(&sim).is_none(), "removed");
    // What no helmdeck run made stays: the Secret the pods read.
    let secret = sim.kubectl(&["get", "secret", "trust-secrets", "-n", &sim.namespace]);
    assert!(secret.status.success(), "{}", text(&secret));
}

#[test]
fn the_printed_only_init_carries_the_selector_and_runs() {
    // The xnat-init container fails every time; fast kubelet back-off ends the Job soon.
    let sim = Sim::start_yaml(
        "namespaces: [apps]\ntime_scale: 1000\njobs:\n  - {match: '*-xnat-init', outcome: fail}\n",
    );
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let run = deploy_flip(
        &sim,
        "failed.json",
        &with_init(&["--init-selector", SELECTOR, "--timeout", "60s"]),
    );
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let command = printed_commands(&run)
        .into_iter()
        .find(|c| c.contains("--only init"))
        .unwrap_or_else(|| panic!("no --only init printed: {}", run.describe()));
    assert!(
        command.contains(&format!("--init-selector '{SELECTOR}'")),
        "{command}"
    );
    let out = sim.run_printed(&command);
    assert_eq!(out.status.code(), Some(3), "{command}\n{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("applied ConfigMap {PREFIX}xnat-cs-config")),
        "{}",
        text(&out)
    );
}
