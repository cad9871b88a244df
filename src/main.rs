use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches};
use color_eyre::eyre::{Report, Result, WrapErr, eyre};
use tokio_util::sync::CancellationToken;

use helmdeck::cli::{
    Cli, Command, DemoArgs, DeployArgs, InspectArgs, RecordArgs, ReplayArgs, WatchArgs,
};
use helmdeck::config::{DeployPlan, Watching};
use helmdeck::engine::event::Event;
use helmdeck::engine::scrub::Scrub;
use helmdeck::engine::state::{DeployState, PlanSummary};
use helmdeck::engine::{report, run};
use helmdeck::helm::locate;
use helmdeck::record::writer::Recorder;
use helmdeck::{cluster, exit, headless, junit, sim, text, validate};

mod fleet;

fn main() {
    // A panic anywhere (a task's included, once it reaches here) is a failure, never a usage
    // error and never Rust's 101.
    let run = std::panic::catch_unwind(real_main);
    if let Ok(Err(e)) = &run {
        say(&format!("helmdeck: {}", one_line(e)));
    }
    tell_applied();
    std::process::exit(exit::of(run, exit::touched()));
}

/// A test hook: with `HELMDECK_TEST_APPLIED=FILE`, how many events this run folded into a
/// deploy state is written to FILE at exit (the end-to-end tests check it is one per event).
fn tell_applied() {
    if let Some(path) = std::env::var_os("HELMDECK_TEST_APPLIED") {
        let _ = std::fs::write(path, helmdeck::engine::state::applied().to_string());
    }
}

/// One line on stderr. After a hang-up stderr may be gone; that must not end the run
/// (`eprintln!` would panic).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// An error as one line: each layer's first line, plain, credentials masked.
fn one_line(e: &Report) -> String {
    text::one_line(e.chain())
}

/// `helmdeck --version`: the version and the commit built from (build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("HELMDECK_BUILD"), ")");

/// The command line as clap knows it, with the build's version.
fn command() -> clap::Command {
    Cli::command().version(VERSION)
}

fn real_main() -> Result<i32> {
    // A pipe or a CI log gets one plain line per panic, as it does per error; a terminal
    // color-eyre's report. Neither aborts when stderr is gone (a hang-up).
    helmdeck::ui::install_panic_report(std::io::stdout().is_terminal())?;
    let cli = match command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        // --help and --version print in full; a usage error says what is wrong in one line.
        Err(e) if e.use_stderr() => {
            let rendered = e.render().to_string();
            let said: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .collect();
            let said = said.join(" ");
            say(&format!(
                "helmdeck: {} (see --help)",
                text::plain(said.trim_start_matches("error: "))
            ));
            return Ok(exit::USAGE);
        }
        Err(e) => {
            let _ = e.print();
            return Ok(e.exit_code());
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Sim { list: true, .. } => {
            let mut listing = String::new();
            for (name, text) in sim::scenario::EMBEDDED {
                let description = sim::Scenario::parse(text, name)
                    .map(|s| s.description)
                    .unwrap_or_else(|e| format!("(invalid: {e})"));
                listing.push_str(&format!("{name:<20} {description}\n"));
            }
            to_stdout(listing.as_bytes(), "sim --list")
        }
        Command::Sim {
            scenario,
            listen,
            kubeconfig_out,
            context,
            ..
        } => {
            let served = runtime.block_on(sim::run::run(sim::run::SimArgs {
                scenario,
                listen,
                kubeconfig_out,
                context,
            }));
            if let Err(e) = served {
                // A scenario author needs the parser's whole message (the field, the snippet);
                // scenario files hold no secrets.
                say(&format!("helmdeck: {e:#}"));
                return Ok(exit::USAGE);
            }
            Ok(0)
        }
        Command::Deploy(args) => runtime.block_on(deploy(*args)),
        Command::Inspect(args) => runtime.block_on(inspect(args)),
        Command::Demo(args) => runtime.block_on(demo(*args)),
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics when its writer fails.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command(), "helmdeck", &mut script);
            to_stdout(&script, "completions")
        }
        Command::Man { out_dir } => man(out_dir.as_deref()),
        Command::Watch(args) => runtime.block_on(watch(args)),
        Command::Replay(args) => runtime.block_on(replay(args)),
    }
}

/// Where a run writes its files: the JSON report, the JUnit XML.
#[derive(Default, Clone)]
struct Outputs {
    report: Option<PathBuf>,
    junit: Option<PathBuf>,
    /// Masks release values in the report, the JUnit file and the job summary.
    scrub: Scrub,
}

impl Outputs {
    /// Values never reach the files a run leaves behind: the record's masks apply to them.
    fn mask(&mut self, scrub: Scrub) {
        self.scrub = scrub;
    }

    /// `live` as the record keeps it, masked as it is written (a text format such as the
    /// JUnit XML cannot be masked after the fact: it escapes).
    fn kept<'a>(&self, live: &'a DeployState) -> std::borrow::Cow<'a, DeployState> {
        self.scrub.state(live)
    }
}

/// `helmdeck man`: helmdeck.1 on stdout, or a page per command in `dir`.
fn man(dir: Option<&Path>) -> Result<i32> {
    match dir {
        Some(dir) => {
            clap_mangen::generate_to(command(), dir)
                .wrap_err_with(|| format!("man --out-dir {}: writing the pages", dir.display()))?;
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command()).render(&mut page)?;
            return to_stdout(&page, "man");
        }
    }
    Ok(0)
}

/// Writes a command's whole output. A closed stdout (piped into `head`) is the reader's choice:
/// a quiet exit 0; any other write failure is an error.
fn to_stdout(bytes: &[u8], what: &str) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(e).wrap_err_with(|| format!("{what}: writing to stdout")),
    }
}

/// `--junit` is held to `--report`'s rule: a file in a writable directory, checked before the
/// first cluster request.
fn check_junit(path: Option<&Path>) -> Result<()> {
    if let Some(path) = path {
        validate::report_path(path)
            .map_err(|e| eyre!("{}", e.to_string().replacen("--report", "--junit", 1)))?;
    }
    Ok(())
}

/// The TUI takes over when stdout is a terminal and `--headless` is not given; the one place
/// every command decides it.
fn wants_tui(headless: bool) -> bool {
    !headless && std::io::stdout().is_terminal()
}

/// Usage problems become exit 2 with a one-line message; the deploy itself exits 0, 1 or 3.
async fn deploy(args: DeployArgs) -> Result<i32> {
    let planned = check_junit(args.junit.as_deref()).and_then(|()| plan(&args));
    if let Ok(plan) = &planned
        && !plan.targets.is_empty()
    {
        return fleet::deploy(&args, plan.clone()).await;
    }
    let checked = match planned {
        Ok(plan) => prepare(plan).await,
        Err(e) => Err(e),
    };
    let prepared = match checked {
        Ok(p) => p,
        Err(e) => {
            let plan = PlanSummary {
                release: text::plain(&args.release),
                namespace: text::plain(args.namespace.as_deref().unwrap_or("")),
                chart: text::plain(&args.chart),
                context: args.kube_context.as_deref().map(text::plain),
                only: args.only,
                init_job: args.init_job.as_deref().map(text::plain),
                dry_run: args.dry_run,
                ..PlanSummary::default()
            };
            return Ok(refuse("helmdeck", &e, args.report.as_deref(), &plan));
        }
    };
    let plan = run::summary(&prepared);
    let mut outputs = Outputs {
        report: prepared.plan.report.clone(),
        junit: args.junit.clone(),
        ..Outputs::default()
    };
    let value_args = prepared.plan.value_args_with_extra();
    let context = prepared
        .plan
        .context
        .clone()
        .unwrap_or_else(|| prepared.cluster.server.clone());
    let mut header =
        helmdeck::record::Header::new(command_line(), Some(context), None, plan.clone());
    header.kube_context = prepared.cluster.context.clone();
    let recorder = match recorder(&args.record, &header, Scrub::of_helm_args(&value_args)) {
        Ok(r) => r,
        Err(e) => return Ok(refuse("helmdeck", &e, args.report.as_deref(), &plan)),
    };
    outputs.mask(Scrub::of_helm_args(&value_args));
    start(&outputs, &plan)?;
    let tap = tap(recorder, outputs.clone());
    let state = if args.record.events.is_some() {
        headless::run(prepared, CancellationToken::new(), tap, false).await
    } else if wants_tui(args.headless) {
        // The TUI handles SIGINT/SIGTERM/SIGHUP itself (Ctrl+C is a key in raw mode).
        helmdeck::ui::run_deploy(prepared, CancellationToken::new(), None, tap).await
    } else {
        let state = headless::run(prepared, CancellationToken::new(), tap, true).await;
        if let Ok(state) = &state {
            headless::on_github_actions(&outputs.kept(state));
        }
        state
    };
    Ok(finish(state.as_ref(), &outputs, &plan))
}

/// `helmdeck watch`: a deploy run by someone else, judged from the cluster alone. With
/// `--follow`, one pass per revision; the exit code is the last verdict's.
async fn watch(args: WatchArgs) -> Result<i32> {
    let refusal_plan = PlanSummary {
        release: text::plain(&args.release),
        namespace: text::plain(args.namespace.as_deref().unwrap_or("")),
        chart: helmdeck::cli::NO_CHART.into(),
        context: args.kube_context.as_deref().map(text::plain),
        init_job: args.init_job.as_deref().map(text::plain),
        watch: true,
        ..PlanSummary::default()
    };
    let tui = wants_tui(args.headless);
    let (plan, cluster) = match prepare_watch(&args).await {
        Ok(p) => p,
        Err(e) => {
            return Ok(refuse(
                "helmdeck watch",
                &e,
                args.report.as_deref(),
                &refusal_plan,
            ));
        }
    };
    let outputs = Outputs {
        report: args.report.clone(),
        junit: None,
        ..Outputs::default()
    };
    let cancel = CancellationToken::new();
    let pass = |after: Option<i64>| {
        let mut plan = plan.clone();
        plan.watch = Some(Watching { after });
        run::Prepared {
            plan,
            // Never run: a watch reads the records itself.
            helm: PathBuf::new(),
            helm_version: String::new(),
            cluster: cluster.clone(),
            helm_env: vec![],
            asks: Default::default(),
            earlier_runs: None,
            own_locks: Default::default(),
        }
    };
    let summary = run::summary(&pass(None));
    start(&outputs, &summary)?;
    if tui && args.follow {
        let title = format!("watch --follow · {}", summary.release);
        let judged = |state: &DeployState| finish(Ok(state), &outputs, &summary);
        match helmdeck::ui::run_follow(cancel.clone(), title, pass, judged).await {
            Ok(Some(code)) => return Ok(code),
            // No usable terminal (said on stderr): the same follow, in plain lines.
            Ok(None) => {}
            Err(e) => return Ok(finish(Err(&e), &outputs, &summary)),
        }
    }
    let mut after: Option<i64> = None;
    // The last verdict's code and its words, for the line that says it stands.
    let mut last: Option<(i32, String)> = None;
    loop {
        let prepared = pass(after);
        let state = if tui && !args.follow {
            let title = format!("watch · {}", summary.release);
            helmdeck::ui::run_deploy(prepared, cancel.clone(), Some(title), |_, _| {}).await
        } else {
            let state = headless::run(prepared, cancel.clone(), |_, _| {}, true).await;
            if let Ok(state) = &state {
                headless::on_github_actions(state);
            }
            state
        };
        let revision = state.as_ref().ok().and_then(|s| s.revision);
        if let Some((code, words)) = &last
            && revision.is_none()
            && cancel.is_cancelled()
        {
            // Left while waiting for the next revision: the last verdict stands, and the last
            // line says so (a closed stdout must not change the exit).
            let _ = writeln!(
                std::io::stdout(),
                "stopped following {}: the last verdict stands: {words}",
                summary.release
            );
            return Ok(*code);
        }
        let words = last_verdict_words(&state, revision);
        let code = finish(state.as_ref(), &outputs, &summary);
        if !args.follow || cancel.is_cancelled() {
            return Ok(code);
        }
        last = Some((code, words(code)));
        after = revision.or(after);
        helmdeck::memory::give_back_freed();
    }
}

/// `LANDED (exit 0), revision 3: …`: a followed pass's verdict, once `finish` gave its code.
fn last_verdict_words(
    state: &Result<DeployState>,
    revision: Option<i64>,
) -> impl FnOnce(i32) -> String + use<> {
    let verdict = state.as_ref().ok().and_then(|s| s.verdict.clone());
    move |code| {
        let at = revision.map_or(String::new(), |r| format!(", revision {r}"));
        match verdict {
            Some(v) => format!("{} (exit {code}){at}: {}", v.outcome.title(), v.reason),
            None => format!("FAILED (exit {code}){at}"),
        }
    }
}

/// The watch's plan (a deploy plan with no chart and no helm) and the cluster, checked before
/// the first cluster request.
async fn prepare_watch(
    args: &WatchArgs,
) -> Result<(DeployPlan, helmdeck::cluster::client::Cluster)> {
    if let Some(job) = &args.init_job {
        validate::job_name(job)?;
    }
    let mut plan = DeployPlan::from_args(&args.as_deploy())?;
    plan.init_job = args.init_job.clone();
    let cluster = cluster::client::connect(plan.context.as_deref()).await?;
    validate::namespace(plan.namespace_or(&cluster.default_namespace))?;
    Ok((plan, cluster))
}

async fn demo(args: DemoArgs) -> Result<i32> {
    let mut outputs = Outputs {
        report: args.flags.report.clone(),
        junit: args.flags.junit.clone(),
        ..Outputs::default()
    };
    let report = outputs.report.clone();
    let plan = PlanSummary {
        release: text::plain(&args.release),
        namespace: text::plain(
            args.flags
                .namespace
                .as_deref()
                .unwrap_or(helmdeck::demo::NAMESPACE),
        ),
        chart: match &args.chart {
            Some(chart) => text::plain(chart),
            None => "(the embedded demo chart)".into(),
        },
        ..PlanSummary::default()
    };
    if let Some(path) = &report
        && let Err(e) = validate::report_path(path)
    {
        return Ok(refuse("helmdeck demo", &eyre!(e), None, &plan));
    }
    if let Err(e) = check_junit(outputs.junit.as_deref()) {
        return Ok(refuse("helmdeck demo", &e, report.as_deref(), &plan));
    }
    if let Some(n) = args.fleet {
        return fleet::demo(&args, usize::from(n)).await;
    }
    let demo = match helmdeck::demo::prepare(&args).await {
        Ok(d) => d,
        Err(e) => return Ok(refuse("helmdeck demo", &e, report.as_deref(), &plan)),
    };
    let plan = run::summary(&demo.prepared);
    let title = format!("demo · {}", demo.scenario_name);
    let mut header = helmdeck::record::Header::new(
        command_line(),
        Some(demo.prepared.cluster.server.clone()),
        Some(title.clone()),
        plan.clone(),
    );
    header.kube_context = demo.prepared.cluster.context.clone();
    let value_args = demo.prepared.plan.value_args_with_extra();
    let recorder = match recorder(
        &args.flags.record,
        &header,
        Scrub::of_helm_args(&value_args),
    ) {
        Ok(r) => r,
        Err(e) => return Ok(refuse("helmdeck demo", &e, report.as_deref(), &plan)),
    };
    outputs.mask(Scrub::of_helm_args(&value_args));
    start(&outputs, &plan)?;
    let tap = tap(recorder, outputs.clone());
    let state = if args.flags.record.events.is_some() {
        headless::run(demo.prepared, CancellationToken::new(), tap, false).await
    } else if wants_tui(args.flags.headless) {
        helmdeck::ui::run_deploy(demo.prepared, CancellationToken::new(), Some(title), tap).await
    } else {
        // A closed stdout (a pipe, a terminal gone) must not end the demo: `println!` panics.
        let _ = writeln!(
            std::io::stdout().lock(),
            "helmdeck demo · scenario {}: {}",
            demo.scenario_name,
            demo.description
        );
        let state = headless::run(demo.prepared, CancellationToken::new(), tap, true).await;
        if let Ok(state) = &state {
            headless::on_github_actions(&outputs.kept(state));
        }
        state
    };
    Ok(finish(state.as_ref(), &outputs, &plan))
}

/// The command line as run, redacted as every printed command is.
fn command_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    helmdeck::advice::join(&helmdeck::helm::process::redact_args(&args))
}

/// The record of this run: a file (`--record`, else one in the state directory, unless
/// `--no-record`) and standard output (`--events -`), each with the header written. A
/// `--record` file that cannot be created is a usage error; the default directory failing is
/// only said (the deploy matters more than its record).
fn recorder(
    opts: &RecordArgs,
    header: &helmdeck::record::Header,
    scrub: Scrub,
) -> Result<Recorder> {
    use helmdeck::record::writer;
    let mut recorder = Recorder::new(scrub);
    if opts.events.is_some() {
        recorder = recorder.to_stdout();
    }
    if let Some(path) = &opts.record {
        let file = writer::create(path).wrap_err("--record")?;
        recorder = recorder.to_file(path.clone(), file);
    } else if !opts.no_record {
        match helmdeck::record::default_dir() {
            Some(dir) => match writer::create_in(&dir, header) {
                Ok((path, file)) => recorder = recorder.to_file(path, file),
                Err(e) => say(&format!("helmdeck: no record of this run: {e}")),
            },
            None => say("helmdeck: no record of this run: neither XDG_STATE_HOME nor HOME is set"),
        }
    }
    recorder.header(header);
    Ok(recorder)
}

/// What the engine's renderers call first with every event: the record, then, at each verdict
/// (the first, and the one `R` decides again after its rollback), the report and JUnit files.
/// The screen stays open after the verdict: its files must not say `running` meanwhile.
fn tap(
    mut recorder: Recorder,
    outputs: Outputs,
) -> impl FnMut(&Event, &DeployState) + Send + 'static {
    move |event, state| {
        recorder.event(event, state);
        if let Event::Verdict(_) = event {
            // A failed write is said (and is exit 1) by `finish`, which writes them again at
            // the end: a line on stderr here would be drawn over by the screen.
            let _ = write_files(&outputs, &verdict_files(state, &outputs));
        }
    }
}

/// `helmdeck replay`: the list, the headless lines, or the screen. A record cut short plays to
/// the cut and exits 1; one that cannot be read (or is newer) is a usage error.
async fn replay(args: ReplayArgs) -> Result<i32> {
    use helmdeck::record::{list, reader};
    if let Some(release) = &args.list {
        let Some(dir) = helmdeck::record::default_dir() else {
            say("helmdeck replay: neither XDG_STATE_HOME nor HOME is set: no records to list");
            return Ok(exit::USAGE);
        };
        let entries = list::entries(&dir, release.as_deref());
        if entries.is_empty() {
            let of = release
                .as_deref()
                .map(|r| format!(" of {}", text::plain(r)))
                .unwrap_or_default();
            say(&format!(
                "helmdeck replay: no records{of} in {}",
                dir.display()
            ));
        }
        let mut out = std::io::stdout().lock();
        for e in &entries {
            let _ = writeln!(out, "{}", list::line(e));
        }
        return Ok(0);
    }
    // Refused rather than clamped: a speed the screen would quietly change is not what was asked.
    let speeds = helmdeck::record::clock::MIN_SPEED..=helmdeck::record::clock::MAX_SPEED;
    if !speeds.contains(&args.speed) {
        say(&format!(
            "helmdeck replay: --speed must be from {} to {}, got {} (see --help)",
            speeds.start(),
            speeds.end(),
            args.speed
        ));
        return Ok(exit::USAGE);
    }
    if let Some(path) = &args.report
        && let Err(e) = validate::report_path(path)
    {
        say(&format!("helmdeck replay: {}", text::plain(&e.to_string())));
        return Ok(exit::USAGE);
    }
    let cast = match cast_target(&args) {
        Ok(cast) => cast,
        Err(e) => {
            say(&format!("helmdeck replay: {}", text::plain(&e.to_string())));
            return Ok(exit::USAGE);
        }
    };
    let Some(file) = &args.file else {
        say("helmdeck replay: FILE is required (see --help)");
        return Ok(exit::USAGE);
    };
    let record = match reader::read(file) {
        Ok(r) => r,
        Err(e) => {
            say(&format!(
                "helmdeck replay: {}: {}",
                text::plain(&file.display().to_string()),
                text::plain(&e.to_string())
            ));
            return Ok(exit::USAGE);
        }
    };
    let state = if let Some(cast) = &cast {
        write_cast(&record, &cast.path, cast.size, args.speed)?;
        record.fold()
    } else if wants_tui(args.headless) {
        helmdeck::ui::run_replay(&record, args.speed).await?
    } else {
        let mut printer = headless::Headless::default();
        let mut state = record.new_state();
        for i in 0..record.lines.len() {
            record.apply(&mut state, i);
            printer.print(&record.lines[i].event, &state);
        }
        state
    };
    if let Some(path) = &args.report {
        let rebuilt = match &state.verdict {
            Some(_) if record.cut.is_none() => report::build(&state),
            _ => report::ended(&state, exit::FAILED, "the record is cut short"),
        };
        report::write(path, &rebuilt)
            .wrap_err_with(|| format!("--report {}: writing it", path.display()))?;
    }
    if let Some(cut) = &record.cut {
        say(&format!(
            "helmdeck replay: the record is cut short: {} (replayed to the cut)",
            text::plain(cut)
        ));
        if let Some(helm) = record.unfinished_helm() {
            say(&format!("helmdeck replay: {}", text::plain(&helm)));
        }
        return Ok(exit::FAILED);
    }
    Ok(state.verdict.map_or(exit::FAILED, |v| v.code()))
}

/// `--cast FILE` and its `--size`, checked before the record is read: a size the screen
/// cannot take or a file that cannot be written is a usage error.
fn cast_target(args: &ReplayArgs) -> Result<Option<CastTarget>, validate::InputError> {
    let Some(path) = &args.cast else {
        return Ok(None);
    };
    let size = validate::cast_size(&args.size)?;
    validate::output_path("--cast", path)?;
    Ok(Some(CastTarget {
        path: path.clone(),
        size,
    }))
}

/// Where `replay --cast` writes, at which size (COLS, ROWS).
struct CastTarget {
    path: PathBuf,
    size: (u16, u16),
}

/// The replay as an asciicast file, written whole or not at all; one line on stderr says where.
fn write_cast(
    record: &helmdeck::record::reader::Record,
    path: &Path,
    size: (u16, u16),
    speed: f64,
) -> Result<()> {
    let bytes = helmdeck::ui::cast(record, size, speed).wrap_err("--cast: playing the record")?;
    helmdeck::atomic::write(path, &bytes, helmdeck::atomic::Access::Shared, "cast")
        .wrap_err_with(|| format!("--cast {}: writing it", path.display()))?;
    say(&format!(
        "helmdeck replay: wrote {} ({}x{})",
        text::plain(&path.display().to_string()),
        size.0,
        size.1
    ));
    Ok(())
}

/// `--json` wins, then the TUI, else plain text. Errors before the first read are setup
/// failures (bad arguments, an unreadable kubeconfig): exit 2; after it, 1.
async fn inspect(args: InspectArgs) -> Result<i32> {
    validate::release_name(&args.release)?;
    if let Some(namespace) = &args.namespace {
        validate::namespace(namespace)?;
    }
    // The deny list deploy takes, held to deploy's rule.
    for pattern in &args.optional {
        validate::optional_pattern(pattern)?;
    }
    let reader = std::sync::Arc::new(helmdeck::inspect::Reader::connect(&args).await?);
    exit::touching_the_cluster();
    let inspection = reader.first().await;
    if !args.json && wants_tui(args.headless) {
        return helmdeck::ui::run_inspect(inspection, move || {
            let reader = reader.clone();
            async move { reader.read().await }
        })
        .await;
    }
    helmdeck::inspect::print(&inspection, args.json)
}

/// A run refused before it started: one line, and a report with verdict code 2 when the report
/// path can take one. Refusals after the demo touched its own cluster are failures (1).
fn refuse(who: &str, e: &Report, report_path: Option<&Path>, plan: &PlanSummary) -> i32 {
    let line = one_line(e);
    say(&format!("{who}: {line}"));
    let code = exit::for_error(exit::touched());
    if let Some(path) = report_path
        && validate::report_path(path).is_ok()
    {
        // The message already went out; a report that cannot be written adds nothing to it.
        let _ = report::write(
            path,
            &report::ended(&DeployState::new(plan.clone()), code, &line),
        );
    }
    code
}

/// The run starts: any older report at the path is replaced at once by a `running` one, so a
/// run killed from here on never leaves an older verdict behind. Then the first cluster request
/// may go out.
fn start(outputs: &Outputs, plan: &PlanSummary) -> Result<()> {
    if let Some(path) = &outputs.report {
        report::write(path, &report::running(plan))
            .wrap_err_with(|| format!("--report {}: writing it", path.display()))?;
    }
    if let Some(path) = &outputs.junit {
        junit::write(path, &junit::build(&DeployState::new(plan.clone())))
            .wrap_err_with(|| format!("--junit {}: writing it", path.display()))?;
    }
    exit::touching_the_cluster();
    Ok(())
}

/// Writes the final report (if asked) and returns the exit code: the verdict's, or 1 when the
/// run ended without one or the report cannot be written. The cluster was touched by now, so
/// nothing here is the usage 2.
fn finish(state: Result<&DeployState, &Report>, outputs: &Outputs, plan: &PlanSummary) -> i32 {
    let (code, files) = match &state {
        Ok(state) => match &state.verdict {
            Some(verdict) => (verdict.code(), verdict_files(state, outputs)),
            None => {
                let reason = "the deploy ended without a verdict (fail closed)";
                say(&format!("helmdeck: {reason}"));
                let files = Files::asked(
                    outputs,
                    || report::ended(state, exit::FAILED, reason),
                    || junit::build(&outputs.kept(state)),
                );
                (exit::FAILED, files)
            }
        },
        Err(e) => {
            let line = one_line(e);
            say(&format!("helmdeck: {line} (fail closed: exit 1)"));
            let state = DeployState::new(plan.clone());
            let files = Files::asked(
                outputs,
                || report::ended(&state, exit::FAILED, &line),
                || junit::build(&state),
            );
            (exit::FAILED, files)
        }
    };
    match write_files(outputs, &files) {
        Ok(()) => code,
        Err(e) => {
            say(&format!("helmdeck: {} (fail closed: exit 1)", one_line(&e)));
            exit::FAILED
        }
    }
}

/// The report (values masked) and the JUnit XML a run was asked for; one not asked is not
/// built (at 20,000 pods, building the report nobody reads twice was most of the time between
/// the last pod ready and the exit).
struct Files {
    report: Option<serde_json::Value>,
    junit: Option<String>,
}

impl Files {
    fn asked(
        outputs: &Outputs,
        report: impl FnOnce() -> serde_json::Value,
        junit: impl FnOnce() -> String,
    ) -> Self {
        Files {
            report: outputs.report.as_ref().map(|_| {
                let mut report = report();
                outputs.scrub.value(&mut report);
                report
            }),
            junit: outputs.junit.as_ref().map(|_| junit()),
        }
    }
}

/// The files of a run that has its verdict: one place, so the write at the verdict and the
/// one at the exit say the same.
fn verdict_files(state: &DeployState, outputs: &Outputs) -> Files {
    Files::asked(
        outputs,
        || report::build(state),
        || junit::build(&outputs.kept(state)),
    )
}

/// Writes the JUnit file, then the report (each only if asked); the error names the file.
fn write_files(outputs: &Outputs, files: &Files) -> Result<()> {
    if let (Some(path), Some(xml)) = (&outputs.junit, &files.junit) {
        junit::write(path, xml)
            .wrap_err_with(|| format!("writing the JUnit report {}", path.display()))?;
    }
    if let (Some(path), Some(report)) = (&outputs.report, &files.report) {
        report::write(path, report)
            .wrap_err_with(|| format!("writing the report {}", path.display()))?;
    }
    Ok(())
}

/// The deploy's plan, checked whole before anything else runs.
fn plan(args: &DeployArgs) -> Result<DeployPlan> {
    let plan = DeployPlan::from_args(args)?;
    // Here rather than in the plan, which tests build for charts that are not there.
    validate::chart(&plan.chart)?;
    Ok(plan)
}

/// Everything a deploy of `plan` needs before its first cluster request: helm found and
/// running, the values parsed, the kube client, the inputs resolved.
async fn prepare(plan: DeployPlan) -> Result<run::Prepared> {
    let helm = locate::find_helm(plan.helm.as_deref()).map_err(|e| eyre!("{e}"))?;
    let helm_version = locate::helm_version(&helm)
        .await
        .wrap_err_with(|| format!("{} does not run", helm.display()))?;
    let value_args = plan.value_args_with_extra();
    validate::helm_values(&helm, &[], &value_args).await?;
    let cluster = cluster::client::connect(plan.context.as_deref()).await?;
    // The kube context's namespace, when -n gave none, is held to the same rule.
    validate::namespace(plan.namespace_or(&cluster.default_namespace))?;
    // This machine's earlier runs, whose init Job a timeout may have left running (the init
    // step attaches to it rather than refusing it): read from the records when it asks.
    let (release, namespace) = (
        plan.release.clone(),
        plan.namespace_or(&cluster.default_namespace).to_string(),
    );
    let earlier_runs: helmdeck::engine::prepared::EarlierRuns = std::sync::Arc::new(move || {
        helmdeck::record::default_dir()
            .map(|dir| helmdeck::record::list::earlier_init_runs(&dir, &release, &namespace))
            .unwrap_or_default()
    });
    let mut prepared = run::Prepared {
        plan,
        helm,
        helm_version,
        cluster,
        helm_env: vec![],
        asks: Default::default(),
        earlier_runs: Some(earlier_runs),
        own_locks: Default::default(),
    };
    prepared.resolve_inputs().await?;
    // Named as this run's record will be: the context used, the namespace, the release.
    let (context, namespace, release) = (
        prepared
            .cluster
            .context
            .clone()
            .or_else(|| prepared.plan.context.clone()),
        prepared.namespace().to_string(),
        prepared.plan.release.clone(),
    );
    prepared.own_locks = run::OwnLocks::new(move || {
        helmdeck::record::own::left_locks(context.as_deref(), &namespace, &release)
    });
    Ok(prepared)
}
