//! Scenario types the kubelet reads beside the workload and Job rules: rules for
//! initContainers and the time scale of its back-offs.

use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use serde::{Deserialize, Deserializer};

use super::de_opt_duration;

/// How one initContainer behaves. Matched by pod name glob and container name; the first
/// matching rule wins, and an initContainer no rule matches completes at once with exit 0.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InitRule {
    /// Glob over the pod name (`demo-web-*`), optionally `Pod/glob`.
    #[serde(rename = "match")]
    pub pattern: String,
    /// The initContainer's name (a glob: `*` matches every initContainer of the pod).
    #[serde(default = "any_container")]
    pub container: String,
    /// Time from when the initContainer may start (the one before it completed) until it runs.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub start_after: Option<Duration>,
    /// How long each run lasts before the container exits (unset: it exits at once).
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub run_for: Option<Duration>,
    /// The exit code of each run (unset: 0, success). Non-zero with the pod's restartPolicy
    /// `Never` fails the pod (`Init:Error`); with `Always`/`OnFailure` the container restarts
    /// with back-off (`Init:CrashLoopBackOff`).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Only the first N runs exit with `exit_code`; later ones succeed.
    #[serde(default)]
    pub fail_first: Option<u32>,
    /// The container never exits (the pod stays `Init:N/M`).
    #[serde(default)]
    pub hang: bool,
    /// Lines each run writes to the initContainer's log.
    #[serde(default)]
    pub logs: Vec<String>,
}

fn any_container() -> String {
    "*".to_string()
}

impl InitRule {
    /// The exit code of the `run`-th (0-based) run.
    pub fn exit_of(&self, run: u32) -> i32 {
        let code = self.exit_code.unwrap_or(0);
        match self.fail_first {
            Some(n) if run >= n => 0,
            _ => code,
        }
    }

    pub(super) fn validate(&self, i: usize) -> Result<()> {
        helmdeck_formats::glob::KindGlob::new(&self.pattern)
            .wrap_err_with(|| format!("init_containers[{i}]: bad match {:?}", self.pattern))?;
        helmdeck_formats::glob::KindGlob::new(&self.container).wrap_err_with(|| {
            format!("init_containers[{i}]: bad container {:?}", self.container)
        })?;
        Ok(())
    }

    /// Whether this rule is for initContainer `container` of pod `pod`.
    pub fn matches(&self, pod: &str, container: &str) -> bool {
        let glob = |p: &str, kind: &str, name: &str| {
            helmdeck_formats::glob::KindGlob::new(p).is_ok_and(|g| g.matches(kind, name))
        };
        glob(&self.pattern, "Pod", pod) && glob(&self.container, "Pod", container)
    }
}

/// Simulated seconds per real second: every kubelet back-off and wait is divided by it, and
/// messages print the simulated value. 10 (the default) gives crash back-offs of 1 s, 2 s,
/// 4 s, 8 s ... capped at 30 s, printed as `back-off 10s`, `20s`, `40s` ... `5m0s`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeScale(pub f64);

impl Default for TimeScale {
    fn default() -> Self {
        TimeScale(10.0)
    }
}

impl<'de> Deserialize<'de> for TimeScale {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if !v.is_finite() || v <= 0.0 || v > 1e6 {
            return Err(serde::de::Error::custom(format!(
                "time_scale must be a number more than 0 and at most 1000000, not {v}"
            )));
        }
        Ok(TimeScale(v))
    }
}

impl TimeScale {
    /// The real time a simulated duration takes.
    pub fn real(self, simulated: Duration) -> Duration {
        simulated.div_f64(self.0)
    }
}

/// Checks the kubelet parts of a scenario.
pub(super) fn validate(rules: &[InitRule]) -> Result<()> {
    for (i, r) in rules.iter().enumerate() {
        r.validate(i)?;
        if r.hang && (r.exit_code.is_some() || r.run_for.is_some()) {
            return Err(eyre!(
                "init_containers[{i}]: `hang` never exits, so `exit_code` and `run_for` make no sense with it"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;
    use super::*;

    #[test]
    fn time_scale_defaults_to_10_and_refuses_what_is_not_a_speed() {
        assert_eq!(
            Scenario::parse("{}", "t").unwrap().time_scale,
            TimeScale(10.0)
        );
        assert_eq!(
            Scenario::parse("time_scale: 1\n", "t").unwrap().time_scale,
            TimeScale(1.0)
        );
        for bad in ["0", "-2", ".inf", ".nan", "fast"] {
            let err = Scenario::parse(&format!("time_scale: {bad}\n"), "t.yaml").expect_err(bad);
            assert!(format!("{err:#}").contains("time_scale"), "{bad}: {err:#}");
        }
    }

    #[test]
    fn init_rules_match_pod_and_container_and_count_runs() {
        let s = Scenario::parse(
            "init_containers:\n  - match: web-*\n    container: migrate\n    exit_code: 2\n    fail_first: 1\n  - match: '*'\n    run_for: 2s\n",
            "t",
        )
        .unwrap();
        assert_eq!(s.init_rule("web-abc12", "migrate"), Some(0));
        assert_eq!(s.init_rule("web-abc12", "wait-db"), Some(1));
        assert_eq!(s.init_rule("api-abc12", "migrate"), Some(1));
        let r = &s.init_containers[0];
        assert_eq!((r.exit_of(0), r.exit_of(1)), (2, 0));
        assert_eq!(s.init_containers[1].exit_of(5), 0);
        let err = Scenario::parse(
            "init_containers:\n  - match: x\n    hang: true\n    exit_code: 1\n",
            "t",
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("init_containers[0]"), "{err:#}");
        let err = Scenario::parse("init_containers:\n  - container: x\n", "t").unwrap_err();
        assert!(format!("{err:?}").contains("match"), "{err:?}");
    }
}
