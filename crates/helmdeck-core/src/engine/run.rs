//! The orchestrator: runs the steps in order on one task, folds their events into the one
//! deploy state on another, and ends with the verdict. Renderers (headless lines, the record)
//! get every event with the state it produced; the screen borrows that state per frame.

use std::time::Instant;

use color_eyre::eyre::Result;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::cli::Only;
use crate::engine::ask::Question;
use crate::engine::emit::Emitter;
use crate::engine::event::{Event, RollbackView, Step, StepOutcome};
use crate::engine::model::event::RollbackStatus;
use crate::engine::scrub::Scrub;
use crate::engine::state::{DeployState, PlanSummary};
use crate::engine::steps::{self, Ctx};
use crate::engine::verdict;
use crate::helm::process::redact_args;

pub use crate::engine::prepared::{OwnLocks, Prepared};

impl Prepared {
    /// Reads `-f -` and pulls a remote chart once, then checks the init Job offline; all before
    /// the first cluster request, so a failure here is a usage error (exit 2).
    pub async fn resolve_inputs(&mut self) -> Result<()> {
        let inputs = crate::engine::inputs::resolve(&self.plan, &self.helm, &self.helm_env).await?;
        self.plan.inputs = std::sync::Arc::new(inputs);
        steps::init_render::check_offline(&self.plan, &self.helm, &self.helm_env, self.namespace())
            .await
            .map_err(|e| color_eyre::eyre::eyre!("--init-job: {e}"))
    }
}

pub fn summary(p: &Prepared) -> PlanSummary {
    PlanSummary::of(&p.plan, p.namespace())
}

/// This run's upgrade or rollout failed and nothing rolled it back: the revision it wrote (if
/// any), which the screen's `R` may still roll back after the verdict.
struct Unrolled {
    written: Option<i64>,
}

async fn run_steps(ctx: &Ctx) -> Option<Unrolled> {
    if let Some(watching) = ctx.plan.watch {
        crate::engine::watch::run_steps(ctx, watching.after).await;
        return None;
    }
    let (outcome, revision_before) = steps::preflight::run(ctx).await;
    if outcome != StepOutcome::Succeeded {
        return None;
    }
    if ctx.plan.plan {
        if steps::plan::run(ctx).await != StepOutcome::Succeeded {
            return None;
        }
        if ctx.plan.plan_only {
            for step in [Step::Upgrade, Step::Rollout, Step::Init] {
                steps::skip(ctx, step, "--plan-only: nothing written").await;
            }
            return None;
        }
    }
    if ctx.plan.dry_run {
        dry_run(ctx).await;
        return None;
    }
    match ctx.plan.only {
        Some(Only::Rollout) => {
            steps::skip(ctx, Step::Upgrade, "--only rollout: helm is not run").await;
            if steps::rollout::run(ctx).await == StepOutcome::Succeeded {
                steps::skip(ctx, Step::Init, "--only rollout").await;
            }
        }
        Some(Only::Init) => {
            steps::skip(ctx, Step::Upgrade, "--only init: the release is live").await;
            steps::skip(ctx, Step::Rollout, "--only init").await;
            steps::init::run(ctx).await;
        }
        None => {
            let (upgraded, written) = steps::upgrade::run(ctx, revision_before).await;
            let rolled = if upgraded == StepOutcome::Succeeded {
                steps::rollout::run(ctx).await
            } else {
                upgraded.clone()
            };
            match rolled {
                StepOutcome::Succeeded => {
                    let init = steps::init::run(ctx).await;
                    // Only a deploy that landed is smoke-tested (never after exit 3).
                    if ctx.plan.test
                        && matches!(init, StepOutcome::Succeeded | StepOutcome::Skipped { .. })
                    {
                        steps::smoke::run(ctx, revision_before).await;
                    }
                }
                // Only a failure (never a cancel, never the init step's exit 3) is rolled back.
                StepOutcome::Failed { .. } if ctx.plan.rollback_on_failure => {
                    steps::rollback::after_failure(ctx, written, "--rollback-on-failure").await;
                }
                StepOutcome::Failed { .. } => {
                    // The advice is decided from the history as it is now.
                    steps::rollback::check_newer(ctx, written).await;
                    return Some(Unrolled { written });
                }
                _ => {}
            }
        }
    }
    None
}

/// `--dry-run`: what each step would do; nothing is written to the cluster.
async fn dry_run(ctx: &Ctx) {
    let emit = &ctx.emit;
    let skipped = || {
        Ok(StepOutcome::Skipped {
            reason: "dry run: nothing written".into(),
        })
    };
    steps::run(ctx, Step::Upgrade, async {
        emit.info(
            Step::Upgrade,
            format!(
                "would run: helm {}",
                redact_args(&steps::upgrade::upgrade_args(ctx)).join(" ")
            ),
        );
        skipped()
    })
    .await;
    steps::run(ctx, Step::Rollout, async {
        emit.info(
            Step::Rollout,
            format!(
                "would wait up to {}s for Deployments, StatefulSets, DaemonSets with {} in {}; optional: {}",
                ctx.plan.timeout.as_secs(),
                ctx.selector(),
                ctx.namespace(),
                if ctx.plan.optional.is_empty() { "none by flag (annotations still count)".to_string() } else { ctx.plan.optional.iter().map(|g| g.as_str().to_string()).collect::<Vec<_>>().join(", ") }
            ),
        );
        skipped()
    })
    .await;
    steps::run(ctx, Step::Init, async {
        match (&ctx.plan.init_toggle, &ctx.plan.init_job) {
            (Some(toggle), Some(job)) => {
                let render = steps::init_render::RenderArgs {
                    plan: &ctx.plan,
                    namespace: ctx.namespace(),
                    values: vec!["-f".into(), "<the deployed revision's values>".into()],
                    is_upgrade: false,
                    kube_version: None,
                };
                emit.info(
                    Step::Init,
                    format!(
                        "would render: helm {} (and with {toggle}=false; --is-upgrade when an older revision exists)",
                        redact_args(&steps::init_render::template_args(&render, toggle, true)).join(" ")
                    ),
                );
                emit.info(Step::Init, format!("would create the hook objects the toggle adds, replace Job {job} unless it runs for another run, wait and stream its logs"));
            }
            _ => emit.info(Step::Init, "not configured (no --init-toggle/--init-job)"),
        }
        skipped()
    })
    .await;
}

/// The one owner of the deploy state: each event is folded once, into the state every reader
/// shares (the screen borrows it per frame; headless and the record read it in `render`).
struct Fold<'s, R> {
    state: &'s Shared,
    started: Instant,
    /// The release's values, masked in the state as the screen and the record show them.
    scrub: Scrub,
    render: R,
}

impl<R: FnMut(&Event, &DeployState)> Fold<'_, R> {
    fn apply(&mut self, event: &Event) {
        let at = self.started.elapsed().as_secs_f64();
        let wall = crate::time::now_rfc3339();
        let kept = self.scrub.shown(event);
        self.state
            .send_modify(|state| state.apply(&kept, at, &wall));
        (self.render)(event, &self.state.borrow());
    }

    /// Folds every event of one phase until its last sender is gone.
    async fn all(&mut self, mut rx: mpsc::UnboundedReceiver<Event>) {
        while let Some(event) = rx.recv().await {
            self.apply(&event);
        }
    }

    fn conclude(&mut self) {
        let verdict = Event::Verdict(verdict::decide(&self.state.borrow()));
        self.apply(&verdict);
    }
}

/// The deploy state as its readers share it: the engine writes, each reader borrows (and a
/// `watch::Receiver` is told something changed, however many events that was).
pub type Shared = watch::Sender<DeployState>;

/// Runs the deploy to its verdict. `render` sees every event after it was applied.
///
/// After a failed upgrade or rollout that nothing rolled back, a screen that passed a
/// `rollback_answer` may still ask for the rollback `--rollback-on-failure` runs: the engine
/// waits for it after the verdict (until the answer, its sender dropped, or a cancel), runs
/// the same code path, and decides the verdict again.
pub async fn deploy(
    prepared: Prepared,
    cancel: CancellationToken,
    render: impl FnMut(&Event, &DeployState),
) -> Result<DeployState> {
    let state = Shared::new(DeployState::new(summary(&prepared)));
    deploy_into(prepared, cancel, &state, render).await?;
    Ok(state.send_replace(DeployState::default()))
}

/// [`deploy`] into `state`, which its readers share: it starts anew from the plan's summary.
pub async fn deploy_into(
    prepared: Prepared,
    cancel: CancellationToken,
    state: &Shared,
    render: impl FnMut(&Event, &DeployState),
) -> Result<()> {
    state.send_replace(DeployState::new(summary(&prepared)));
    let mut fold = Fold {
        state,
        started: Instant::now(),
        scrub: Scrub::of_helm_args(&prepared.plan.value_args_with_extra()),
        render,
    };
    let (tx, rx) = mpsc::unbounded_channel();
    // Taken before the steps run: the wait for it comes after the verdict, outside them.
    let rollback_answer = prepared.asks.take(Question::Rollback);
    let mut ctx = Ctx {
        deploy: prepared,
        emit: Emitter::new(tx),
        cancel,
    };
    let steps_task = tokio::spawn(async move {
        let unrolled = run_steps(&ctx).await;
        // The fold ends once every sender is gone: the steps' one goes here, and a rollback
        // after the verdict gets a channel of its own.
        ctx.emit = Emitter::new(mpsc::unbounded_channel().0);
        (ctx, unrolled)
    });
    fold.all(rx).await;
    let after = match steps_task.await {
        Ok(after) => Some(after),
        Err(e) => {
            // A panicking step must not read as success: record it as that step's failure.
            let running = Step::ALL.into_iter().chain([Step::Test]).find(|s| {
                fold.state
                    .borrow()
                    .steps
                    .get(s)
                    .is_some_and(|st| st.outcome.is_none())
            });
            if let Some(step) = running {
                fold.apply(&Event::StepEnded {
                    step,
                    outcome: StepOutcome::Failed {
                        reason: format!("internal error: {e}"),
                    },
                });
            }
            None
        }
    };
    fold.conclude();
    let (Some((mut ctx, Some(unrolled))), Some(answer)) = (after, rollback_answer) else {
        return Ok(());
    };
    if steps::rollback::offer(&state.borrow()).is_none() {
        return Ok(());
    }
    let asked = tokio::select! {
        a = answer => a.unwrap_or(false),
        () = ctx.cancel.cancelled() => false,
    };
    if !asked {
        return Ok(());
    }
    let (tx, rx) = mpsc::unbounded_channel();
    ctx.emit = Emitter::new(tx);
    let rollback_task = tokio::spawn(async move {
        steps::rollback::after_failure(&ctx, unrolled.written, "R at the screen").await;
    });
    fold.all(rx).await;
    let running = state.borrow().rollback.clone();
    if let (Err(e), Some(view)) = (rollback_task.await, running)
        && view.status == RollbackStatus::Running
    {
        let failed = RollbackView {
            status: RollbackStatus::Failed,
            reason: Some(format!("internal error: {e}")),
            ..view
        };
        fold.apply(&Event::Rollback(failed));
    }
    fold.conclude();
    Ok(())
}
