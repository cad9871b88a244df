//! References checked before containers start, as the kubelet and the attach/detach
//! controller check them: a pod's volumes must attach (a one-node claim's volume is not
//! attached to another node) and set up (their Secrets, ConfigMaps and typed hostPaths exist),
//! else it stays `ContainerCreating` with `FailedAttachVolume`/`FailedMount` Events; then each
//! container's `env`/`envFrom` references must resolve, else it waits in
//! `CreateContainerConfigError` with a `Failed` Event.
//!
//! Only pods that are due to start and refer to something are looked at: their references are
//! read once, and a pod held back is looked at again on the real retry period (volume
//! back-off 500ms doubling to 2m2s, a failed pod sync 10s later) or at once when a Secret or
//! ConfigMap of its namespace changes. Healthy pods cost one comparison per pass.

mod check;
pub(super) mod keys;
mod pod;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cache::{Cache, Dirty};
use super::kubelet::{Counters, PodSim, Stage};
use super::{Events, Involved, Pass};
use pod::{PodRefs, Source};

/// The volume manager's first retry after a failed mount, and its longest
/// (`exponentialbackoff`: 500ms doubling to 2m2s).
const MOUNT_RETRY_FIRST: Duration = Duration::from_millis(500);
const MOUNT_RETRY_MAX: Duration = Duration::from_secs(122);
/// The pod worker syncs a pod again this long after a failed sync (kubelet `backOffPeriod`).
const SYNC_RETRY: Duration = Duration::from_secs(10);
/// How often a pod waiting on an attachment looks again (the attach/detach controller
/// reconciles every 100ms; a second is plenty for a simulation).
const ATTACH_RETRY: Duration = Duration::from_secs(1);

/// The checks' memory: pods held back, and which node each one-node volume is attached to.
#[derive(Default)]
pub(crate) struct Refs {
    held: HashMap<String, Held>,
    attached: HashMap<String, Attachment>,
}

/// A pod the kubelet holds back.
struct Held {
    refs: PodRefs,
    /// Its volumes are set up (they stay so; only container config is left to check).
    mounted: bool,
    /// The Multi-Attach error was reported (the controller reports it once per node).
    attach_reported: bool,
    mount_failures: u32,
    next: Instant,
    /// Containers whose config failed: (name, is an init container, message).
    config: Vec<(String, bool, String)>,
}

/// A one-node volume's node, and the pods there that use it.
struct Attachment {
    node: String,
    users: Vec<(String, String, String)>,
}

impl Refs {
    /// Drops what it held for deleted pods.
    pub(super) fn forget_gone(&mut self, cache: &Cache, dirty: &Dirty) {
        if self.held.is_empty() {
            return;
        }
        if dirty.all {
            self.held.retain(|uid, _| cache.pods.contains_key(uid));
        }
        for (uid, _, _, is_pod) in &dirty.gone {
            if *is_pod {
                self.held.remove(uid);
            }
        }
    }

    /// Whether the kubelet must not start `sp` in this pass: it is due to start and a
    /// reference of its is missing. Records the Events; bumps `sp.version` when its status
    /// changes.
    pub(super) fn hold(
        &mut self,
        p: &Pass,
        cache: &Cache,
        dirty: &Dirty,
        sp: &mut PodSim,
        ev: &mut Events,
        ctr: &mut Counters,
    ) -> bool {
        if sp.stage != Stage::Creating || p.now < sp.created + sp.start_delay(p) {
            return false;
        }
        if let Some(h) = self.held.get(&sp.uid) {
            let poked = dirty.all || dirty.refs_ns.contains(&sp.ns);
            if p.now < h.next && !poked {
                return true;
            }
        } else {
            let Some(refs) = cache.full_pod(&sp.uid).and_then(|pod| PodRefs::of(&pod)) else {
                return false;
            };
            let held = Held {
                refs,
                mounted: false,
                attach_reported: false,
                mount_failures: 0,
                next: p.now,
                config: Vec::new(),
            };
            self.held.insert(sp.uid.clone(), held);
        }
        let still = self.check(p, cache, sp, ev, ctr);
        if !still {
            self.held.remove(&sp.uid);
        }
        still
    }

    /// Attach, mount, then container config: true while any of them fails.
    fn check(
        &mut self,
        p: &Pass,
        cache: &Cache,
        sp: &mut PodSim,
        ev: &mut Events,
        ctr: &mut Counters,
    ) -> bool {
        let Refs { held, attached } = self;
        let Some(h) = held.get_mut(&sp.uid) else {
            return false;
        };
        if !h.mounted {
            let attach_blocked = attach(p, cache, attached, h, sp, ev);
            let mount_blocked = mount(p, cache, h, sp, ev);
            if attach_blocked || mount_blocked {
                let mut wait = ATTACH_RETRY;
                if mount_blocked {
                    h.mount_failures += 1;
                    let doubled =
                        MOUNT_RETRY_FIRST * 2u32.pow(h.mount_failures.saturating_sub(1).min(8));
                    wait = if attach_blocked {
                        wait.min(doubled)
                    } else {
                        doubled
                    };
                }
                h.next = p.now + wait.min(MOUNT_RETRY_MAX);
                return true;
            }
            h.mounted = true;
        }
        config(p, cache, h, sp, ev, ctr)
    }

    /// Writes the held containers' waiting state into a status the kubelet is about to write.
    pub(super) fn decorate(&self, uid: &str, status: &mut Value) {
        if self.held.is_empty() {
            return;
        }
        let Some(h) = self.held.get(uid).filter(|h| !h.config.is_empty()) else {
            return;
        };
        let mut blocked_init: Vec<String> = Vec::new();
        for (list, init) in [
            ("initContainerStatuses", true),
            ("containerStatuses", false),
        ] {
            let Some(statuses) = status.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for cs in statuses {
                let name = cs["name"].as_str().unwrap_or("").to_string();
                let failed = h.config.iter().find(|(n, i, _)| *n == name && *i == init);
                let state = match failed {
                    Some((_, _, msg)) => {
                        json!({"waiting": {"reason": "CreateContainerConfigError", "message": msg}})
                    }
                    // Containers after a held init container have not begun.
                    None if !blocked_init.is_empty() => {
                        json!({"waiting": {"reason": "PodInitializing"}})
                    }
                    None => continue,
                };
                if init {
                    blocked_init.push(name);
                }
                cs["state"] = state;
                cs["ready"] = json!(false);
                cs["started"] = json!(false);
            }
        }
        if blocked_init.is_empty() {
            return;
        }
        let conds = status.get_mut("conditions").and_then(Value::as_array_mut);
        if let Some(c) = conds
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Initialized")
        {
            c["status"] = json!("False");
            c["reason"] = json!("ContainersNotInitialized");
            let names = blocked_init.join(" ");
            c["message"] = json!(format!("containers with incomplete status: [{names}]"));
        }
    }
}

/// The attach step for each one-node claim: true while one is attached to another node,
/// with a `FailedAttachVolume` Event the first time.
fn attach(
    p: &Pass,
    cache: &Cache,
    attached: &mut HashMap<String, Attachment>,
    h: &mut Held,
    sp: &PodSim,
    ev: &mut Events,
) -> bool {
    let mut blocked = false;
    for v in &h.refs.volumes {
        let Source::Claim(claim) = &v.source else {
            continue;
        };
        // A claim that is missing or unbound is the scheduler's to report.
        let Some((volume, true)) = cache
            .refs
            .claim(&sp.ns, claim)
            .and_then(|c| c.volume.as_deref().map(|v| (v, c.one_node)))
        else {
            continue;
        };
        let at = attached
            .entry(volume.to_string())
            .or_insert_with(|| Attachment {
                node: sp.node.clone(),
                users: Vec::new(),
            });
        if at.node != sp.node {
            at.users.retain(|(uid, _, _)| running(cache, uid));
            if at.users.is_empty() {
                at.node = sp.node.clone();
            } else {
                blocked = true;
                if !h.attach_reported {
                    let users: Vec<(&str, &str)> = at
                        .users
                        .iter()
                        .map(|(_, ns, n)| (ns.as_str(), n.as_str()))
                        .collect();
                    let msg = check::multi_attach(volume, &sp.ns, &users);
                    let involved = sp.involved(None);
                    let c = "attachdetach-controller";
                    ev.record(p, &involved, "Warning", "FailedAttachVolume", &msg, c, None);
                }
                continue;
            }
        }
        if !at.users.iter().any(|(uid, _, _)| *uid == sp.uid) {
            at.users
                .push((sp.uid.clone(), sp.ns.clone(), sp.name.clone()));
        }
    }
    h.attach_reported |= blocked;
    blocked
}

/// A pod that still needs its volumes where it runs: it exists and has not ended.
fn running(cache: &Cache, uid: &str) -> bool {
    cache.pods.get(uid).is_some_and(|pod| {
        let phase = pod.pointer("/status/phase").and_then(Value::as_str);
        !matches!(phase, Some("Succeeded" | "Failed"))
    })
}

/// The mount step: true while a volume cannot be set up, with a `FailedMount` Event per
/// failing volume on each try.
fn mount(p: &Pass, cache: &Cache, h: &Held, sp: &PodSim, ev: &mut Events) -> bool {
    let hosts = p.sim.scenario.host_paths.as_ref();
    let mut blocked = false;
    for v in &h.refs.volumes {
        if let Some(msg) = check::volume_error(v, &sp.ns, &cache.refs, hosts, &sp.node) {
            blocked = true;
            let involved = sp.involved(None);
            let host = Some(sp.node.as_str());
            ev.record(
                p,
                &involved,
                "Warning",
                "FailedMount",
                &msg,
                "kubelet",
                host,
            );
        }
    }
    blocked
}

/// The container config step, after the sandbox: init containers in order (the first that
/// fails stops the rest), then every container. True while one fails.
fn config(
    p: &Pass,
    cache: &Cache,
    h: &mut Held,
    sp: &mut PodSim,
    ev: &mut Events,
    ctr: &mut Counters,
) -> bool {
    let mut failing: Vec<(String, bool, String)> = Vec::new();
    for c in &h.refs.containers {
        if failing.iter().any(|f| f.1) {
            break;
        }
        if let Some(msg) = check::container_error(c, &sp.ns, &cache.refs) {
            failing.push((c.name.clone(), c.init, msg));
        }
    }
    if failing.is_empty() {
        return false;
    }
    sp.sandbox(p, ctr);
    for (c, init, msg) in &failing {
        let list = if *init {
            &sp.init_containers
        } else {
            &sp.containers
        };
        let image = list
            .iter()
            .find(|(n, _)| n == c)
            .map_or("", |x| x.1.as_str());
        let field = if *init {
            "initContainers"
        } else {
            "containers"
        };
        let involved = Involved {
            field_path: Some(format!("spec.{field}{{{c}}}")),
            ..sp.involved(None)
        };
        let host = Some(sp.node.as_str());
        // A 1.35 kubelet's words (image_manager.go, since KubeletEnsureSecretPulledImages).
        let pulled = format!(
            "Container image \"{image}\" already present on machine and can be accessed by the pod"
        );
        ev.record(p, &involved, "Normal", "Pulled", &pulled, "kubelet", host);
        let failed = format!("Error: {msg}");
        ev.record(p, &involved, "Warning", "Failed", &failed, "kubelet", host);
    }
    if h.config != failing {
        h.config = failing;
        sp.version += 1;
    }
    h.next = p.now + SYNC_RETRY;
    true
}

#[cfg(test)]
mod tests;
