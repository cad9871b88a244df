//! The kubelet: each pod's simulated lifecycle after scheduling (image pulls,
//! container starts, readiness, crashes, completion), its status as the real kubelet writes it,
//! its Events and its container logs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::scheduler::view::Nodes;
use super::{Controllers, Events, Involved, Pass, controller_uid, fnv, meta};
use crate::resources::ids;

/// Defaults when the scenario rule leaves a time unset.
const DEFAULT_START: Duration = Duration::from_millis(300);
const DEFAULT_READY: Duration = Duration::from_millis(300);
/// A run-to-completion pod's container starts this long after creation.
const RUN_START: Duration = Duration::from_millis(200);
/// How long a crash-looping container runs before it exits.
const CRASH_RUN: Duration = Duration::from_secs(1);
/// ErrImagePull lasts this long, then ImagePullBackOff this long, then another pull.
const PULL_ERROR: Duration = Duration::from_secs(1);
const PULL_BACKOFF: Duration = Duration::from_secs(4);
/// How often a failing readiness probe repeats its Event.
const PROBE_PERIOD: Duration = Duration::from_secs(10);

/// What a pod does.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// A long-running workload pod, behaving as a scenario workload rule says
    /// (index into `workloads`, None = `defaults`).
    Serve { rule: Option<usize> },
    /// A pod that runs to completion (Job pods): ends after the job rule's `after` with exit
    /// code `exit` (None = success), or never when `hang`.
    Run {
        rule: Option<usize>,
        exit: Option<i32>,
        hang: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Unscheduled,
    Unschedulable,
    Creating,
    ErrImagePull,
    ImagePullBackOff,
    Running,
    CrashLoopBackOff,
    Succeeded,
    Failed,
    /// A pod that already had a status when first seen (seeded): left alone.
    External,
}

pub(crate) struct PodSim {
    pub ns: String,
    pub name: String,
    pub uid: String,
    /// The controller owner's uid, marked dirty when the pod changes.
    pub(super) owner: Option<String>,
    pub(super) containers: Vec<(String, String)>,
    pub(super) init_containers: Vec<(String, String)>,
    pub(super) plan: Plan,
    pub(super) created: Instant,
    pub stage: Stage,
    /// When the current stage began (for Running: the container's start).
    pub(super) since: Instant,
    pub(super) run_wall: String,
    pub(super) preset_node: Option<String>,
    /// `spec.nodeSelector` and `spec.affinity.nodeAffinity`, as the scheduler filters on them.
    pub(super) placement: (Value, Value),
    pub node: String,
    pub(super) host_ip: String,
    pub(super) pod_ip: Option<String>,
    pub restarts: u32,
    pub(super) last_term: Option<Value>,
    pub(super) final_term: Option<Value>,
    pub ready: bool,
    pub ready_since: Option<Instant>,
    pub(super) t_created: String,
    pub(super) t_scheduled: String,
    pub(super) t_sandbox: String,
    pub(super) t_ready: String,
    pub(super) next_probe: Instant,
    pub(super) unschedulable: String,
    pub(super) ever_started: bool,
    pub(super) qos: String,
    pub(super) version: u64,
    pub(super) written: u64,
}

impl PodSim {
    pub fn new(pod: &Value, mut plan: Plan, now: Instant) -> Self {
        // What the container's command says beats the scenario's job rule.
        if let (Plan::Run { exit, hang, .. }, Some(code)) = (&mut plan, shell_exit(pod)) {
            *exit = (code != 0).then_some(code);
            *hang = false;
        }
        let list = |key: &str| -> Vec<(String, String)> {
            pod.pointer(&format!("/spec/{key}"))
                .and_then(Value::as_array)
                .map(|cs| {
                    cs.iter()
                        .map(|c| {
                            (
                                c["name"].as_str().unwrap_or("").to_string(),
                                c["image"].as_str().unwrap_or("").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let phase = pod
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        let external = matches!(phase, "Running" | "Succeeded" | "Failed");
        let ready = external
            && pod
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                });
        let spec = pod.get("spec").cloned().unwrap_or(Value::Null);
        PodSim {
            ns: meta(pod, "namespace").to_string(),
            name: meta(pod, "name").to_string(),
            uid: meta(pod, "uid").to_string(),
            owner: controller_uid(pod).map(String::from),
            containers: list("containers"),
            init_containers: list("initContainers"),
            plan,
            created: now,
            stage: if external {
                Stage::External
            } else {
                Stage::Unscheduled
            },
            since: now,
            run_wall: String::new(),
            preset_node: pod
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(String::from),
            placement: (
                pod.pointer("/spec/nodeSelector")
                    .cloned()
                    .unwrap_or(Value::Null),
                pod.pointer(
                    "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution",
                )
                .cloned()
                .unwrap_or(Value::Null),
            ),
            node: String::new(),
            host_ip: String::new(),
            pod_ip: None,
            restarts: 0,
            last_term: None,
            final_term: None,
            ready,
            ready_since: if ready { Some(now) } else { None },
            t_created: meta(pod, "creationTimestamp").to_string(),
            t_scheduled: String::new(),
            t_sandbox: String::new(),
            t_ready: String::new(),
            next_probe: now,
            unschedulable: String::new(),
            ever_started: false,
            qos: pod
                .pointer("/status/qosClass")
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| qos_class(&spec).to_string()),
            version: 0,
            written: 0,
        }
    }

    /// Running or ended Succeeded/Failed, as the pod phase says.
    pub fn phase(&self) -> &'static str {
        match self.stage {
            Stage::Unscheduled
            | Stage::Unschedulable
            | Stage::Creating
            | Stage::ErrImagePull
            | Stage::ImagePullBackOff => "Pending",
            Stage::Running | Stage::CrashLoopBackOff | Stage::External => "Running",
            Stage::Succeeded => "Succeeded",
            Stage::Failed => "Failed",
        }
    }

    pub fn terminal(&self) -> bool {
        matches!(self.stage, Stage::Succeeded | Stage::Failed)
    }

    /// Ready for at least `min_ready` (what controllers call available).
    pub fn available(&self, now: Instant, min_ready: Duration) -> bool {
        self.ready
            && self
                .ready_since
                .is_some_and(|t| now.saturating_duration_since(t) >= min_ready)
    }

    pub(super) fn involved(&self, container: Option<&str>) -> Involved<'_> {
        Involved {
            kind: "Pod",
            api_version: "v1",
            name: &self.name,
            namespace: &self.ns,
            uid: &self.uid,
            field_path: container.map(|c| format!("spec.containers{{{c}}}")),
        }
    }

    fn kubelet_event(
        &self,
        p: &Pass,
        ev: &mut Events,
        c: Option<&str>,
        type_: &str,
        reason: &str,
        msg: &str,
    ) {
        ev.record(
            p,
            &self.involved(c),
            type_,
            reason,
            msg,
            "kubelet",
            Some(&self.node),
        );
    }

    /// The kubelet starts pulling `img` for container `c`.
    fn pulling(&self, p: &Pass, ev: &mut Events, c: &str, img: &str) {
        let msg = format!("Pulling image \"{img}\"");
        self.kubelet_event(p, ev, Some(c), "Normal", "Pulling", &msg);
    }

    /// Moves to `stage` as of `now`: a new status to write.
    pub(super) fn enter(&mut self, stage: Stage, now: Instant) {
        self.stage = stage;
        self.since = now;
        self.version += 1;
    }

    fn start_delay(&self, p: &Pass) -> Duration {
        match &self.plan {
            Plan::Serve { rule } => p.rule(*rule).start_after.unwrap_or(DEFAULT_START),
            Plan::Run { .. } => RUN_START,
        }
    }

    fn log_lines<'p>(&self, p: &'p Pass) -> &'p [String] {
        match &self.plan {
            Plan::Serve { rule } => &p.rule(*rule).logs,
            Plan::Run { rule, .. } => &p.job_rule(*rule).logs,
        }
    }

    /// Advances the lifecycle to `now` (several steps if due), recording Events and logs.
    fn advance(&mut self, p: &Pass, nodes: &Nodes, ev: &mut Events, ctr: &mut Counters) {
        for _ in 0..8 {
            if !self.step(p, nodes, ev, ctr) {
                break;
            }
        }
    }

    /// One transition if one is due; false when nothing changed.
    fn step(&mut self, p: &Pass, nodes: &Nodes, ev: &mut Events, ctr: &mut Counters) -> bool {
        let now = p.now;
        match self.stage {
            Stage::Unscheduled => self.schedule(p, nodes, ev, ctr),
            Stage::Unschedulable => self.retry_schedule(p, nodes, ev, ctr),
            Stage::Succeeded | Stage::Failed | Stage::External => false,
            Stage::Creating => {
                if now < self.created + self.start_delay(p) {
                    return false;
                }
                self.sandbox(p, ctr);
                let pull_fails =
                    matches!(&self.plan, Plan::Serve { rule } if p.rule(*rule).image_pull_backoff);
                if pull_fails {
                    self.pull_failed(p, ev);
                } else {
                    self.start_containers(p, ev, true);
                }
                true
            }
            Stage::ErrImagePull => self.pull_back_off(p, ev),
            Stage::ImagePullBackOff => {
                if now < self.since + PULL_BACKOFF {
                    return false;
                }
                self.pull_failed(p, ev);
                true
            }
            Stage::Running => self.step_running(p, ev),
            Stage::CrashLoopBackOff => {
                if now < self.since + crash_backoff(self.restarts) {
                    return false;
                }
                self.start_containers(p, ev, false);
                true
            }
        }
    }

    /// ErrImagePull has lasted PULL_ERROR: ImagePullBackOff, with the kubelet's BackOff and
    /// Failed events per container. False while it is not due.
    fn pull_back_off(&mut self, p: &Pass, ev: &mut Events) -> bool {
        let now = p.now;
        if now < self.since + PULL_ERROR {
            return false;
        }
        self.enter(Stage::ImagePullBackOff, now);
        for (c, img) in self.containers.clone() {
            let msg = format!("Back-off pulling image \"{img}\"");
            self.kubelet_event(p, ev, Some(&c), "Normal", "BackOff", &msg);
            let msg = "Error: ImagePullBackOff";
            self.kubelet_event(p, ev, Some(&c), "Warning", "Failed", msg);
        }
        true
    }

    fn step_running(&mut self, p: &Pass, ev: &mut Events) -> bool {
        let now = p.now;
        match self.plan.clone() {
            Plan::Serve { rule } => {
                let rule = p.rule(rule);
                let ready_after = rule.ready_after.unwrap_or(DEFAULT_READY);
                if rule.oom_killed || rule.crash_loop.is_some() {
                    if now < self.since + CRASH_RUN {
                        return false;
                    }
                    let (exit, reason, last_line) = if rule.oom_killed {
                        (
                            137,
                            "OOMKilled",
                            "fatal: out of memory (container killed, exit code 137)".to_string(),
                        )
                    } else {
                        let code = rule.crash_loop.unwrap_or(1);
                        (
                            code,
                            if code == 0 { "Completed" } else { "Error" },
                            format!("fatal: exit status {code}"),
                        )
                    };
                    if let Some((c, _)) = self.containers.first() {
                        p.sim.logs.append(&self.ns, &self.name, c, &last_line);
                    }
                    self.stop_logs(p);
                    self.last_term = Some(self.terminated(p, exit, reason));
                    self.restarts += 1;
                    self.enter(Stage::CrashLoopBackOff, now);
                    let pod = format!("{}_{}({})", self.name, self.ns, self.uid);
                    for (c, _) in self.containers.clone() {
                        let msg = format!("Back-off restarting failed container {c} in pod {pod}");
                        self.kubelet_event(p, ev, Some(&c), "Warning", "BackOff", &msg);
                    }
                    true
                } else if rule.readiness_never {
                    if now >= self.since + ready_after && now >= self.next_probe {
                        self.next_probe = now + PROBE_PERIOD;
                        let c = self.containers.first().map(|c| c.0.clone());
                        let msg = "Readiness probe failed: HTTP probe failed with statuscode: 503";
                        self.kubelet_event(p, ev, c.as_deref(), "Warning", "Unhealthy", msg);
                    }
                    false
                } else if !self.ready && now >= self.since + ready_after {
                    self.set_ready(p, true);
                    true
                } else {
                    false
                }
            }
            Plan::Run { rule, exit, hang } => {
                let after = p.job_rule(rule).after.unwrap_or(Duration::from_millis(500));
                if hang || now < self.since + after {
                    return false;
                }
                let code = exit.unwrap_or(0);
                self.stop_logs(p);
                self.final_term =
                    Some(self.terminated(p, code, if code == 0 { "Completed" } else { "Error" }));
                let end = if exit.is_some() {
                    Stage::Failed
                } else {
                    Stage::Succeeded
                };
                self.enter(end, now);
                self.set_ready(p, false);
                true
            }
        }
    }

    fn set_ready(&mut self, p: &Pass, ready: bool) {
        if self.ready != ready {
            self.ready = ready;
            self.ready_since = ready.then_some(p.now);
            self.t_ready = p.wall.clone();
            self.version += 1;
        }
    }

    fn sandbox(&mut self, p: &Pass, ctr: &mut Counters) {
        if self.pod_ip.is_none() {
            ctr.ip_seq += 1;
            let n = ctr.ip_seq;
            self.pod_ip = Some(format!("10.244.{}.{}", (n / 250) % 250, n % 250 + 2));
            self.t_sandbox = p.wall.clone();
        }
    }

    fn pull_failed(&mut self, p: &Pass, ev: &mut Events) {
        self.enter(Stage::ErrImagePull, p.now);
        for (c, img) in self.containers.clone() {
            self.pulling(p, ev, &c, &img);
            self.kubelet_event(p, ev, Some(&c), "Warning", "Failed", &pull_error(&img));
            self.kubelet_event(p, ev, Some(&c), "Warning", "Failed", "Error: ErrImagePull");
        }
    }

    fn start_containers(&mut self, p: &Pass, ev: &mut Events, first: bool) {
        for (c, img) in self.containers.clone() {
            if first {
                self.pulling(p, ev, &c, &img);
                let size = 20_000_000 + fnv(img.as_bytes()) % 80_000_000;
                let msg = format!(
                    "Successfully pulled image \"{img}\" in 812ms (812ms including waiting). Image size: {size} bytes."
                );
                self.kubelet_event(p, ev, Some(&c), "Normal", "Pulled", &msg);
            } else {
                let msg = format!("Container image \"{img}\" already present on machine");
                self.kubelet_event(p, ev, Some(&c), "Normal", "Pulled", &msg);
            }
            let msg = format!("Created container: {c}");
            self.kubelet_event(p, ev, Some(&c), "Normal", "Created", &msg);
            let msg = format!("Started container {c}");
            self.kubelet_event(p, ev, Some(&c), "Normal", "Started", &msg);
        }
        let lines = self.log_lines(p);
        for (i, (c, _)) in self.containers.iter().enumerate() {
            p.sim.logs.start(&self.ns, &self.name, c);
            if i == 0 {
                for line in lines {
                    p.sim.logs.append(&self.ns, &self.name, c, line);
                }
            }
        }
        self.ever_started = true;
        self.enter(Stage::Running, p.now);
        self.run_wall = p.wall.clone();
        self.next_probe = p.now;
        if matches!(self.plan, Plan::Run { .. }) {
            // No probes: a running Job pod is Ready.
            self.set_ready(p, true);
        }
    }

    fn stop_logs(&self, p: &Pass) {
        for (c, _) in &self.containers {
            p.sim.logs.stop(&self.ns, &self.name, c);
        }
    }

    fn terminated(&self, p: &Pass, exit: i32, reason: &str) -> Value {
        json!({"exitCode": exit, "reason": reason, "startedAt": self.run_wall, "finishedAt": p.wall,
               "containerID": self.container_id(self.containers.first().map_or("", |c| c.0.as_str()))})
    }

    fn container_id(&self, container: &str) -> String {
        let a = fnv(format!("{}/{container}/{}", self.uid, self.restarts).as_bytes());
        let b = fnv(format!("{a}/{}", self.name).as_bytes());
        format!(
            "containerd://{a:016x}{b:016x}{:016x}{:016x}",
            a.rotate_left(17),
            b.rotate_left(29)
        )
    }

    /// The pod's `.status` as the kubelet (or scheduler) would write it now.
    fn status(&self) -> Value {
        let mut st = json!({"phase": self.phase(), "qosClass": self.qos});
        if matches!(self.stage, Stage::Unscheduled | Stage::Unschedulable) {
            if self.stage == Stage::Unschedulable {
                st["conditions"] = json!([{"type": "PodScheduled", "status": "False", "lastProbeTime": null,
                    "lastTransitionTime": self.t_created, "reason": "Unschedulable",
                    "message": self.unschedulable}]);
            }
            return st;
        }
        let terminal = self.terminal();
        let names: Vec<&str> = self.containers.iter().map(|c| c.0.as_str()).collect();
        let ready_cond = |t: &str| {
            if self.ready {
                json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": self.t_ready})
            } else if terminal {
                json!({"type": t, "status": "False", "lastProbeTime": null, "lastTransitionTime": self.t_ready,
                       "reason": "PodCompleted"})
            } else {
                json!({"type": t, "status": "False", "lastProbeTime": null, "lastTransitionTime": self.t_ready,
                       "reason": "ContainersNotReady",
                       "message": format!("containers with unready status: [{}]", names.join(" "))})
            }
        };
        let sandbox_ready = self.pod_ip.is_some() && !terminal;
        st["conditions"] = json!([
            {"type": "PodReadyToStartContainers", "status": if sandbox_ready { "True" } else { "False" },
             "lastProbeTime": null,
             "lastTransitionTime": if self.t_sandbox.is_empty() { &self.t_scheduled } else { &self.t_sandbox }},
            {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": self.t_scheduled},
            ready_cond("Ready"),
            ready_cond("ContainersReady"),
            {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": self.t_scheduled},
        ]);
        st["hostIP"] = json!(self.host_ip);
        st["hostIPs"] = json!([{"ip": self.host_ip}]);
        if let Some(ip) = &self.pod_ip {
            st["podIP"] = json!(ip);
            st["podIPs"] = json!([{"ip": ip}]);
        }
        st["startTime"] = json!(self.t_scheduled);
        if !self.init_containers.is_empty() {
            let inits: Vec<Value> = self
                .init_containers
                .iter()
                .map(|(c, img)| {
                    json!({"name": c, "image": img, "imageID": image_id(img), "containerID": self.container_id(c),
                           "ready": true, "started": false, "restartCount": 0, "lastState": {},
                           "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                     "startedAt": self.t_scheduled, "finishedAt": self.t_scheduled}}})
                })
                .collect();
            st["initContainerStatuses"] = json!(inits);
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

    fn container_state(&self, c: &str, img: &str) -> Value {
        match self.stage {
            Stage::Creating | Stage::Unscheduled | Stage::Unschedulable | Stage::External => {
                json!({"waiting": {"reason": "ContainerCreating"}})
            }
            Stage::ErrImagePull => {
                json!({"waiting": {"reason": "ErrImagePull", "message": pull_error_detail(img)}})
            }
            Stage::ImagePullBackOff => {
                json!({"waiting": {"reason": "ImagePullBackOff", "message": format!("Back-off pulling image \"{img}\"")}})
            }
            Stage::Running => json!({"running": {"startedAt": self.run_wall}}),
            Stage::CrashLoopBackOff => {
                json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!(
                "back-off {} restarting failed container={c} pod={}_{}({})",
                backoff_display(self.restarts), self.name, self.ns, self.uid)}})
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
}

/// The exit code a run-to-completion pod's first container ends with when its command is a
/// shell whose script ends in `exit N` (`["sh","-c","exit 3"]`, or `sh -c` with the script in
/// `args`), as busybox would on a real cluster: the kubelet runs no images, so this is the one
/// command it honours. None: the scenario's job rule decides.
pub(crate) fn shell_exit(pod: &Value) -> Option<i32> {
    let c = pod.pointer("/spec/containers/0")?;
    let strs = |k: &str| -> Vec<&str> {
        c[k].as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let argv: Vec<&str> = strs("command").into_iter().chain(strs("args")).collect();
    let [shell, "-c", script, ..] = argv.as_slice() else {
        return None;
    };
    let shell = shell.rsplit('/').next().unwrap_or(shell);
    if !matches!(shell, "sh" | "bash" | "ash" | "dash") {
        return None;
    }
    let last = script
        .split(['\n', ';'])
        .map(str::trim)
        .rfind(|s| !s.is_empty())?;
    let code = last.strip_prefix("exit")?.trim();
    // `exit` alone keeps the last command's status, which the simulator cannot know.
    code.parse::<i32>().ok().map(|n| n & 0xff)
}

/// Mutable counters the scheduler and the kubelet share.
#[derive(Default)]
pub(crate) struct Counters {
    pub node_rr: usize,
    pub ip_seq: u64,
    pub sched: super::scheduler::view::Assumed,
}

impl Controllers {
    /// Registers new pods, advances every pod and writes the statuses that changed; the
    /// owners of changed pods are marked dirty.
    pub(super) fn kubelet_pass(&mut self, p: &Pass, cache: &Cache, dirty: &mut Dirty) {
        for pod in dirty.changed(&dirty.pods, &cache.pods) {
            let uid = meta(pod, "uid");
            if self.pods.contains_key(uid) {
                continue;
            }
            let plan = self.plan_for_unknown_pod(p.sim, cache, pod);
            let mut fresh = PodSim::new(pod, plan, p.now);
            if fresh.stage == Stage::External {
                fresh.written = fresh.version;
            }
            self.pods.insert(uid.to_string(), fresh);
        }
        let Controllers {
            pods,
            events,
            counters,
            ..
        } = self;
        for sp in pods.values_mut() {
            let nodes = Nodes::of(cache);
            sp.advance(p, &nodes, events, counters);
            if sp.version == sp.written {
                continue;
            }
            sp.written = sp.version;
            if let Some(o) = &sp.owner {
                dirty.mark_up(o, &cache.owners);
            }
            let status = sp.status();
            let node = sp.node.clone();
            p.sim
                .store
                .update_with(*ids::PODS, Some(&sp.ns), &sp.name, |o| {
                    let unset = o
                        .pointer("/spec/nodeName")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty);
                    if unset && !node.is_empty() && o["spec"].is_object() {
                        o["spec"]["nodeName"] = json!(node);
                    }
                    o["status"] = status;
                });
        }
    }
}

/// Simulated crash back-off after the n-th crash: 1s, 2s, then 4s.
fn crash_backoff(restarts: u32) -> Duration {
    Duration::from_secs(1 << restarts.saturating_sub(1).min(2))
}

/// The back-off the message shows, as the real kubelet grows it (10s doubling to 5m).
fn backoff_display(restarts: u32) -> String {
    let secs = (10u64 << restarts.saturating_sub(1).min(5)).min(300);
    if secs >= 60 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

fn full_image(img: &str) -> String {
    let first = img.split('/').next().unwrap_or("");
    let mut full = if !img.contains('/') {
        format!("docker.io/library/{img}")
    } else if first.contains('.') || first.contains(':') || first == "localhost" {
        img.to_string()
    } else {
        format!("docker.io/{img}")
    };
    let last = full.rsplit('/').next().unwrap_or("");
    if !last.contains(':') && !last.contains('@') {
        full.push_str(":latest");
    }
    full
}

fn pull_error_detail(img: &str) -> String {
    let full = full_image(img);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{full}\": failed to resolve reference \"{full}\": {full}: not found"
    )
}

fn pull_error(img: &str) -> String {
    format!("Failed to pull image \"{img}\": {}", pull_error_detail(img))
}

fn image_id(img: &str) -> String {
    let full = full_image(img);
    let repo = full
        .rsplit_once(':')
        .filter(|(_, tag)| !tag.contains('/'))
        .map_or(full.as_str(), |(r, _)| r);
    let h = fnv(img.as_bytes());
    format!(
        "{repo}@sha256:{h:016x}{:016x}{:016x}{:016x}",
        h.rotate_left(13),
        h.rotate_left(29),
        h.rotate_left(41)
    )
}

/// The pod QoS class from its containers' requests and limits.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        let req = c.pointer("/resources/requests").and_then(Value::as_object);
        let lim = c.pointer("/resources/limits").and_then(Value::as_object);
        if req.is_some_and(|r| !r.is_empty()) || lim.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        for res in ["cpu", "memory"] {
            let l = lim.and_then(|l| l.get(res));
            let r = req.and_then(|r| r.get(res));
            if l.is_none() || r.is_some_and(|r| Some(r) != l) {
                guaranteed = false;
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}
