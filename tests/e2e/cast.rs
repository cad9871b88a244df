//! `helmdeck replay RECORD --cast FILE`: a real deploy's record, cast without a terminal, read
//! back by a terminal emulator (vt100) ends on the replay screen's last frame.

use std::num::NonZeroU16;
use std::path::Path;

use serde_json::Value;

use crate::support::{Sim, text, with_init};

/// The cast's header and its `[t, "o", bytes]` events, in time order.
fn parse(path: &Path) -> (Value, Vec<(f64, String)>) {
    let cast = std::fs::read_to_string(path).expect("the cast");
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header")).expect("JSON");
    let events: Vec<(f64, String)> = lines
        .map(|l| {
            let (t, kind, out): (f64, String, String) =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(kind, "o");
            (t, out)
        })
        .collect();
    assert!(
        events.windows(2).all(|w| w[0].0 <= w[1].0),
        "the events are in time order"
    );
    (header, events)
}

/// The rows of a test frame as drawn (`"row"` lines first).
fn rows_of(frame: &str, height: u16) -> Vec<String> {
    frame
        .lines()
        .take(height.into())
        .map(|l| {
            let inner = l.strip_prefix('"').expect("a quoted row");
            inner[..inner.rfind('"').expect("a closing quote")]
                .trim_end()
                .to_string()
        })
        .collect()
}

#[test]
fn a_recorded_deploy_cast_ends_on_the_replays_last_screen() {
    let sim = Sim::start("all-green");
    let record = sim.home().join("run.ndjson");
    let live = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--record",
        record.to_str().unwrap(),
    ]));
    assert_eq!(live.code, Some(0), "{}", live.describe());
    let cast = sim.home().join("run.cast");
    let out = sim
        .helmdeck_command(&[
            "replay",
            record.to_str().unwrap(),
            "--cast",
            cast.to_str().unwrap(),
            "--size",
            "100x30",
            "--speed",
            "4",
        ])
        .output()
        .expect("run helmdeck replay --cast");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("wrote "),
        "{}",
        text(&out)
    );
    let (header, events) = parse(&cast);
    assert_eq!(header["version"], 2);
    assert_eq!(
        (header["width"].clone(), header["height"].clone()),
        (100.into(), 30.into())
    );
    let kept = helmdeck::record::reader::read(&record).expect("a readable record");
    let started: jiff::Timestamp = kept.header.started.parse().unwrap();
    assert_eq!(header["timestamp"], started.as_second());
    let end = events.last().expect("events").0;
    let last = kept.lines.last().unwrap().t;
    assert!(
        (end * 4.0 - last).abs() < 1e-3,
        "at speed 4 the cast ends at {end}, the record at {last}"
    );
    let n = |v: u16| NonZeroU16::new(v).unwrap();
    let mut vt = vt100::Parser::new(n(30), n(100), 0);
    for (_, bytes) in &events {
        vt.process(bytes.as_bytes());
    }
    let shown: Vec<String> = vt
        .screen()
        .rows(0, 100)
        .map(|r| r.trim_end().to_string())
        .collect();
    let now = kept.wall(kept.fold().now_secs).parse().ok();
    let tick = (end * 1e6).round() as u64 / helmdeck::ui::REPLAY_TICK.as_micros() as u64;
    let expected = helmdeck::ui::replay_final_frame_at(&kept, now, (100, 30), tick);
    assert_eq!(shown, rows_of(&expected, 30));
    assert!(shown.join("\n").contains("exit 0"), "{}", shown.join("\n"));
}

/// A size the screen cannot take is refused in one line before the record is read, and
/// nothing is written.
#[test]
fn a_bad_cast_size_is_a_usage_error_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cast = dir.path().join("out.cast");
    for size in ["120", "10x5", "axb", "120x36x2", "0x0"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_helmdeck"))
            .args(["replay", "missing.ndjson", "--cast"])
            .arg(&cast)
            .args(["--size", size])
            .output()
            .expect("run helmdeck");
        assert_eq!(out.status.code(), Some(2), "{size}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("--size"), "{stderr}");
        assert!(!cast.exists());
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .args(["replay", "missing.ndjson", "--cast"])
        .arg(dir.path().join("no/such/dir/out.cast"))
        .output()
        .expect("run helmdeck");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--cast"),
        "{}",
        text(&out)
    );
}
