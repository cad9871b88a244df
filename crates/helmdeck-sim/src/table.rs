//! Server-side `Table` answers, so plain `kubectl get` prints the columns operators know
//! (READY, STATUS, RESTARTS…) instead of only NAME and AGE.

use serde_json::{Value, json};

use super::resources::{self, ResourceId};
use helmdeck_formats::time::AgeStyle;

/// Whether the client asked for a Table (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
pub fn wanted(accept: &str) -> bool {
    accept.split(',').any(|part| part.contains("as=Table"))
}

fn i(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `5s`, `3m12s`, `2h`, `4d` as kubectl prints ages.
pub fn age(created: &str, now: jiff::Timestamp) -> String {
    let Ok(t) = created.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    helmdeck_formats::time::age(now.as_second() - t.as_second(), AgeStyle::Kubectl)
}

/// kubectl's STATUS column for a pod: a waiting or terminated reason wins over the phase.
fn pod_status(pod: &Value) -> String {
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        return "Terminating".into();
    }
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array);
    for c in statuses.into_iter().flatten() {
        if let Some(r) = c.pointer("/state/waiting/reason").and_then(Value::as_str) {
            return r.into();
        }
        if let Some(r) = c
            .pointer("/state/terminated/reason")
            .and_then(Value::as_str)
            && (s(pod, "/status/phase") != "Succeeded" || r != "Completed")
        {
            return r.into();
        }
    }
    match s(pod, "/status/phase") {
        "Succeeded" => "Completed".into(),
        "" => "Pending".into(),
        p => p.into(),
    }
}

fn columns(kind: &str) -> Vec<(&'static str, &'static str)> {
    match kind {
        "Pod" => vec![
            ("Name", "name"),
            ("Ready", ""),
            ("Status", ""),
            ("Restarts", ""),
            ("Age", ""),
            ("Node", ""),
        ],
        "Deployment" => vec![
            ("Name", "name"),
            ("Ready", ""),
            ("Up-to-date", ""),
            ("Available", ""),
            ("Age", ""),
        ],
        "StatefulSet" => vec![("Name", "name"), ("Ready", ""), ("Age", "")],
        "DaemonSet" => vec![
            ("Name", "name"),
            ("Desired", ""),
            ("Current", ""),
            ("Ready", ""),
            ("Up-to-date", ""),
            ("Available", ""),
            ("Age", ""),
        ],
        "ReplicaSet" => vec![
            ("Name", "name"),
            ("Desired", ""),
            ("Current", ""),
            ("Ready", ""),
            ("Age", ""),
        ],
        "Job" => vec![
            ("Name", "name"),
            ("Status", ""),
            ("Completions", ""),
            ("Age", ""),
        ],
        "Event" => vec![
            ("Last Seen", ""),
            ("Type", ""),
            ("Reason", ""),
            ("Object", ""),
            ("Message", ""),
        ],
        "PersistentVolumeClaim" => vec![
            ("Name", "name"),
            ("Status", ""),
            ("Volume", ""),
            ("Capacity", ""),
            ("Access Modes", ""),
            ("StorageClass", ""),
            ("VolumeAttributesClass", ""),
            ("Age", ""),
        ],
        "StorageClass" => vec![
            ("Name", "name"),
            ("Provisioner", ""),
            ("ReclaimPolicy", ""),
            ("VolumeBindingMode", ""),
            ("AllowVolumeExpansion", ""),
            ("Age", ""),
        ],
        _ => vec![("Name", "name"), ("Age", "")],
    }
}

/// One row of the Table: the cells for `columns(kind)`, from the object as kubectl shows it.
fn cells(kind: &str, o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let name = json!(s(o, "/metadata/name"));
    let age_cell = json!(age(s(o, "/metadata/creationTimestamp"), now));
    match kind {
        "Pod" => pod_cells(o, name, age_cell),
        "Deployment" => vec![
            name,
            json!(format!(
                "{}/{}",
                i(o, "/status/readyReplicas"),
                i(o, "/spec/replicas")
            )),
            json!(i(o, "/status/updatedReplicas")),
            json!(i(o, "/status/availableReplicas")),
            age_cell,
        ],
        "StatefulSet" => vec![
            name,
            json!(format!(
                "{}/{}",
                i(o, "/status/readyReplicas"),
                i(o, "/spec/replicas")
            )),
            age_cell,
        ],
        "DaemonSet" => vec![
            name,
            json!(i(o, "/status/desiredNumberScheduled")),
            json!(i(o, "/status/currentNumberScheduled")),
            json!(i(o, "/status/numberReady")),
            json!(i(o, "/status/updatedNumberScheduled")),
            json!(i(o, "/status/numberAvailable")),
            age_cell,
        ],
        "ReplicaSet" => vec![
            name,
            json!(i(o, "/spec/replicas")),
            json!(i(o, "/status/replicas")),
            json!(i(o, "/status/readyReplicas")),
            age_cell,
        ],
        "Job" => job_cells(o, name, age_cell),
        "Event" => vec![
            json!(age(s(o, "/lastTimestamp"), now)),
            json!(s(o, "/type")),
            json!(s(o, "/reason")),
            json!(format!(
                "{}/{}",
                s(o, "/involvedObject/kind").to_lowercase(),
                s(o, "/involvedObject/name")
            )),
            json!(s(o, "/message")),
        ],
        "PersistentVolumeClaim" => claim_cells(o, name, age_cell),
        "StorageClass" => {
            let default = o
                .pointer("/metadata/annotations/storageclass.kubernetes.io~1is-default-class")
                == Some(&json!("true"));
            let name = format!(
                "{}{}",
                s(o, "/metadata/name"),
                if default { " (default)" } else { "" }
            );
            let or = |p: &str, d: &'static str| match s(o, p) {
                "" => d,
                v => v,
            };
            vec![
                json!(name),
                json!(s(o, "/provisioner")),
                json!(or("/reclaimPolicy", "Delete")),
                json!(or("/volumeBindingMode", "Immediate")),
                json!(
                    o.pointer("/allowVolumeExpansion")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                ),
                age_cell,
            ]
        }
        _ => vec![name, age_cell],
    }
}

/// A claim's row as kubectl prints it: STATUS, VOLUME, CAPACITY, ACCESS MODES (RWO, ...),
/// STORAGECLASS, VOLUMEATTRIBUTESCLASS.
fn claim_cells(o: &Value, name: Value, age_cell: Value) -> Vec<Value> {
    let modes: Vec<&str> = o
        .pointer("/status/accessModes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect();
    let phase = match s(o, "/status/phase") {
        "" => "Pending",
        p => p,
    };
    let class = match s(o, "/spec/volumeAttributesClassName") {
        "" => "<unset>",
        c => c,
    };
    vec![
        name,
        json!(phase),
        json!(s(o, "/spec/volumeName")),
        json!(s(o, "/status/capacity/storage")),
        json!(modes.join(",")),
        json!(s(o, "/spec/storageClassName")),
        json!(class),
        age_cell,
    ]
}

/// A pod's row: NAME, READY (ready/total containers), STATUS (as kubectl shows it),
/// RESTARTS (summed over containers), AGE, NODE.
fn pod_cells(o: &Value, name: Value, age_cell: Value) -> Vec<Value> {
    let statuses = o
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = o
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let ready = statuses
        .iter()
        .filter(|c| c["ready"].as_bool() == Some(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    let node = s(o, "/spec/nodeName");
    vec![
        name,
        json!(format!("{ready}/{total}")),
        json!(pod_status(o)),
        json!(restarts),
        age_cell,
        json!(if node.is_empty() { "<none>" } else { node }),
    ]
}

/// A Job's row: NAME, STATUS (Complete or Failed from its conditions, else Running),
/// COMPLETIONS (succeeded/completions), AGE.
fn job_cells(o: &Value, name: Value, age_cell: Value) -> Vec<Value> {
    let conds = o
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has = |t: &str| {
        conds
            .iter()
            .any(|c| c["type"] == t && c["status"] == "True")
    };
    let status = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else {
        "Running"
    };
    vec![
        name,
        json!(status),
        json!(format!(
            "{}/{}",
            i(o, "/status/succeeded"),
            i(o, "/spec/completions").max(1)
        )),
        age_cell,
    ]
}

/// A `meta.k8s.io/v1` Table of `items` (one object or a list).
pub fn table(res: ResourceId, items: &[&Value], rv: u64) -> Value {
    let kind = resources::get(res).kind;
    let now = jiff::Timestamp::now();
    let defs: Vec<Value> = columns(kind)
        .into_iter()
        .map(|(n, f)| json!({"name": n, "type": "string", "format": f, "description": "", "priority": 0}))
        .collect();
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            json!({"cells": cells(kind, o, now), "object": {"kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata").cloned().unwrap_or(Value::Null)}})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_status_prefers_waiting_reasons() {
        let pod = json!({"status": {"phase": "Running", "containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        assert_eq!(pod_status(&pod), "CrashLoopBackOff");
        assert_eq!(
            pod_status(&json!({"status": {"phase": "Succeeded"}})),
            "Completed"
        );
        assert_eq!(pod_status(&json!({})), "Pending");
    }

    #[test]
    fn ages_read_like_kubectl() {
        let now: jiff::Timestamp = "2026-01-01T10:00:00Z".parse().unwrap();
        assert_eq!(age("2026-01-01T09:59:55Z", now), "5s");
        assert_eq!(age("2026-01-01T09:57:00Z", now), "3m0s");
        assert_eq!(age("2026-01-01T08:00:00Z", now), "120m");
        assert_eq!(age("2025-12-30T10:00:00Z", now), "2d");
    }

    #[test]
    fn accept_header() {
        assert!(wanted(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        ));
        assert!(!wanted("application/json"));
    }
}
