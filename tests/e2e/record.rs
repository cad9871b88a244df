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
/// times as stamped).
fn round_trip(sim: &Sim, extra: &[&str]) -> DeployRun {
    let record = sim.home().join("run.ndjson");
    let record_arg = record.to_str().unwrap();
    let mut args = with_init(extra);
    args.extend(["--record", record_arg]);
    let live = sim.deploy(&args);
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
        live.stdout,
        "the replayed lines are the live ones"
    );
    let rebuilt: Value = serde_json::from_str(&std::fs::read_to_string(&rebuilt).unwrap()).unwrap();
    crate::support::check_report(&rebuilt);
    assert_eq!(rebuilt, live.report, "the rebuilt report is the live one");
    live
}

#[test]
fn replay_rebuilds_the_live_run_for_each_verdict() {
    let landed = round_trip(&Sim::start("all-green"), &["--timeout", "60s"]);
    assert_eq!(landed.code, Some(0));
    let rollout = round_trip(
        &Sim::start("optional-pending"),
        &["--timeout", "8s", "--set", "gpuClient.optional=false"],
    );
    assert_eq!(rollout.code, Some(1));
    assert_eq!(rollout.step("rollout")["status"], "failed");
    let hook = round_trip(&Sim::start("hook-fails"), &["--timeout", "60s"]);
    assert_eq!(hook.code, Some(1));
    assert_eq!(hook.step("upgrade")["status"], "failed");
    let init = round_trip(&Sim::start("init-fails"), &["--timeout", "60s"]);
    assert_eq!(init.code, Some(3));
}

/// Without `--record` the run is kept in `$XDG_STATE_HOME/helmdeck`, owner-only, named from the
/// release; `--list` shows it with its verdict; beyond 100 per release the oldest go.
#[test]
fn records_are_kept_in_the_state_dir_listed_and_pruned() {
    let sim = Sim::start("all-green");
    let dir = sim.home().join(".local/state/helmdeck");
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = "default_apps_demo_";
    for i in 0..100 {
        std::fs::write(
            dir.join(format!("{prefix}20000101T0000{i:02}000Z_old.ndjson")),
            "",
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("default_apps_other_20000101T000000000Z_x.ndjson"),
        "",
    )
    .unwrap();
    let run = sim.deploy(&with_init(&["--timeout", "60s"]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    assert_eq!(names.len(), 100, "pruned to 100 per release");
    assert!(
        !names.contains(&format!("{prefix}20000101T000000000Z_old.ndjson")),
        "the oldest went"
    );
    assert!(
        dir.join("default_apps_other_20000101T000000000Z_x.ndjson")
            .exists(),
        "other releases stay"
    );
    let newest: PathBuf = dir.join(names.last().unwrap());
    let mode = std::fs::metadata(&newest).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", newest.display());
    let header = &lines(&newest)[0];
    assert_eq!(header["record"], "helmdeck-record");
    assert_eq!(header["schema"], 1);
    assert!(
        header["command"].as_str().unwrap().contains("deploy demo"),
        "{header}"
    );

    let out = replay(&sim, &["--list", "demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let first = listed.lines().next().unwrap_or("");
    assert!(first.contains("apps/demo  LANDED (exit 0)"), "{listed}");
    assert!(first.contains(newest.to_str().unwrap()), "{listed}");
    assert!(!listed.contains("/other"), "{listed}");
}

/// `--events -`: stdout is the record and nothing else; `--no-record` keeps no file.
#[test]
fn events_stream_the_record_on_stdout_and_nothing_else() {
    let sim = Sim::start("all-green");
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--events",
        "-",
        "--no-record",
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
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
    assert!(
        live.stdout.contains("hunter2-in-a-file"),
        "the chart shows it live: the test is not vacuous"
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

/// A record cut short replays to the cut and exits 1, saying so; a newer schema is refused
/// with exit 2; the lines up to the cut are the live ones.
#[test]
fn a_cut_record_exits_1_and_a_newer_one_exits_2() {
    let sim = Sim::start("all-green");
    let record = sim.home().join("full.ndjson");
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--record",
        record.to_str().unwrap(),
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
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
