//! Issue 23, what must be shown: `--dry-run` and `--plan-only` write nothing, ever. One table
//! over `deploy`, `--only rollout` and `--only init`, each with `--dry-run` or `--plan-only`,
//! alone and combined with `--recover-lock [--force]`, `--rollback-on-failure`, `--test` and
//! `--plan`, on a release that landed, one that is locked and a first install of a chart with
//! CRDs: the simulator's request stats grow only by GET and WATCH, whatever the exit. A write
//! with `dryRun` stores nothing, so it is not a write (the simulator counts it apart, as
//! `VERB dryRun`); it would be allowed, and none is made today.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{DEMO_INIT, Sim, chart, repo};

/// `byVerb` and `writes` of the simulator's request stats.
fn stats(sim: &Sim) -> (BTreeMap<String, u64>, u64) {
    let stats = sim.get_json("/_sim/stats");
    let verbs = stats["byVerb"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    (
        verbs,
        stats["writes"].as_u64().expect("writes in /_sim/stats"),
    )
}

const MODES: [&[&str]; 3] = [&[], &["--only", "rollout"], &["--only", "init"]];
const DRY: [&str; 2] = ["--dry-run", "--plan-only"];
const EXTRAS: [&[&str]; 6] = [
    &[],
    &["--recover-lock"],
    &["--recover-lock", "--force"],
    &["--rollback-on-failure"],
    &["--test"],
    &["--plan"],
];

/// The exit a combination must end with: refused (2) before any request, or `ran` (what the
/// state makes of a dry run or a plan).
fn expected(mode: &[&str], dry: &str, extra: &[&str], ran: fn(&[&str], &str) -> i32) -> i32 {
    let refused = extra.contains(&"--recover-lock")
        || (!mode.is_empty() && dry == "--plan-only")
        || (dry == "--dry-run" && extra.contains(&"--plan"));
    if refused { 2 } else { ran(mode, dry) }
}

/// Runs every combination of `modes` on `sim`: what wrote, or ended otherwise than expected.
fn check(
    sim: &Sim,
    (chart, base): (&std::path::Path, &[&str]),
    state: &str,
    modes: &[&[&str]],
    ran: fn(&[&str], &str) -> i32,
) -> Vec<String> {
    let mut failures = Vec::new();
    for mode in modes {
        for dry in DRY {
            for extra in EXTRAS {
                let mut args: Vec<&str> = base.to_vec();
                args.extend(["--timeout", "30s"]);
                args.extend_from_slice(mode);
                args.push(dry);
                args.extend_from_slice(extra);
                let (before, writes_before) = stats(sim);
                let run = sim.deploy_chart(chart, "dry.json", &args);
                let (after, writes_after) = stats(sim);
                let grew: Vec<String> = after
                    .iter()
                    .filter(|(verb, n)| before.get(*verb).copied().unwrap_or(0) < **n)
                    .map(|(verb, _)| verb.clone())
                    .filter(|verb| verb != "GET" && verb != "WATCH" && !verb.ends_with(" dryRun"))
                    .collect();
                let want = expected(mode, dry, extra, ran);
                if !grew.is_empty() || writes_after != writes_before || run.code != Some(want) {
                    failures.push(format!(
                        "{state}: {args:?}: exit {:?} (want {want}), writes {writes_before} -> {writes_after}, verbs that grew besides GET/WATCH/dryRun: {grew:?}\n{}",
                        run.code,
                        run.describe()
                    ));
                }
            }
        }
    }
    failures
}

#[test]
fn dry_runs_and_plans_make_no_write_request_in_any_combination() {
    // A release that landed: every mode.
    let sim = Sim::start("all-green");
    let landed = sim.deploy(&crate::support::with_init(&["--timeout", "60s"]));
    assert_eq!(landed.code, Some(0), "{}", landed.describe());
    // Nothing to change: --plan-only is 0 (no changes), as every dry run.
    let mut failures = check(&sim, (&chart(), &DEMO_INIT), "landed", &MODES, |_, _| 0);

    // A locked release (pending-upgrade): preflight stops every run that would upgrade or run
    // init (1), and no recovery runs; `--only rollout` only reads, so the lock does not stop it.
    let sim = Sim::start("locked");
    failures.extend(check(
        &sim,
        (&chart(), &DEMO_INIT),
        "locked",
        &MODES,
        |mode, _| {
            if mode.contains(&"rollout") { 0 } else { 1 }
        },
    ));

    // A first install of a chart whose crds/ helm would create: the plan renders (4) and no
    // CRD is created by helm's dry run.
    let sim = Sim::start_yaml(
        "namespaces: [apps, kube-system]\ndefaults: {start_after: 300ms, ready_after: 500ms}\n",
    );
    let operator = repo().join("tests/charts/operator-like");
    check(
        &sim,
        (&operator, &[]),
        "first install",
        &MODES[..1],
        |_, dry| {
            if dry == "--plan-only" { 4 } else { 0 }
        },
    );
    assert_eq!(
        sim.get_json("/_sim/stats")["objects"]["CustomResourceDefinition"],
        Value::Null,
        "no CRD was created"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
