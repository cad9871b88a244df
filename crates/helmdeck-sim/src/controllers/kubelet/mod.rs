//! The kubelet: each pod's simulated lifecycle after scheduling (image pulls, initContainers,
//! container starts, readiness, crashes and restarts with back-off, completion), its status as
//! the real kubelet writes it, its Events and its container logs.
//!
//! `backoff.rs` holds the restart back-off, `init.rs` the initContainers, `status.rs` the pod
//! status JSON and `images.rs` what is derived from the spec alone.

mod backoff;
mod images;
mod init;
mod pass;
mod status;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Events, Involved, Pass, controller_uid, fnv, meta};
use crate::scenario::{JobOutcome, JobRule};
use backoff::Backoff;
pub(crate) use images::{qos_class, shell_exit};

/// Defaults when the scenario rule leaves a time unset (real time, as scenario times are).
const DEFAULT_START: Duration = Duration::from_millis(300);
const DEFAULT_READY: Duration = Duration::from_millis(300);
/// A run-to-completion pod's container starts this long after creation.
const RUN_START: Duration = Duration::from_millis(200);
/// Simulated: how long a crash-looping container runs before it exits.
const CRASH_RUN: Duration = Duration::from_secs(10);
/// Simulated: how long ErrImagePull shows before the kubelet's next sync says ImagePullBackOff.
const PULL_ERROR: Duration = Duration::from_secs(5);
/// Simulated: a readiness probe's default `periodSeconds` (how often Unhealthy repeats).
const PROBE_PERIOD: Duration = Duration::from_secs(10);

/// What a pod does.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// A long-running workload pod, behaving as a scenario workload rule says
    /// (index into `workloads`, None = `defaults`).
    Serve { rule: Option<usize> },
    /// A pod that runs to completion (Job pods): each run ends after the job rule's `after`
    /// with exit code `exit` (None = success), or never when `hang`. `ordinal` is the pod's
    /// place among its Job's pods: with restartPolicy OnFailure the k-th run ends as the
    /// rule says of attempt `ordinal + k` (unless `fixed`: the command decided the code).
    Run {
        rule: Option<usize>,
        exit: Option<i32>,
        hang: bool,
        ordinal: u32,
        fixed: bool,
    },
}

/// How the `n`-th (0-based) run of a run-to-completion workload ends: (exit code if it fails,
/// hangs).
pub(crate) fn run_outcome(r: &JobRule, n: u32) -> (Option<i32>, bool) {
    let exit = match r.exit_code.unwrap_or(1) {
        0 => 1,
        code => code,
    };
    let (fail, hang) = match r.fail_first {
        Some(k) => (n < k, false),
        None => match r.outcome {
            JobOutcome::Succeed => (false, false),
            JobOutcome::Fail => (true, false),
            JobOutcome::Hang => (false, true),
        },
    };
    (fail.then_some(exit), hang)
}

/// The pod's `spec.restartPolicy`, as the kubelet applies it to every container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Restart {
    Always,
    OnFailure,
    Never,
}

impl Restart {
    fn of(pod: &Value) -> Self {
        match pod.pointer("/spec/restartPolicy").and_then(Value::as_str) {
            Some("Never") => Restart::Never,
            Some("OnFailure") => Restart::OnFailure,
            _ => Restart::Always,
        }
    }

    /// Whether a container that exited with `code` is started again.
    fn restarts(self, code: i32) -> bool {
        match self {
            Restart::Always => true,
            Restart::OnFailure => code != 0,
            Restart::Never => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Unscheduled,
    Unschedulable,
    Creating,
    /// The initContainers run (which one, and how, is in `PodSim::init`).
    Initializing,
    ErrImagePull,
    ImagePullBackOff,
    Running,
    CrashLoopBackOff,
    Succeeded,
    Failed,
    /// A pod that already had a status when first seen (seeded): left alone.
    External,
}

/// A container of the pod: `Main(i)` is `spec.containers[i]`, `Init(i)` is
/// `spec.initContainers[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Main(usize),
    Init(usize),
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
    pub(super) restart: Restart,
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
    /// The back-off of the containers' restarts (or of the image pull).
    pub(super) backoff: Backoff,
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
    /// The initContainers' progress; None for a pod without any (most pods: no cost).
    pub(super) init: Option<Box<init::Inits>>,
    pub(super) version: u64,
    pub(super) written: u64,
}

impl PodSim {
    pub fn new(pod: &Value, mut plan: Plan, now: Instant) -> Self {
        // What the container's command says beats the scenario's job rule.
        if let (
            Plan::Run {
                exit, hang, fixed, ..
            },
            Some(code),
        ) = (&mut plan, shell_exit(pod))
        {
            *exit = (code != 0).then_some(code);
            *hang = false;
            *fixed = true;
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
        let init_containers = list("initContainers");
        PodSim {
            ns: meta(pod, "namespace").to_string(),
            name: meta(pod, "name").to_string(),
            uid: meta(pod, "uid").to_string(),
            owner: controller_uid(pod).map(String::from),
            containers: list("containers"),
            init: init::Inits::for_pod(init_containers.len()),
            init_containers,
            plan,
            restart: Restart::of(pod),
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
            backoff: Backoff::default(),
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
            | Stage::Initializing
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

    /// Container restarts as the Job controller sums them: app and init containers.
    pub fn restarts_all(&self) -> u32 {
        self.restarts + self.init.as_ref().map_or(0, |i| i.restarts())
    }

    /// Ready for at least `min_ready` (what controllers call available).
    pub fn available(&self, now: Instant, min_ready: Duration) -> bool {
        self.ready
            && self
                .ready_since
                .is_some_and(|t| now.saturating_duration_since(t) >= min_ready)
    }

    fn container(&self, w: Which) -> &(String, String) {
        static NONE: (String, String) = (String::new(), String::new());
        match w {
            Which::Main(i) => self.containers.get(i),
            Which::Init(i) => self.init_containers.get(i),
        }
        .unwrap_or(&NONE)
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

    /// An Event from this pod's kubelet, about container `w` (None: the pod).
    fn kubelet_event(
        &self,
        p: &Pass,
        ev: &mut Events,
        w: Option<Which>,
        type_: &str,
        reason: &str,
        msg: &str,
    ) {
        let mut involved = self.involved(None);
        involved.field_path = w.map(|w| match w {
            Which::Main(_) => format!("spec.containers{{{}}}", self.container(w).0),
            Which::Init(_) => format!("spec.initContainers{{{}}}", self.container(w).0),
        });
        ev.record(
            p,
            &involved,
            type_,
            reason,
            msg,
            "kubelet",
            Some(&self.node),
        );
    }

    /// Moves to `stage` as of `now`: a new status to write.
    pub(super) fn enter(&mut self, stage: Stage, now: Instant) {
        self.stage = stage;
        self.since = now;
        self.version += 1;
    }

    /// A simulated kubelet duration in real time, at the scenario's time scale.
    fn real(p: &Pass, simulated: Duration) -> Duration {
        backoff::real(p.sim.scenario.time_scale, simulated)
    }

    pub(super) fn start_delay(&self, p: &Pass) -> Duration {
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

    /// Advances the lifecycle of a scheduled pod to `now` (several steps if due), recording
    /// Events and logs.
    fn advance(&mut self, p: &Pass, ev: &mut Events, ctr: &mut Counters) {
        for _ in 0..8 + 3 * self.init_containers.len() {
            if !self.step(p, ev, ctr) {
                break;
            }
        }
    }

    /// One transition if one is due; false when nothing changed.
    fn step(&mut self, p: &Pass, ev: &mut Events, ctr: &mut Counters) -> bool {
        let now = p.now;
        match self.stage {
            // The scheduler's (see pass.rs).
            Stage::Unscheduled => false,
            Stage::Unschedulable | Stage::Succeeded | Stage::Failed | Stage::External => false,
            Stage::Creating => {
                if now < self.created + self.start_delay(p) {
                    return false;
                }
                if !self.volumes_ready(p, ev) {
                    return false;
                }
                self.sandbox(p, ctr);
                if self.init.is_some() {
                    self.enter(Stage::Initializing, now);
                    self.init_begin(p, ev, 0);
                } else {
                    self.start_app(p, ev);
                }
                true
            }
            Stage::Initializing => self.step_init(p, ev),
            Stage::ErrImagePull => self.pull_back_off(p, ev),
            Stage::ImagePullBackOff => {
                if now < self.since + Self::real(p, self.backoff.delay()) {
                    return false;
                }
                self.pull_failed(p, ev);
                true
            }
            Stage::Running => self.step_running(p, ev),
            Stage::CrashLoopBackOff => {
                if now < self.since + Self::real(p, self.backoff.delay()) {
                    return false;
                }
                self.backoff.next();
                self.restarts += 1;
                self.start_containers(p, ev, false);
                true
            }
        }
    }

    /// Whether the pod's volumes are set up: the point between scheduling and the first
    /// container (init or app) where a volume that cannot mount keeps the pod
    /// ContainerCreating (false: not yet, look again on a later pass). Every volume mounts
    /// in this simulation so far.
    fn volumes_ready(&mut self, _p: &Pass, _ev: &mut Events) -> bool {
        true
    }

    /// The initContainers are done (or there are none): the app containers' images are
    /// pulled (or fail to) and they start.
    fn start_app(&mut self, p: &Pass, ev: &mut Events) {
        let pull_fails =
            matches!(&self.plan, Plan::Serve { rule } if p.rule(*rule).image_pull_backoff);
        if pull_fails {
            self.pull_failed(p, ev);
        } else {
            self.start_containers(p, ev, true);
        }
    }

    /// ErrImagePull has shown for PULL_ERROR: ImagePullBackOff, with the kubelet's BackOff and
    /// Failed events per container. False while it is not due.
    fn pull_back_off(&mut self, p: &Pass, ev: &mut Events) -> bool {
        let now = p.now;
        if now < self.since + Self::real(p, PULL_ERROR) {
            return false;
        }
        self.enter(Stage::ImagePullBackOff, now);
        for i in 0..self.containers.len() {
            let w = Some(Which::Main(i));
            let msg = format!("Back-off pulling image \"{}\"", self.containers[i].1);
            self.kubelet_event(p, ev, w, "Normal", "BackOff", &msg);
            let msg = "Error: ImagePullBackOff";
            self.kubelet_event(p, ev, w, "Warning", "Failed", msg);
        }
        true
    }

    /// The container (of a serving pod, or a run-to-completion pod's run) exits with `code`;
    /// `reason` is the terminated reason, `line` a last log line. Restarted (at once for the
    /// first exit of a back-off series, else after the back-off) or the pod ends, as the
    /// restart policy says.
    fn container_exit(&mut self, p: &Pass, ev: &mut Events, code: i32, reason: &str, line: &str) {
        let now = p.now;
        if let (Some((c, _)), false) = (self.containers.first(), line.is_empty()) {
            p.sim.logs.append(&self.ns, &self.name, c, line);
        }
        self.stop_logs(p);
        let term = self.terminated(p, code, reason);
        if !self.restart.restarts(code) {
            self.final_term = Some(term);
            let end = if code == 0 {
                Stage::Succeeded
            } else {
                Stage::Failed
            };
            self.enter(end, now);
            self.set_ready(p, false);
            return;
        }
        self.last_term = Some(term);
        self.set_ready(p, false);
        let ran = now.saturating_duration_since(self.since);
        if ran >= Self::real(p, backoff::FORGET) {
            self.backoff.reset();
        }
        if !self.backoff.started() {
            self.backoff.next();
            self.restarts += 1;
            self.start_containers(p, ev, false);
            return;
        }
        self.enter(Stage::CrashLoopBackOff, now);
        let pod = format!("{}_{}({})", self.name, self.ns, self.uid);
        for i in 0..self.containers.len() {
            let c = &self.containers[i].0;
            let msg = format!("Back-off restarting failed container {c} in pod {pod}");
            self.kubelet_event(p, ev, Some(Which::Main(i)), "Warning", "BackOff", &msg);
        }
    }

    fn step_running(&mut self, p: &Pass, ev: &mut Events) -> bool {
        let now = p.now;
        match self.plan.clone() {
            Plan::Serve { rule } => {
                let rule = p.rule(rule);
                let ready_after = rule.ready_after.unwrap_or(DEFAULT_READY);
                if rule.oom_killed || rule.crash_loop.is_some() {
                    if now < self.since + Self::real(p, CRASH_RUN) {
                        return false;
                    }
                    if rule.oom_killed {
                        let line = "fatal: out of memory (container killed, exit code 137)";
                        self.container_exit(p, ev, 137, "OOMKilled", line);
                    } else {
                        let code = rule.crash_loop.unwrap_or(1);
                        let reason = if code == 0 { "Completed" } else { "Error" };
                        let line = format!("fatal: exit status {code}");
                        self.container_exit(p, ev, code, reason, &line);
                    }
                    true
                } else if rule.readiness_never {
                    if now >= self.since + ready_after && now >= self.next_probe {
                        self.next_probe = now + Self::real(p, PROBE_PERIOD);
                        let w = (!self.containers.is_empty()).then_some(Which::Main(0));
                        let msg = "Readiness probe failed: HTTP probe failed with statuscode: 503";
                        self.kubelet_event(p, ev, w, "Warning", "Unhealthy", msg);
                    }
                    false
                } else if !self.ready && now >= self.since + ready_after {
                    self.set_ready(p, true);
                    true
                } else {
                    false
                }
            }
            Plan::Run {
                rule,
                exit,
                hang,
                ordinal,
                fixed,
            } => {
                let job_rule = p.job_rule(rule);
                let (exit, hang) = if fixed || self.restarts == 0 {
                    (exit, hang)
                } else {
                    run_outcome(job_rule, ordinal.saturating_add(self.restarts))
                };
                let after = job_rule.after.unwrap_or(Duration::from_millis(500));
                if hang || now < self.since + after {
                    return false;
                }
                let code = exit.unwrap_or(0);
                let reason = if code == 0 { "Completed" } else { "Error" };
                self.container_exit(p, ev, code, reason, "");
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

    pub(super) fn sandbox(&mut self, p: &Pass, ctr: &mut Counters) {
        if self.pod_ip.is_none() {
            ctr.ip_seq += 1;
            let n = ctr.ip_seq;
            self.pod_ip = Some(format!("10.244.{}.{}", (n / 250) % 250, n % 250 + 2));
            self.t_sandbox = p.wall.clone();
        }
    }

    /// The image pull fails: ErrImagePull, and the next pull waits one more back-off step.
    fn pull_failed(&mut self, p: &Pass, ev: &mut Events) {
        self.enter(Stage::ErrImagePull, p.now);
        self.backoff.next();
        for i in 0..self.containers.len() {
            let w = Some(Which::Main(i));
            let img = self.containers[i].1.clone();
            let msg = format!("Pulling image \"{img}\"");
            self.kubelet_event(p, ev, w, "Normal", "Pulling", &msg);
            let msg = images::pull_error(&img);
            self.kubelet_event(p, ev, w, "Warning", "Failed", &msg);
            self.kubelet_event(p, ev, w, "Warning", "Failed", "Error: ErrImagePull");
        }
    }

    /// Starts one container, app or init: the kubelet's Pulling/Pulled (`first`: the image is
    /// pulled now, else it is already present), Created and Started Events, and a new log
    /// run with `lines`. The one place a container starts: a check that makes a container
    /// wait instead (a missing Secret) belongs here.
    fn start_container(&self, p: &Pass, ev: &mut Events, w: Which, first: bool, lines: &[String]) {
        let (c, img) = self.container(w).clone();
        let at = Some(w);
        if first {
            let msg = format!("Pulling image \"{img}\"");
            self.kubelet_event(p, ev, at, "Normal", "Pulling", &msg);
            let size = 20_000_000 + fnv(img.as_bytes()) % 80_000_000;
            let msg = format!(
                "Successfully pulled image \"{img}\" in 812ms (812ms including waiting). Image size: {size} bytes."
            );
            self.kubelet_event(p, ev, at, "Normal", "Pulled", &msg);
        } else {
            let msg = format!("Container image \"{img}\" already present on machine");
            self.kubelet_event(p, ev, at, "Normal", "Pulled", &msg);
        }
        let msg = format!("Created container: {c}");
        self.kubelet_event(p, ev, at, "Normal", "Created", &msg);
        let msg = format!("Started container {c}");
        self.kubelet_event(p, ev, at, "Normal", "Started", &msg);
        p.sim.logs.start(&self.ns, &self.name, &c);
        for line in lines {
            p.sim.logs.append(&self.ns, &self.name, &c, line);
        }
    }

    /// Starts every app container (the first writes the rule's log lines): Running.
    fn start_containers(&mut self, p: &Pass, ev: &mut Events, first: bool) {
        let lines = self.log_lines(p);
        for i in 0..self.containers.len() {
            let lines = if i == 0 { lines } else { &[] };
            self.start_container(p, ev, Which::Main(i), first, lines);
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
}

/// Mutable counters the scheduler and the kubelet share.
#[derive(Default)]
pub(crate) struct Counters {
    pub node_rr: usize,
    pub ip_seq: u64,
    /// The scheduler's pods bound this pass, not yet seen in the cache.
    pub sched: super::scheduler::view::Assumed,
}
