//! On-demand container logs for the drill-down: one followed stream at a time.
//!
//! The viewer sends the container it wants (or `None` to stop); [`serve`] follows that
//! container's log (`follow`, the last [`TAIL_LINES`] lines first) and stops the previous
//! stream. Every message carries the id of its stream, so a line of a stream that was just
//! replaced can be told apart from the new one. All text is made plain here, as elsewhere in
//! the engine. It asks the cluster only when asked: nothing is polled.

use futures::{AsyncBufReadExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::LogParams;
use kube::{Api, Client};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

use crate::text;

/// Lines of history asked for when a stream starts.
pub const TAIL_LINES: i64 = 200;

/// The container whose log the viewer wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    pub pod: String,
    /// The pod's namespace (a workload may live outside the release's); empty: the release's.
    pub namespace: String,
    pub container: String,
}

/// What the log service reports; `id` names the stream (a new one per request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogMsg {
    /// A stream for this container starts: what follows replaces what was shown for it.
    Started {
        id: u64,
        pod: String,
        container: String,
    },
    Line {
        id: u64,
        text: String,
    },
    /// The stream is over (the container stopped, or the log cannot be read), with why.
    Ended {
        id: u64,
        why: String,
    },
}

/// Serves log requests until `stop` fires or the request channel closes.
pub async fn serve(
    client: Client,
    namespace: String,
    mut requests: UnboundedReceiver<Option<LogRequest>>,
    out: UnboundedSender<LogMsg>,
    stop: CancellationToken,
) {
    let mut current: Option<LogRequest> = None;
    let mut task: Option<tokio::task::JoinHandle<()>> = None;
    let mut next_id = 0u64;
    loop {
        let wanted = tokio::select! {
            _ = stop.cancelled() => break,
            r = requests.recv() => match r {
                Some(r) => r,
                None => break,
            },
        };
        // Only the newest request counts.
        let mut wanted = wanted;
        while let Ok(newer) = requests.try_recv() {
            wanted = newer;
        }
        if wanted == current {
            continue;
        }
        if let Some(t) = task.take() {
            t.abort();
        }
        current = wanted.clone();
        if let Some(req) = wanted {
            next_id += 1;
            let id = next_id;
            let _ = out.send(LogMsg::Started {
                id,
                pod: req.pod.clone(),
                container: req.container.clone(),
            });
            let ns = if req.namespace.is_empty() {
                &namespace
            } else {
                &req.namespace
            };
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
            task = Some(tokio::spawn(follow(pods, id, req, out.clone())));
        }
    }
    if let Some(t) = task {
        t.abort();
    }
}

fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => text::plain(&status.message),
        other => text::plain(&other.to_string()),
    }
}

async fn follow(pods: Api<Pod>, id: u64, req: LogRequest, out: UnboundedSender<LogMsg>) {
    let params = LogParams {
        follow: true,
        container: Some(req.container.clone()),
        tail_lines: Some(TAIL_LINES),
        ..Default::default()
    };
    let why = match pods.log_stream(&req.pod, &params).await {
        Err(e) => format!("log unavailable: {}", describe(&e)),
        Ok(stream) => {
            let mut lines = std::pin::pin!(stream.lines());
            loop {
                match lines.try_next().await {
                    Ok(Some(line)) => {
                        if out
                            .send(LogMsg::Line {
                                id,
                                text: text::plain(&line),
                            })
                            .is_err()
                        {
                            return;
                        }
                    }
                    Ok(None) => break "end of log (the container is not running)".to_string(),
                    Err(e) => break format!("log stream failed: {}", text::plain(&e.to_string())),
                }
            }
        }
    };
    let _ = out.send(LogMsg::Ended { id, why });
}
