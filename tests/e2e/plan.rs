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
