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

/// The terminated state's reason, else `{prefix}Signal:N` / `{prefix}ExitCode:N`.
fn terminated_reason(t: &Value, prefix: &str) -> String {
    match t["reason"].as_str().filter(|r| !r.is_empty()) {
        Some(r) => format!("{prefix}{r}"),
        None => match t["signal"].as_i64().filter(|s| *s != 0) {
            Some(sig) => format!("{prefix}Signal:{sig}"),
            None => format!("{prefix}ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
        },
    }
}

/// A pod's STATUS, READY count, RESTARTS and the last restart's time, as upstream kubectl's
/// printPod (pkg/printers/internalversion/printers.go) computes them: the first unfinished
/// initContainer (`Init:N/M`, `Init:<reason>`), else the last app container with a waiting or
/// terminated reason, else the phase (or `status.reason`). Sidecar initContainers are not
/// told apart.
struct PodRow {
    status: String,
    ready: usize,
    restarts: i64,
    last_restart: Option<String>,
}

fn pod_row(pod: &Value) -> PodRow {
    let phase = s(pod, "/status/phase");
    let mut row = PodRow {
        // A pod the API server has just written has no phase yet: it is Pending.
        status: if phase.is_empty() { "Pending" } else { phase }.to_string(),
        ready: 0,
        restarts: 0,
        last_restart: None,
    };
    if let Some(r) = pod
        .pointer("/status/reason")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
    {
        row.status = r.to_string();
    }
    let note_restart = |row: &mut PodRow, c: &Value| {
        row.restarts += c["restartCount"].as_i64().unwrap_or(0);
        if let Some(at) = c
            .pointer("/lastState/terminated/finishedAt")
            .and_then(Value::as_str)
            && row.last_restart.as_deref().is_none_or(|l| l < at)
        {
            row.last_restart = Some(at.to_string());
        }
    };
    let inits = pod
        .pointer("/status/initContainerStatuses")
        .and_then(Value::as_array);
    let total_inits = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let mut initializing = false;
    for (i, c) in inits.into_iter().flatten().enumerate() {
        note_restart(&mut row, c);
        let term = c.pointer("/state/terminated");
        let waiting = c
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
            .unwrap_or("");
        row.status = match term {
            Some(t) if t["exitCode"].as_i64() == Some(0) => continue,
            Some(t) => terminated_reason(t, "Init:"),
            None if !waiting.is_empty() && waiting != "PodInitializing" => {
                format!("Init:{waiting}")
            }
            None => format!("Init:{i}/{total_inits}"),
        };
        initializing = true;
        break;
    }
    let initialized = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Initialized" && c["status"] == "True")
        });
    if !initializing || initialized {
        row.restarts = 0;
        row.last_restart = None;
        let mut has_running = false;
        let statuses = pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array);
        for c in statuses.into_iter().flatten().rev() {
            note_restart(&mut row, c);
            let waiting = c
                .pointer("/state/waiting/reason")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !waiting.is_empty() {
                row.status = waiting.to_string();
            } else if let Some(t) = c.pointer("/state/terminated") {
                row.status = terminated_reason(t, "");
            } else if c["ready"].as_bool() == Some(true) && c.pointer("/state/running").is_some() {
                has_running = true;
                row.ready += 1;
            }
        }
        if row.status == "Completed" && has_running {
            let ready = pod
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                });
            row.status = if ready { "Running" } else { "NotReady" }.to_string();
        }
    }
    let terminal = matches!(s(pod, "/status/phase"), "Succeeded" | "Failed");
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        if s(pod, "/status/reason") == "NodeLost" {
            row.status = "Unknown".into();
        } else if !terminal {
            row.status = "Terminating".into();
        }
    }
    row
}

/// kubectl's STATUS column for a pod.
#[cfg(test)]
fn pod_status(pod: &Value) -> String {
    pod_row(pod).status
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
        "Pod" => pod_cells(o, name, age_cell, now),
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

/// A pod's row: NAME, READY (ready/total app containers), STATUS, RESTARTS (with
/// `(5s ago)` after the last restart, as kubectl prints it), AGE, NODE.
fn pod_cells(o: &Value, name: Value, age_cell: Value, now: jiff::Timestamp) -> Vec<Value> {
    let row = pod_row(o);
    let total = o
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let restarts = match &row.last_restart {
        Some(at) if row.restarts != 0 => format!("{} ({} ago)", row.restarts, age(at, now)),
        _ => row.restarts.to_string(),
    };
    let node = s(o, "/spec/nodeName");
    vec![
        name,
        json!(format!("{}/{total}", row.ready)),
        json!(row.status),
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
        // As printPod: the phase when no container says more.
        assert_eq!(
            pod_status(&json!({"status": {"phase": "Succeeded"}})),
            "Succeeded"
        );
        assert_eq!(pod_status(&json!({})), "Pending");
    }

    /// A pod with two initContainers and one app container in the given states.
    fn init_pod(init: [Value; 2], app: Value, initialized: bool) -> Value {
        let st = |state: &Value| json!({"state": state, "restartCount": 0});
        json!({"spec": {"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "app"}]},
               "status": {"phase": "Pending",
                 "conditions": [{"type": "Initialized", "status": if initialized { "True" } else { "False" }}],
                 "initContainerStatuses": [st(&init[0]), st(&init[1])],
                 "containerStatuses": [st(&app)]}})
    }

    /// The cases of upstream printPod for initContainers, one by one.
    #[test]
    fn init_container_statuses_read_as_print_pod_prints_them() {
        let waiting = |r: &str| json!({"waiting": {"reason": r}});
        let done = json!({"terminated": {"exitCode": 0, "reason": "Completed"}});
        let running = json!({"running": {}});
        let init_wait = waiting("PodInitializing");
        let cases = [
            ([init_wait.clone(), init_wait.clone()], "Init:0/2"),
            ([running.clone(), init_wait.clone()], "Init:0/2"),
            ([done.clone(), running.clone()], "Init:1/2"),
            (
                [
                    json!({"terminated": {"exitCode": 2, "reason": "Error"}}),
                    init_wait.clone(),
                ],
                "Init:Error",
            ),
            (
                [json!({"terminated": {"exitCode": 3}}), init_wait.clone()],
                "Init:ExitCode:3",
            ),
            (
                [
                    json!({"terminated": {"exitCode": 137, "signal": 9}}),
                    init_wait.clone(),
                ],
                "Init:Signal:9",
            ),
            (
                [done.clone(), waiting("CrashLoopBackOff")],
                "Init:CrashLoopBackOff",
            ),
            (
                [waiting("CreateContainerConfigError"), init_wait.clone()],
                "Init:CreateContainerConfigError",
            ),
        ];
        for (init, want) in cases {
            let pod = init_pod(init.clone(), waiting("PodInitializing"), false);
            assert_eq!(pod_status(&pod), want, "{init:?}");
        }
        let pod = init_pod(
            [done.clone(), done.clone()],
            waiting("PodInitializing"),
            true,
        );
        assert_eq!(pod_status(&pod), "PodInitializing");
        let pod = init_pod(
            [done.clone(), done],
            waiting("CreateContainerConfigError"),
            true,
        );
        assert_eq!(pod_status(&pod), "CreateContainerConfigError");
    }

    #[test]
    fn restarts_count_init_containers_until_initialized_and_say_how_long_ago() {
        let now: jiff::Timestamp = "2026-01-01T10:00:00Z".parse().unwrap();
        let mut pod = init_pod(
            [
                json!({"waiting": {"reason": "CrashLoopBackOff"}}),
                json!({"waiting": {"reason": "PodInitializing"}}),
            ],
            json!({"waiting": {"reason": "PodInitializing"}}),
            false,
        );
        pod["status"]["initContainerStatuses"][0]["restartCount"] = json!(3);
        pod["status"]["initContainerStatuses"][0]["lastState"] =
            json!({"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T09:59:40Z"}});
        pod["status"]["containerStatuses"][0]["restartCount"] = json!(1);
        let cells = pod_cells(&pod, json!("p"), json!("1m"), now);
        assert_eq!(
            (cells[2].as_str(), cells[3].as_str()),
            (Some("Init:CrashLoopBackOff"), Some("3 (20s ago)"))
        );
        assert_eq!(cells[1], "0/1");
        // Initialized: the app containers' restarts only, and no time without a termination.
        pod["status"]["conditions"][0]["status"] = json!("True");
        pod["status"]["initContainerStatuses"][0]["state"] = json!({"terminated": {"exitCode": 0}});
        pod["status"]["initContainerStatuses"][1]["state"] = json!({"terminated": {"exitCode": 0}});
        pod["status"]["containerStatuses"][0]["state"] = json!({"running": {}});
        pod["status"]["containerStatuses"][0]["ready"] = json!(true);
        pod["status"]["phase"] = json!("Running");
        let cells = pod_cells(&pod, json!("p"), json!("1m"), now);
        assert_eq!(
            (cells[1].as_str(), cells[2].as_str(), cells[3].as_str()),
            (Some("1/1"), Some("Running"), Some("1"))
        );
    }

    #[test]
    fn terminating_shows_only_for_pods_that_have_not_ended() {
        let mut pod = json!({"metadata": {"deletionTimestamp": "2026-01-01T10:00:00Z"},
                             "status": {"phase": "Running"}});
        assert_eq!(pod_status(&pod), "Terminating");
        pod["status"]["phase"] = json!("Failed");
        assert_eq!(pod_status(&pod), "Failed");
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
