//! Charts shaped like public ones (issue 11 item 6): tests/charts/ingress-like, operator-like
//! and stateful-like through `helmdeck deploy` three times (install, an upgrade that changes the
//! image, a second upgrade), then `helm uninstall`; and `helm template | kubectl apply
//! --dry-run=server` with the chart's CRDs applied first.

use std::io::Write;
use std::process::Stdio;

use crate::support::{Sim, repo, text, tool};

struct Case {
    chart: &'static str,
    /// Namespaces the chart writes to: the release's first.
    namespaces: &'static [&'static str],
    /// Values every deploy of the case gets.
    values: &'static [&'static str],
    /// The `--set` that changes the image on the upgrade.
    new_image: &'static str,
    /// (kind, namespace, name) of each workload the report must hold, ready.
    workloads: &'static [(&'static str, &'static str, &'static str)],
    /// `kubectl get` resource lists: cluster-scoped, then namespaced (in the workloads' namespace).
    cluster_kinds: &'static str,
    namespaced_kinds: &'static str,
    /// Objects `kubectl get -o name` must list by name (custom resources included).
    named: &'static [&'static str],
    /// (kind, name) of the workload whose image the upgrade changes, and its new image.
    upgraded: (&'static str, &'static str, &'static str),
    /// A Secret the chart keeps across upgrades with `lookup`: its data must never change.
    kept_secret: Option<&'static str>,
}

const INGRESS: Case = Case {
    chart: "ingress-like",
    namespaces: &["apps", "edge"],
    values: &["--set", "namespaceOverride=edge"],
    new_image: "controller.tag=1.12.1",
    workloads: &[("Deployment", "edge", "demo-edge-controller")],
    cluster_kinds: "clusterrole,clusterrolebinding,ingressclass,validatingwebhookconfiguration",
    namespaced_kinds: "deployment,service,configmap,serviceaccount,role,rolebinding,ingress,hpa,pdb,networkpolicy",
    named: &[
        "ingressclass.networking.k8s.io/edge",
        "deployment.apps/demo-edge-controller",
    ],
    upgraded: (
        "deployment",
        "demo-edge-controller",
        "registry.example.com/edge/controller:1.12.1",
    ),
    kept_secret: None,
};

const OPERATOR: Case = Case {
    chart: "operator-like",
    namespaces: &["apps", "kube-system"],
    values: &[],
    new_image: "image.tag=1.4.1",
    workloads: &[
        ("Deployment", "apps", "demo-widgets-operator"),
        ("Deployment", "apps", "demo-widgets-webhook"),
        ("Deployment", "apps", "demo-widgets-metrics"),
    ],
    cluster_kinds: "clusterrole,clusterrolebinding,mutatingwebhookconfiguration,validatingwebhookconfiguration,apiservice",
    namespaced_kinds: "deployment,service,serviceaccount,widgets",
    named: &[
        "widget.deck.example.test/demo-default",
        "deployment.apps/demo-widgets-webhook",
    ],
    upgraded: (
        "deployment",
        "demo-widgets-operator",
        "registry.example.com/widgets/operator:1.4.1",
    ),
    kept_secret: None,
};

const STATEFUL: Case = Case {
    chart: "stateful-like",
    namespaces: &["apps"],
    values: &[],
    new_image: "server.tag=1.18.3",
    workloads: &[
        ("StatefulSet", "apps", "demo-store"),
        ("DaemonSet", "apps", "demo-shipper"),
    ],
    cluster_kinds: "clusterrolebinding",
    namespaced_kinds: "statefulset,daemonset,service,secret,serviceaccount,pdb,networkpolicy",
    named: &["statefulset.apps/demo-store", "secret/demo-store-unseal"],
    upgraded: (
        "statefulset",
        "demo-store",
        "registry.example.com/vaultish/server:1.18.3",
    ),
    kept_secret: Some("demo-store-unseal"),
};

fn sim_for(case: &Case) -> Sim {
    Sim::start_yaml(&format!(
        "namespaces: [{}]\ndefaults: {{start_after: 300ms, ready_after: 500ms}}\n",
        case.namespaces.join(", ")
    ))
}

/// Names (`kind/name`) of the release's objects of `kinds`, cluster-wide or in `namespace`.
fn listed(sim: &Sim, kinds: &str, namespace: Option<&str>) -> Vec<String> {
    let mut args = vec![
        "get",
        kinds,
        "-l",
        "app.kubernetes.io/instance=demo",
        "-o",
        "name",
    ];
    if let Some(ns) = namespace {
        args.extend(["-n", ns]);
    }
    let out = sim.kubectl(&args);
    assert!(out.status.success(), "kubectl get {kinds}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `kubectl get KIND NAME -n NS -o jsonpath=PATH`.
fn jsonpath(sim: &Sim, kind: &str, name: &str, namespace: &str, path: &str) -> String {
    let out = sim.kubectl(&[
        "get",
        kind,
        name,
        "-n",
        namespace,
        "-o",
        &format!("jsonpath={path}"),
    ]);
    assert!(
        out.status.success(),
        "kubectl get {kind} {name}: {}",
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Every kind the case lists has an object of the release, and every named object is there.
fn check_listed(sim: &Sim, case: &Case, workload_ns: &str) {
    let mut all = Vec::new();
    for (kinds, namespace) in [
        (case.cluster_kinds, None),
        (case.namespaced_kinds, Some(workload_ns)),
    ] {
        for kind in kinds.split(',') {
            let objects = listed(sim, kind, namespace);
            assert!(
                !objects.is_empty(),
                "{}: no {kind} of the release listed",
                case.chart
            );
            all.extend(objects);
        }
    }
    for name in case.named {
        assert!(
            all.iter().any(|o| o == name),
            "{}: {name} not in {all:?}",
            case.chart
        );
    }
}

/// helm and kubectl validated against the OpenAPI v3 documents alone: none fell back to the
/// protobuf-only `/openapi/v2`.
fn no_openapi_v2(sim: &Sim, case: &Case) {
    let stats = sim.get_json("/_sim/stats");
    assert_eq!(stats["openapiV2"], 0, "{}: {stats}", case.chart);
}

fn deploy_upgrade_uninstall(case: &Case) {
    let sim = sim_for(case);
    let chart = repo().join("tests/charts").join(case.chart);
    let workload_ns = case.workloads[0].1;
    let mut kept: Option<String> = None;
    for (round, extra) in [
        ("install", None),
        ("upgrade", Some(case.new_image)),
        ("second upgrade", Some(case.new_image)),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (name, set))| ((i + 1, name), set))
    {
        let mut args = vec!["--timeout", "60s"];
        args.extend_from_slice(case.values);
        if let Some(set) = extra {
            args.extend(["--set", set]);
        }
        let run = sim.deploy_chart(&chart, "charts-report.json", &args);
        let (revision, name) = round;
        assert_eq!(
            run.code,
            Some(0),
            "{} {name}: {}",
            case.chart,
            run.describe()
        );
        assert_eq!(run.report["revision"], revision, "{} {name}", case.chart);
        let reported = run.report["workloads"].as_array().map_or(0, Vec::len);
        assert_eq!(
            reported,
            case.workloads.len(),
            "{}",
            run.report["workloads"]
        );
        for (kind, namespace, workload) in case.workloads {
            let w = run.workload(kind, workload);
            assert_eq!(w["namespace"], *namespace, "{w}");
            assert_eq!(w["ready"], true, "{} {name}: {w}", case.chart);
        }
        let (kind, workload, image) = case.upgraded;
        let live = jsonpath(&sim, kind, workload, workload_ns, "{..image}");
        assert_eq!(
            live == image,
            extra.is_some(),
            "{} {name}: {kind}/{workload} runs {live}",
            case.chart
        );
        if let Some(secret) = case.kept_secret {
            let data = jsonpath(&sim, "secret", secret, workload_ns, "{.data}");
            assert!(
                !data.is_empty(),
                "{} {name}: {secret} has no data",
                case.chart
            );
            // Compared, never printed: it is the chart's generated password.
            match &kept {
                None => kept = Some(data),
                Some(first) => assert!(
                    *first == data,
                    "{} {name}: the data of {secret} changed since the install",
                    case.chart
                ),
            }
        }
    }
    check_listed(&sim, case, workload_ns);
    let out = sim.helm(&[
        "uninstall",
        "demo",
        "-n",
        "apps",
        "--wait",
        "--timeout",
        "60s",
    ]);
    assert!(out.status.success(), "helm uninstall: {}", text(&out));
    assert_eq!(listed(&sim, case.cluster_kinds, None), Vec::<String>::new());
    assert_eq!(
        listed(&sim, case.namespaced_kinds, Some(workload_ns)),
        Vec::<String>::new()
    );
    no_openapi_v2(&sim, case);
}

/// `kubectl apply --dry-run=server` of the chart as `helm template` renders
/// it, its `crds/` applied first: every object passes the server's validation, none is stored.
fn server_dry_run(case: &Case) {
    let sim = sim_for(case);
    let chart = repo().join("tests/charts").join(case.chart);
    let crds = chart.join("crds");
    if crds.exists() {
        let out = sim.kubectl(&["apply", "-f", crds.to_str().unwrap()]);
        assert!(out.status.success(), "kubectl apply crds: {}", text(&out));
        let out = sim.kubectl(&[
            "wait",
            "--for=condition=Established",
            "crd",
            "--all",
            "--timeout=30s",
        ]);
        assert!(out.status.success(), "CRDs established: {}", text(&out));
    }
    let mut args = vec!["template", "demo", chart.to_str().unwrap(), "-n", "apps"];
    args.extend_from_slice(case.values);
    let rendered = sim.helm(&args);
    assert!(
        rendered.status.success(),
        "helm template: {}",
        text(&rendered)
    );
    let mut child = sim
        .client_command(&tool("kubectl"), &["apply", "--dry-run=server", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kubectl");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(&rendered.stdout)
        .expect("write the manifest");
    let out = child.wait_with_output().expect("kubectl apply");
    assert!(out.status.success(), "{}: {}", case.chart, text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("(server dry run)"),
        "{}",
        text(&out)
    );
    // Nothing was stored.
    for (kind, namespace, name) in case.workloads {
        let out = sim.kubectl(&["get", kind, name, "-n", namespace]);
        assert!(
            !out.status.success(),
            "{kind}/{name} was stored: {}",
            text(&out)
        );
    }
    no_openapi_v2(&sim, case);
}

#[test]
fn ingress_like_installs_upgrades_and_uninstalls() {
    deploy_upgrade_uninstall(&INGRESS);
}

#[test]
fn operator_like_installs_upgrades_and_uninstalls() {
    deploy_upgrade_uninstall(&OPERATOR);
}

#[test]
fn stateful_like_installs_upgrades_and_uninstalls() {
    deploy_upgrade_uninstall(&STATEFUL);
}

#[test]
fn ingress_like_passes_a_server_dry_run() {
    server_dry_run(&INGRESS);
}

#[test]
fn operator_like_passes_a_server_dry_run() {
    server_dry_run(&OPERATOR);
}

#[test]
fn stateful_like_passes_a_server_dry_run() {
    server_dry_run(&STATEFUL);
}
