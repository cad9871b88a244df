//! Scenario files: what the simulated cluster does over time.
//!
//! A scenario is YAML (see `docs/scenarios.md` for the format and `crates/helmdeck-sim/scenarios/` for the
//! stories). Behaviours are keyed by a glob over the workload name, optionally prefixed by the
//! kind (`Deployment/*-gpu-client`), and optionally limited to one generation and later; the
//! first rule that matches wins. Durations are `"250ms"`, `"3s"`, `"2m"`, `"1h30m"` or a bare
//! number of seconds.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use serde::{Deserialize, Deserializer};

mod nodes;
pub use nodes::{NodeRule, NodeTaint, Storage, TaintEffect, glob_matches};
mod host;
pub use host::{HostPathKind, HostPaths};
mod kubelet;
pub use kubelet::{InitRule, TimeScale};

/// Scenario files shipped in the binary, by name (`--scenario NAME`).
pub const EMBEDDED: &[(&str, &str)] = &include!(concat!(env!("OUT_DIR"), "/scenarios.rs"));

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// One line for listings (`helmdeck demo --list`).
    #[serde(default)]
    pub description: String,
    /// Simulated nodes; DaemonSets run one pod on each.
    #[serde(default = "default_nodes")]
    pub nodes: u32,
    /// Labels every simulated node carries besides the hostname/os/arch ones; the scheduler
    /// matches pods' `nodeSelector` and required node affinity against them. Unset: a GPU
    /// label, so the demo chart's GPU client schedules; `{}` makes a cluster without GPUs.
    #[serde(default = "default_node_labels")]
    pub node_labels: BTreeMap<String, String>,
    /// Namespaces that exist from the start (besides `default` and `kube-system`).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// How often the controllers run.
    #[serde(default = "default_tick", deserialize_with = "de_duration")]
    pub tick: Duration,
    /// Behaviour for workloads no rule matches.
    #[serde(default)]
    pub defaults: WorkloadRule,
    /// Rules for Deployments, StatefulSets and DaemonSets (and their pods).
    #[serde(default)]
    pub workloads: Vec<WorkloadRule>,
    /// Rules for Jobs (hooks and the init Job).
    #[serde(default)]
    pub jobs: Vec<JobRule>,
    /// Objects present from the start.
    #[serde(default)]
    pub seed: Seed,
    /// Things that go wrong with the API server itself.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// How `helmdeck demo` tells this story.
    #[serde(default)]
    pub demo: DemoSettings,
    /// Capacity, labels and taints of chosen nodes (see `scenario/nodes.rs`).
    #[serde(default)]
    pub node_rules: Vec<NodeRule>,
    /// How PersistentVolumeClaims bind.
    #[serde(default)]
    pub storage: Storage,
    /// What exists on each node for `hostPath` volumes with a `type` (node name or `*` →
    /// path → `Directory`, `File`, `Socket`, `CharDevice`, `BlockDevice`). Unset: the kubelet
    /// checks no hostPath type; set: a path listed nowhere does not exist.
    #[serde(default)]
    pub host_paths: Option<HostPaths>,
    /// Simulated seconds per real second for the kubelet's back-offs and waits (default 10).
    #[serde(default)]
    pub time_scale: TimeScale,
    /// Rules for initContainers, by pod name glob and container name.
    #[serde(default)]
    pub init_containers: Vec<InitRule>,
    /// How long an Event the controllers wrote lives after its last write, as the API
    /// server's `--event-ttl` (an hour by default there). Unset: Events never expire.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub event_ttl: Option<Duration>,
}

/// How `helmdeck demo` deploys the demo chart for a scenario.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DemoSettings {
    /// Install the chart once, quietly, before the deploy that is shown (for stories about an
    /// upgrade: a new generation that never rolls out).
    #[serde(default)]
    pub preinstall: bool,
    /// `--set` values of the shown deploy (e.g. `image.tag=1.4.3` to start a new generation).
    #[serde(default)]
    pub set: Vec<String>,
    /// `--optional` patterns of the shown deploy.
    #[serde(default)]
    pub optional: Vec<String>,
    /// The shown deploy's `--timeout` (default 60s).
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
}

fn default_nodes() -> u32 {
    3
}
fn default_node_labels() -> BTreeMap<String, String> {
    BTreeMap::from([("nvidia.com/gpu.present".to_string(), "true".to_string())])
}
fn default_tick() -> Duration {
    Duration::from_millis(100)
}

/// How a workload and its pods behave. Every field is optional; unset means "healthy".
/// Used for `defaults` (no `match`) and for each entry of `workloads` (`match` required).
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadRule {
    /// Glob over the workload name, optionally `Kind/glob`.
    #[serde(default, rename = "match")]
    pub pattern: Option<String>,
    /// Apply only from this `metadata.generation` on (unset: every generation).
    #[serde(default)]
    pub generation: Option<i64>,
    /// Time from creation until the container starts running.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub start_after: Option<Duration>,
    /// Time from start until the readiness probe first passes.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub ready_after: Option<Duration>,
    /// The pod never schedules: `PodScheduled=False`, reason `Unschedulable`, with this message.
    #[serde(default)]
    pub unschedulable: Option<String>,
    /// The image never pulls (`ErrImagePull`, then `ImagePullBackOff`).
    #[serde(default)]
    pub image_pull_backoff: bool,
    /// The container exits with this code shortly after each start (`CrashLoopBackOff`).
    #[serde(default)]
    pub crash_loop: Option<i32>,
    /// The container is killed for memory after each start (exit 137, reason `OOMKilled`).
    #[serde(default)]
    pub oom_killed: bool,
    /// The container runs but its readiness probe never passes.
    #[serde(default)]
    pub readiness_never: bool,
    /// Lines the container writes to its log when it starts.
    #[serde(default)]
    pub logs: Vec<String>,
    /// The controller never observes new generations: `observedGeneration` stays behind and
    /// the old pods stay Ready.
    #[serde(default)]
    pub never_observe: bool,
    /// Deployment: the progress deadline used instead of `spec.progressDeadlineSeconds`.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub progress_deadline: Option<Duration>,
    /// Deployment: one replica of an old ReplicaSet is never scaled down.
    #[serde(default)]
    pub surge_never_terminates: bool,
    /// StatefulSet: `currentRevision` never catches up with `updateRevision`.
    #[serde(default)]
    pub revision_never_converges: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum JobOutcome {
    #[default]
    Succeed,
    Fail,
    /// The pod runs until the Job is deleted.
    Hang,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct JobRule {
    /// Glob over the Job name.
    #[serde(rename = "match")]
    pub pattern: String,
    #[serde(default)]
    pub outcome: JobOutcome,
    /// How long each pod runs before it ends.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub after: Option<Duration>,
    /// Exit code of a failing pod (default 1).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Lines each pod writes to its log.
    #[serde(default)]
    pub logs: Vec<String>,
    /// Only the first N pods fail, later ones succeed (a flaky Job); unset: every pod ends as
    /// `outcome` says.
    #[serde(default)]
    pub fail_first: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    /// Helm release records, written as Helm 4 writes them (Secret driver).
    #[serde(default)]
    pub releases: Vec<SeedRelease>,
    /// Any other object, as it would be sent to the API server.
    #[serde(default)]
    pub objects: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRelease {
    pub name: String,
    pub namespace: String,
    pub revisions: Vec<SeedRevision>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRevision {
    pub version: u32,
    pub status: String,
    #[serde(default)]
    pub description: Option<String>,
    /// How long ago this revision was written.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub age: Option<Duration>,
    #[serde(default)]
    pub chart: Option<String>,
    #[serde(default)]
    pub chart_version: Option<String>,
}

/// When a fault fires, counted from the anchor.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Anchor {
    /// The simulator's start.
    Start,
    /// The first create of a Deployment, StatefulSet or DaemonSet (helm's apply).
    #[default]
    Apply,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// Counted from the anchor; unset is 0s.
    #[serde(default, deserialize_with = "de_duration")]
    pub at: Duration,
    /// Unset: `apply`, except for `forbidden`, which then holds from the start.
    #[serde(default)]
    pub anchor: Option<Anchor>,
    #[serde(rename = "do")]
    pub action: FaultAction,
    /// `gone_next_watch`: how many watch requests get the 410 (default 1).
    #[serde(default)]
    pub count: Option<u32>,
    /// `errors_500`, `latency`, `refuse_connections`: how long the fault lasts; `forbidden`:
    /// how long it holds (unset: for good).
    #[serde(default, rename = "for", deserialize_with = "de_opt_duration")]
    pub span: Option<Duration>,
    /// `latency`: the delay added to every response.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub delay: Option<Duration>,
    /// `forbidden`: the resources refused, as RBAC names them (`secrets`, `deployments`).
    #[serde(default)]
    pub resources: Vec<String>,
    /// `forbidden`: the verbs refused (`get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection`); empty: all of them.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// `forbidden`: the namespace refused in; unset: every namespace and the cluster scope.
    #[serde(default)]
    pub namespace: Option<String>,
    /// `forbidden`: the user the 403 names (default `system:serviceaccount:default:default`).
    #[serde(default)]
    pub user: Option<String>,
}

/// The verbs RBAC authorizes on resources, as `forbidden` takes them.
pub const RBAC_VERBS: [&str; 8] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    /// Close every open watch stream.
    DropWatches,
    /// Answer the next `count` watch requests with an in-band 410 Gone.
    GoneNextWatch,
    /// Answer every request with 500 for `for`.
    #[serde(rename = "errors_500")]
    Errors500,
    /// Add `delay` to every response for `for`.
    Latency,
    /// Close new connections at once for `for`.
    RefuseConnections,
    /// Answer requests on `resources` with `verbs` (in `namespace`) 403 Forbidden, as RBAC
    /// does for a user without the permission.
    Forbidden,
}

impl Fault {
    /// How long the fault lasts (zero for one-shot faults).
    pub fn span(&self) -> Duration {
        self.span.unwrap_or_default()
    }

    /// What `at` counts from.
    pub fn anchor(&self) -> Anchor {
        match (&self.anchor, self.action) {
            (Some(a), _) => a.clone(),
            (None, FaultAction::Forbidden) => Anchor::Start,
            (None, _) => Anchor::Apply,
        }
    }

    /// The fields only some actions take, and a `forbidden` fault's own rules.
    fn validate(&self) -> Result<()> {
        let needs_span = matches!(
            self.action,
            FaultAction::Errors500 | FaultAction::Latency | FaultAction::RefuseConnections
        );
        if needs_span && self.span.is_none() {
            return Err(eyre!("{:?} needs `for`", self.action));
        }
        if self.action == FaultAction::Latency && self.delay.is_none() {
            return Err(eyre!("latency needs `delay`"));
        }
        let forbidden = self.action == FaultAction::Forbidden;
        if !forbidden
            && (!self.resources.is_empty()
                || !self.verbs.is_empty()
                || self.namespace.is_some()
                || self.user.is_some())
        {
            return Err(eyre!(
                "`resources`, `verbs`, `namespace` and `user` belong to `forbidden` only"
            ));
        }
        if forbidden && self.resources.is_empty() {
            return Err(eyre!("forbidden needs `resources` (e.g. [secrets])"));
        }
        if let Some(bad) = self
            .verbs
            .iter()
            .find(|v| !RBAC_VERBS.contains(&v.as_str()))
        {
            return Err(eyre!(
                "forbidden: unknown verb {bad:?} (one of: {})",
                RBAC_VERBS.join(", ")
            ));
        }
        Ok(())
    }
}

impl Scenario {
    /// Loads a scenario by embedded name (`optional-pending`) or by path.
    pub fn load(name_or_path: &str) -> Result<Self> {
        if let Some((_, text)) = EMBEDDED.iter().find(|(n, _)| *n == name_or_path) {
            return Self::parse(text, name_or_path);
        }
        let path = Path::new(name_or_path);
        let text = std::fs::read_to_string(path).wrap_err_with(|| {
            let names: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
            format!(
                "cannot read scenario {name_or_path:?} (not a file, and not one of: {})",
                names.join(", ")
            )
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses scenario YAML; errors name the file, line, column and field path.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let scenario: Scenario =
            serde_saphyr::from_str(text).map_err(|e| eyre!("scenario {origin}: {e}"))?;
        scenario
            .validate()
            .wrap_err_with(|| format!("scenario {origin}"))?;
        Ok(scenario)
    }

    fn validate(&self) -> Result<()> {
        for (i, rule) in self.workloads.iter().enumerate() {
            let pattern = rule
                .pattern
                .as_deref()
                .ok_or_else(|| eyre!("workloads[{i}]: `match` is required"))?;
            helmdeck_formats::glob::KindGlob::new(pattern)
                .wrap_err_with(|| format!("workloads[{i}]: bad match {pattern:?}"))?;
        }
        if self.defaults.pattern.is_some() {
            return Err(eyre!(
                "defaults: `match` makes no sense here (defaults apply to every workload no rule matches)"
            ));
        }
        for rule in &self.jobs {
            helmdeck_formats::glob::KindGlob::new(&rule.pattern)
                .wrap_err_with(|| format!("jobs: bad match {:?}", rule.pattern))?;
        }
        for (i, f) in self.faults.iter().enumerate() {
            f.validate().wrap_err_with(|| format!("faults[{i}]"))?;
        }
        if self.tick.is_zero() {
            return Err(eyre!("tick must be more than 0"));
        }
        kubelet::validate(&self.init_containers)
    }

    /// The rule for a workload of this kind, name and generation: the first matching entry of
    /// `workloads`, else `defaults`.
    pub fn workload_rule(&self, kind: &str, name: &str, generation: i64) -> &WorkloadRule {
        self.workloads
            .iter()
            .find(|r| {
                r.generation.is_none_or(|g| generation >= g)
                    && r.pattern.as_deref().is_some_and(|p| {
                        helmdeck_formats::glob::KindGlob::new(p)
                            .is_ok_and(|g| g.matches(kind, name))
                    })
            })
            .unwrap_or(&self.defaults)
    }

    /// Index into `init_containers` of the rule for initContainer `container` of pod `pod`.
    pub fn init_rule(&self, pod: &str, container: &str) -> Option<usize> {
        self.init_containers
            .iter()
            .position(|r| r.matches(pod, container))
    }

    pub fn job_rule(&self, name: &str) -> Option<&JobRule> {
        self.jobs.iter().find(|r| {
            helmdeck_formats::glob::KindGlob::new(&r.pattern).is_ok_and(|g| g.matches("Job", name))
        })
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum DurationRepr {
    Secs(f64),
    Text(String),
}

fn to_duration(repr: DurationRepr) -> Result<Duration, helmdeck_formats::time::DurationError> {
    match repr {
        DurationRepr::Secs(s) => helmdeck_formats::time::seconds(s),
        DurationRepr::Text(t) => helmdeck_formats::time::parse_duration(&t),
    }
}

pub fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    to_duration(DurationRepr::deserialize(d)?).map_err(serde::de::Error::custom)
}

pub fn de_opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    match Option::<DurationRepr>::deserialize(d)? {
        None => Ok(None),
        Some(r) => to_duration(r).map(Some).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by tests/fuzz (scenario_shipped_with_edits): these panicked in from_secs_f64.
    #[test]
    fn durations_too_long_for_a_duration_are_errors() {
        assert!(helmdeck_formats::time::parse_duration("99999999999999999999999h").is_err());
        assert!(helmdeck_formats::time::parse_duration("18446744073709551616").is_err());
        for tick in ["99999999999999999999999h", "1e300", "-1", ".inf", ".nan"] {
            let err = Scenario::parse(&format!("tick: {tick}\n"), "t.yaml").expect_err(tick);
            assert!(format!("{err:#}").contains("t.yaml"), "{err:#}");
        }
    }

    #[test]
    fn every_embedded_scenario_parses() {
        assert!(!EMBEDDED.is_empty());
        for (name, text) in EMBEDDED {
            Scenario::parse(text, name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
    }

    #[test]
    fn bad_field_names_the_line_and_field() {
        let text = "nodes: 2\nworkloads:\n  - match: web\n    start_after: soon\n";
        let err = format!("{:?}", Scenario::parse(text, "t.yaml").unwrap_err());
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("is not a duration"), "{err}");
        assert!(err.contains("start_after"), "{err}");
    }

    #[test]
    fn unknown_field_is_rejected() {
        let err = format!("{:?}", Scenario::parse("nodez: 2\n", "t.yaml").unwrap_err());
        assert!(err.contains("nodez"), "{err}");
    }

    #[test]
    fn first_matching_rule_wins_and_generation_limits() {
        let s = Scenario::parse(
            "workloads:\n  - match: Deployment/*-web\n    generation: 2\n    never_observe: true\n  - match: '*'\n    crash_loop: 3\n",
            "t",
        )
        .unwrap();
        assert!(!s.workload_rule("Deployment", "demo-web", 1).never_observe);
        assert_eq!(
            s.workload_rule("Deployment", "demo-web", 1).crash_loop,
            Some(3)
        );
        assert!(s.workload_rule("Deployment", "demo-web", 2).never_observe);
        assert!(!s.workload_rule("StatefulSet", "demo-web", 2).never_observe);
        let empty = Scenario::parse("{}", "t").unwrap();
        assert_eq!(
            empty.workload_rule("Deployment", "x", 1),
            &WorkloadRule::default()
        );
    }

    #[test]
    fn faults_parse() {
        let s = Scenario::parse(
            "faults:\n  - {at: 2s, do: drop_watches}\n  - {at: 3s, do: gone_next_watch, count: 2}\n  - {at: 1s, anchor: start, do: latency, delay: 200ms, for: 5s}\n",
            "t",
        )
        .unwrap();
        assert_eq!(s.faults[0].action, FaultAction::DropWatches);
        assert_eq!(s.faults[1].count, Some(2));
        assert_eq!(s.faults[2].anchor(), Anchor::Start);
        assert_eq!(s.faults[2].delay, Some(Duration::from_millis(200)));
        let err = Scenario::parse("faults:\n  - {at: 1s, do: errors_500}\n", "t").unwrap_err();
        assert!(format!("{err:?}").contains("needs `for`"));
    }

    #[test]
    fn a_forbidden_fault_holds_from_the_start_and_names_only_rbac_verbs() {
        let s = Scenario::parse(
            "faults:\n  - {do: forbidden, resources: [secrets], verbs: [list, watch], namespace: apps}\n",
            "t",
        )
        .unwrap();
        let f = &s.faults[0];
        assert_eq!((f.anchor(), f.at), (Anchor::Start, Duration::ZERO));
        assert_eq!(f.verbs, ["list", "watch"]);
        let bad_verb = "faults:\n  - {do: forbidden, resources: [secrets], verbs: [read]}\n";
        let err = format!("{:?}", Scenario::parse(bad_verb, "t").unwrap_err());
        assert!(err.contains("unknown verb \"read\""), "{err}");
        let no_resources = "faults:\n  - {do: forbidden}\n";
        assert!(Scenario::parse(no_resources, "t").is_err());
        let stray = "faults:\n  - {at: 1s, do: drop_watches, verbs: [get]}\n";
        assert!(Scenario::parse(stray, "t").is_err());
    }
}
