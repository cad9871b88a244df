//! Resource quantities (`100m`, `128Mi`, `1e3`) and a pod's requests as the scheduler adds
//! them up.

use serde_json::Value;

/// The resources the scheduler checks: cpu in millicores, memory and ephemeral storage in
/// bytes, GPUs (`nvidia.com/gpu`) and pods as counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Res {
    pub cpu: i64,
    pub memory: i64,
    pub storage: i64,
    pub gpu: i64,
    pub pods: i64,
}

pub(crate) const GPU: &str = "nvidia.com/gpu";

impl Res {
    /// A ResourceList (`{"cpu": "100m", "memory": "1Gi"}`); unknown names are ignored.
    pub fn of_list(list: Option<&Value>) -> Res {
        let mut r = Res::default();
        let Some(map) = list.and_then(Value::as_object) else {
            return r;
        };
        for (name, q) in map {
            let Some(v) = quantity(q) else { continue };
            match name.as_str() {
                "cpu" => r.cpu = round_up(v * 1000.0),
                "memory" => r.memory = round_up(v),
                "ephemeral-storage" => r.storage = round_up(v),
                "pods" => r.pods = round_up(v),
                GPU => r.gpu = round_up(v),
                _ => {}
            }
        }
        r
    }

    pub fn add(&mut self, o: &Res) {
        self.cpu += o.cpu;
        self.memory += o.memory;
        self.storage += o.storage;
        self.gpu += o.gpu;
        self.pods += o.pods;
    }

    pub fn sub(&mut self, o: &Res) {
        self.cpu -= o.cpu;
        self.memory -= o.memory;
        self.storage -= o.storage;
        self.gpu -= o.gpu;
        self.pods -= o.pods;
    }

    fn max_with(&mut self, o: &Res) {
        self.cpu = self.cpu.max(o.cpu);
        self.memory = self.memory.max(o.memory);
        self.storage = self.storage.max(o.storage);
        self.gpu = self.gpu.max(o.gpu);
    }
}

/// Rounds up as Kubernetes' MilliValue/Value do, without letting float noise (0.35 * 1000 =
/// 350.00000000000006) round a whole number up.
fn round_up(v: f64) -> i64 {
    let r = v.round();
    if (v - r).abs() < 1e-6 {
        r as i64
    } else {
        v.ceil() as i64
    }
}

/// A Kubernetes quantity as a number of units (`100m` = 0.1, `1Ki` = 1024); None when it
/// does not parse.
pub(crate) fn quantity(v: &Value) -> Option<f64> {
    if let Some(n) = v.as_f64() {
        return Some(n);
    }
    let s = v.as_str()?.trim();
    const BINARY: [(&str, f64); 6] = [
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
        ("Ei", 1152921504606846976.0),
    ];
    for (suffix, mult) in BINARY {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.parse::<f64>().ok().map(|n| n * mult);
        }
    }
    const DECIMAL: [(char, f64); 9] = [
        ('n', 1e-9),
        ('u', 1e-6),
        ('m', 1e-3),
        ('k', 1e3),
        ('M', 1e6),
        ('G', 1e9),
        ('T', 1e12),
        ('P', 1e15),
        ('E', 1e18),
    ];
    if let Some(n) = s.parse::<f64>().ok().filter(|n| n.is_finite()) {
        return Some(n);
    }
    let last = s.chars().last()?;
    let (_, mult) = DECIMAL.iter().find(|(c, _)| *c == last)?;
    let n = s[..s.len() - last.len_utf8()].parse::<f64>().ok()?;
    Some(n * mult).filter(|n| n.is_finite())
}

/// What a pod asks of a node, as the scheduler's PodRequests computes it: the containers'
/// requests summed, against the largest init container (plus the restartable "sidecar" init
/// containers started before it), whichever is larger per resource; plus `spec.overhead`;
/// pod-level `spec.resources.requests` win for cpu and memory. Counts as one pod.
pub(crate) fn pod_requests(pod: &Value) -> Res {
    let spec = &pod["spec"];
    let requests = |c: &Value| Res::of_list(c.pointer("/resources/requests"));
    let mut sum = Res::default();
    for c in spec["containers"].as_array().into_iter().flatten() {
        sum.add(&requests(c));
    }
    let mut init_max = Res::default();
    let mut sidecars = Res::default();
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        let r = requests(c);
        if c["restartPolicy"] == "Always" {
            sum.add(&r);
            sidecars.add(&r);
            init_max.max_with(&sidecars);
        } else {
            let mut with = sidecars;
            with.add(&r);
            init_max.max_with(&with);
        }
    }
    sum.max_with(&init_max);
    let pod_level = Res::of_list(spec.pointer("/resources/requests"));
    if pod_level.cpu > 0 {
        sum.cpu = pod_level.cpu;
    }
    if pod_level.memory > 0 {
        sum.memory = pod_level.memory;
    }
    sum.add(&Res::of_list(spec.get("overhead")));
    sum.pods = 1;
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities() {
        assert_eq!(quantity(&json!("100m")), Some(0.1));
        assert_eq!(quantity(&json!("1Ki")), Some(1024.0));
        assert_eq!(quantity(&json!("2")), Some(2.0));
        assert_eq!(quantity(&json!(3)), Some(3.0));
        assert_eq!(quantity(&json!("1e3")), Some(1000.0));
        assert_eq!(quantity(&json!("1G")), Some(1e9));
        assert_eq!(quantity(&json!("lots")), None);
        assert_eq!(quantity(&json!("")), None);
    }

    #[test]
    fn init_containers_count_as_the_real_scheduler_counts_them() {
        let pod = json!({"spec": {
            "containers": [{"resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
                           {"resources": {"requests": {"cpu": "200m", "nvidia.com/gpu": "1"}}}],
            "initContainers": [{"resources": {"requests": {"cpu": "500m"}}},
                               {"resources": {"requests": {"memory": "32Mi"}}}]}});
        let r = pod_requests(&pod);
        // max(init) beats the containers' sum for cpu; the sum wins for memory.
        assert_eq!(r.cpu, 500);
        assert_eq!(r.memory, 64 * 1024 * 1024);
        assert_eq!(r.gpu, 1);
        assert_eq!(r.pods, 1);
        let sidecar = json!({"spec": {
            "containers": [{"resources": {"requests": {"cpu": "100m"}}}],
            "initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "300m"}}},
                               {"resources": {"requests": {"cpu": "350m"}}}]}});
        // The sidecar runs beside the later init container and beside the containers.
        assert_eq!(pod_requests(&sidecar).cpu, 650);
    }
}
