//! One async function per step. Each step's body (`try_run`) emits what it sees and says how
//! the step ended, or fails with a [`StepError`]; [`run`] is the one place a step's start and
//! end are emitted, and turns an error into the step's failure (kube-rs's `reconcile` and
//! `error_policy`).

pub mod budget;
pub mod helm_run;
pub mod hooks_live;
pub mod init;
pub mod init_apply;
pub mod init_objects;
pub mod init_render;
pub mod left_lock;
pub mod lock;
pub mod plan;
pub mod preflight;
pub mod rollback;
pub mod rollout;
pub mod smoke;
pub mod test_logs;
pub mod upgrade;

use tokio_util::sync::CancellationToken;

use crate::engine::emit::Emitter;
use crate::engine::event::{Step, StepOutcome};
use crate::engine::prepared::Prepared;
use crate::helm::HelmError;

/// What every step gets: the prepared deploy (read, never copied: `ctx.plan`, `ctx.helm`, ...
/// reach it through `Deref`), the event sender and the cancel.
pub struct Ctx {
    pub deploy: Prepared,
    pub emit: Emitter,
    pub cancel: CancellationToken,
}

impl std::ops::Deref for Ctx {
    type Target = Prepared;

    fn deref(&self) -> &Prepared {
        &self.deploy
    }
}

/// Why a step failed before its body reached an outcome of its own. The step's reason is the
/// message with every source's after it, as eyre's `{:#}` prints a chain.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// From a layer that still reports through eyre (the cluster client, release records).
    #[error(transparent)]
    Report(#[from] color_eyre::eyre::Report),
    #[error("could not run helm")]
    HelmRun(#[source] HelmError),
    #[error("namespace {0} does not exist (pass -- --create-namespace to let helm create it)")]
    NoNamespace(String),
    #[error("cannot read namespace {namespace}: {}", crate::cluster::errors::describe(.error))]
    ReadNamespace {
        namespace: String,
        error: kube::Error,
    },
    /// A pending revision holds the release; the text names it, its age and the fix.
    #[error("{0}")]
    Locked(String),
    /// helm refused the deploy because another operation on the release got there first; the
    /// text names that operation and says to wait.
    #[error("{0}")]
    Concurrent(String),
    /// helm exited non-zero; the text is its `Error:` line with the failing and skipped hooks.
    #[error("{0}")]
    HelmFailed(String),
    #[error("helm exited 0 but the release record is unreadable: {0}")]
    RecordUnreadable(String),
    #[error("helm exited 0 but revision {revision} is {status}")]
    NotDeployed { revision: i64, status: String },
    #[error("helm exited 0 but no new revision was written (still {0})")]
    NoNewRevision(i64),
    /// The init Job could not be rendered, picked or replaced; the text says which.
    #[error("{0}")]
    InitJob(String),
    #[error("the rendered Job {name} is not a valid Job: {error}")]
    InvalidJob {
        name: String,
        error: serde_json::Error,
    },
    /// The plan could not be made (helm's dry run, a manifest); the text says which.
    #[error("{0}")]
    Plan(String),
    #[error("cannot create Job {name}: {error}")]
    CreateJob { name: String, error: kube::Error },
}

/// The error and its sources, joined as eyre's `{:#}` joins a chain.
fn reason(error: &StepError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        // An API answer is said once, in one line (a 403 as what was denied): its own
        // `Display` and its `Status` source would say it three times, with a raw dump.
        if let Some(kube) = cause.downcast_ref::<kube::Error>() {
            text.push_str(&crate::cluster::errors::describe(kube));
            break;
        }
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// How a step that failed with an error ends.
fn error_policy(error: &StepError) -> StepOutcome {
    StepOutcome::Failed {
        reason: reason(error),
    }
}

/// Runs one step's body between its start and its end, whichever way the body ends.
pub async fn run(
    ctx: &Ctx,
    step: Step,
    body: impl Future<Output = Result<StepOutcome, StepError>>,
) -> StepOutcome {
    ctx.emit.started(step);
    let outcome = body.await.unwrap_or_else(|e| error_policy(&e));
    ctx.emit.ended(step, outcome)
}

/// A step that does not run: it starts and ends skipped, saying why.
pub async fn skip(ctx: &Ctx, step: Step, reason: &str) -> StepOutcome {
    run(ctx, step, async {
        Ok(StepOutcome::Skipped {
            reason: reason.into(),
        })
    })
    .await
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cluster::client::Cluster;
    use crate::config::DeployPlan;
    use crate::engine::event::Event;
    use color_eyre::eyre::{WrapErr, eyre};
    use std::path::PathBuf;

    /// A Ctx whose cluster is never contacted, and the receiving end of its events.
    pub(crate) fn ctx() -> (Ctx, tokio::sync::mpsc::UnboundedReceiver<Event>) {
        use clap::Parser;
        let argv = ["helmdeck", "deploy", "demo", "/nonexistent-chart"];
        let crate::cli::Command::Deploy(args) = crate::cli::Cli::try_parse_from(argv)
            .expect("valid flags")
            .command
        else {
            unreachable!()
        };
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a valid URL"));
        let cluster = Cluster {
            client: kube::Client::try_from(config).expect("a client"),
            default_namespace: "default".into(),
            server: "http://127.0.0.1:9".into(),
            context: None,
        };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let ctx = Ctx {
            deploy: Prepared {
                plan: DeployPlan::from_args(&args).expect("a plan"),
                helm: PathBuf::from("helm"),
                helm_version: "v4.1.4".into(),
                cluster,
                helm_env: vec![],
                asks: Default::default(),
                earlier_runs: None,
                own_locks: Default::default(),
            },
            emit: Emitter::new(tx),
            cancel: CancellationToken::new(),
        };
        (ctx, rx)
    }

    fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        events
    }

    #[tokio::test]
    async fn a_step_starts_then_says_what_it_sees_then_ends_once() {
        let (ctx, mut rx) = ctx();
        let outcome = run(&ctx, Step::Rollout, async {
            ctx.emit.info(Step::Rollout, "seen");
            Ok(StepOutcome::Succeeded)
        })
        .await;
        assert_eq!(outcome, StepOutcome::Succeeded);
        let events = drain(&mut rx);
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(
            events[0],
            Event::StepStarted {
                step: Step::Rollout
            }
        );
        assert!(matches!(&events[1], Event::Note { text, .. } if text == "seen"));
        assert_eq!(
            events[2],
            Event::StepEnded {
                step: Step::Rollout,
                outcome: StepOutcome::Succeeded
            }
        );
    }

    #[tokio::test]
    async fn an_error_ends_the_step_failed_with_the_whole_chain() {
        let (ctx, mut rx) = ctx();
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let helm = HelmError::Start {
            bin: PathBuf::from("/x/helm"),
            source: io,
        };
        let outcome = run(&ctx, Step::Upgrade, async { Err(StepError::HelmRun(helm)) }).await;
        let want = StepOutcome::Failed {
            reason: "could not run helm: starting helm (/x/helm): no such file".into(),
        };
        assert_eq!(outcome, want);
        assert_eq!(
            drain(&mut rx).last(),
            Some(&Event::StepEnded {
                step: Step::Upgrade,
                outcome: want
            })
        );
    }

    #[test]
    fn an_eyre_error_reads_as_eyre_prints_it() {
        let report = Err::<(), _>(eyre!("connection refused"))
            .wrap_err("listing releases")
            .expect_err("an error");
        let shown = format!("{report:#}");
        assert_eq!(reason(&StepError::from(report)), shown);
        assert_eq!(shown, "listing releases: connection refused");
    }

    #[tokio::test]
    async fn a_skipped_step_starts_and_ends_skipped() {
        let (ctx, mut rx) = ctx();
        skip(&ctx, Step::Init, "--only rollout").await;
        let events = drain(&mut rx);
        assert_eq!(
            events,
            [
                Event::StepStarted { step: Step::Init },
                Event::StepEnded {
                    step: Step::Init,
                    outcome: StepOutcome::Skipped {
                        reason: "--only rollout".into()
                    }
                }
            ]
        );
    }
}
