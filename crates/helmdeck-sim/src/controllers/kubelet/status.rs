//! The pod's `.status` as the kubelet (or the scheduler) writes it: phase, conditions, and
//! one status per app and init container.

use serde_json::{Value, json};

use super::images::{image_id, pull_error_detail};
use super::{PodSim, Stage, backoff};

impl PodSim {
    /// The pod's `.status` as the kubelet (or scheduler) would write it now.
    pub(super) fn status(&self) -> Value {
        let mut st = json!({"phase": self.phase(), "qosClass": self.qos});
        if matches!(self.stage, Stage::Unscheduled | Stage::Unschedulable) {
            if self.stage == Stage::Unschedulable {
                st["conditions"] = json!([{"type": "PodScheduled", "status": "False", "lastProbeTime": null,
                    "lastTransitionTime": self.t_created, "reason": "Unschedulable",
                    "message": self.unschedulable}]);
            }
            return st;
        }
        st["conditions"] = self.conditions();
        st["hostIP"] = json!(self.host_ip);
        st["hostIPs"] = json!([{"ip": self.host_ip}]);
        if let Some(ip) = &self.pod_ip {
            st["podIP"] = json!(ip);
            st["podIPs"] = json!([{"ip": ip}]);
        }
        st["startTime"] = json!(self.t_scheduled);
        if let Some(inits) = &self.init {
            st["initContainerStatuses"] = json!(self.init_statuses(inits));
        }
        let statuses: Vec<Value> = self
            .containers
            .iter()
            .map(|(c, img)| {
                let mut cs = json!({"name": c, "image": img, "imageID": "", "ready": self.ready,
                    "started": self.stage == Stage::Running, "restartCount": self.restarts,
                    "state": self.container_state(c, img),
                    "lastState": self.last_term.as_ref().map_or(json!({}), |t| json!({"terminated": t}))});
                if self.ever_started {
                    cs["imageID"] = json!(image_id(img));
                    cs["containerID"] = json!(self.container_id(c));
                }
                cs
            })
            .collect();
        st["containerStatuses"] = json!(statuses);
        st
    }

    /// PodReadyToStartContainers, Initialized, Ready, ContainersReady and PodScheduled, in
    /// the kubelet's order and words.
    fn conditions(&self) -> Value {
        let terminal = self.terminal();
        let names: Vec<&str> = self.containers.iter().map(|c| c.0.as_str()).collect();
        let ready_cond = |t: &str| {
            if self.ready {
                json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": self.t_ready})
            } else if terminal {
                // The kubelet's words for an ended pod (pkg/kubelet/status/generate.go).
                let reason = if self.stage == Stage::Failed {
                    "PodFailed"
                } else {
                    "PodCompleted"
                };
                json!({"type": t, "status": "False", "lastProbeTime": null, "lastTransitionTime": self.t_ready,
                       "reason": reason})
            } else {
                json!({"type": t, "status": "False", "lastProbeTime": null, "lastTransitionTime": self.t_ready,
                       "reason": "ContainersNotReady",
                       "message": format!("containers with unready status: [{}]", names.join(" "))})
            }
        };
        let initialized = match &self.init {
            Some(inits) if !inits.done() => {
                let incomplete: Vec<&str> = self.init_containers[inits.current..]
                    .iter()
                    .map(|c| c.0.as_str())
                    .collect();
                json!({"type": "Initialized", "status": "False", "lastProbeTime": null,
                       "lastTransitionTime": self.t_scheduled, "reason": "ContainersNotInitialized",
                       "message": format!("containers with incomplete status: [{}]", incomplete.join(" "))})
            }
            Some(inits) if self.stage == Stage::Succeeded => {
                json!({"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": inits.t_done,
                       "reason": "PodCompleted"})
            }
            Some(inits) => {
                json!({"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": inits.t_done})
            }
            None => {
                json!({"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": self.t_scheduled})
            }
        };
        let sandbox_ready = self.pod_ip.is_some() && !terminal;
        json!([
            {"type": "PodReadyToStartContainers", "status": if sandbox_ready { "True" } else { "False" },
             "lastProbeTime": null,
             "lastTransitionTime": if self.t_sandbox.is_empty() { &self.t_scheduled } else { &self.t_sandbox }},
            initialized,
            ready_cond("Ready"),
            ready_cond("ContainersReady"),
            {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": self.t_scheduled},
        ])
    }

    fn container_state(&self, c: &str, img: &str) -> Value {
        let initializing = self.init.as_ref().is_some_and(|i| !i.done());
        match self.stage {
            // App containers wait behind unfinished initContainers, even in a failed pod.
            _ if initializing => json!({"waiting": {"reason": "PodInitializing"}}),
            Stage::Creating
            | Stage::Initializing
            | Stage::Unscheduled
            | Stage::Unschedulable
            | Stage::External => {
                json!({"waiting": {"reason": "ContainerCreating"}})
            }
            Stage::ErrImagePull => {
                json!({"waiting": {"reason": "ErrImagePull", "message": pull_error_detail(img)}})
            }
            // The kubelet wraps the last pull's error into the back-off message.
            Stage::ImagePullBackOff => {
                json!({"waiting": {"reason": "ImagePullBackOff", "message": format!(
                "Back-off pulling image \"{img}\": ErrImagePull: {}", pull_error_detail(img))}})
            }
            Stage::Running => json!({"running": {"startedAt": self.run_wall}}),
            Stage::CrashLoopBackOff => {
                json!({"waiting": {"reason": "CrashLoopBackOff", "message": self.crash_message(c)}})
            }
            Stage::Succeeded | Stage::Failed => {
                let mut t = self
                    .final_term
                    .clone()
                    .unwrap_or_else(|| json!({"exitCode": 0}));
                t["containerID"] = json!(self.container_id(c));
                json!({"terminated": t})
            }
        }
    }

    /// The kubelet's CrashLoopBackOff message for container `c`, with the simulated delay.
    pub(super) fn crash_message(&self, c: &str) -> String {
        format!(
            "back-off {} restarting failed container={c} pod={}_{}({})",
            backoff::go_duration(self.backoff.delay()),
            self.name,
            self.ns,
            self.uid
        )
    }
}
