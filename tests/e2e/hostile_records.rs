//! Records are untrusted input: escape sequences written into one are inert on every output of
//! `replay`, and the state directory holding them is private and safe to list.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Sim, text, with_init};

/// A terminal title, a screen clear and an OSC 52 clipboard write, around visible text.
fn hostile(marker: &str) -> String {
    let (a, b) = marker.split_at(marker.len() / 2);
    format!("{a}\u{1b}]0;pwned\u{7}\u{1b}[2J{b}\u{1b}]52;c;ZXZpbA==\u{7}")
}

/// Whether `bytes` hold an ESC or BEL: what would start or end a sequence on a terminal.
fn has_control(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| *b == 0x1b || *b == 0x07)
}

/// A real record with hostile text put into its title, notes, helm lines, logs and verdict.
fn poison(record: &Path) -> Vec<&'static str> {
    let mut lines: Vec<Value> = std::fs::read_to_string(record)
        .expect("the record")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let mut hit = vec![];
    lines[0]["title"] = hostile("TITLEMARK").into();
    lines[0]["plan"]["release"] = hostile("demo").into();
    for line in &mut lines[1..] {
        let event = &mut line["event"];
        let (field, marker) = match event["type"].as_str() {
            Some("note") => ("text", "NOTEMARK"),
            Some("helm_line") => ("text", "HELMMARK"),
            Some("log") => ("text", "LOGMARK"),
            Some("verdict") => ("reason", "REASONMARK"),
            _ => continue,
        };
        let old = event[field].as_str().unwrap_or("").to_string();
        event[field] = format!("{old} {}", hostile(marker)).into();
        hit.push(marker);
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(record, text).expect("write the poisoned record");
    hit
}

/// `replay --headless --report` of a record holding ESC/OSC sequences in its title, notes,
/// helm lines, logs and verdict: no ESC or BEL byte reaches stdout or the rebuilt report, and
/// the visible text around the sequences is kept.
#[test]
fn hostile_text_in_a_record_is_inert_in_replay_and_its_report() {
    let sim = Sim::start("all-green");
    let record = sim.home().join("run.ndjson");
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--record",
        record.to_str().unwrap(),
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let hit = poison(&record);
    for needed in ["NOTEMARK", "HELMMARK", "REASONMARK"] {
        assert!(
            hit.contains(&needed),
            "the record has no {needed} field: {hit:?}"
        );
    }
    let report = sim.home().join("rebuilt.json");
    let out = sim
        .helmdeck_command(&[
            "replay",
            record.to_str().unwrap(),
            "--headless",
            "--report",
            report.to_str().unwrap(),
        ])
        .output()
        .expect("run helmdeck replay");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report_bytes = std::fs::read(&report).expect("the rebuilt report");
    assert!(!has_control(&out.stdout), "{}", text(&out));
    assert!(!has_control(&out.stderr), "{}", text(&out));
    assert!(
        !has_control(&report_bytes),
        "{}",
        String::from_utf8_lossy(&report_bytes)
    );
    // JSON escapes would hide a raw byte from the check above: the parsed strings are clean too.
    let parsed: Value = serde_json::from_slice(&report_bytes).expect("the report is JSON");
    let flat = parsed.to_string();
    assert!(
        !flat.contains("\\u001b") && !flat.contains("\\u0007"),
        "{flat}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen = format!("{stdout}{flat}");
    for marker in ["NOTEMARK", "HELMMARK", "REASONMARK"] {
        assert!(seen.contains(marker), "{marker} lost: {}", text(&out));
    }
    assert!(
        !seen.contains("pwned") && !seen.contains("ZXZpbA"),
        "{seen}"
    );
}

/// Waits for `child` at most `limit`; killed and failed past it.
fn bounded(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    loop {
        if child.try_wait().expect("poll the child").is_some() {
            return child.wait_with_output().expect("its output");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("its output");
            panic!("{what} still running after {limit:?}: {}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A 0777 state directory made beforehand is tightened to 0700 by the deploy that records into
/// it; a FIFO named like a record there is skipped by `replay --list`, which returns promptly.
#[test]
fn a_loose_state_dir_is_tightened_and_a_fifo_in_it_never_hangs_the_list() {
    let sim = Sim::start("all-green");
    let dir = sim.home().join(".local/state/helmdeck");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let run = sim.deploy(&["--timeout", "60s", "--optional", "*"]);
    assert!(run.code.is_some(), "{}", run.describe());
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", run.describe());

    let fifo = dir.join("helmdeck-sim_apps_demo_20261201T000000.000Z_f.ndjson");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let child = sim
        .helmdeck_command(&["replay", "--list"])
        .stdin(Stdio::null())
        .spawn()
        .expect("run helmdeck replay --list");
    // Listing a few files takes milliseconds; a blocked open never ends.
    let out = bounded(child, Duration::from_secs(30), "replay --list");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("apps/demo"),
        "the real record is listed: {listed}"
    );
    assert!(!listed.contains("_f.ndjson"), "the FIFO is not: {listed}");
}
