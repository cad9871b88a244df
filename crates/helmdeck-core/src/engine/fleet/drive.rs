//! When each target of a fleet starts: at most `parallel` at once, the canary alone first
//! (the rest only if it landed 0), and none new after a failure with `--stop-on-failure` or
//! after the fleet's cancel. What a start does (prepare, deploy, write its files) is the
//! caller's: this only schedules, and keeps each member's [`Lane`].

use std::future::Future;
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{Lane, Member};

/// How the fleet's targets run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// At most this many at once (`--parallel`; at least 1).
    pub parallel: usize,
    /// The index of the target that runs alone first (`--canary`).
    pub canary: Option<usize>,
    /// No new target starts after one ended with a code other than 0 (`--stop-on-failure`).
    pub stop_on_failure: bool,
}

/// Runs the fleet to its end and returns each member's exit code, in the members' order. `start`
/// runs one target (its engine folds into `member.state`) and returns its exit code; it is
/// given the member, whose `cancel` the fleet's `cancel` also triggers. A member that never
/// starts is `NotStarted` with the reason.
pub async fn drive<F, Fut>(
    members: &[Arc<Member>],
    options: Options,
    cancel: CancellationToken,
    start: F,
) -> Vec<i32>
where
    F: Fn(Arc<Member>) -> Fut,
    Fut: Future<Output = i32> + Send + 'static,
{
    // One cancel reaches every running target (each helm gets its own SIGTERM).
    let relay = {
        let (cancel, members) = (cancel.clone(), members.to_vec());
        tokio::spawn(async move {
            cancel.cancelled().await;
            for m in &members {
                m.cancel.cancel();
            }
        })
    };
    let mut queue: Vec<usize> = (0..members.len()).collect();
    let mut stop: Option<String> = None;
    if let Some(canary) = options.canary.filter(|c| *c < members.len()) {
        queue.retain(|i| *i != canary);
        let code = run_one(&members[canary], &start).await;
        if code != 0 {
            let label = &members[canary].target.label;
            stop = Some(format!("the canary {label} did not land (exit {code})"));
        }
    }
    let mut running = JoinSet::new();
    let mut queue = queue.into_iter();
    loop {
        while stop.is_none() && !cancel.is_cancelled() && running.len() < options.parallel.max(1) {
            let Some(i) = queue.next() else { break };
            let member = members[i].clone();
            member.lane.send_replace(Lane::Running);
            let run = start(member.clone());
            running.spawn(async move {
                let code = run.await;
                member.lane.send_replace(Lane::Ended { code });
                code
            });
        }
        let Some(ended) = running.join_next().await else {
            break;
        };
        let code = ended.unwrap_or(crate::exit::FAILED);
        if code != 0 && options.stop_on_failure && stop.is_none() {
            stop = Some(format!("--stop-on-failure: a target failed (exit {code})"));
        }
    }
    let reason = stop.unwrap_or_else(|| "cancelled before it started".into());
    for i in queue {
        members[i].lane.send_replace(Lane::NotStarted {
            reason: reason.clone(),
        });
    }
    relay.abort();
    members
        .iter()
        .map(|m| m.lane.borrow().code().unwrap_or(crate::exit::FAILED))
        .collect()
}

async fn run_one<F, Fut>(member: &Arc<Member>, start: &F) -> i32
where
    F: Fn(Arc<Member>) -> Fut,
    Fut: Future<Output = i32> + Send + 'static,
{
    member.lane.send_replace(Lane::Running);
    let code = start(member.clone()).await;
    member.lane.send_replace(Lane::Ended { code });
    code
}
