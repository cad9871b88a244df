//! The kubelet's pass over every pod: new pods registered, the scheduler's step for the
//! unscheduled, each pod advanced, and the statuses that changed written. Apart from the
//! kubelet's own code so that the kubelet does not name the scheduler (which names it).

use serde_json::{Value, json};

use super::super::cache::{Cache, Dirty};
use super::super::scheduler::view::Nodes;
use super::super::{Controllers, Pass, meta};
use super::{PodSim, Stage};
use crate::resources::ids;

impl Controllers {
    /// Registers new pods, advances every pod and writes the statuses that changed; the
    /// owners of changed pods are marked dirty.
    pub(in crate::controllers) fn kubelet_pass(
        &mut self,
        p: &Pass,
        cache: &Cache,
        dirty: &mut Dirty,
    ) {
        for pod in dirty.changed(&dirty.pods, &cache.pods) {
            let uid = meta(pod, "uid");
            if self.pods.contains_key(uid) {
                continue;
            }
            // The cached copy of a bound pod is slim: the kubelet reads the whole pod once.
            let Some(pod) = cache.full_pod(uid) else {
                continue;
            };
            let pod = &pod;
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
            refs,
            ..
        } = self;
        refs.forget_gone(cache, dirty);
        for sp in pods.values_mut() {
            let nodes = Nodes::of(cache);
            match sp.stage {
                Stage::Unscheduled => {
                    sp.schedule(p, &nodes, events, counters);
                }
                Stage::Unschedulable => {
                    sp.retry_schedule(p, &nodes, events, counters);
                }
                _ => {}
            }
            // A pod whose volumes or referenced Secrets/ConfigMaps are missing does not start.
            if !refs.hold(p, cache, dirty, sp, events, counters) {
                sp.advance(p, events, counters);
            }
            if sp.version == sp.written {
                continue;
            }
            sp.written = sp.version;
            if let Some(o) = &sp.owner {
                dirty.mark_up(o, &cache.owners);
            }
            let mut status = sp.status();
            refs.decorate(&sp.uid, &mut status);
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
