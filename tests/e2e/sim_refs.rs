//! Real kubectl against the simulator's reference checks: a missing Secret holds a container in
//! `CreateContainerConfigError` until it is created, a missing ConfigMap volume keeps a pod
//! `ContainerCreating` with `FailedMount`, and a ReadWriteOnce claim used on two nodes gives
//! the attach/detach controller's Multi-Attach error.

use std::time::Duration;

use serde_json::Value;

use crate::support::{Sim, stdout_json, text};

fn sim() -> Sim {
    Sim::start_yaml("namespaces: [apps]\ndefaults: {start_after: 200ms, ready_after: 200ms}\n")
}

fn apply(sim: &Sim, name: &str, yaml: &str) {
    let file = sim.home().join(format!("{name}.yaml"));
    std::fs::write(&file, yaml).expect("write manifest");
    let out = sim.kubectl(&[
        "apply",
        "-n",
        "apps",
        "-f",
        file.to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success(), "apply {name}: {}", text(&out));
}

fn stdout(sim: &Sim, args: &[&str]) -> String {
    let out = sim.kubectl(args);
    assert!(out.status.success(), "kubectl {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first pod matching `selector`, as `kubectl get -o json` returns it.
fn first_pod(sim: &Sim, selector: &str) -> Value {
    let out = sim.kubectl(&["get", "pods", "-n", "apps", "-l", selector, "-o", "json"]);
    stdout_json(&out)["items"][0].clone()
}

fn waiting_reason(pod: &Value) -> String {
    pod.pointer("/status/containerStatuses/0/state/waiting/reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: web:1
          env:
            - name: DB_PASSWORD
              valueFrom: {secretKeyRef: {name: db, key: password}}
";

#[test]
fn a_missing_secret_is_create_container_config_error_until_it_is_created() {
    let sim = sim();
    apply(&sim, "web", WEB);
    sim.wait_for("CreateContainerConfigError", Duration::from_secs(20), |s| {
        waiting_reason(&first_pod(s, "app=web")) == "CreateContainerConfigError"
    });
    let pod = first_pod(&sim, "app=web");
    assert_eq!(
        pod.pointer("/status/containerStatuses/0/state/waiting/message"),
        Some(&Value::from("secret \"db\" not found")),
        "{pod}"
    );
    let table = stdout(&sim, &["get", "pods", "-n", "apps", "-l", "app=web"]);
    assert!(table.contains("CreateContainerConfigError"), "{table}");
    let describe = stdout(&sim, &["describe", "pod", "-n", "apps", "-l", "app=web"]);
    let failed = describe
        .lines()
        .find(|l| l.contains("Error: secret \"db\" not found"))
        .unwrap_or_else(|| panic!("no Failed event in describe:\n{describe}"));
    assert!(
        failed.contains("Warning") && failed.contains("Failed") && failed.contains("kubelet"),
        "{failed}"
    );
    // Not ready: the rollout waits.
    let out = sim.kubectl(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "apps",
        "--timeout=2s",
    ]);
    assert!(!out.status.success(), "{}", text(&out));
    apply(
        &sim,
        "db",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ntype: Opaque\ndata: {password: aHVudGVyMg==}\n",
    );
    let out = sim.kubectl(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "apps",
        "--timeout=30s",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("successfully rolled out"),
        "{}",
        text(&out)
    );
    let table = stdout(&sim, &["get", "pods", "-n", "apps", "-l", "app=web"]);
    assert!(
        table.contains("Running") && !table.contains("CreateContainerConfigError"),
        "{table}"
    );
}

#[test]
fn a_missing_config_map_volume_keeps_the_pod_container_creating() {
    let sim = sim();
    apply(
        &sim,
        "conf",
        "apiVersion: v1
kind: Pod
metadata: {name: conf, labels: {app: conf}}
spec:
  containers: [{name: app, image: web:1, volumeMounts: [{name: settings, mountPath: /etc/app}]}]
  volumes: [{name: settings, configMap: {name: app-settings}}]
",
    );
    sim.wait_for("a FailedMount event", Duration::from_secs(20), |s| {
        stdout(s, &["describe", "pod", "conf", "-n", "apps"]).contains("FailedMount")
    });
    let describe = stdout(&sim, &["describe", "pod", "conf", "-n", "apps"]);
    assert!(
        describe.contains("MountVolume.SetUp failed for volume \"settings\" : configmap \"app-settings\" not found"),
        "{describe}"
    );
    let table = stdout(&sim, &["get", "pod", "conf", "-n", "apps"]);
    assert!(table.contains("ContainerCreating"), "{table}");
    apply(
        &sim,
        "settings",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings}\ndata: {mode: fast}\n",
    );
    sim.wait_for("the pod running", Duration::from_secs(20), |s| {
        first_pod(s, "app=conf").pointer("/status/phase") == Some(&Value::from("Running"))
    });
}

#[test]
fn a_read_write_once_claim_on_a_second_node_is_a_multi_attach_error() {
    let sim = sim();
    apply(
        &sim,
        "claim",
        "apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
",
    );
    let pod = |name: &str, node: &str| {
        format!(
            "apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  nodeName: {node}
  containers: [{{name: app, image: db:1, volumeMounts: [{{name: data, mountPath: /data}}]}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data}}}}]
"
        )
    };
    apply(&sim, "first", &pod("first", "node-1"));
    sim.wait_for("the first pod running", Duration::from_secs(20), |s| {
        first_pod(s, "app=first").pointer("/status/phase") == Some(&Value::from("Running"))
    });
    apply(&sim, "second", &pod("second", "node-2"));
    sim.wait_for("a FailedAttachVolume event", Duration::from_secs(20), |s| {
        stdout(s, &["describe", "pod", "second", "-n", "apps"]).contains("FailedAttachVolume")
    });
    let claim = stdout_json(&sim.kubectl(&["get", "pvc", "data", "-n", "apps", "-o", "json"]));
    let volume = claim
        .pointer("/spec/volumeName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    assert!(volume.starts_with("pvc-"), "{claim}");
    let describe = stdout(&sim, &["describe", "pod", "second", "-n", "apps"]);
    let line = describe
        .lines()
        .find(|l| l.contains("FailedAttachVolume"))
        .unwrap_or_default();
    assert!(line.contains("attachdetach-controller"), "{describe}");
    assert!(
        describe.contains(&format!(
            "Multi-Attach error for volume \"{volume}\" Volume is already used by pod(s) first"
        )),
        "{describe}"
    );
    assert!(stdout(&sim, &["get", "pod", "second", "-n", "apps"]).contains("ContainerCreating"));
    let out = sim.kubectl(&["delete", "pod", "first", "-n", "apps", "--wait=false"]);
    assert!(out.status.success(), "{}", text(&out));
    sim.wait_for("the second pod running", Duration::from_secs(20), |s| {
        first_pod(s, "app=second").pointer("/status/phase") == Some(&Value::from("Running"))
    });
}
