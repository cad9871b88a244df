//! Issue 23, advice and evidence that do not mislead: the preflight timeout budget reads the
//! values helm really gets (those after `--` too, in the upgrade's order).

use crate::support::Sim;

/// `--set db.replicas=1 -- --set db.replicas=6`: helm upgrades with 6 (the later `--set`
/// wins), so the budget is 6 waves of StatefulSet/demo-db (60s), not 1 (10s) or the chart's 2
/// (20s): `--timeout 30s` is warned about.
#[test]
fn the_timeout_budget_reads_the_values_after_the_double_dash_in_the_upgrades_order() {
    let sim = Sim::start("slow");
    let run = sim.deploy(&[
        "--timeout",
        "30s",
        "--dry-run",
        "--set",
        "db.replicas=1",
        "--",
        "--set",
        "db.replicas=6",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stdout.contains(
            "warning: --timeout 30s is shorter than StatefulSet/demo-db may legitimately take \
             to roll out (StatefulSet/demo-db: 6 replicas ÷ surge 1 = 6 waves × (5s delay + 5s \
             period) = 60s); raise --timeout to at least 60s"
        ),
        "{}",
        run.describe()
    );
    // The upgrade the dry run prints gets both, the later last.
    assert!(
        run.stdout
            .contains("--set db.replicas=*** --timeout 30s --set db.replicas=***"),
        "{}",
        run.describe()
    );
}
