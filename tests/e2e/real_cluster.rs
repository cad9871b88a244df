//! The subset that needs no fault injection (issue 11 item 7): it runs against any cluster when
//! `HELMDECK_E2E_KUBECONFIG` names its kubeconfig (each test in a namespace of its own, removed
//! at the end), else on a simulator. scripts/test.sh runs it against a `helmdeck sim` started
//! as a separate process, so the path is exercised in CI.

use crate::support::{Sim, with_init};

#[test]
fn portable_all_green_lands_with_exit_0() {
    let cluster = Sim::portable("all-green");
    let run = cluster.deploy(&with_init(&["--timeout", "120s"]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.report["namespace"], cluster.namespace.as_str());
    for (kind, name) in [
        ("Deployment", "demo-api"),
        ("Deployment", "demo-web"),
        ("StatefulSet", "demo-db"),
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
    let first = cluster.deploy(&["--timeout", "120s"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    let second = cluster.deploy(&["--timeout", "120s", "--set", "image.tag=1.4.3"]);
    assert_eq!(second.code, Some(0), "{}", second.describe());
    assert_eq!(second.report["revision"], 2, "{}", second.describe());
}
