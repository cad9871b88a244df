//! Records and replay: every deploy keeps its events; `helmdeck replay` rebuilds the same
//! lines, report and verdict from them; `--events -` streams them; values never enter them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{DeployRun, Sim, chart_copy, text, with_init};

/// `helmdeck replay ARGS` in the sim's client environment.
fn replay(sim: &Sim, args: &[&str]) -> std::process::Output {
    sim.helmdeck_command(&[&["replay"], args].concat())
        .output()
        .expect("run helmdeck replay")
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("the record")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// A live deploy recorded to a file, then replayed headless with its report rebuilt: the same
/// exit code, the same lines, the same report (wall times included: the record keeps the step
/// times as stamped); and the replay screen's last frame is the live screen's last frame.
fn round_trip(sim: &Sim, args: &[&str]) -> DeployRun {
    let record = sim.home().join("run.ndjson");
    let record_arg = record.to_str().unwrap();
    let mut args = args.to_vec();
    args.extend(["--record", record_arg]);
    let live = sim.deploy(&args);
    check_replay(sim, &record, &live, &args);
    live
}

/// The checks of [`round_trip`] on a live run that wrote `record`.
fn check_replay(sim: &Sim, record: &Path, live: &DeployRun, args: &[&str]) {
    let record_arg = record.to_str().unwrap();
    let rebuilt = sim.home().join("rebuilt.json");
    let out = replay(
        sim,
        &[
            record_arg,
            "--headless",
            "--report",
            rebuilt.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        live.code,
        "{}\n{}",
        text(&out),
        live.describe()
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        masked(&live.stdout, args),
        "the replayed lines are the live ones, values masked"
    );
    let rebuilt: Value = serde_json::from_str(&std::fs::read_to_string(&rebuilt).unwrap()).unwrap();
    crate::support::check_report(&rebuilt);
    let live_report: Value = serde_json::from_str(&masked(&live.report.to_string(), args)).unwrap();
    assert_eq!(
        rebuilt, live_report,
        "the rebuilt report is the live one, values masked"
    );
    check_final_frame(sim, record, live.code.expect("an exit code"));
}

/// `text` as a record keeps it: every `--set` value of `args` of four characters or more (not
/// a switch) masked as `***` wherever it stands as a whole token (a chart's NOTES print
/// `image.tag`; `v1.4.3` or a name holding it stays). Values never enter a record, so a replay
/// shows them masked; everything else is as live.
fn masked(text: &str, args: &[&str]) -> String {
    let mut values: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--set")
        .filter_map(|w| w[1].split_once('=').map(|(_, v)| v))
        .filter(|v| v.chars().count() >= 4 && !["true", "false", "null"].contains(v))
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    // A letter or digit, or `-` `.` `_` followed by one, continues a word or a name.
    let joins = |c: Option<char>, beyond: Option<char>| match c {
        Some(c) if c.is_alphanumeric() => true,
        Some('-' | '.' | '_') => beyond.is_some_and(char::is_alphanumeric),
        _ => false,
    };
    values.iter().fold(text.to_string(), |t, v| {
        let mut out = String::new();
        let mut at = 0;
        for (start, _) in t.match_indices(v) {
            let end = start + v.len();
            let mut before = t[..start].chars().rev();
            let mut after = t[end..].chars();
            if start < at
                || joins(before.next(), before.next())
                || joins(after.next(), after.next())
            {
                continue;
            }
            out.push_str(&t[at..start]);
            out.push_str("***");
            at = end;
        }
        out.push_str(&t[at..]);
        out
    })
}

/// The server a kubeconfig names, as the live screen's header shows it when no context was
/// named (read from the file itself, not from helmdeck).
fn server_of(kubeconfig: &Path) -> String {
    let text = std::fs::read_to_string(kubeconfig).expect("the kubeconfig");
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap_or_else(|| panic!("no server in {text}"))
        .trim_matches(|c| c == '"' || c == '\'');
    format!("{}/", server.trim_end_matches('/'))
}

/// The replay screen played to the end of `record` draws what the live screen drew last: the
/// live screen's own fold of the events the engine sent it (each with the offset and the step
/// stamp it had), its context (the server, no context being named) and no title, against one
/// clock, at both sizes, colours included.
fn check_final_frame(sim: &Sim, record: &Path, code: i32) {
    let kept = helmdeck::record::reader::read(record).expect("a readable record");
    assert_eq!(kept.cut, None, "a whole record");
    let context = server_of(&sim.kubeconfig);
    let now = Some(jiff::Timestamp::now());
    for size in [(80, 24), (160, 48)] {
        let sent = kept
            .lines
            .iter()
            .map(|l| (l.event.clone(), l.t, l.wall.clone().unwrap_or_default()));
        let live =
            helmdeck::ui::final_frame(kept.header.plan.clone(), sent, None, &context, now, size);
        assert!(
            live.contains(&format!("exit {code}")),
            "the live frame shows the verdict: {live}"
        );
        let replayed = helmdeck::ui::replay_final_frame(&kept, now, size);
        assert_eq!(
            replayed, live,
            "the replay's last frame at {size:?} is the live one"
        );
    }
}

/// How a case's recorded run is started.
enum Live {
    /// `helmdeck deploy` run to its end.
    Deploy,
    /// SIGTERM once helm waits on the slow migrate hook: the cancel's verdict.
    SigtermDuringHelm,
}

/// One scenario of the verdict matrix (tests/e2e/deploy.rs): its simulator, what runs before
/// the recorded deploy, the deploy's flags, and the verdict it must reach.
struct Case {
    name: &'static str,
    scenario: &'static str,
    setup: fn(&Sim),
    args: &'static [&'static str],
    live: Live,
    code: i32,
    /// A piece of the verdict's reason: the case reached the verdict it is named for.
    says: &'static str,
}

fn nothing(_: &Sim) {}

fn first_deploy(sim: &Sim) {
    let first = sim.deploy(&["--timeout", "60s"]);
    assert_eq!(first.code, Some(0), "first deploy: {}", first.describe());
}

fn first_deploy_with_init(sim: &Sim) {
    landed(sim, &[]);
}

/// The demo deployed with its init Job and `extra`, landed (exit 0).
fn landed(sim: &Sim, extra: &[&str]) -> DeployRun {
    let mut args = vec!["--timeout", "60s"];
    args.extend_from_slice(extra);
    let run = sim.deploy(&with_init(&args));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    run
}

fn helm_install(sim: &Sim) {
    let out = sim.install_demo(&["--timeout", "60s"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// The kubeconfig pointed at a port nobody listens on.
fn unreachable(sim: &Sim) {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let config = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    std::fs::write(
        &sim.kubeconfig,
        config.replace(&sim.url, &format!("http://127.0.0.1:{port}")),
    )
    .unwrap();
}

macro_rules! args {
    ($($a:expr),* $(,)?) => { &[$($a),*] };
}

/// Every verdict of the matrix in tests/e2e/deploy.rs that leaves a record (usage errors, exit
/// 2, stop before any: there is no run to record).
fn cases() -> Vec<Case> {
    let case = |name, scenario, setup: fn(&Sim), args, code, says| Case {
        name,
        scenario,
        setup,
        args,
        live: Live::Deploy,
        code,
        says,
    };
    let mut cases = vec![
        case(
            "all-green",
            "all-green",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--timeout",
                "60s"
            ],
            0,
            "init Job demo-init succeeded",
        ),
        case(
            "optional pending, denied",
            "optional-pending",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--timeout",
                "60s",
                "--set",
                "gpuClient.optional=false",
                "--optional",
                "Deployment/*-gpu-client"
            ],
            0,
            "",
        ),
        case(
            "optional pending, not denied",
            "optional-pending",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--timeout",
                "8s",
                "--set",
                "gpuClient.optional=false"
            ],
            1,
            "Unschedulable",
        ),
        case(
            "init fails",
            "init-fails",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--timeout",
                "60s"
            ],
            3,
            "demo-init",
        ),
        case(
            "no init Job rendered",
            "all-green",
            nothing,
            args![
                "--init-toggle",
                "bootstrap.enabled",
                "--init-job",
                "demo-bootstrap",
                "--timeout",
                "60s"
            ],
            0,
            "",
        ),
        case(
            "post-upgrade hook fails",
            "hook-fails",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--timeout",
                "60s"
            ],
            1,
            "demo-seed",
        ),
        case(
            "immutable field",
            "all-green",
            first_deploy,
            args!["--timeout", "60s", "--set", "db.storage=5Gi"],
            1,
            "Forbidden",
        ),
        case(
            "never observed",
            "never-observed",
            first_deploy,
            args!["--timeout", "6s", "--set", "image.tag=1.4.3"],
            1,
            "spec update to be observed",
        ),
        case(
            "surge stuck",
            "surge-stuck",
            first_deploy,
            args!["--timeout", "6s", "--set", "image.tag=1.4.3"],
            1,
            "old replicas are pending termination",
        ),
        case(
            "sts revision stuck",
            "sts-revision-stuck",
            first_deploy,
            args!["--timeout", "6s", "--set", "image.tag=1.4.3"],
            1,
            "StatefulSet/demo-db",
        ),
        case(
            "progress deadline",
            "progress-deadline",
            nothing,
            args!["--timeout", "300s"],
            1,
            "exceeded its progress deadline",
        ),
        case(
            "cluster unreachable",
            "all-green",
            unreachable,
            args![],
            1,
            "unreachable",
        ),
        case(
            "no gating workloads",
            "all-green",
            nothing,
            args!["--timeout", "60s", "--optional", "*"],
            1,
            "no gating workloads",
        ),
        case(
            "locked",
            "locked",
            nothing,
            args!["--timeout", "60s"],
            1,
            "pending-upgrade",
        ),
        case(
            "flaky watches",
            "flaky-watch",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--timeout",
                "60s"
            ],
            0,
            "",
        ),
        case(
            "--only rollout",
            "all-green",
            helm_install,
            args!["--only", "rollout", "--timeout", "60s"],
            0,
            "",
        ),
        case(
            "--only rollout, crash loop",
            "crashloop",
            helm_install,
            args!["--only", "rollout", "--timeout", "6s"],
            1,
            "CrashLoopBackOff",
        ),
        case(
            "--only init",
            "all-green",
            first_deploy_with_init,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--only",
                "init",
                "--timeout",
                "60s"
            ],
            0,
            "",
        ),
        case(
            "dry run",
            "all-green",
            nothing,
            args![
                "--init-toggle",
                "initJob.enabled",
                "--init-job",
                "demo-init",
                "--dry-run",
                "--set",
                "api.secretToken=hunter2"
            ],
            0,
            "nothing was written",
        ),
        case(
            "image pull",
            "image-pull",
            nothing,
            args!["--timeout", "8s"],
            1,
            "ImagePullBackOff",
        ),
        case(
            "OOM",
            "oom",
            nothing,
            args!["--timeout", "8s"],
            1,
            "OOMKilled",
        ),
        case(
            "readiness never",
            "readiness-never",
            nothing,
            args!["--timeout", "8s"],
            1,
            "eadiness probe",
        ),
        case(
            "crash loop",
            "crashloop",
            nothing,
            args!["--timeout", "8s"],
            1,
            "CrashLoopBackOff",
        ),
    ];
    cases.push(Case {
        name: "cancelled (SIGTERM during helm)",
        scenario: crate::support::SLOW_MIGRATE,
        setup: nothing,
        args: args![],
        live: Live::SigtermDuringHelm,
        code: 1,
        says: "cancelled",
    });
    cases
}

fn run_case(case: &Case) {
    match case.live {
        Live::Deploy => {
            let sim = Sim::start(case.scenario);
            (case.setup)(&sim);
            let live = round_trip(&sim, case.args);
            assert_eq!(live.code, Some(case.code), "{}", live.describe());
            assert!(live.reason().contains(case.says), "{}", live.reason());
        }
        Live::SigtermDuringHelm => {
            let sim = Sim::start_yaml(case.scenario);
            let record = sim.home().join("run.ndjson");
            let report = sim.home().join("cancel.json");
            let started = std::time::Instant::now();
            let child = sim
                .deploy_command(&report, &["--record", record.to_str().unwrap()])
                .spawn()
                .unwrap();
            sim.wait_for_helm_on_the_migrate_hook();
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let live = crate::support::finish(child.wait_with_output().unwrap(), &report, started);
            assert_eq!(live.code, Some(case.code), "{}", live.describe());
            assert_eq!(live.reason(), case.says, "{}", live.describe());
            check_replay(&sim, &record, &live, &[]);
        }
    }
}

/// For every verdict of the matrix: the lines, the report and the last frame rebuilt from the
/// record are the live run's. The cases run a few at a time, each on its own simulator.
#[test]
fn replay_rebuilds_the_live_run_for_each_verdict() {
    // `HELMDECK_E2E_CASE=TEXT` runs only the cases whose name contains it (while debugging one).
    let only = std::env::var("HELMDECK_E2E_CASE").unwrap_or_default();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.name.contains(only.as_str()))
        .collect();
    assert!(!cases.is_empty(), "no case matches {only:?}");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..crate::support::E2E_PARALLEL {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    let outcome =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(case)));
                    if outcome.is_err() {
                        failed.lock().unwrap().push(case.name.to_string());
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    assert!(failed.is_empty(), "round trip failed for: {failed:?}");
}

/// Without `--record` the run is kept in `$XDG_STATE_HOME/helmdeck`, owner-only, named from the
/// kubeconfig's current context (no `--kube-context` given) and the release; `--list` shows it
/// with its verdict; beyond 100 per release and context the oldest go, and only those.
#[test]
fn records_are_kept_in_the_state_dir_listed_and_pruned() {
    let sim = Sim::start("all-green");
    let dir = sim.home().join(".local/state/helmdeck");
    std::fs::create_dir_all(&dir).unwrap();
    // crates/helmdeck-sim/src/run.rs names the simulator's context so.
    let prefix = "helmdeck-sim_apps_demo_";
    for i in 0..100 {
        std::fs::write(
            dir.join(format!("{prefix}20000101T0000{i:02}000Z_old.ndjson")),
            "",
        )
        .unwrap();
    }
    let others = [
        "helmdeck-sim_apps_other_20000101T000000000Z_x.ndjson",
        // The same release on another cluster: its records are its own.
        "prod-eu_apps_demo_20000101T000000000Z_x.ndjson",
        "default_apps_demo_20000101T000000000Z_x.ndjson",
    ];
    for other in others {
        std::fs::write(dir.join(other), "").unwrap();
    }
    landed(&sim, &[]);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    assert_eq!(names.len(), 100, "pruned to 100 per release: {names:?}");
    assert!(
        !names.contains(&format!("{prefix}20000101T000000000Z_old.ndjson")),
        "the oldest went"
    );
    for other in others {
        assert!(
            dir.join(other).exists(),
            "other releases and contexts stay: {other}"
        );
    }
    let newest: PathBuf = dir.join(names.last().unwrap());
    let mode = std::fs::metadata(&newest).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", newest.display());
    let header = &lines(&newest)[0];
    assert_eq!(header["record"], "helmdeck-record");
    assert_eq!(header["schema"], 1);
    assert_eq!(header["kube_context"], "helmdeck-sim", "{header}");
    assert!(
        header["command"].as_str().unwrap().contains("deploy demo"),
        "{header}"
    );

    let out = replay(&sim, &["--list", "demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let first = listed.lines().next().unwrap_or("");
    assert!(
        first.contains("helmdeck-sim apps/demo  LANDED (exit 0)"),
        "{listed}"
    );
    assert!(first.contains(newest.to_str().unwrap()), "{listed}");
    assert!(!listed.contains("/other"), "{listed}");
}

/// `replay --list [RELEASE]` over real records of two releases with different verdicts: newest
/// first, each verdict as the run ended, the RELEASE filter, each line naming its file.
#[test]
fn replay_list_shows_real_records_newest_first_with_their_verdicts() {
    let sim = Sim::start("all-green");
    let chart = crate::support::chart();
    let deploy = |release: &str, extra: &[&str]| {
        let mut args = vec![
            "deploy",
            release,
            chart.to_str().unwrap(),
            "-n",
            "apps",
            "--headless",
        ];
        args.extend_from_slice(extra);
        sim.helmdeck_command(&args).output().unwrap()
    };
    let landed = deploy("demo", &with_init(&["--timeout", "60s"]));
    assert_eq!(landed.status.code(), Some(0), "{}", text(&landed));
    let dry = deploy("other", &["--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    let failed = deploy("demo", &["--timeout", "60s", "--optional", "*"]);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));

    let out = replay(&sim, &["--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<&str> = listed.lines().collect();
    assert_eq!(rows.len(), 3, "{listed}");
    for (row, (release, verdict)) in rows.iter().zip([
        ("demo", "FAILED (exit 1)"),
        ("other", "DRY RUN (exit 0)"),
        ("demo", "LANDED (exit 0)"),
    ]) {
        assert!(
            row.contains(&format!("helmdeck-sim apps/{release}  {verdict}  ")),
            "newest first: {listed}"
        );
        let file = row.rsplit("  ").next().unwrap();
        assert!(Path::new(file).is_file(), "{row}");
        assert!(
            file.contains(&format!("/helmdeck-sim_apps_{release}_")),
            "{row}"
        );
    }

    let out = replay(&sim, &["--list", "demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let demo = String::from_utf8_lossy(&out.stdout).into_owned();
    let expected: Vec<&str> = [rows[0], rows[2]].to_vec();
    assert_eq!(demo.lines().collect::<Vec<_>>(), expected, "{demo}");

    let out = replay(&sim, &["--list", "nobody"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out.stdout.is_empty(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no records"),
        "{}",
        text(&out)
    );
}

/// `--events -`: stdout is the record and nothing else; `--no-record` keeps no file.
#[test]
fn events_stream_the_record_on_stdout_and_nothing_else() {
    let sim = Sim::start("all-green");
    let run = landed(&sim, &["--events", "-", "--no-record"]);
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(events[0]["record"], "helmdeck-record");
    assert_eq!(events[1]["event"]["type"], "step_started");
    assert_eq!(events.last().unwrap()["event"]["type"], "verdict");
    assert_eq!(events.last().unwrap()["event"]["code"], 0);
    assert!(
        !sim.home().join(".local/state/helmdeck").exists(),
        "--no-record"
    );
}

/// A password in a values file and a `--set` value that the chart's NOTES print (so helm's
/// output does carry them, live) never reach the record or the event stream.
#[test]
fn values_never_enter_the_record_or_the_event_stream() {
    let sim = Sim::start("all-green");
    let chart = chart_copy(sim.home(), |path, text| {
        if path.ends_with("NOTES.txt") {
            text + "\npassword: {{ .Values.password }} token: {{ .Values.token }}\n"
        } else {
            text
        }
    });
    let values = sim.home().join("secret-values.yaml");
    std::fs::write(&values, "password: hunter2-in-a-file\n").unwrap();
    let record = sim.home().join("secret.ndjson");
    let args = with_init(&[
        "--timeout",
        "60s",
        "-f",
        values.to_str().unwrap(),
        "--set",
        "token=s3t-by-flag",
        "--record",
        record.to_str().unwrap(),
    ]);
    let live = sim.deploy_chart(&chart, "secret-report.json", &args);
    assert_eq!(live.code, Some(0), "{}", live.describe());
    // Not vacuous: helm's own record of the NOTES holds the value; the headless lines show it
    // masked, as the files do.
    let notes = sim.helm(&["get", "notes", "demo", "-n", "apps"]);
    assert!(
        String::from_utf8_lossy(&notes.stdout).contains("hunter2-in-a-file"),
        "the chart shows it: the test is not vacuous: {notes:?}"
    );
    assert!(
        !live.stdout.contains("hunter2-in-a-file"),
        "{}",
        live.describe()
    );
    let kept = std::fs::read_to_string(&record).unwrap();
    for secret in ["hunter2-in-a-file", "s3t-by-flag"] {
        assert!(!kept.contains(secret), "{secret} in the record");
    }
    assert!(kept.contains("password: ***"), "masked in place");
    assert!(kept.contains("token=***"), "the command is redacted");

    let mut streamed = args.clone();
    let at = streamed.iter().position(|a| *a == "--record").unwrap();
    streamed.splice(at..at + 2, ["--events", "-"]);
    let stream = sim.deploy_chart(&chart, "secret-report-2.json", &streamed);
    assert_eq!(stream.code, Some(0), "{}", stream.describe());
    assert!(
        stream.stdout.contains("password: ***"),
        "{}",
        stream.describe()
    );
    for secret in ["hunter2-in-a-file", "s3t-by-flag"] {
        assert!(
            !stream.stdout.contains(secret),
            "{secret} in the event stream"
        );
        assert!(!stream.stderr.contains(secret), "{secret} on stderr");
    }
}

/// The one secret test across every output a run leaves: a password in a values file and a
/// `--set` token, shown live by the chart (its NOTES print both; with `breakIt` its render
/// fails naming the password, so helm's error, the verdict's evidence and the JUnit failure
/// carry it live), never reach the record, the `--events -` stream, the JUnit file or the
/// GitHub job summary (nor the report): each is masked there, in place.
#[test]
fn values_never_reach_the_record_the_stream_the_junit_file_or_the_job_summary() {
    let sim = Sim::start("all-green");
    let chart = chart_copy(sim.home(), |path, text| {
        if path.ends_with("NOTES.txt") {
            text + "\npassword: {{ .Values.password }} token: {{ .Values.token }}\n"
        } else if path.ends_with("templates/web.yaml") {
            format!(
                "{{{{- if .Values.breakIt }}}}{{{{ fail (printf \"refusing password %s\" .Values.password) }}}}{{{{- end }}}}\n{text}"
            )
        } else {
            text
        }
    });
    let values = sim.home().join("secret-values.yaml");
    std::fs::write(&values, "password: hunter2-in-a-file\n").unwrap();
    let secrets = ["hunter2-in-a-file", "s3t-by-flag"];
    let summary = sim.home().join("step-summary.md");
    let junit = sim.home().join("junit.xml");
    let record = sim.home().join("secret.ndjson");
    let report = sim.home().join("secret-report.json");
    let run = |extra: &[&str]| {
        let _ = std::fs::remove_file(&record);
        let mut args = with_init(&[
            "--timeout",
            "60s",
            "-f",
            values.to_str().unwrap(),
            "--set",
            "token=s3t-by-flag",
            "--junit",
            junit.to_str().unwrap(),
        ]);
        args.extend_from_slice(extra);
        let started = std::time::Instant::now();
        let out = sim
            .deploy_chart_command(&chart, &report, &args)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .unwrap();
        crate::support::finish(out, &report, started)
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let absent = |what: &str, text: &str| {
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} in {what}:\n{text}");
        }
    };

    // Lands: the NOTES show both values live.
    let landed = run(&["--record", record.to_str().unwrap()]);
    assert_eq!(landed.code, Some(0), "{}", landed.describe());
    // Not vacuous: helm's own record of the NOTES holds both values; the headless lines show
    // them masked.
    let notes = sim.helm(&["get", "notes", "demo", "-n", "apps"]);
    for secret in secrets {
        assert!(
            String::from_utf8_lossy(&notes.stdout).contains(secret),
            "the chart shows {secret}: the test is not vacuous: {notes:?}"
        );
    }
    absent("the headless output", &landed.stdout);
    assert!(landed.stdout.contains("::notice"), "{}", landed.describe());
    let kept = read(&record);
    absent("the record", &kept);
    assert!(kept.contains("password: *** token: ***"), "masked in place");
    absent("the JUnit file", &read(&junit));
    assert!(read(&summary).contains("LANDED"), "{}", read(&summary));
    absent("the job summary", &read(&summary));
    absent("the report", &landed.report.to_string());

    // Fails in helm's render, naming the password: every headless line masks it, helm's
    // streamed error included.
    std::fs::remove_file(&summary).unwrap();
    let failed = run(&[
        "--set",
        "breakIt=true",
        "--record",
        record.to_str().unwrap(),
    ]);
    assert_eq!(failed.code, Some(1), "{}", failed.describe());
    assert!(
        failed.stdout.contains("refusing password ***"),
        "helm's error is shown with the password masked: {}",
        failed.describe()
    );
    let kept = read(&record);
    absent("the record", &kept);
    assert!(kept.contains("refusing password ***"), "{kept}");
    let xml = read(&junit);
    assert!(
        xml.contains("refusing password ***"),
        "in the JUnit failure, masked: {xml}"
    );
    absent("the JUnit file", &xml);
    let md = read(&summary);
    assert!(
        md.contains("refusing password ***"),
        "in the summary, masked: {md}"
    );
    absent("the job summary", &md);
    absent("the report", &failed.report.to_string());
    assert!(
        failed.report.to_string().contains("refusing password ***"),
        "{}",
        failed.report
    );

    // The same failure streamed: the stream holds it masked; the JUnit file too.
    let streamed = run(&["--set", "breakIt=true", "--events", "-", "--no-record"]);
    assert_eq!(streamed.code, Some(1), "{}", streamed.describe());
    assert!(
        streamed.stdout.contains("refusing password ***"),
        "{}",
        streamed.describe()
    );
    absent("the event stream", &streamed.stdout);
    absent("stderr", &streamed.stderr);
    absent("the JUnit file", &read(&junit));
}

/// helmdeck SIGKILLed mid-rollout (no chance to end anything) leaves a record that replays:
/// `replay --headless` exits 1 saying it is cut short, and its lines are a prefix of what the
/// live run printed before the kill.
#[test]
fn a_deploy_killed_mid_rollout_leaves_a_record_that_replays_to_the_kill() {
    // Pods that take minutes to start: the rollout step is still waiting when the kill comes.
    let sim = Sim::start_yaml(
        "namespaces: [apps]\ndefaults: {start_after: 10m}\njobs:\n  - {match: '*', after: 200ms}\n",
    );
    let record = sim.home().join("killed.ndjson");
    let report = sim.home().join("killed.json");
    let mut child = sim
        .deploy_command(
            &report,
            &["--timeout", "5m", "--record", record.to_str().unwrap()],
        )
        .spawn()
        .unwrap();
    // The rollout step has started and seen its workloads.
    sim.wait_for(
        "the rollout watching workloads, in the record",
        std::time::Duration::from_secs(60),
        |_| {
            let kept = std::fs::read_to_string(&record).unwrap_or_default();
            let events: Vec<Value> = kept
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|l| l["event"].clone())
                .collect();
            events
                .iter()
                .any(|e| e["type"] == "step_started" && e["step"] == "rollout")
                && events.iter().any(|e| e["type"] == "workload")
        },
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.kill().unwrap();
    let live = child.wait_with_output().unwrap();
    assert_eq!(live.status.code(), None, "killed by SIGKILL");
    let live_lines = String::from_utf8_lossy(&live.stdout).into_owned();
    assert!(
        live_lines.contains("rollout   started") && !live_lines.contains("verdict:"),
        "killed mid-rollout: {live_lines}"
    );

    let out = replay(&sim, &[record.to_str().unwrap(), "--headless"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the record is cut short") && stderr.contains("before the verdict"),
        "{}",
        text(&out)
    );
    let replayed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        replayed.contains("rollout   started"),
        "replayed into the rollout: {replayed}"
    );
    assert!(
        live_lines.starts_with(&replayed),
        "the replay is a prefix of the live lines\n--- replayed\n{replayed}\n--- live\n{live_lines}"
    );
}

/// A record cut short replays to the cut and exits 1, saying so; a newer schema is refused
/// with exit 2; the lines up to the cut are the live ones.
#[test]
fn a_cut_record_exits_1_and_a_newer_one_exits_2() {
    let sim = Sim::start("all-green");
    let record = sim.home().join("full.ndjson");
    let run = landed(&sim, &["--record", record.to_str().unwrap()]);
    let bytes = std::fs::read(&record).unwrap();
    let cut = sim.home().join("cut.ndjson");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = replay(&sim, &[cut.to_str().unwrap(), "--headless"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cut short"),
        "{}",
        text(&out)
    );
    let replayed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !replayed.is_empty() && run.stdout.starts_with(&replayed),
        "{replayed}"
    );

    let mut newer = lines(&record);
    newer[0]["schema"] = Value::from(99);
    let text_of: Vec<String> = newer.iter().map(|v| v.to_string() + "\n").collect();
    let future = sim.home().join("future.ndjson");
    std::fs::write(&future, text_of.concat()).unwrap();
    let out = replay(&sim, &[future.to_str().unwrap(), "--headless"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("newer helmdeck (record schema 99"),
        "{}",
        text(&out)
    );
    assert!(out.stdout.is_empty());
}

/// `--record FILE` creates FILE exclusively, owner-only: an existing file or a symlink planted
/// there is refused before the first cluster request (exit 2) and left as it was.
#[test]
fn record_refuses_an_existing_file_or_a_symlink_and_creates_it_owner_only() {
    let sim = Sim::start("all-green");
    let home = sim.home();
    let taken = home.join("taken.ndjson");
    std::fs::write(&taken, "keep me\n").unwrap();
    let target = home.join("target.txt");
    let dangling = home.join("dangling.ndjson");
    std::os::unix::fs::symlink(&target, &dangling).unwrap();
    let kept = home.join("kept.txt");
    std::fs::write(&kept, "mine\n").unwrap();
    let linked = home.join("linked.ndjson");
    std::os::unix::fs::symlink(&kept, &linked).unwrap();
    for path in [&taken, &dangling, &linked] {
        let run = sim.deploy(&["--timeout", "60s", "--record", path.to_str().unwrap()]);
        assert_eq!(run.code, Some(2), "{}: {}", path.display(), run.describe());
        assert!(
            run.stderr.contains("--record"),
            "{}: {}",
            path.display(),
            run.describe()
        );
    }
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "keep me\n");
    assert!(
        !target.exists(),
        "nothing written through the dangling link"
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine\n");
    assert_eq!(
        sim.get_json("/_sim/stats")["writes"],
        0,
        "refused before the cluster"
    );

    let fresh = home.join("fresh.ndjson");
    landed(&sim, &["--record", fresh.to_str().unwrap()]);
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// `--events -` and `--record FILE` in one run: the stream is the file, line for line.
#[test]
fn the_event_stream_is_the_record_file_line_for_line() {
    let sim = Sim::start("all-green");
    let record = sim.home().join("both.ndjson");
    let run = landed(
        &sim,
        &["--events", "-", "--record", record.to_str().unwrap()],
    );
    let kept = std::fs::read_to_string(&record).unwrap();
    assert!(kept.lines().count() > 10, "{kept}");
    assert_eq!(run.stdout, kept);
}

/// `helmdeck demo` keeps a record too (in the state directory): it replays the demo's lines
/// (after its one-line scenario banner, which is not an event) and rebuilds its report.
#[test]
fn the_demo_keeps_a_record_that_replays_it() {
    let sim = Sim::start("all-green");
    let report = sim.home().join("demo-report.json");
    let out = sim
        .helmdeck_command(&[
            "demo",
            "--headless",
            "--scenario",
            "all-green",
            "--report",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let live = crate::support::finish(out, &report, std::time::Instant::now());
    assert_eq!(live.code, Some(0), "{}", live.describe());
    let dir = sim.home().join(".local/state/helmdeck");
    let records: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let header = &lines(&records[0])[0];
    assert!(
        header["title"]
            .as_str()
            .is_some_and(|t| t.contains("all-green")),
        "{header}"
    );
    let rebuilt = sim.home().join("rebuilt.json");
    let out = replay(
        &sim,
        &[
            records[0].to_str().unwrap(),
            "--headless",
            "--report",
            rebuilt.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (banner, rest) = live.stdout.split_once('\n').unwrap();
    assert!(
        banner.starts_with("helmdeck demo · scenario all-green"),
        "{banner}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), rest);
    let rebuilt: Value = serde_json::from_str(&std::fs::read_to_string(&rebuilt).unwrap()).unwrap();
    assert_eq!(rebuilt, live.report);
}
