//! The timeout budget: how long a workload's rollout may legitimately take, from its rendered
//! manifest alone, so a `--timeout` that cannot fit the slowest one is warned about before
//! helm runs rather than discovered as a timeout.
//!
//! The estimate is deliberately simple (issue 12): waves × per-pod readiness, where waves =
//! ⌈replicas ÷ surge⌉ and per-pod readiness = the slowest container's readiness
//! `initialDelaySeconds` + one `periodSeconds`. Image pulls and scheduling are not counted, so
//! the estimate is a lower bound: a timeout below it is wrong, one above it may still be tight.

use serde_json::Value;

/// Kubernetes' default readiness probe period.
const DEFAULT_PERIOD_SECS: u64 = 10;

/// One workload's estimate, with the numbers it came from (the warning shows the arithmetic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    pub kind: String,
    pub name: String,
    pub replicas: u64,
    /// Pods that may start at once (Deployment maxSurge; 1 for a StatefulSet's ordered roll).
    pub surge: u64,
    pub initial_delay_secs: u64,
    pub period_secs: u64,
}

impl Estimate {
    pub fn waves(&self) -> u64 {
        self.replicas.div_ceil(self.surge.max(1))
    }

    pub fn secs(&self) -> u64 {
        self.waves() * (self.initial_delay_secs + self.period_secs)
    }

    /// `Deployment/web: 6 replicas ÷ surge 1 = 6 waves × (30s delay + 10s period) = 240s`.
    pub fn arithmetic(&self) -> String {
        format!(
            "{}/{}: {} replicas ÷ surge {} = {} waves × ({}s delay + {}s period) = {}s",
            self.kind,
            self.name,
            self.replicas,
            self.surge.max(1),
            self.waves(),
            self.initial_delay_secs,
            self.period_secs,
            self.secs()
        )
    }
}

fn uint(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
}

/// maxSurge as a pod count: an integer, or a percentage of replicas rounded up (as the
/// Deployment controller rounds surge); never below 1 so a roll always progresses.
fn surge(value: Option<&Value>, replicas: u64) -> u64 {
    let n = match value {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(1),
        Some(Value::String(s)) => match s.strip_suffix('%').and_then(|p| p.parse::<u64>().ok()) {
            Some(pct) => (replicas * pct).div_ceil(100),
            None => 1,
        },
        // Kubernetes' default: 25%.
        _ => replicas.div_ceil(4),
    };
    n.max(1)
}

/// The estimate for one rendered object, or `None` when it is not a rolled workload or has no
/// readiness probe (its pods are ready as soon as they run: nothing to estimate).
pub fn estimate(doc: &Value) -> Option<Estimate> {
    let kind = doc.get("kind")?.as_str()?;
    let spec = doc.get("spec")?;
    let replicas = match kind {
        "Deployment" | "StatefulSet" => uint(spec.get("replicas")).unwrap_or(1),
        _ => return None,
    };
    if replicas == 0 {
        return None;
    }
    let surge = match kind {
        "Deployment" => surge(spec.pointer("/strategy/rollingUpdate/maxSurge"), replicas),
        // OrderedReady: one pod at a time.
        _ => 1,
    };
    let containers = spec.pointer("/template/spec/containers")?.as_array()?;
    let (delay, period) = containers
        .iter()
        .filter_map(|c| c.get("readinessProbe"))
        .map(|p| {
            (
                uint(p.get("initialDelaySeconds")).unwrap_or(0),
                uint(p.get("periodSeconds")).unwrap_or(DEFAULT_PERIOD_SECS),
            )
        })
        .max_by_key(|(d, p)| d + p)?;
    Some(Estimate {
        kind: kind.to_string(),
        name: doc.pointer("/metadata/name")?.as_str()?.to_string(),
        replicas,
        surge,
        initial_delay_secs: delay,
        period_secs: period,
    })
}

/// The slowest workload's estimate when it does not fit in `timeout_secs`.
pub fn over_budget(docs: &[Value], timeout_secs: u64) -> Option<Estimate> {
    docs.iter()
        .filter_map(estimate)
        .max_by_key(Estimate::secs)
        .filter(|e| e.secs() > timeout_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(replicas: u64, surge: Value, delay: u64, period: Option<u64>) -> Value {
        let mut probe = json!({"initialDelaySeconds": delay});
        if let Some(p) = period {
            probe["periodSeconds"] = json!(p);
        }
        json!({
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas,
                "strategy": {"rollingUpdate": {"maxSurge": surge}},
                "template": {"spec": {"containers": [
                    {"name": "sidecar"},
                    {"name": "app", "readinessProbe": probe}
                ]}}
            }
        })
    }

    #[test]
    fn waves_times_delay_plus_period_with_the_arithmetic_named() {
        let e = estimate(&deployment(6, json!(1), 30, None)).expect("an estimate");
        assert_eq!(e.secs(), 6 * 40);
        assert_eq!(
            e.arithmetic(),
            "Deployment/web: 6 replicas ÷ surge 1 = 6 waves × (30s delay + 10s period) = 240s"
        );
        let e = estimate(&deployment(5, json!(2), 10, Some(5))).expect("an estimate");
        assert_eq!((e.waves(), e.secs()), (3, 45), "⌈5 ÷ 2⌉ waves");
    }

    #[test]
    fn surge_percentages_round_up_and_default_to_a_quarter() {
        let e = estimate(&deployment(10, json!("30%"), 0, Some(10))).expect("an estimate");
        assert_eq!(e.surge, 3);
        let e = estimate(&deployment(3, json!("10%"), 0, Some(10))).expect("an estimate");
        assert_eq!(e.surge, 1, "never below one pod");
        let mut doc = deployment(8, json!(1), 0, Some(10));
        doc["spec"]["strategy"] = json!({});
        assert_eq!(estimate(&doc).expect("an estimate").surge, 2);
    }

    #[test]
    fn a_statefulset_rolls_one_at_a_time_and_probe_less_pods_are_not_estimated() {
        let mut sts = deployment(3, json!(3), 20, Some(10));
        sts["kind"] = json!("StatefulSet");
        assert_eq!(estimate(&sts).expect("an estimate").secs(), 90);
        let mut bare = deployment(3, json!(1), 0, None);
        bare["spec"]["template"]["spec"]["containers"] = json!([{"name": "app"}]);
        assert_eq!(estimate(&bare), None);
        assert_eq!(estimate(&json!({"kind": "Service", "spec": {}})), None);
    }

    #[test]
    fn only_the_slowest_workload_over_the_timeout_is_warned_about() {
        let fast = deployment(1, json!(1), 0, Some(10));
        let mut slow = deployment(4, json!(1), 50, Some(10));
        slow["metadata"]["name"] = json!("slow");
        let docs = [fast, slow];
        assert_eq!(over_budget(&docs, 240), None, "exactly fits");
        assert_eq!(over_budget(&docs, 239).map(|e| e.name), Some("slow".into()));
    }
}
