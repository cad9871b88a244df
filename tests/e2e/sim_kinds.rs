//! Real kubectl and helm against the simulator's full kind table: every built-in kind in
//! `kubectl api-resources`, CRDs registering their kinds, `--dry-run=server` writing nothing,
//! a chart with `crds/`, a custom resource and cluster-scoped RBAC installing, and `kubectl
//! scale` through the scale subresource (built-in kinds and a CRD's declared paths).

use std::path::Path;

use crate::support::{Sim, text};

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wdg]
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size:
                  type: integer
"#;

const CR: &str = r#"apiVersion: example.com/v1
kind: Widget
metadata:
  name: gizmo
  namespace: apps
spec:
  size: 3
"#;

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_string()
}

fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}", text(out));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The NAME column of `kubectl api-resources`.
fn api_resources(sim: &Sim) -> Vec<String> {
    ok(
        &sim.kubectl(&["api-resources", "--no-headers"]),
        "api-resources",
    )
    .lines()
    .filter_map(|l| l.split_whitespace().next().map(String::from))
    .collect()
}

#[test]
fn kubectl_api_resources_lists_built_in_kinds_then_a_crds_kind_until_it_is_deleted() {
    let sim = Sim::start("all-green");
    let names = api_resources(&sim);
    for plural in [
        "clusterroles",
        "clusterrolebindings",
        "customresourcedefinitions",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
        "apiservices",
        "ingressclasses",
        "horizontalpodautoscalers",
        "networkpolicies",
        "poddisruptionbudgets",
        "priorityclasses",
        "resourcequotas",
        "limitranges",
        "leases",
        "csidrivers",
        "storageclasses",
        "endpointslices",
    ] {
        assert!(names.iter().any(|n| n == plural), "{plural} in {names:?}");
    }
    assert!(!names.iter().any(|n| n == "widgets"));

    let crd = write(sim.home(), "crd.yaml", CRD);
    ok(&sim.kubectl(&["apply", "-f", &crd]), "apply the CRD");
    assert!(api_resources(&sim).iter().any(|n| n == "widgets"));
    let cr = write(sim.home(), "cr.yaml", CR);
    ok(&sim.kubectl(&["apply", "-f", &cr]), "apply the CR");
    for name in ["widgets", "wdg", "widget.example.com"] {
        let listed = ok(&sim.kubectl(&["get", name, "-n", "apps"]), name);
        assert!(listed.contains("gizmo"), "kubectl get {name}: {listed}");
    }
    // An edit through kubectl's client-side apply (a merge patch for custom resources).
    let changed = write(sim.home(), "cr2.yaml", &CR.replace("size: 3", "size: 5"));
    ok(&sim.kubectl(&["apply", "-f", &changed]), "re-apply the CR");
    let size = ok(
        &sim.kubectl(&[
            "get",
            "wdg",
            "gizmo",
            "-n",
            "apps",
            "-o",
            "jsonpath={.spec.size}",
        ]),
        "size",
    );
    assert_eq!(size, "5");

    ok(
        &sim.kubectl(&["delete", "crd", "widgets.example.com"]),
        "delete the CRD",
    );
    assert!(!api_resources(&sim).iter().any(|n| n == "widgets"));
    let gone = sim.kubectl(&["get", "widgets", "-n", "apps"]);
    assert!(!gone.status.success(), "{}", text(&gone));
}

const MANIFEST: &str = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: dry-cm}
data: {a: b}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: dry-sa}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "dry:reader"}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "dry:reader"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "dry:reader"}
subjects: [{kind: ServiceAccount, name: dry-sa, namespace: apps}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: dry-hpa}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: dry-pdb}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: dry-np}
spec: {podSelector: {}, policyTypes: [Ingress]}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: dry-class}
spec: {controller: example.com/ingress}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: dry-high}
value: 1000
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: dry-sc}
provisioner: example.com/disk
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: dry-lease}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: dry-hook}
webhooks: []
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: dry-cron}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: "busybox:1"}]
"#;

#[test]
fn kubectl_apply_dry_run_server_of_a_multi_kind_manifest_writes_nothing() {
    let sim = Sim::start("all-green");
    let file = write(sim.home(), "all.yaml", MANIFEST);
    let before = sim.get_json("/_sim/stats");
    let out = ok(
        &sim.kubectl(&["apply", "--dry-run=server", "-n", "apps", "-f", &file]),
        "apply --dry-run=server",
    );
    assert_eq!(
        out.matches("(server dry run)").count(),
        13,
        "every object answered: {out}"
    );
    let after = sim.get_json("/_sim/stats");
    assert_eq!(before["objects"], after["objects"], "nothing stored");
    assert_eq!(
        before["resourceVersion"], after["resourceVersion"],
        "no rv bump"
    );
    let gone = sim.kubectl(&["get", "clusterrole", "dry:reader"]);
    assert!(!gone.status.success(), "{}", text(&gone));
    // The same manifest for real: every kind is stored.
    ok(&sim.kubectl(&["apply", "-n", "apps", "-f", &file]), "apply");
    let listed = ok(
        &sim.kubectl(&[
            "get",
            "hpa,pdb,netpol,cronjob,lease",
            "-n",
            "apps",
            "-o",
            "name",
        ]),
        "get",
    );
    assert_eq!(listed.lines().count(), 5, "{listed}");
}

#[test]
fn helm_installs_a_chart_with_crds_a_custom_resource_and_cluster_rbac() {
    let sim = Sim::start("all-green");
    let chart = sim.home().join("kinds-chart");
    write(
        &chart,
        "Chart.yaml",
        "apiVersion: v2\nname: kinds\nversion: 0.1.0\n",
    );
    write(&chart, "crds/widgets.yaml", CRD);
    write(
        &chart,
        "templates/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {{ .Release.Name }}-gizmo\nspec:\n  size: 2\n",
    );
    write(
        &chart,
        "templates/rbac.yaml",
        r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: "{{ .Release.Name }}:widgets"
rules: [{apiGroups: [example.com], resources: [widgets], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: "{{ .Release.Name }}:widgets"
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "{{ .Release.Name }}:widgets"}
subjects: [{kind: ServiceAccount, name: {{ .Release.Name }}, namespace: {{ .Release.Namespace }}}]
"#,
    );
    let chart = chart.to_str().unwrap();
    ok(
        &sim.helm(&[
            "install",
            "kinds",
            chart,
            "-n",
            "apps",
            "--wait",
            "--timeout",
            "60s",
        ]),
        "helm install",
    );
    let listed = ok(
        &sim.kubectl(&["get", "wdg", "-n", "apps", "-o", "name"]),
        "get wdg",
    );
    assert_eq!(listed.trim(), "widget.example.com/kinds-gizmo");
    ok(
        &sim.kubectl(&["get", "clusterrole", "kinds:widgets"]),
        "the ClusterRole",
    );
    ok(
        &sim.helm(&["upgrade", "kinds", chart, "-n", "apps", "--set", "x=1"]),
        "helm upgrade",
    );
    ok(
        &sim.helm(&["uninstall", "kinds", "-n", "apps"]),
        "helm uninstall",
    );
    let gone = sim.kubectl(&["get", "clusterrolebinding", "kinds:widgets"]);
    assert!(!gone.status.success(), "{}", text(&gone));
    // helm keeps CRDs on uninstall, as on a real cluster.
    ok(
        &sim.kubectl(&["get", "crd", "widgets.example.com"]),
        "the CRD stays",
    );
}

const SCALABLE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: "web:1"}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: apps}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: "db:1"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: lone, namespace: apps}
spec:
  replicas: 1
  selector: {matchLabels: {app: lone}}
  template:
    metadata: {labels: {app: lone}}
    spec: {containers: [{name: c, image: "lone:1"}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: apps}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, image: "agent:1"}]}
"#;

fn jsonpath(sim: &Sim, kind: &str, name: &str, path: &str) -> String {
    let out = sim.kubectl(&[
        "get",
        kind,
        name,
        "-n",
        "apps",
        "-o",
        &format!("jsonpath={path}"),
    ]);
    ok(&out, &format!("get {kind} {name} {path}"))
}

#[test]
fn kubectl_scale_rolls_deployments_and_statefulsets_to_three_ready_and_scales_a_replicaset() {
    let sim = Sim::start("all-green");
    let file = write(sim.home(), "scalable.yaml", SCALABLE);
    ok(&sim.kubectl(&["apply", "-f", &file]), "apply");
    for target in ["deployment/web", "statefulset/db"] {
        ok(
            &sim.kubectl(&["rollout", "status", target, "-n", "apps", "--timeout=60s"]),
            "first rollout",
        );
        let scaled = ok(
            &sim.kubectl(&["scale", target, "--replicas=3", "-n", "apps"]),
            "kubectl scale",
        );
        assert!(scaled.contains("scaled"), "{scaled}");
        let rolled = ok(
            &sim.kubectl(&["rollout", "status", target, "-n", "apps", "--timeout=60s"]),
            "rollout after scale",
        );
        assert!(
            rolled.contains("rolled out") || rolled.contains("roll out complete"),
            "{rolled}"
        );
        let (kind, name) = target.split_once('/').unwrap();
        assert_eq!(jsonpath(&sim, kind, name, "{.spec.replicas}"), "3");
        assert_eq!(
            jsonpath(&sim, kind, name, "{.status.readyReplicas}"),
            "3",
            "{target}"
        );
    }
    // What kubectl scale sent: a merge patch on the subresource.
    let requests = sim.get("/_sim/requests");
    assert!(
        requests.contains("PATCH /apis/apps/v1/namespaces/apps/deployments/web/scale"),
        "{requests}"
    );
    let scale = ok(
        &sim.kubectl(&[
            "get",
            "deployment",
            "web",
            "-n",
            "apps",
            "--subresource=scale",
            "-o",
            "json",
        ]),
        "get --subresource=scale",
    );
    let scale: serde_json::Value = serde_json::from_str(&scale).unwrap();
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(scale["status"]["replicas"], 3);
    assert_eq!(scale["status"]["selector"], "app=web");

    ok(
        &sim.kubectl(&["scale", "replicaset/lone", "--replicas=2", "-n", "apps"]),
        "kubectl scale replicaset",
    );
    assert_eq!(jsonpath(&sim, "rs", "lone", "{.spec.replicas}"), "2");
    assert_eq!(jsonpath(&sim, "rs", "lone", "{.metadata.generation}"), "2");

    // A DaemonSet has no scale subresource: kubectl refuses, and the URL is a 404.
    let refused = sim.kubectl(&["scale", "daemonset/agent", "--replicas=3", "-n", "apps"]);
    assert!(!refused.status.success(), "{}", text(&refused));
    let raw = sim.kubectl(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/apps/daemonsets/agent/scale",
    ]);
    assert!(!raw.status.success(), "{}", text(&raw));
    assert!(text(&raw).contains("NotFound"), "{}", text(&raw));
}

#[test]
fn kubectl_scale_on_a_custom_kind_uses_its_crds_replica_paths() {
    let sim = Sim::start("all-green");
    let crd = CRD.replace(
        "        status: {}\n",
        "        status: {}\n        scale:\n          specReplicasPath: .spec.size\n          statusReplicasPath: .status.ready\n          labelSelectorPath: .status.selector\n",
    );
    assert!(crd.contains("specReplicasPath"), "the CRD gained its scale");
    let crd = write(sim.home(), "crd.yaml", &crd);
    ok(&sim.kubectl(&["apply", "-f", &crd]), "apply the CRD");
    let cr = write(sim.home(), "cr.yaml", CR);
    ok(&sim.kubectl(&["apply", "-f", &cr]), "apply the CR");
    let scaled = ok(
        &sim.kubectl(&["scale", "widget/gizmo", "--replicas=7", "-n", "apps"]),
        "kubectl scale widget",
    );
    assert!(
        scaled.contains("widget.example.com/gizmo scaled"),
        "{scaled}"
    );
    assert_eq!(jsonpath(&sim, "wdg", "gizmo", "{.spec.size}"), "7");
    assert_eq!(
        jsonpath(&sim, "wdg", "gizmo", "{.metadata.generation}"),
        "2"
    );
    // With a precondition kubectl reads the Scale and PUTs it back.
    let stale = sim.kubectl(&[
        "scale",
        "widget/gizmo",
        "--current-replicas=3",
        "--replicas=1",
        "-n",
        "apps",
    ]);
    assert!(!stale.status.success(), "{}", text(&stale));
    ok(
        &sim.kubectl(&[
            "scale",
            "widget/gizmo",
            "--current-replicas=7",
            "--replicas=2",
            "-n",
            "apps",
        ]),
        "scale with --current-replicas",
    );
    assert_eq!(jsonpath(&sim, "wdg", "gizmo", "{.spec.size}"), "2");
}
