//! `helmdeck deploy … --target CONTEXT …` and `helmdeck demo --fleet N`: one release deployed
//! to many clusters. Every target is prepared (its plan, its values parsed by helm offline, its
//! kube client, its record and report files) before the first cluster request, so a mistake in
//! any one is the usage exit 2 naming it and nothing ran; then the engine's fleet driver starts
//! them (`--parallel`, `--canary`, `--stop-on-failure`), each the same engine as a single
//! deploy with its own helm process, watches, report and record. The fleet exits with the
//! worst verdict (1 over 3 over 4 over 0).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use color_eyre::eyre::{Result, WrapErr, eyre};
use tokio_util::sync::CancellationToken;

use helmdeck::cli::{DemoArgs, DeployArgs, RecordArgs};
use helmdeck::config::DeployPlan;
use helmdeck::config::fleet::file_label;
use helmdeck::engine::ask::{Answers, Asks, Question};
use helmdeck::engine::event::Event;
use helmdeck::engine::fleet::{self, Lane, Member, MemberScreen, Summary, Target, drive};
use helmdeck::engine::run;
use helmdeck::engine::scrub::Scrub;
use helmdeck::engine::state::{DeployState, PlanSummary};
use helmdeck::headless::Headless;
use helmdeck::record::writer::Recorder;
use helmdeck::{exit, junit, text};

use crate::{Outputs, command_line, finish, one_line, recorder, say, start, tap};

/// What every target of the fleet shares: how it is shown, where its files go, how it runs.
pub(crate) struct Settings {
    /// The fleet screen (else plain lines, each prefixed with the target's label).
    pub tui: bool,
    pub record: RecordArgs,
    /// The fleet's summary; each target's report goes beside it ([`beside`]).
    pub report: Option<PathBuf>,
    /// One file, one test suite per target.
    pub junit: Option<PathBuf>,
    pub options: drive::Options,
    /// `fleet · RELEASE`, or the demo's.
    pub title: String,
    pub release: String,
}

/// One target ready to start: its deploy, its files, its record.
struct Ready {
    prepared: run::Prepared,
    outputs: Outputs,
    recorder: Recorder,
    plan: PlanSummary,
}

/// `helmdeck deploy` with targets: each target prepared (exit 2 naming it when it cannot be),
/// then the fleet run.
pub(crate) async fn deploy(args: &DeployArgs, plan: DeployPlan) -> Result<i32> {
    let targets = plan.targets.clone();
    let release = text::plain(&plan.release);
    let prepared = match prepare_targets(&plan, &targets).await {
        Ok(p) => p,
        Err(e) => return Ok(refuse("helmdeck", &e, args.report.as_deref(), &release)),
    };
    let options = options(args, &targets);
    let settings = Settings {
        tui: crate::wants_tui(args.headless),
        record: args.record.clone(),
        report: args.report.clone(),
        junit: args.junit.clone(),
        options,
        title: format!("fleet · {release}"),
        release,
    };
    run(targets.into_iter().zip(prepared).collect(), settings).await
}

/// A fleet refused before it started (a target that cannot run, its record that cannot be
/// created): one line, and the fleet's report says so with the code (2 before any cluster
/// request), so a pipeline reading it never finds an older verdict.
fn refuse(who: &str, e: &color_eyre::Report, report: Option<&Path>, release: &str) -> i32 {
    let line = one_line(e);
    say(&format!("{who}: {line}"));
    let code = exit::for_error(exit::touched());
    if let Some(path) = report
        && helmdeck::validate::report_path(path).is_ok()
    {
        let refused = serde_json::json!({
            "schema": FLEET_SCHEMA,
            "release": release,
            "status": "refused",
            "exitCode": code,
            "reason": line,
            "summary": "no targets ran",
            "targets": [],
        });
        // The line already said it; a report that cannot be written adds nothing.
        let _ = helmdeck::engine::report::write(path, &refused);
    }
    code
}

/// The fleet report's `schema` (docs/formats.md).
const FLEET_SCHEMA: &str = "helmdeck.fleet/v1";

/// `--parallel`, `--canary` (a label or a context) and `--stop-on-failure` as the driver takes
/// them; the plan checked the canary names a target.
fn options(args: &helmdeck::cli::DeployFlags, targets: &[Target]) -> drive::Options {
    let canary = args.canary.as_ref().and_then(|c| {
        targets
            .iter()
            .position(|t| &t.label == c)
            .or_else(|| targets.iter().position(|t| &t.context == c))
    });
    drive::Options {
        parallel: args.parallel.map_or(targets.len().max(1), usize::from),
        canary,
        stop_on_failure: args.stop_on_failure,
    }
}

/// Each target's deploy, prepared before any cluster request: its context is in the kubeconfig,
/// its values parse, its namespace is valid. The first that cannot be is named.
async fn prepare_targets(plan: &DeployPlan, targets: &[Target]) -> Result<Vec<run::Prepared>> {
    let contexts = helmdeck::cluster::client::context_names()?;
    for t in targets {
        if !contexts.iter().any(|c| c == &t.context) {
            return Err(eyre!(
                "target {}: context {} is not in the kubeconfig",
                text::plain(&t.label),
                text::plain(&t.context)
            ));
        }
    }
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        let prepared = crate::prepare(plan.for_target(t))
            .await
            .wrap_err_with(|| format!("target {}", text::plain(&t.label)))?;
        out.push(prepared);
    }
    Ok(out)
}

/// `helmdeck demo --fleet N`: N simulated clusters, one scenario each, deployed at once.
pub(crate) async fn demo(args: &DemoArgs, n: usize) -> Result<i32> {
    let scenarios = helmdeck::demo::fleet_scenarios(args, n);
    let labels: Vec<String> = (1..=n).map(|i| format!("site-{i}")).collect();
    let release = text::plain(&args.release);
    if let Some(canary) = &args.flags.canary
        && !labels.contains(canary)
    {
        let e = eyre!(
            "--canary {}: the rehearsal's targets are site-1 to site-{n}",
            text::plain(canary)
        );
        return Ok(refuse(
            "helmdeck demo",
            &e,
            args.flags.report.as_deref(),
            &release,
        ));
    }
    // Each simulated cluster's deploy is a single one: the fleet's flags are the fleet's.
    let mut one = args.clone();
    one.flags.parallel = None;
    one.flags.canary = None;
    one.flags.stop_on_failure = false;
    let mut targets = Vec::with_capacity(n);
    let mut prepared = Vec::with_capacity(n);
    let mut kept = Vec::with_capacity(n);
    for (i, scenario) in scenarios.iter().enumerate() {
        let demo = match helmdeck::demo::prepare_scenario(&one, scenario).await {
            Ok(d) => d,
            Err(e) => {
                let e = e.wrap_err(format!("site-{} ({})", i + 1, text::plain(scenario)));
                return Ok(refuse(
                    "helmdeck demo",
                    &e,
                    args.flags.report.as_deref(),
                    &release,
                ));
            }
        };
        let label = labels[i].clone();
        targets.push(Target {
            label: label.clone(),
            context: format!("sim-{} ({})", i + 1, text::plain(scenario)),
            namespace: None,
            values: vec![],
            set: vec![],
        });
        let (p, k) = demo.into_parts();
        prepared.push(p);
        kept.push(k);
    }
    let flags = &args.flags;
    let settings = Settings {
        tui: crate::wants_tui(flags.headless),
        record: flags.record.clone(),
        report: flags.report.clone(),
        junit: flags.junit.clone(),
        options: options(flags, &targets),
        title: format!("demo --fleet {n}"),
        release,
    };
    let code = run(targets.into_iter().zip(prepared).collect(), settings).await;
    drop(kept);
    code
}

/// Runs the fleet to its end: every target's files, the driver, the screen or the lines, the
/// fleet's report and JUnit file. Returns the fleet's exit code.
async fn run(targets: Vec<(Target, run::Prepared)>, settings: Settings) -> Result<i32> {
    let mut members = Vec::with_capacity(targets.len());
    let mut slots = Vec::with_capacity(targets.len());
    for (target, mut prepared) in targets {
        let per_target = settings.report.as_deref().map(|r| beside(r, &target.label));
        prepared.plan.report = per_target.clone();
        let ready = match ready(prepared, per_target, &settings.record, &target) {
            Ok(r) => r,
            Err(e) => {
                return Ok(refuse(
                    "helmdeck",
                    &e,
                    settings.report.as_deref(),
                    &settings.release,
                ));
            }
        };
        members.push(Arc::new(Member::new(target, ready.plan.clone())));
        slots.push(Mutex::new(Some(ready)));
    }
    write_fleet_files(&members, &settings)?;
    for slot in &slots {
        let guard = slot.lock().expect("a slot's lock is never poisoned");
        if let Some(r) = guard.as_ref() {
            start(&r.outputs, &r.plan)?;
        }
    }
    let slots = Arc::new(slots);
    let cancel = CancellationToken::new();
    let tui = settings.tui;
    let engines = Engines::default();
    let starter = {
        let (slots, members, engines) = (slots.clone(), members.clone(), engines.clone());
        move |member: Arc<Member>| {
            let index = members
                .iter()
                .position(|m| Arc::ptr_eq(m, &member))
                .unwrap_or(usize::MAX);
            let ready = slots
                .get(index)
                .and_then(|s| s.lock().ok().and_then(|mut g| g.take()));
            run_target(member, ready, tui, engines.clone())
        }
    };
    let (options, driven) = (settings.options, members.clone());
    let drive_cancel = cancel.clone();
    let driving = async move { drive::drive(&driven, options, drive_cancel, starter).await };
    // Each member's lane keeps its code: the fleet's end reads the lanes, not these.
    let _codes = if tui {
        helmdeck::ui::run_fleet(
            members.clone(),
            cancel.clone(),
            Some(settings.title.clone()),
            driving,
        )
        .await?
    } else {
        on_signals(cancel.clone())?;
        driving.await
    };
    engines_ended(&engines).await;
    ended_not_started(&members, &settings)?;
    conclude(&members, &settings, tui)
}

/// A target's record, report and JUnit outputs, created before the first cluster request (a
/// `--record` file that cannot be created is the usage exit 2, naming the target).
fn ready(
    prepared: run::Prepared,
    report: Option<PathBuf>,
    record: &RecordArgs,
    target: &Target,
) -> Result<Ready> {
    let plan = run::summary(&prepared);
    let value_args = prepared.plan.value_args_with_extra();
    let context = prepared
        .plan
        .context
        .clone()
        .unwrap_or_else(|| prepared.cluster.server.clone());
    let mut header = helmdeck::record::Header::new(
        command_line(),
        Some(context),
        Some(format!("fleet · {}", text::plain(&target.label))),
        plan.clone(),
    );
    header.kube_context = prepared.cluster.context.clone();
    let record = RecordArgs {
        record: record.record.as_deref().map(|r| beside(r, &target.label)),
        ..record.clone()
    };
    let recorder = recorder(&record, &header, Scrub::of_helm_args(&value_args))
        .wrap_err_with(|| format!("target {}", text::plain(&target.label)))?;
    let mut outputs = Outputs {
        report,
        // The fleet's JUnit file holds every target's suite: written by the fleet.
        junit: None,
        ..Outputs::default()
    };
    outputs.mask(Scrub::of_helm_args(&value_args));
    Ok(Ready {
        prepared,
        outputs,
        recorder,
        plan,
    })
}

/// One target's run: the engine folds into the member's state; headless, each line goes out
/// prefixed with the target's label. Returns its exit code (1 when it never got ready).
async fn run_target(member: Arc<Member>, ready: Option<Ready>, tui: bool, engines: Engines) -> i32 {
    let Some(Ready {
        mut prepared,
        outputs,
        recorder,
        plan,
    }) = ready
    else {
        return exit::FAILED;
    };
    let scrub = outputs.scrub.clone();
    let mut answers = Answers::default();
    if tui {
        // At the fleet screen, as at a single deploy's: `u` clears a stuck lock (never with
        // --recover-lock, which needs no answer) and `R` rolls back a failed upgrade. The
        // plan is not asked for: a target nobody opened would wait for its `y` forever.
        let questions = [
            (!prepared.plan.recover_lock).then_some(Question::Unlock),
            Some(Question::Rollback),
        ];
        let (asks, given) = Asks::ask(&questions.into_iter().flatten().collect::<Vec<_>>());
        prepared.asks = asks;
        answers = given;
    }
    let _ = member.screen.set(MemberScreen {
        client: prepared.cluster.client.clone(),
        namespace: prepared.namespace().to_string(),
        context: prepared
            .plan
            .context
            .clone()
            .unwrap_or_else(|| prepared.cluster.server.clone()),
        scrub: scrub.clone(),
        answers: Mutex::new(answers),
    });
    let mut record = tap(recorder, outputs.clone());
    let mut printer = (!tui).then(|| Headless::masking(scrub));
    let prefix = format!("[{}]", text::plain(&member.target.label));
    let mut verdicts = member.state.subscribe();
    let (ended, code) = tokio::sync::oneshot::channel();
    let engine = {
        let member = member.clone();
        tokio::spawn(async move {
            let ran = run::deploy_into(
                prepared,
                member.cancel.clone(),
                &member.state,
                move |event: &Event, state: &DeployState| {
                    if let Some(printer) = printer.as_mut() {
                        print_prefixed(&prefix, &printer.masked_lines(event, state));
                    }
                    record(event, state);
                },
            )
            .await;
            let state = member.state.borrow();
            let finished = match ran {
                Ok(()) => {
                    if !tui {
                        helmdeck::headless::on_github_actions(&outputs.kept(&state));
                    }
                    finish(Ok(&state), &outputs, &plan)
                }
                Err(e) => finish(Err(&e), &outputs, &plan),
            };
            let _ = ended.send(finished);
        })
    };
    engines
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(engine);
    // The fleet goes on at the target's verdict: a failed target whose screen still offers `R`
    // holds no slot and delays no canary or --stop-on-failure decision (its engine runs on
    // until the answer, and the fleet waits for it before its own files are written).
    tokio::select! {
        code = code => code.unwrap_or(exit::FAILED),
        judged = verdicts.wait_for(|s| s.verdict.is_some()) => match judged {
            Ok(state) => state.verdict.as_ref().map_or(exit::FAILED, |v| v.code()),
            Err(_) => exit::FAILED,
        },
    }
}

/// Each target's engine, awaited before the fleet writes its last files: one may still wait
/// for its `R` after its verdict, or write its report.
type Engines = Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>;

/// Waits for every target's engine to end (its report written).
async fn engines_ended(engines: &Engines) {
    let all: Vec<_> = std::mem::take(
        &mut *engines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for engine in all {
        let _ = engine.await;
    }
}

/// Lines of one target, each prefixed with its label, written together (another target's lines
/// never land inside them). A closed stdout must not end the fleet.
fn print_prefixed(prefix: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{prefix} {line}");
    }
    let _ = out.flush();
}

/// Headless: SIGINT, SIGTERM and SIGHUP cancel the fleet: no new target starts, and each
/// running one's helm gets its SIGTERM and is waited for.
fn on_signals(cancel: CancellationToken) -> Result<()> {
    let mut signals = helmdeck::signals::Signals::install_with_hangup()?;
    tokio::spawn(async move {
        signals.recv().await;
        say("helmdeck: cancelling every target (each helm gets SIGTERM and is waited for)");
        cancel.cancel();
    });
    Ok(())
}

/// Where a target's file goes beside the fleet's: `out/fleet.json` → `out/fleet.LABEL.json`.
pub(crate) fn beside(path: &Path, label: &str) -> PathBuf {
    let label = file_label(label);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{label}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{label}"),
    };
    path.with_file_name(name)
}

/// A target that never started still gets its report: not started, and why (exit 1).
fn ended_not_started(members: &[Arc<Member>], settings: &Settings) -> Result<()> {
    let Some(report) = &settings.report else {
        return Ok(());
    };
    for m in members {
        if let Lane::NotStarted { reason } = &*m.lane.borrow() {
            let path = beside(report, &m.target.label);
            let state = m.state.borrow();
            let ended = helmdeck::engine::report::ended(
                &state,
                exit::FAILED,
                &format!("not started: {reason}"),
            );
            helmdeck::engine::report::write(&path, &ended)
                .wrap_err_with(|| format!("writing the report {}", path.display()))?;
        }
    }
    Ok(())
}

/// The fleet's end: each target's verdict (headless, already said in its lines; after the
/// screen, left in the scrollback), the fleet's line, its report and JUnit file. Returns the
/// worst code; a file that cannot be written fails closed.
fn conclude(members: &[Arc<Member>], settings: &Settings, tui: bool) -> Result<i32> {
    let lanes: Vec<Lane> = members.iter().map(|m| m.lane.borrow().clone()).collect();
    let code = fleet::worst(&lanes);
    let mut out = std::io::stdout().lock();
    for (m, lane) in members.iter().zip(&lanes) {
        let label = text::plain(&m.target.label);
        if tui && let Some(v) = &m.state.borrow().verdict {
            let scrub = m.screen.get().map(|s| s.scrub.clone()).unwrap_or_default();
            let state = m.state.borrow();
            for line in Headless::masking(scrub).masked_lines(&Event::Verdict(v.clone()), &state) {
                let _ = writeln!(out, "[{label}] {line}");
            }
        }
        let _ = writeln!(out, "{}", target_line(&label, &m.target.context, lane));
    }
    let _ = writeln!(
        out,
        "{}: {} (exit {code})",
        settings.title,
        Summary::of(&lanes).line()
    );
    drop(out);
    match write_fleet_files(members, settings) {
        Ok(()) => Ok(code),
        Err(e) => {
            say(&format!("helmdeck: {} (fail closed: exit 1)", one_line(&e)));
            Ok(exit::FAILED)
        }
    }
}

/// `[site-1] context kch: exit 0`, or `not started: why`.
fn target_line(label: &str, context: &str, lane: &Lane) -> String {
    let how = match lane {
        Lane::Ended { code } => format!("exit {code}"),
        Lane::NotStarted { reason } => format!("not started: {reason}"),
        Lane::Waiting | Lane::Running => "did not end (fail closed)".into(),
    };
    format!("[{label}] {}: {how}", text::plain(context))
}

/// The fleet's report (its summary, each target's lane and report file) and its JUnit file
/// (one suite per target), as they stand: `running` until every target ended.
fn write_fleet_files(members: &[Arc<Member>], settings: &Settings) -> Result<()> {
    if let Some(path) = &settings.junit {
        let states: Vec<(String, DeployState)> = members
            .iter()
            .map(|m| {
                let scrub = m.screen.get().map(|s| s.scrub.clone()).unwrap_or_default();
                let state = m.state.borrow();
                (m.target.label.clone(), scrub.state(&state).into_owned())
            })
            .collect();
        let refs: Vec<(&str, &DeployState)> = states.iter().map(|(l, s)| (l.as_str(), s)).collect();
        junit::write(path, &junit::build_fleet(&refs))
            .wrap_err_with(|| format!("--junit {}: writing it", path.display()))?;
    }
    if let Some(path) = &settings.report {
        let report = fleet_report(members, settings, path);
        helmdeck::engine::report::write(path, &report)
            .wrap_err_with(|| format!("--report {}: writing it", path.display()))?;
    }
    Ok(())
}

/// The fleet's summary report (schema in docs/formats.md): `running` until every target has a
/// code, then the fleet's exit code and each target's.
fn fleet_report(members: &[Arc<Member>], settings: &Settings, path: &Path) -> serde_json::Value {
    let lanes: Vec<Lane> = members.iter().map(|m| m.lane.borrow().clone()).collect();
    let done = lanes.iter().all(|l| l.code().is_some());
    let summary = Summary::of(&lanes);
    let targets: Vec<serde_json::Value> = members
        .iter()
        .zip(&lanes)
        .map(|(m, lane)| {
            let state = m.state.borrow();
            let (status, reason) = match lane {
                Lane::Waiting => ("waiting", None),
                Lane::Running => ("running", None),
                Lane::Ended { .. } => ("ended", None),
                Lane::NotStarted { reason } => ("not-started", Some(reason.clone())),
            };
            let report = beside(path, &m.target.label);
            serde_json::json!({
                "label": text::plain(&m.target.label),
                "context": text::plain(&m.target.context),
                "namespace": state.plan.namespace,
                "status": status,
                "reason": reason,
                "exitCode": lane.code(),
                "outcome": state.verdict.as_ref().map(|v| v.outcome.title()),
                "report": report.file_name().map(|n| n.to_string_lossy().into_owned()),
            })
        })
        .collect();
    serde_json::json!({
        "schema": FLEET_SCHEMA,
        "release": settings.release,
        "status": if done { "done" } else { "running" },
        "exitCode": done.then(|| fleet::worst(&lanes)),
        "summary": summary.line(),
        "counts": {
            "landed": summary.landed,
            "liveInitIncomplete": summary.init_incomplete,
            "changesPending": summary.changes_pending,
            "failed": summary.failed,
            "notStarted": summary.not_started,
            "running": summary.running,
        },
        "targets": targets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_targets_file_goes_beside_the_fleets_with_its_label_made_a_file_name() {
        assert_eq!(
            beside(Path::new("out/fleet.json"), "site-1"),
            Path::new("out/fleet.site-1.json")
        );
        assert_eq!(
            beside(
                Path::new("fleet.json"),
                "arn:aws:eks:eu-west-2:123456789012:cluster/kch"
            ),
            Path::new("fleet.arn-aws-eks-eu-west-2-123456789012-cluster-kch.json")
        );
        assert_eq!(
            beside(Path::new("/tmp/run"), "../x"),
            Path::new("/tmp/run...-x")
        );
    }

    #[test]
    fn a_target_line_says_its_code_or_why_it_never_started() {
        assert_eq!(
            target_line("a", "ctx", &Lane::Ended { code: 3 }),
            "[a] ctx: exit 3"
        );
        let never = Lane::NotStarted {
            reason: "the canary a did not land (exit 1)".into(),
        };
        assert_eq!(
            target_line("b", "ctx", &never),
            "[b] ctx: not started: the canary a did not land (exit 1)"
        );
        assert!(target_line("c", "x", &Lane::Running).contains("fail closed"));
    }
}
