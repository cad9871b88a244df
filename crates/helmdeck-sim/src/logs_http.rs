//! `GET /api/v1/namespaces/NS/pods/NAME/log`: container logs, optionally followed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use serde_json::Value;

use super::SimState;
use super::api_error::ApiError;
use super::body::Body;
use super::resources::ids;

fn render(lines: &[(String, String)], timestamps: bool) -> String {
    lines
        .iter()
        .map(|(ts, text)| {
            if timestamps {
                format!("{ts} {text}\n")
            } else {
                format!("{text}\n")
            }
        })
        .collect()
}

fn names<'v>(pod: &'v Value, key: &str) -> Vec<&'v str> {
    pod.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect()
}

/// The container a log request means: `?container=` (an app or init container), or the pod's
/// only app container, in the API server's words when neither.
fn container_of(pod: &Value, name: &str, asked: Option<&String>) -> Result<String, ApiError> {
    let apps = names(pod, "containers");
    let inits = names(pod, "initContainers");
    match asked {
        Some(c) if apps.contains(&c.as_str()) || inits.contains(&c.as_str()) => Ok(c.clone()),
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {name}"
        ))),
        None if apps.len() == 1 => Ok(apps[0].to_string()),
        None if inits.is_empty() => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            apps.join(" ")
        ))),
        None => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}] or one of the init containers: [{}]",
            apps.join(" "),
            inits.join(" ")
        ))),
    }
}

/// Why `container` has no log yet: its waiting reason in the pod's status.
fn waiting_reason<'v>(pod: &'v Value, container: &str) -> &'v str {
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .filter_map(|k| {
            pod.pointer(&format!("/status/{k}"))
                .and_then(Value::as_array)
        })
        .flatten()
        .find(|c| c["name"] == container)
        .and_then(|c| c.pointer("/state/waiting/reason"))
        .and_then(Value::as_str)
        .unwrap_or("ContainerCreating")
}

pub fn serve(
    sim: &Arc<SimState>,
    ns: &str,
    name: &str,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let pod = sim.store.get(*ids::PODS, Some(ns), name)?;
    let container = container_of(&pod, name, q.get("container"))?;
    let flag = |k: &str| matches!(q.get(k).map(String::as_str), Some("true" | "1"));
    let timestamps = flag("timestamps");
    let previous = flag("previous");
    let tail: Option<usize> = q.get("tailLines").and_then(|t| t.parse().ok());
    let tail_of = |lines: &[(String, String)]| -> String {
        let from = tail.map_or(0, |n| lines.len().saturating_sub(n));
        render(&lines[from..], timestamps)
    };
    if sim.logs.read(ns, name, &container, previous).is_none() {
        let waiting = waiting_reason(&pod, &container);
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: {waiting}"
        )));
    }
    if !flag("follow") || previous {
        let lines = sim
            .logs
            .read(ns, name, &container, previous)
            .unwrap_or_default();
        return Ok(text(tail_of(&lines)));
    }
    let follow = sim.logs.follow(ns, name, &container);
    let head = tail_of(&follow.lines);
    if !follow.running {
        return Ok(text(head));
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    let (sim, ns, pod) = (sim.clone(), ns.to_string(), name.to_string());
    let mut changed = follow.changed;
    let mut sent = follow.lines.len();
    tokio::spawn(async move {
        if tx.send(Bytes::from(head)).await.is_err() {
            return;
        }
        loop {
            tokio::select! {
                _ = tx.closed() => return,
                r = changed.changed() => if r.is_err() { return },
            }
            let now = sim.logs.follow(&ns, &pod, &container);
            if now.lines.len() < sent {
                return; // the container restarted: the stream of that run is over
            }
            if now.lines.len() > sent {
                let chunk = render(&now.lines[sent..], timestamps);
                sent = now.lines.len();
                if tx.send(Bytes::from(chunk)).await.is_err() {
                    return;
                }
            }
            if !now.running {
                return;
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    Ok(Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(StreamBody::new(stream).boxed())
        .expect("static response parts are valid"))
}

fn text(s: String) -> Response<Body> {
    Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(super::body::full(s))
        .expect("static response parts are valid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({"spec": {"initContainers": [{"name": "wait-db"}], "containers": [{"name": "app"}, {"name": "side"}]},
               "status": {"initContainerStatuses": [{"name": "wait-db", "state": {"running": {}}}],
                          "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "PodInitializing"}}},
                                                {"name": "side", "state": {"waiting": {"reason": "PodInitializing"}}}]}})
    }

    #[test]
    fn an_init_container_is_a_valid_log_container() {
        let p = pod();
        assert_eq!(
            container_of(&p, "p", Some(&"wait-db".to_string())).unwrap(),
            "wait-db"
        );
        let err = container_of(&p, "p", Some(&"nope".to_string())).unwrap_err();
        assert_eq!(err.message, "container nope is not valid for pod p");
        let err = container_of(&p, "p", None).unwrap_err();
        assert_eq!(
            err.message,
            "a container name must be specified for pod p, choose one of: [app side] or one of the init containers: [wait-db]"
        );
        assert_eq!(waiting_reason(&p, "side"), "PodInitializing");
        assert_eq!(waiting_reason(&p, "wait-db"), "ContainerCreating");
    }
}
