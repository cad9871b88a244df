//! The logs of `helm test`'s hooks, read by helmdeck rather than by `helm test --logs`: helm
//! 4.1.4's `--logs` asks for the pod logs of every test hook, so a ConfigMap test hook (as in
//! the jenkins chart) makes it exit 1 although every test passed. Only a Pod hook (the pod of
//! that name) and a Job hook (its pods) have logs.

use k8s_openapi::api::core::v1::Pod;

use crate::rollout::objects::PodSummary;
use kube::Api;
use kube::api::{ListParams, LogParams};

use crate::engine::event::{Event, Step};
use crate::engine::steps::Ctx;
use crate::rollout::diagnosis::containers_in_run_order;
use crate::text;

/// Lines kept per container: enough for a test's own report, bounded for the helm pane.
const LINES_PER_CONTAINER: i64 = 50;

/// Whether a test hook of this kind runs anything with a log (and is a "test pod").
pub fn has_pods(kind: &str) -> bool {
    matches!(kind, "Pod" | "Job")
}

/// The pods of a test hook: the Pod itself, or the Job's (by `job-name`); empty when gone.
async fn pods_of(pods: &Api<Pod>, kind: &str, name: &str) -> Vec<Pod> {
    match kind {
        "Pod" => pods
            .get_opt(name)
            .await
            .ok()
            .flatten()
            .into_iter()
            .collect(),
        "Job" => pods
            .list(&ListParams::default().labels(&format!("job-name={name}")))
            .await
            .map(|l| l.items)
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The container names of a pod in the order they run: initContainers, then containers.
/// Reads the log of the test hook `name` (a Pod or Job), puts it in the helm pane under a
/// `POD LOGS: NAME` header as `helm test --logs` did (the screen's test log reads it there), and
/// returns its lines, made inert. None: the pods are gone (a `hook-succeeded` policy).
pub async fn fetch(ctx: &Ctx, kind: &str, name: &str) -> Option<Vec<String>> {
    let api: Api<Pod> = Api::namespaced(ctx.cluster.client.clone(), ctx.namespace());
    let found = pods_of(&api, kind, name).await;
    if found.is_empty() {
        ctx.emit.info(
            Step::Test,
            format!(
                "{}: no pod left to read a log from (deleted by its hook-delete-policy?)",
                label(kind, name)
            ),
        );
        return None;
    }
    let mut lines = Vec::new();
    for pod in &found {
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        for container in containers_in_run_order(&PodSummary::of(pod)) {
            let params = LogParams {
                container: Some(container.clone()),
                tail_lines: Some(LINES_PER_CONTAINER),
                ..LogParams::default()
            };
            // A container that never started has no log: the others still tell something.
            if let Ok(log) = api.logs(&pod_name, &params).await {
                lines.extend(
                    log.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(text::plain),
                );
            }
        }
    }
    ctx.emit.send(Event::HelmLine {
        stderr: false,
        text: format!("POD LOGS: {}", text::plain(name)),
    });
    for line in &lines {
        ctx.emit.send(Event::HelmLine {
            stderr: false,
            text: line.clone(),
        });
    }
    Some(lines)
}

/// How a test hook is named in notes and reasons: only a Pod is a "test pod".
pub fn label(kind: &str, name: &str) -> String {
    let name = text::plain(name);
    match kind {
        "Pod" => format!("test pod {name}"),
        "Job" => format!("test Job {name}"),
        "" => format!("test hook {name}"),
        other => format!("test hook {}/{name}", text::plain(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pods_and_jobs_are_test_pods() {
        assert!(has_pods("Pod") && has_pods("Job"));
        for kind in ["ConfigMap", "Secret", "ServiceAccount", ""] {
            assert!(!has_pods(kind), "{kind}");
        }
        assert_eq!(label("Pod", "t"), "test pod t");
        assert_eq!(label("ConfigMap", "t"), "test hook ConfigMap/t");
    }

    #[test]
    fn init_containers_are_read_before_the_containers() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "jk-ui-test"},
            "spec": {"initContainers": [{"name": "test-framework"}],
                     "containers": [{"name": "ui-test"}, {"name": "sidecar"}]}
        }))
        .expect("a pod");
        assert_eq!(
            containers_in_run_order(&PodSummary::of(&pod)),
            ["test-framework", "ui-test", "sidecar"]
        );
    }
}
