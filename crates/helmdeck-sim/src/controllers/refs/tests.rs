//! The checks inside the controllers, on a fake clock: pods held back on missing references,
//! their statuses and Events, and their recovery when the object appears.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::super::{Controllers, meta, seed_nodes};
use crate::resources::{ResourceId, ids};
use crate::{Scenario, SimState};

const NS: &str = "apps";

struct H {
    sim: Arc<SimState>,
    ctl: Controllers,
    t: Instant,
}

impl H {
    fn new(scenario: &str) -> H {
        let sim = SimState::new(Scenario::parse(scenario, "test").expect("scenario parses"));
        sim.store
            .ensure(*ids::NAMESPACES, json!({"metadata": {"name": NS}}))
            .expect("namespace");
        seed_nodes(&sim);
        H {
            sim,
            ctl: Controllers::new(),
            t: Instant::now(),
        }
    }

    fn run(&mut self, d: Duration) {
        let end = self.t + d;
        while self.t < end {
            self.t += Duration::from_millis(100);
            self.ctl.reconcile(&self.sim, self.t);
        }
    }

    fn create(&self, res: ResourceId, obj: Value) {
        self.sim.store.create(res, Some(NS), obj).expect("created");
    }

    fn pod(&self, name: &str) -> Arc<Value> {
        self.sim.store.get(*ids::PODS, Some(NS), name).expect("pod")
    }

    fn events(&self, pod: &str, reason: &str) -> Vec<Arc<Value>> {
        let list = self.sim.store.list(*ids::EVENTS, Some(NS), |e| {
            e["involvedObject"]["name"] == pod && e["reason"] == reason
        });
        list.0
    }
}

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "app", "image": "web:1"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

fn env_pod(name: &str, env: Value) -> Value {
    pod(
        name,
        json!({"containers": [{"name": "app", "image": "web:1", "env": env}]}),
    )
}

fn secret(name: &str, keys: &[&str]) -> Value {
    let data: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.to_string(), json!("eA==")))
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": data})
}

fn waiting(pod: &Value) -> (String, String) {
    let w = &pod["status"]["containerStatuses"][0]["state"]["waiting"];
    (
        w["reason"].as_str().unwrap_or("").to_string(),
        w["message"].as_str().unwrap_or("").to_string(),
    )
}

fn running(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running"
        && pod["status"]["containerStatuses"][0]["state"]["running"].is_object()
}

#[test]
fn a_missing_secret_holds_the_container_until_it_appears() {
    let mut h = H::new("{}");
    let env =
        json!([{"name": "P", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]);
    h.create(*ids::PODS, env_pod("web", env));
    h.run(Duration::from_secs(25));
    let p = h.pod("web");
    assert_eq!(p["status"]["phase"], "Pending");
    assert_eq!(
        waiting(&p),
        (
            "CreateContainerConfigError".into(),
            "secret \"db\" not found".into()
        )
    );
    assert!(p["status"]["podIP"].is_string(), "the sandbox is up: {p}");
    assert_eq!(p["status"]["containerStatuses"][0]["ready"], false);
    let failed = h.events("web", "Failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    let e = &failed[0];
    assert_eq!(e["message"], "Error: secret \"db\" not found");
    assert_eq!(e["type"], "Warning");
    assert_eq!(e["involvedObject"]["fieldPath"], "spec.containers{app}");
    assert_eq!(e["source"]["component"], "kubelet");
    let pulled = h.events("web", "Pulled");
    assert_eq!(
        pulled[0]["message"],
        "Container image \"web:1\" already present on machine and can be accessed by the pod"
    );
    // Retried as the pod worker does (every 10s), not on every pass.
    assert_eq!(e["count"], 3, "{e}");
    // A Secret without the key: another message.
    h.create(*ids::SECRETS, secret("db", &["user"]));
    h.run(Duration::from_millis(300));
    assert_eq!(
        waiting(&h.pod("web")).1,
        "couldn't find key password in Secret apps/db"
    );
    // The key appears: the container starts at once.
    let fixed = secret("db", &["user", "password"]);
    h.sim.store.update_with(*ids::SECRETS, Some(NS), "db", |o| {
        o["data"] = fixed["data"].clone()
    });
    h.run(Duration::from_millis(1000));
    let p = h.pod("web");
    assert!(running(&p), "{p}");
    assert!(h.ctl.refs.held.is_empty());
}

#[test]
fn optional_references_and_present_ones_do_not_hold() {
    let mut h = H::new("{}");
    h.create(*ids::CONFIGMAPS, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"mode": "x"}}));
    let env = json!([
        {"name": "A", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k", "optional": true}}},
        {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}]);
    h.create(*ids::PODS, env_pod("ok", env));
    let from = json!([{"secretRef": {"name": "nope", "optional": true}}, {"configMapRef": {"name": "settings"}}]);
    h.create(
        *ids::PODS,
        pod(
            "from",
            json!({"containers": [{"name": "app", "image": "web:1", "envFrom": from}],
        "volumes": [{"name": "v", "secret": {"secretName": "nope", "optional": true}}]}),
        ),
    );
    h.create(*ids::PODS, pod("plain", json!({})));
    h.run(Duration::from_secs(2));
    for name in ["ok", "from", "plain"] {
        assert!(running(&h.pod(name)), "{name}: {}", h.pod(name));
    }
    assert!(h.ctl.refs.held.is_empty());
}

#[test]
fn a_missing_config_map_volume_keeps_the_pod_creating_until_it_appears() {
    let mut h = H::new("{}");
    let spec = json!({"containers": [{"name": "app", "image": "web:1"}],
        "volumes": [{"name": "conf", "configMap": {"name": "settings"}}]});
    h.create(*ids::PODS, pod("web", spec));
    h.run(Duration::from_secs(10));
    let p = h.pod("web");
    assert_eq!(p["status"]["phase"], "Pending");
    assert_eq!(waiting(&p).0, "ContainerCreating");
    assert!(
        p["status"]["podIP"].is_null(),
        "no sandbox before the volumes: {p}"
    );
    let mounts = h.events("web", "FailedMount");
    assert_eq!(mounts.len(), 1, "{mounts:?}");
    let e = &mounts[0];
    assert_eq!(
        e["message"],
        "MountVolume.SetUp failed for volume \"conf\" : configmap \"settings\" not found"
    );
    assert_eq!(e["source"]["host"], p["spec"]["nodeName"]);
    // Retried with the volume manager's back-off (0.5s, 1s, 2s, 4s, …), not on every pass.
    let count = e["count"].as_i64().unwrap_or(0);
    assert!((4..=6).contains(&count), "{e}");
    h.create(
        *ids::CONFIGMAPS,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}),
    );
    h.run(Duration::from_millis(500));
    assert!(running(&h.pod("web")), "{}", h.pod("web"));
}

#[test]
fn host_path_types_follow_the_scenarios_node_paths() {
    let mut h =
        H::new("host_paths:\n  '*': {/var/log: Directory}\n  node-2: {/dev/fuse: CharDevice}\n");
    let hp = |path: &str, kind: &str, node: &str| {
        json!({"nodeName": node, "containers": [{"name": "app", "image": "web:1"}],
               "volumes": [{"name": "host", "hostPath": {"path": path, "type": kind}}]})
    };
    h.create(
        *ids::PODS,
        pod("logs", hp("/var/log", "Directory", "node-1")),
    );
    h.create(*ids::PODS, pod("data", hp("/data", "Directory", "node-1")));
    h.create(
        *ids::PODS,
        pod("made", hp("/data", "DirectoryOrCreate", "node-1")),
    );
    h.create(
        *ids::PODS,
        pod("fuse1", hp("/dev/fuse", "CharDevice", "node-1")),
    );
    h.create(
        *ids::PODS,
        pod("fuse2", hp("/dev/fuse", "CharDevice", "node-2")),
    );
    h.run(Duration::from_secs(3));
    for name in ["logs", "made", "fuse2"] {
        assert!(running(&h.pod(name)), "{name}: {}", h.pod(name));
    }
    assert_eq!(waiting(&h.pod("data")).0, "ContainerCreating");
    assert_eq!(
        h.events("data", "FailedMount")[0]["message"],
        "MountVolume.SetUp failed for volume \"host\" : hostPath type check failed: /data is not a directory"
    );
    assert_eq!(
        h.events("fuse1", "FailedMount")[0]["message"],
        "MountVolume.SetUp failed for volume \"host\" : hostPath type check failed: /dev/fuse is not a character device"
    );
}

#[test]
fn a_one_node_claim_attaches_to_one_node_at_a_time() {
    let mut h = H::new("{}");
    h.create(*crate::controllers::PVCS, json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}));
    h.run(Duration::from_millis(200));
    let with_claim = |node: &str| {
        json!({"nodeName": node, "containers": [{"name": "app", "image": "web:1"}],
               "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]})
    };
    h.create(*ids::PODS, pod("first", with_claim("node-1")));
    h.run(Duration::from_secs(1));
    h.create(*ids::PODS, pod("same-node", with_claim("node-1")));
    h.run(Duration::from_secs(1));
    h.create(*ids::PODS, pod("second", with_claim("node-2")));
    h.run(Duration::from_secs(5));
    assert!(running(&h.pod("first")));
    assert!(
        running(&h.pod("same-node")),
        "one node may share the volume"
    );
    let p = h.pod("second");
    assert_eq!(waiting(&p).0, "ContainerCreating");
    let volume = h
        .sim
        .store
        .get(*crate::controllers::PVCS, Some(NS), "data")
        .expect("pvc")["spec"]["volumeName"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(volume.starts_with("pvc-"), "{volume}");
    let attach = h.events("second", "FailedAttachVolume");
    assert_eq!(attach.len(), 1);
    assert_eq!(
        attach[0]["message"],
        format!(
            "Multi-Attach error for volume \"{volume}\" Volume is already used by pod(s) first, same-node"
        )
    );
    assert_eq!(attach[0]["source"]["component"], "attachdetach-controller");
    assert_eq!(attach[0]["count"], 1, "reported once");
    for name in ["first", "same-node"] {
        h.sim
            .store
            .delete_leaf(*ids::PODS, Some(NS), name)
            .expect("deleted");
    }
    h.run(Duration::from_secs(2));
    assert!(running(&h.pod("second")), "{}", h.pod("second"));
}

#[test]
fn a_held_init_container_keeps_the_pod_initializing() {
    let mut h = H::new("{}");
    let spec = json!({"initContainers": [{"name": "setup", "image": "tool:1",
            "envFrom": [{"configMapRef": {"name": "boot"}}]}],
        "containers": [{"name": "app", "image": "web:1"}]});
    h.create(*ids::PODS, pod("web", spec));
    h.run(Duration::from_secs(2));
    let p = h.pod("web");
    let init = &p["status"]["initContainerStatuses"][0]["state"]["waiting"];
    assert_eq!(init["reason"], "CreateContainerConfigError");
    assert_eq!(init["message"], "configmap \"boot\" not found");
    assert_eq!(waiting(&p).0, "PodInitializing");
    let initialized = p["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Initialized"))
        .cloned();
    assert_eq!(
        initialized.as_ref().map(|c| c["status"].clone()),
        Some(json!("False")),
        "{p}"
    );
    let failed = h.events("web", "Failed");
    assert_eq!(
        failed[0]["involvedObject"]["fieldPath"],
        "spec.initContainers{setup}"
    );
    assert_eq!(meta(&p, "name"), "web");
}
