//! Watch streams: `?watch=true` on a collection. One JSON event per line over a chunked
//! response, resumable strictly after any retained resourceVersion, with bookmarks, the
//! streaming-list `k8s.io/initial-events-end` bookmark, `timeoutSeconds`, and an in-band
//! 410 when the requested rv is older than the log keeps.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::SimState;
use super::api_error::ApiError;
use super::body::Body;
use super::faults::{Delivered, Faults, Served, WatchKey};
use super::resources::{self, ResourceId};
use super::selector::Selector;

/// How long until a fault-free bookmark is due.
pub const BOOKMARK_EVERY: Duration = Duration::from_secs(1);
use super::store::{EventType, Stored};

/// Longest a watch stays open without `timeoutSeconds` (the API server picks 30–60 min).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut line = serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// An event line around an object's stored JSON, without parsing it.
fn stored_line(kind: EventType, stored: &Stored) -> Bytes {
    let kind = kind.as_str();
    let mut line = Vec::with_capacity(stored.bytes.len() + kind.len() + 32);
    // The same key order as `event_line` (serde_json's sorted maps).
    line.extend_from_slice(b"{\"object\":");
    line.extend_from_slice(&stored.bytes);
    line.extend_from_slice(b",\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\"}\n");
    Bytes::from(line)
}

fn bookmark(res: ResourceId, rv: u64, initial_end: bool) -> Bytes {
    let rt = resources::get(res);
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    event_line(
        "BOOKMARK",
        &json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": meta}),
    )
}

struct Filter {
    res: ResourceId,
    namespace: Option<String>,
    labels: Selector,
    fields: Selector,
}

impl Filter {
    fn object(&self, obj: &Stored) -> bool {
        let ns_ok = match &self.namespace {
            Some(ns) if resources::get(self.res).namespaced => obj.idx.namespace() == ns,
            _ => true,
        };
        ns_ok && obj.selected(&self.labels, &self.fields)
    }

    fn event(&self, resource: ResourceId, obj: &Stored) -> bool {
        resource == self.res && self.object(obj)
    }
}

fn stream_response(rx: mpsc::Receiver<Bytes>) -> Response<Body> {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .header("transfer-encoding", "chunked")
        .body(StreamBody::new(stream).boxed())
        .expect("static response parts are valid")
}

fn gone_response(message: String) -> Response<Body> {
    error_stream(ApiError::gone(message))
}

/// A watch stream of one in-band ERROR event.
fn error_stream(err: ApiError) -> Response<Body> {
    let (tx, rx) = mpsc::channel(1);
    // Capacity 1 and a fresh channel: this send cannot fail.
    let _ = tx.try_send(event_line("ERROR", &err.to_status()));
    stream_response(rx)
}

/// Serves one watch request; `key` names it in the fault tallies.
#[allow(clippy::too_many_arguments)] // the parsed request, passed through as the router has it
pub fn serve(
    sim: &Arc<SimState>,
    faults: &Arc<Faults>,
    res: ResourceId,
    namespace: Option<&str>,
    labels: Selector,
    fields: Selector,
    q: &HashMap<String, String>,
    key: WatchKey,
) -> Response<Body> {
    if faults.take_gone() {
        faults.delivered(&key, Delivered::Gone);
        return gone_response("simulated fault: too old resource version".into());
    }
    let filter = Filter {
        res,
        namespace: namespace.map(String::from),
        labels,
        fields,
    };
    let send_initial = q.get("sendInitialEvents").is_some_and(|v| v == "true");
    let bookmarks = q.get("allowWatchBookmarks").is_some_and(|v| v == "true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let rv_param = q.get("resourceVersion").map(String::as_str).unwrap_or("");
    // rv "" or "0": start with the current state as ADDED events, as the API server does.
    let (from_rv, initial_added) = match rv_param {
        "" | "0" => (None, true),
        rv => match rv.parse::<u64>() {
            Ok(n) => (Some(n), send_initial),
            Err(_) => {
                return error_stream(ApiError::bad_request(format!(
                    "invalid resource version {rv:?}"
                )));
            }
        },
    };
    let want_initial = initial_added || send_initial;
    let sub = match sim.store.subscribe(
        res,
        namespace,
        if want_initial { None } else { from_rv },
        want_initial.then_some(&|o: &Stored| filter.object(o)),
    ) {
        Ok(s) => s,
        Err(()) => {
            faults.delivered(&key, Delivered::Gone);
            return gone_response(format!("too old resource version: {rv_param}"));
        }
    };
    faults.served(&key, Served::Watch);
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let mut drops = faults.drops();
    drops.borrow_and_update();
    let faults = faults.clone();
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut last_rv = sub.rv;
        let send = |b: Bytes| tx.send(b);
        for obj in &sub.initial {
            if send(stored_line(EventType::Added, obj)).await.is_err() {
                return;
            }
        }
        if send_initial && send(bookmark(res, sub.rv, true)).await.is_err() {
            return;
        }
        for e in sub
            .backlog
            .iter()
            .filter(|e| filter.event(e.resource, &e.stored))
        {
            if send(stored_line(e.kind, &e.stored)).await.is_err() {
                return;
            }
        }
        let mut live = sub.live;
        let mut ticker =
            tokio::time::interval_at(tokio::time::Instant::now() + BOOKMARK_EVERY, BOOKMARK_EVERY);
        loop {
            tokio::select! {
                _ = tx.closed() => return,
                _ = tokio::time::sleep_until(deadline) => return,
                _ = drops.changed() => {
                    faults.delivered(&key, Delivered::Drop);
                    return;
                }
                _ = ticker.tick(), if bookmarks => {
                    if tx.send(bookmark(res, last_rv, false)).await.is_err() {
                        return;
                    }
                }
                received = live.recv() => match received {
                    Ok(e) => {
                        if e.rv <= last_rv {
                            continue;
                        }
                        last_rv = e.rv;
                        if filter.event(e.resource, &e.stored) && tx.send(stored_line(e.kind, &e.stored)).await.is_err() {
                            return;
                        }
                    }
                    // Too slow to keep up, or the server is going away: end the stream and
                    // let the client resume from its last rv.
                    Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => return,
                }
            }
        }
    });
    stream_response(rx)
}
