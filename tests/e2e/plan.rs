//! `--plan` / `--plan-only` against the simulator with the real helm: the plan lists an added,
//! a removed and a changed object, marks the image change "will roll", flags a changed
//! volumeClaimTemplates as refused, never shows a Secret value, and writes nothing.

use std::path::PathBuf;

use crate::support::{DeployRun, Sim, repo};

/// tests/charts/plan: values toggle each kind of change.
fn plan_chart() -> PathBuf {
    repo().join("tests/charts/plan")
}

/// Every value the chart is deployed with differs here from its defaults.
const CHANGES: [&str; 10] = [
    "--set",
    "image=registry.example/web:2.0",
    "--set",
    "storage=5Gi",
    "--set",
    "extra=true",
    "--set",
    "legacy=false",
    "--set",
    "password=plan-s3cr3t-two",
];

fn writes(sim: &Sim) -> u64 {
    sim.get_json("/_sim/stats")["writes"]
        .as_u64()
        .expect("writes in /_sim/stats")
}

fn object<'a>(run: &'a DeployRun, kind: &str, name: &str) -> &'a serde_json::Value {
    run.report["plan"]["objects"]
        .as_array()
        .and_then(|os| os.iter().find(|o| o["kind"] == kind && o["name"] == name))
        .unwrap_or_else(|| panic!("no {kind}/{name} in the plan:\n{}", run.describe()))
}

fn no_secret(run: &DeployRun) {
    for secret in ["plan-s3cr3t-one", "plan-s3cr3t-two"] {
        assert!(!run.stdout.contains(secret), "{}", run.describe());
        assert!(!run.stderr.contains(secret), "{}", run.describe());
        assert!(!run.report.to_string().contains(secret), "{}", run.report);
    }
}

#[test]
fn plan_only_lists_added_removed_changed_rolls_and_refusals_exits_4_then_0_and_writes_nothing() {
    let sim = Sim::start("all-green");
    let first = sim.deploy_chart(&plan_chart(), "first.json", &["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let before = writes(&sim);

    let mut args = vec!["--plan-only"];
    args.extend(CHANGES);
    let run = sim.deploy_chart(&plan_chart(), "plan.json", &args);
    assert_eq!(run.code, Some(4), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "changes-pending");
    for line in [
        "plan      + ConfigMap/demo-extra",
        "plan      - ConfigMap/demo-legacy",
        "plan      ~ Deployment/demo-web [will roll]",
        "plan      ~ StatefulSet/demo-db [helm will be refused: StatefulSet spec.volumeClaimTemplates is immutable]",
        "plan      ~ Secret/demo-creds",
        "+      - image: registry.example/web:2.0",
        "+  password: \"*** (changed)\"",
    ] {
        assert!(
            run.stdout.contains(line),
            "{line:?} missing:\n{}",
            run.describe()
        );
    }
    no_secret(&run);
    let counts = &run.report["plan"]["counts"];
    assert_eq!(
        (&counts["added"], &counts["removed"], &counts["changed"]),
        (&1.into(), &1.into(), &3.into()),
        "{}",
        run.report["plan"]
    );
    assert_eq!(object(&run, "Deployment", "demo-web")["willRoll"], true);
    assert_eq!(object(&run, "StatefulSet", "demo-db")["willRoll"], false);
    assert_eq!(
        object(&run, "StatefulSet", "demo-db")["refused"],
        "StatefulSet spec.volumeClaimTemplates is immutable"
    );
    assert_eq!(object(&run, "ConfigMap", "demo-extra")["change"], "added");
    assert_eq!(
        object(&run, "ConfigMap", "demo-legacy")["change"],
        "removed"
    );
    assert_eq!(run.step("upgrade")["status"], "skipped");
    // Nothing written: no object, no release record (helm's dry run included).
    assert_eq!(writes(&sim), before, "{}", run.describe());
    assert_eq!(sim.helm_history().as_array().map(Vec::len), Some(1));

    let same = sim.deploy_chart(&plan_chart(), "same.json", &["--plan-only"]);
    assert_eq!(same.code, Some(0), "{}", same.describe());
    assert_eq!(same.report["verdict"]["outcome"], "no-changes");
    assert!(
        same.stdout.contains("plan      no changes"),
        "{}",
        same.describe()
    );
    assert_eq!(writes(&sim), before);
}

#[test]
fn a_first_install_plans_everything_as_added() {
    let sim = Sim::start("all-green");
    let run = sim.deploy_chart(&plan_chart(), "plan.json", &["--plan-only"]);
    assert_eq!(run.code, Some(4), "{}", run.describe());
    let plan = &run.report["plan"];
    assert_eq!(plan["firstInstall"], true);
    assert_eq!(plan["counts"]["added"], 4, "{plan}");
    assert_eq!(plan["counts"]["changed"], 0, "{plan}");
    no_secret(&run);
    assert_eq!(writes(&sim), 0, "{}", run.describe());
}

#[test]
fn plan_headless_prints_the_plan_then_deploys_without_waiting() {
    let sim = Sim::start("all-green");
    let first = sim.deploy_chart(&plan_chart(), "first.json", &["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let run = sim.deploy_chart(
        &plan_chart(),
        "plan.json",
        &[
            "--plan",
            "--timeout",
            "60s",
            "--set",
            "image=registry.example/web:2.0",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stdout
            .contains("plan      ~ Deployment/demo-web [will roll]"),
        "{}",
        run.describe()
    );
    let plan_at = run
        .stdout
        .find("plan      ~ Deployment/demo-web")
        .unwrap_or(0);
    let upgrade_at = run.stdout.find("upgrade   started").unwrap_or(0);
    assert!(
        plan_at < upgrade_at,
        "the plan prints before the upgrade:\n{}",
        run.stdout
    );
    assert_eq!(run.step("plan")["status"], "succeeded");
    assert_eq!(run.report["plan"]["counts"]["changed"], 1);
    assert_eq!(sim.helm_history().as_array().map(Vec::len), Some(2));
}

/// tests/charts/operator-like: a CRD in `crds/` and a custom resource of it in templates.
fn operator_chart() -> PathBuf {
    repo().join("tests/charts/operator-like")
}

/// A simulator with the namespaces the operator chart writes to.
fn operator_sim() -> Sim {
    Sim::start_yaml(
        "namespaces: [apps, kube-system]\ndefaults: {start_after: 300ms, ready_after: 500ms}\n",
    )
}

/// Issue 23 items 6 and 7: on a first install the plan lists the CRDs helm creates from
/// `crds/`, plans the chart although helm's server dry run cannot know them (the custom
/// resource is said to be unchecked), writes nothing, and the deploy it planned then lands.
#[test]
fn a_first_install_plans_the_crds_from_crds_and_a_custom_resource_the_server_cannot_check() {
    let sim = operator_sim();
    let run = sim.deploy_chart(&operator_chart(), "plan.json", &["--plan-only"]);
    assert_eq!(run.code, Some(4), "{}", run.describe());
    assert!(!run.stdout.contains("Some("), "{}", run.describe());
    for line in [
        "plan      + CustomResourceDefinition/widgets.deck.example.test [from crds/: helm creates it before the templates]",
        "plan      + Widget/demo-default [its CRD comes with this install: helm's server dry run cannot check it]",
        "plan      + Deployment/demo-widgets-operator",
        "helm's server dry run cannot know the CRDs this install creates first (widgets.deck.example.test)",
    ] {
        assert!(
            run.stdout.contains(line),
            "{line:?} missing:\n{}",
            run.describe()
        );
    }
    let crd = object(
        &run,
        "CustomResourceDefinition",
        "widgets.deck.example.test",
    );
    assert_eq!(crd["change"], "added");
    assert_eq!(crd["namespace"], "", "a CRD is cluster-scoped");
    assert!(
        crd["note"].as_str().is_some_and(|n| n.contains("crds/")),
        "{crd}"
    );
    let widget = object(&run, "Widget", "demo-default");
    assert!(
        widget["note"]
            .as_str()
            .is_some_and(|n| n.contains("server dry run cannot check it")),
        "{widget}"
    );
    assert_eq!(
        object(&run, "Deployment", "demo-widgets-operator")["note"],
        serde_json::Value::Null
    );
    assert_eq!(writes(&sim), 0, "{}", run.describe());

    let deployed = sim.deploy_chart(&operator_chart(), "deploy.json", &["--timeout", "60s"]);
    assert_eq!(deployed.code, Some(0), "{}", deployed.describe());
    // Installed now: an upgrade's plan runs on the server and lists no CRD (helm upgrades none).
    let again = sim.deploy_chart(&operator_chart(), "again.json", &["--plan-only"]);
    assert_eq!(again.code, Some(0), "{}", again.describe());
    assert_eq!(again.report["verdict"]["outcome"], "no-changes");
}

/// Issue 23 items 7 and 18: a plan whose helm dry run fails quotes helm's own error line
/// (never `Some(1)`), on stdout and in the report's `plan.error` (never `plan: null`).
#[test]
fn a_failed_plan_quotes_helms_error_and_the_report_says_why() {
    let sim = operator_sim();
    // --skip-crds: helm will not create the CRD, so the custom resource really fails.
    let run = sim.deploy_chart(
        &operator_chart(),
        "plan.json",
        &["--plan-only", "--", "--skip-crds"],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let helms = "Error: unable to build kubernetes objects from release manifest";
    assert!(!run.stdout.contains("Some("), "{}", run.describe());
    assert!(
        run.reason().contains(helms),
        "{}\n{}",
        run.reason(),
        run.describe()
    );
    let error = run.report["plan"]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("helm's dry run failed: ") && error.contains(helms),
        "{}",
        run.report["plan"]
    );
    assert_eq!(writes(&sim), 0, "{}", run.describe());
}
