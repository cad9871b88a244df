//! Faults of the API server itself, fired on the scenario's schedule: dropped watches, 410s,
//! bursts of 500s, latency, refused connections, and RBAC's 403 for some resources.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use super::api_error::{Access, ApiError};
use super::scenario::{Anchor, Fault, FaultAction, Scenario};

pub struct Faults {
    schedule: Vec<Fault>,
    started: Instant,
    /// Set at the first create of a Deployment, StatefulSet or DaemonSet.
    applied: Mutex<Option<Instant>>,
    fired: Mutex<Vec<bool>>,
    gone_budget: AtomicU32,
    errors_until: Mutex<Option<Instant>>,
    latency: Mutex<Option<(Instant, Duration)>>,
    refuse_until: Mutex<Option<Instant>>,
    /// The `forbidden` faults in force: their index in `schedule`, and until when (`None`:
    /// for good).
    forbidding: Mutex<Vec<(usize, Option<Instant>)>>,
    /// Bumped to close every open watch.
    drop_epoch: watch::Sender<u64>,
    /// Faults each watched collection got, and what its client asked for next.
    tallies: Mutex<BTreeMap<WatchKey, Tally>>,
}

/// A fault as one watch receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivered {
    /// The stream was closed under it.
    Drop = 0,
    /// 410 Gone: simulated, or a resourceVersion older than the event log keeps.
    Gone = 1,
    /// A 500 on its LIST or WATCH request.
    Error500 = 2,
}

const DELIVERED: [(Delivered, &str); 3] = [
    (Delivered::Drop, "drops"),
    (Delivered::Gone, "gone"),
    (Delivered::Error500, "errors500"),
];

/// A collection request that got an answer, as opposed to a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    List = 0,
    Watch = 1,
}

/// One collection as one client lists and watches it: the unit faults are counted by, so a
/// test can tell which watch loop got a fault and whether it relisted afterwards.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchKey {
    /// `deployments.apps`, `pods`.
    pub resource: String,
    /// Empty for all namespaces.
    pub namespace: String,
    pub labels: String,
    pub fields: String,
    /// The User-Agent's product (`helmdeck`, `Helm`, `kubectl`), empty when it sends none.
    pub client: String,
}

impl WatchKey {
    /// The product token of a User-Agent header: `kubectl/v1.35.2 (linux/amd64) …` → `kubectl`.
    pub fn client_of(user_agent: Option<&str>) -> String {
        user_agent
            .and_then(|ua| ua.split(['/', ' ']).next())
            .unwrap_or("")
            .to_string()
    }
}

#[derive(Default)]
struct Tally {
    /// By [`Delivered`].
    faults: [u64; 3],
    /// By [`Served`].
    served: [u64; 2],
    /// By [`Delivered`], then [`Served`]: which request first succeeded after the fault.
    after: [[u64; 2]; 3],
    /// Faults not yet followed by a served request.
    pending: [bool; 3],
}

impl Tally {
    fn to_json(&self, key: &WatchKey) -> Value {
        let mut v = json!({
            "resource": key.resource, "namespace": key.namespace,
            "labelSelector": key.labels, "fieldSelector": key.fields, "client": key.client,
            "lists": self.served[Served::List as usize],
            "watches": self.served[Served::Watch as usize],
            "after": {},
        });
        for (d, name) in DELIVERED {
            let i = d as usize;
            v[name] = json!(self.faults[i]);
            v["after"][name] = json!({
                "lists": self.after[i][Served::List as usize],
                "watches": self.after[i][Served::Watch as usize],
                "pending": self.pending[i],
            });
        }
        v
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Faults {
    pub fn new(scenario: &Scenario) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Faults {
            fired: Mutex::new(vec![false; scenario.faults.len()]),
            schedule: scenario.faults.clone(),
            started: Instant::now(),
            applied: Mutex::new(None),
            gone_budget: AtomicU32::new(0),
            errors_until: Mutex::new(None),
            latency: Mutex::new(None),
            refuse_until: Mutex::new(None),
            forbidding: Mutex::new(Vec::new()),
            drop_epoch: watch::channel(0).0,
            tallies: Mutex::new(BTreeMap::new()),
        })
    }

    /// Counts a fault the watch `key` received.
    pub fn delivered(&self, key: &WatchKey, fault: Delivered) {
        let mut tallies = lock(&self.tallies);
        let t = tallies.entry(key.clone()).or_default();
        t.faults[fault as usize] += 1;
        t.pending[fault as usize] = true;
    }

    /// Counts a LIST or WATCH of `key` that was answered, and credits it to the faults before.
    pub fn served(&self, key: &WatchKey, how: Served) {
        let mut tallies = lock(&self.tallies);
        let t = tallies.entry(key.clone()).or_default();
        t.served[how as usize] += 1;
        for i in 0..t.pending.len() {
            if std::mem::take(&mut t.pending[i]) {
                t.after[i][how as usize] += 1;
            }
        }
    }

    /// Per watched collection: faults received and what followed them (`/_sim/stats`).
    pub fn tallies_json(&self) -> Value {
        let tallies = lock(&self.tallies);
        Value::Array(tallies.iter().map(|(k, t)| t.to_json(k)).collect())
    }

    /// Called after every create; anchors `apply` faults at the first workload.
    pub fn note_write(&self, kind: &str) {
        if matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet") {
            lock(&self.applied).get_or_insert_with(Instant::now);
        }
    }

    /// Fires every fault that is due. Called by [`Faults::run`] on a short tick.
    pub fn fire_due(&self, now: Instant) {
        let applied = *lock(&self.applied);
        let mut fired = lock(&self.fired);
        for (i, fault) in self.schedule.iter().enumerate() {
            if fired[i] {
                continue;
            }
            let anchor = match fault.anchor() {
                Anchor::Start => Some(self.started),
                Anchor::Apply => applied,
            };
            let Some(anchor) = anchor else { continue };
            if now < anchor + fault.at {
                continue;
            }
            fired[i] = true;
            let until = now + fault.span();
            match fault.action {
                FaultAction::DropWatches => {
                    self.drop_epoch.send_modify(|e| *e += 1);
                }
                FaultAction::GoneNextWatch => {
                    self.gone_budget
                        .fetch_add(fault.count.unwrap_or(1), Ordering::SeqCst);
                }
                FaultAction::Errors500 => *lock(&self.errors_until) = Some(until),
                FaultAction::Latency => {
                    *lock(&self.latency) = Some((until, fault.delay.unwrap_or_default()))
                }
                FaultAction::RefuseConnections => *lock(&self.refuse_until) = Some(until),
                FaultAction::Forbidden => {
                    lock(&self.forbidding).push((i, fault.span.map(|_| until)));
                }
            }
        }
    }

    pub async fn run(self: std::sync::Arc<Self>) {
        if self.schedule.is_empty() {
            return;
        }
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        loop {
            tick.tick().await;
            self.fire_due(Instant::now());
        }
    }

    pub fn erroring(&self) -> bool {
        lock(&self.errors_until).is_some_and(|t| Instant::now() < t)
    }

    pub fn refusing(&self) -> bool {
        lock(&self.refuse_until).is_some_and(|t| Instant::now() < t)
    }

    pub fn latency(&self) -> Option<Duration> {
        lock(&self.latency)
            .filter(|(t, _)| Instant::now() < *t)
            .map(|(_, d)| d)
    }

    /// The 403 a `forbidden` fault in force gives this request, as the API server words an
    /// RBAC denial; `None` when no such fault covers it.
    pub fn forbidden(&self, req: &Access<'_>) -> Option<ApiError> {
        let now = Instant::now();
        let forbidding = lock(&self.forbidding);
        let fault = forbidding
            .iter()
            .filter(|(_, until)| until.is_none_or(|t| now < t))
            .map(|(i, _)| &self.schedule[*i])
            .find(|f| covers(f, req))?;
        let user = fault
            .user
            .as_deref()
            .unwrap_or("system:serviceaccount:default:default");
        Some(ApiError::rbac_forbidden(user, req))
    }

    /// Takes one 410 from the budget, if any is left.
    pub fn take_gone(&self) -> bool {
        self.gone_budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    pub fn drops(&self) -> watch::Receiver<u64> {
        self.drop_epoch.subscribe()
    }
}

/// Whether a `forbidden` fault refuses the request: its resource (plural, or `plural.group`),
/// its verb (any when the fault names none) and its namespace (any when the fault names none).
fn covers(fault: &Fault, req: &Access<'_>) -> bool {
    let resource = fault.resources.iter().any(|r| match r.split_once('.') {
        Some((plural, group)) => plural == req.resource && group == req.group,
        None => r == req.resource,
    });
    let verb = fault.verbs.is_empty() || fault.verbs.iter().any(|v| v == req.verb);
    let namespace = fault
        .namespace
        .as_deref()
        .is_none_or(|ns| req.namespace == Some(ns));
    resource && verb && namespace
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_anchored_faults_wait_for_the_first_workload() {
        let s = Scenario::parse(
            "faults:\n  - {at: 1s, do: gone_next_watch, count: 2}\n  - {at: 0s, anchor: start, do: errors_500, for: 10s}\n",
            "t",
        )
        .unwrap();
        let f = Faults::new(&s);
        let now = Instant::now();
        f.fire_due(now + Duration::from_secs(5));
        assert!(f.erroring());
        assert!(!f.take_gone(), "not anchored yet");
        f.note_write("ConfigMap");
        f.fire_due(now + Duration::from_secs(60));
        assert!(!f.take_gone(), "a ConfigMap is not the apply anchor");
        f.note_write("Deployment");
        f.fire_due(Instant::now() + Duration::from_secs(2));
        assert!(f.take_gone());
        assert!(f.take_gone());
        assert!(!f.take_gone());
    }

    #[test]
    fn each_fault_is_credited_to_the_first_answered_request_after_it() {
        let f = Faults::new(&Scenario::parse("{}", "t").unwrap());
        let key = |labels: &str| WatchKey {
            resource: "pods".into(),
            namespace: "apps".into(),
            labels: labels.into(),
            fields: String::new(),
            client: WatchKey::client_of(Some("helmdeck/0.1.0")),
        };
        let (a, b) = (key("app=a"), key("app=b"));
        f.served(&a, Served::List);
        f.served(&a, Served::Watch);
        f.delivered(&a, Delivered::Drop);
        f.served(&a, Served::Watch);
        f.delivered(&a, Delivered::Error500);
        f.delivered(&a, Delivered::Error500);
        f.delivered(&a, Delivered::Gone);
        f.served(&a, Served::List);
        f.delivered(&b, Delivered::Gone);
        f.served(&b, Served::Watch);
        f.delivered(&b, Delivered::Drop);
        let all = f.tallies_json();
        let (a, b) = (&all[0], &all[1]);
        assert_eq!(a["client"], "helmdeck");
        assert_eq!((&a["lists"], &a["watches"]), (&json!(2), &json!(2)));
        assert_eq!(
            (&a["drops"], &a["errors500"], &a["gone"]),
            (&json!(1), &json!(2), &json!(1))
        );
        assert_eq!(
            a["after"]["drops"],
            json!({"lists": 0, "watches": 1, "pending": false})
        );
        assert_eq!(
            a["after"]["errors500"],
            json!({"lists": 1, "watches": 0, "pending": false})
        );
        assert_eq!(
            a["after"]["gone"],
            json!({"lists": 1, "watches": 0, "pending": false})
        );
        assert_eq!(b["labelSelector"], "app=b");
        assert_eq!(
            b["after"]["gone"],
            json!({"lists": 0, "watches": 1, "pending": false})
        );
        assert_eq!(
            b["after"]["drops"],
            json!({"lists": 0, "watches": 0, "pending": true})
        );
        assert_eq!(
            WatchKey::client_of(Some("kubectl/v1.35.2 (linux/amd64)")),
            "kubectl"
        );
        assert_eq!(WatchKey::client_of(None), "");
    }

    fn access<'a>(verb: &'a str, resource: &'a str, ns: Option<&'a str>) -> Access<'a> {
        Access {
            verb,
            resource,
            subresource: None,
            group: "",
            namespace: ns,
            name: None,
        }
    }

    #[test]
    fn a_forbidden_fault_denies_its_verbs_on_its_resources_as_rbac_words_it() {
        let s = Scenario::parse(
            "faults:\n  - {do: forbidden, resources: [secrets], verbs: [list, get], namespace: apps, user: \"system:serviceaccount:apps:deployer\", for: 30s}\n",
            "t",
        )
        .unwrap();
        let f = Faults::new(&s);
        let list = access("list", "secrets", Some("apps"));
        assert!(f.forbidden(&list).is_none(), "not fired yet");
        let now = Instant::now();
        f.fire_due(now);
        let denied = f.forbidden(&list).expect("denied");
        assert_eq!((denied.code, denied.reason), (403, "Forbidden"));
        assert_eq!(
            denied.message,
            "secrets is forbidden: User \"system:serviceaccount:apps:deployer\" cannot list resource \"secrets\" in API group \"\" in the namespace \"apps\""
        );
        assert_eq!(denied.to_status()["details"], json!({"kind": "secrets"}));
        let get = Access {
            name: Some("s1"),
            ..access("get", "secrets", Some("apps"))
        };
        let denied = f.forbidden(&get).expect("get denied too");
        assert!(denied.message.starts_with("secrets \"s1\" is forbidden: "));
        assert_eq!(denied.to_status()["details"]["name"], "s1");
        assert!(
            f.forbidden(&access("watch", "secrets", Some("apps")))
                .is_none()
        );
        assert!(
            f.forbidden(&access("list", "secrets", Some("other")))
                .is_none()
        );
        assert!(
            f.forbidden(&access("list", "configmaps", Some("apps")))
                .is_none()
        );
        assert!(f.forbidden(&access("list", "secrets", None)).is_none());
        // `for` ends it.
        *lock(&f.forbidding) = vec![(0, Some(now))];
        assert!(f.forbidden(&list).is_none());
    }

    #[test]
    fn a_cluster_scoped_denial_and_a_grouped_resource() {
        let s = Scenario::parse(
            "faults:\n  - {do: forbidden, resources: [deployments.apps, namespaces]}\n",
            "t",
        )
        .unwrap();
        let f = Faults::new(&s);
        f.fire_due(Instant::now());
        let ns = f.forbidden(&access("create", "namespaces", None)).unwrap();
        assert_eq!(
            ns.message,
            "namespaces is forbidden: User \"system:serviceaccount:default:default\" cannot create resource \"namespaces\" in API group \"\" at the cluster scope"
        );
        let scale = Access {
            group: "apps",
            subresource: Some("scale"),
            name: Some("web"),
            ..access("patch", "deployments", Some("apps"))
        };
        let denied = f.forbidden(&scale).unwrap();
        assert!(denied.message.starts_with("deployments.apps \"web\" is forbidden: User \"system:serviceaccount:default:default\" cannot patch resource \"deployments/scale\" in API group \"apps\""), "{}", denied.message);
        assert_eq!(denied.to_status()["details"]["group"], "apps");
        let core = Access { group: "", ..scale };
        assert!(
            f.forbidden(&core).is_none(),
            "deployments.apps is not a core resource"
        );
    }
}
