//! Real helm against the simulator: installs, hooks, immutable fields, history.

use crate::support::{Sim, hook_phases, stdout_json, text};

#[test]
fn helm_install_wait_succeeds_all_green() {
    let sim = Sim::start("all-green");
    let out = sim.install_demo(&["--wait", "--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));

    let status = stdout_json(&sim.helm(&["status", "demo", "-n", "apps", "-o", "json"]));
    assert_eq!(status["info"]["status"], "deployed");
    let phases = hook_phases(&status);
    for hook in ["demo-migrate", "demo-init", "demo-seed"] {
        assert!(
            phases.contains(&(hook.to_string(), "Succeeded".to_string())),
            "{hook} not Succeeded in {phases:?}"
        );
    }
    // helm status reads the live objects back (info.resources).
    assert!(status["info"]["resources"].is_object(), "{status}");
}

#[test]
fn helm_records_a_failed_post_upgrade_hook() {
    let sim = Sim::start("hook-fails");
    let out = sim.install_demo(&["--timeout", "60s"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("demo-seed"), "{stderr}");

    let status = stdout_json(&sim.helm(&["status", "demo", "-n", "apps", "-o", "json"]));
    assert_eq!(status["info"]["status"], "failed");
    let phases = hook_phases(&status);
    assert!(
        phases.contains(&("demo-seed".into(), "Failed".into())),
        "{phases:?}"
    );
    assert!(
        phases.contains(&("demo-migrate".into(), "Succeeded".into())),
        "{phases:?}"
    );
}

#[test]
fn immutable_statefulset_field_is_rejected_and_history_lists_revisions() {
    let sim = Sim::start("all-green");
    let out = sim.install_demo(&["--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));

    let out = sim.install_demo(&["--timeout", "60s", "--set", "db.storage=5Gi"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Forbidden") && stderr.contains("demo-db"),
        "{stderr}"
    );

    let history = stdout_json(&sim.helm(&["history", "demo", "-n", "apps", "-o", "json"]));
    let revisions: Vec<(i64, String)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["revision"].as_i64().unwrap(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        revisions,
        vec![(1, "deployed".into()), (2, "failed".into())],
        "{history}"
    );
}

#[test]
fn upgrade_supersedes_the_previous_revision() {
    let sim = Sim::start("all-green");
    assert!(sim.install_demo(&["--timeout", "60s"]).status.success());
    let out = sim.install_demo(&["--timeout", "60s", "--set", "image.tag=1.4.3", "--wait"]);
    assert!(out.status.success(), "{}", text(&out));
    let history = stdout_json(&sim.helm(&["history", "demo", "-n", "apps", "-o", "json"]));
    let statuses: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["superseded", "deployed"]);
}
