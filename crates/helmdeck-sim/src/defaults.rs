//! The defaults the real API server fills in (its `SetDefaults_*` functions) for the kinds the
//! simulator serves: the workloads' fields that clients read (rollout status, kstatus, helm's
//! readiness checks), and the plain ones of Services, CronJobs, Secrets and PriorityClasses.
//! Left out on purpose: the per-container defaults (`terminationMessagePath`,
//! `imagePullPolicy`, …), which every pod would copy from its template, costing memory at
//! 10,000 pods for fields no client here reads; and what the registry allocates rather than
//! defaults (a Service's clusterIP and node ports).

use serde_json::{Value, json};

fn set_default(obj: &mut Value, pointer: &str, value: Value) {
    let mut parts = pointer.trim_start_matches('/').split('/').peekable();
    let mut cur = obj;
    while let Some(part) = parts.next() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let map = cur.as_object_mut().expect("made an object above");
        if parts.peek().is_none() {
            map.entry(part).or_insert(value);
            return;
        }
        cur = map.entry(part).or_insert_with(|| json!({}));
    }
}

/// Removes every field and map entry set to `null`, at any depth, as the API server's decoding
/// into Go structs does (a null pointer, slice or map is an absent field): a chart that renders
/// `volumeClaimTemplates: null` stores no such key. List items stay (a null item is not
/// something a chart renders; the server would reject it anyway).
pub fn drop_nulls(v: &mut Value) {
    emptied(v);
}

/// Drops nulls under `v`; true when `v` is an object that had entries and has none left: a map
/// that held only nulls is an empty Go map, which JSON leaves out (`omitempty`), so
/// `annotations: {a: null}` is no annotations at all.
fn emptied(v: &mut Value) -> bool {
    match v {
        Value::Object(map) => {
            let before = map.len();
            map.retain(|_, x| !x.is_null() && !emptied(x));
            before > 0 && map.is_empty()
        }
        Value::Array(items) => {
            for item in items {
                emptied(item);
            }
            false
        }
        _ => false,
    }
}

/// Fills defaults in place. Always leaves `metadata` an object.
pub fn apply(kind: &str, obj: &mut Value) {
    set_default(obj, "/metadata", json!({}));
    match kind {
        "Deployment" => {
            set_default(obj, "/spec/replicas", json!(1));
            set_default(obj, "/spec/progressDeadlineSeconds", json!(600));
            set_default(obj, "/spec/revisionHistoryLimit", json!(10));
            strategy(
                obj,
                "/spec/strategy",
                &[("maxSurge", json!("25%")), ("maxUnavailable", json!("25%"))],
            );
            pod_template(obj);
        }
        "StatefulSet" => {
            set_default(obj, "/spec/replicas", json!(1));
            set_default(obj, "/spec/podManagementPolicy", json!("OrderedReady"));
            set_default(obj, "/spec/revisionHistoryLimit", json!(10));
            strategy(obj, "/spec/updateStrategy", &[("partition", json!(0))]);
            pod_template(obj);
            more(kind, obj);
        }
        "DaemonSet" => {
            set_default(obj, "/spec/revisionHistoryLimit", json!(10));
            strategy(
                obj,
                "/spec/updateStrategy",
                &[("maxUnavailable", json!(1)), ("maxSurge", json!(0))],
            );
            pod_template(obj);
        }
        "ReplicaSet" => {
            set_default(obj, "/spec/replicas", json!(1));
        }
        "Job" => {
            set_default(obj, "/spec/backoffLimit", json!(6));
            set_default(obj, "/spec/completions", json!(1));
            set_default(obj, "/spec/parallelism", json!(1));
            set_default(obj, "/spec/completionMode", json!("NonIndexed"));
            set_default(obj, "/spec/suspend", json!(false));
            pod_template(obj);
        }
        "Pod" => {
            pod_spec(obj, "/spec");
            requests_from_limits(obj);
        }
        "Service" | "CronJob" => more(kind, obj),
        "Secret" => set_default(obj, "/type", json!("Opaque")),
        "PriorityClass" => set_default(obj, "/preemptionPolicy", json!("PreemptLowerPriority")),
        _ => {}
    }
}

/// The kinds whose defaults take more than a few lines.
fn more(kind: &str, obj: &mut Value) {
    match kind {
        "StatefulSet" => {
            for when in ["whenDeleted", "whenScaled"] {
                set_default(
                    obj,
                    &format!("/spec/persistentVolumeClaimRetentionPolicy/{when}"),
                    json!("Retain"),
                );
            }
        }
        "Service" => service(obj),
        "CronJob" => {
            set_default(obj, "/spec/concurrencyPolicy", json!("Allow"));
            set_default(obj, "/spec/suspend", json!(false));
            set_default(obj, "/spec/successfulJobsHistoryLimit", json!(3));
            set_default(obj, "/spec/failedJobsHistoryLimit", json!(1));
            if obj.pointer("/spec/jobTemplate/spec/template").is_some() {
                pod_spec(obj, "/spec/jobTemplate/spec/template/spec");
            }
        }
        _ => {}
    }
}

/// `SetDefaults_Service` and `SetDefaults_ServicePort`.
fn service(obj: &mut Value) {
    set_default(obj, "/spec/type", json!("ClusterIP"));
    set_default(obj, "/spec/sessionAffinity", json!("None"));
    let kind = obj
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if kind != "ExternalName" {
        set_default(obj, "/spec/internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "NodePort" || kind == "LoadBalancer" {
        set_default(obj, "/spec/externalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        set_default(obj, "/spec/allocateLoadBalancerNodePorts", json!(true));
    }
    let ports = obj.pointer_mut("/spec/ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten() {
        set_default(port, "/protocol", json!("TCP"));
        if let Some(number) = port.get("port").cloned() {
            set_default(port, "/targetPort", number);
        }
    }
}

/// The update strategy at `at` is RollingUpdate unless set; only a rolling one gets the
/// `rollingUpdate` defaults (a Recreate or OnDelete strategy must not carry them).
fn strategy(obj: &mut Value, at: &str, rolling: &[(&str, Value)]) {
    let kind = format!("{at}/type");
    set_default(obj, &kind, json!("RollingUpdate"));
    if obj.pointer(&kind).and_then(Value::as_str) == Some("RollingUpdate") {
        for (field, value) in rolling {
            set_default(obj, &format!("{at}/rollingUpdate/{field}"), value.clone());
        }
    }
}

fn pod_template(obj: &mut Value) {
    if obj.pointer("/spec/template").is_some() {
        pod_spec(obj, "/spec/template/spec");
    }
}

/// `SetDefaults_Pod`: a container's request left unset for a resource it limits defaults to the
/// limit, so a chart that only limits `nvidia.com/gpu` still asks the scheduler for one. Pods
/// only: the API server does not default this in templates.
fn requests_from_limits(pod: &mut Value) {
    for list in ["containers", "initContainers"] {
        let containers = pod.pointer_mut(&format!("/spec/{list}"));
        for c in containers
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(limits) = c.pointer("/resources/limits").and_then(Value::as_object) else {
                continue;
            };
            let limits = limits.clone();
            // Resource names hold a `/` (`nvidia.com/gpu`): not a JSON pointer's path.
            set_default(c, "/resources/requests", json!({}));
            if let Some(requests) = c
                .pointer_mut("/resources/requests")
                .and_then(Value::as_object_mut)
            {
                for (resource, quantity) in limits {
                    requests.entry(resource).or_insert(quantity);
                }
            }
        }
    }
}

fn pod_spec(obj: &mut Value, at: &str) {
    set_default(obj, &format!("{at}/restartPolicy"), json!("Always"));
    set_default(
        obj,
        &format!("{at}/terminationGracePeriodSeconds"),
        json!(30),
    );
    set_default(obj, &format!("{at}/dnsPolicy"), json!("ClusterFirst"));
    set_default(
        obj,
        &format!("{at}/schedulerName"),
        json!("default-scheduler"),
    );
}

/// The labels the API server puts on a Job's pod template (its selector uses the first).
pub fn job_labels(uid: &str, name: &str) -> [(&'static str, String); 4] {
    [
        ("batch.kubernetes.io/controller-uid", uid.to_string()),
        ("batch.kubernetes.io/job-name", name.to_string()),
        ("controller-uid", uid.to_string()),
        ("job-name", name.to_string()),
    ]
}

/// What the API server does when it creates a Job (`uid` is the one it is given): unless the Job
/// asks for a manual selector or brings one, `spec.selector` on
/// `batch.kubernetes.io/controller-uid` and the job labels on the pod template, in the same
/// write as the create (a client's first GET already sees them, so its PUT never looks like a
/// template change). `kubectl logs job/NAME` finds the pods through that selector.
pub fn job_selector(job: &mut Value, uid: &str) {
    let manual = job.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true);
    if manual || job.pointer("/spec/selector").is_some() || !job["spec"].is_object() {
        return;
    }
    let name = job["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    job["spec"]["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
    let template = &mut job["spec"]["template"];
    if !template.is_object() {
        *template = json!({});
    }
    if !template["metadata"].is_object() {
        template["metadata"] = json!({});
    }
    if !template["metadata"]["labels"].is_object() {
        template["metadata"]["labels"] = json!({});
    }
    for (k, v) in job_labels(uid, &name) {
        template["metadata"]["labels"][k] = json!(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_cronjobs_secrets_and_priority_classes_get_the_api_servers_defaults() {
        let mut svc = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}});
        apply("Service", &mut svc);
        assert_eq!(
            svc["spec"],
            json!({"type": "NodePort", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                "externalTrafficPolicy": "Cluster",
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                    {"port": 53, "protocol": "UDP", "targetPort": "dns"}]})
        );
        let mut external = json!({"spec": {"type": "ExternalName", "externalName": "x.io"}});
        apply("Service", &mut external);
        assert!(external["spec"].get("internalTrafficPolicy").is_none());
        let mut cj = json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}}});
        apply("CronJob", &mut cj);
        assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
        assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
        let pod = &cj["spec"]["jobTemplate"]["spec"]["template"]["spec"];
        assert_eq!(
            (&pod["restartPolicy"], &pod["dnsPolicy"]),
            (&json!("OnFailure"), &json!("ClusterFirst"))
        );
        let mut secret = json!({"data": {}});
        apply("Secret", &mut secret);
        assert_eq!(secret["type"], "Opaque");
        let mut pc = json!({"value": 1});
        apply("PriorityClass", &mut pc);
        assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
        let mut sts = json!({"spec": {}});
        apply("StatefulSet", &mut sts);
        assert_eq!(
            sts["spec"]["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
    }

    #[test]
    fn nulls_vanish_at_every_depth_but_lists_keep_their_length() {
        let mut s = json!({"spec": {"volumeClaimTemplates": null, "resources": {}, "template": {"metadata": {"annotations": {"a": null, "b": "1"}, "labels": {"x": null}},
            "spec": {"containers": [{"name": "c", "env": null}]}}}, "status": null});
        drop_nulls(&mut s);
        assert_eq!(
            s,
            json!({"spec": {"resources": {}, "template": {"metadata": {"annotations": {"b": "1"}},
                "spec": {"containers": [{"name": "c"}]}}}})
        );
    }

    #[test]
    fn a_pods_unset_requests_default_to_its_limits_but_a_templates_do_not() {
        let spec = json!({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"},
                                                                     "requests": {"cpu": "1"}}}],
                          "initContainers": [{"name": "i", "resources": {"limits": {"memory": "1Gi"}}}]});
        let mut pod = json!({"spec": spec});
        apply("Pod", &mut pod);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["requests"],
            json!({"cpu": "1", "nvidia.com/gpu": 1})
        );
        assert_eq!(
            pod["spec"]["initContainers"][0]["resources"]["requests"],
            json!({"memory": "1Gi"})
        );
        let mut d = json!({"spec": {"template": {"spec": spec}}});
        apply("Deployment", &mut d);
        assert!(
            d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
                .get("nvidia.com/gpu")
                .is_none()
        );
    }

    #[test]
    fn defaults_fill_only_missing_fields() {
        let mut d = json!({"spec": {"replicas": 3, "strategy": {"type": "Recreate"}, "template": {"spec": {}}}});
        apply("Deployment", &mut d);
        assert_eq!(d["spec"]["replicas"], 3);
        assert!(d["spec"]["strategy"].get("rollingUpdate").is_none());
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        let mut s = json!({"spec": {}});
        apply("StatefulSet", &mut s);
        assert_eq!(s["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 0);
        let mut j = json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}});
        apply("Job", &mut j);
        assert_eq!(j["spec"]["backoffLimit"], 6);
        assert_eq!(j["spec"]["template"]["spec"]["restartPolicy"], "Never");
        let mut ds = json!({});
        apply("DaemonSet", &mut ds);
        assert_eq!(
            ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            1
        );
    }
}
