use super::*;
use crate::ui::fixture::Story;
use crate::ui::replay::tests::record_of;

/// A cast read back: its header and its events, checked for shape on the way.
pub(crate) struct Parsed {
    pub header: serde_json::Value,
    pub events: Vec<(f64, String)>,
}

pub(crate) fn parse(bytes: &[u8]) -> Parsed {
    let text = std::str::from_utf8(bytes).expect("a cast is UTF-8");
    let mut lines = text.lines();
    let header: serde_json::Value =
        serde_json::from_str(lines.next().expect("a header line")).expect("a JSON header");
    let events: Vec<(f64, String)> = lines
        .map(|l| {
            let (t, kind, out): (f64, String, String) =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(kind, "o", "only output events");
            (t, out)
        })
        .collect();
    assert!(!events.is_empty(), "at least the first frame");
    assert!(
        events.windows(2).all(|w| w[0].0 <= w[1].0),
        "the event times never go back: {:?}",
        events.iter().map(|e| e.0).collect::<Vec<_>>()
    );
    Parsed { header, events }
}

/// The screen a player shows once every event is played.
pub(crate) fn played(parsed: &Parsed) -> vt100::Parser {
    let w = parsed.header["width"].as_u64().expect("a width") as u16;
    let h = parsed.header["height"].as_u64().expect("a height") as u16;
    let nz = |n: u16| std::num::NonZeroU16::new(n).expect("a size above 0");
    let mut vt = vt100::Parser::new(nz(h), nz(w), 0);
    for (_, out) in &parsed.events {
        vt.process(out.as_bytes());
    }
    vt
}

/// The text rows of a drawn test frame (`"row"` lines, then the buffer's debug form).
pub(crate) fn rows_of(frame: &str, height: u16) -> Vec<String> {
    frame
        .lines()
        .take(height as usize)
        .map(|l| {
            let inner = l.strip_prefix('"').expect("a quoted row");
            let end = inner.rfind('"').expect("a closing quote");
            inner[..end].trim_end().to_string()
        })
        .collect()
}

fn screen_rows(vt: &vt100::Parser, width: u16) -> Vec<String> {
    vt.screen()
        .rows(0, width)
        .map(|r| r.trim_end().to_string())
        .collect()
}

/// The cast of a record, played by a terminal emulator, ends on the replay's last screen at
/// that size, its events in time order and at the record's times.
#[test]
fn a_cast_played_back_ends_on_the_replays_last_screen() {
    let stories = [Story::landed(), Story::failed(), Story::init_incomplete()];
    // One size each: every cast plays the whole record, frame by frame.
    for (story, (w, h)) in stories.iter().zip([(120, 36), (80, 24), (160, 48)]) {
        let record = crate::record::reader::parse(&record_of(story)).unwrap();
        let parsed = parse(&cast(&record, (w, h), 1.0).unwrap());
        assert_eq!(parsed.header["version"], 2);
        assert_eq!(parsed.header["width"], w);
        assert_eq!(parsed.header["height"], h);
        let t0: jiff::Timestamp = crate::ui::fixture::T0.parse().unwrap();
        assert_eq!(parsed.header["timestamp"], t0.as_second());
        assert_eq!(parsed.header["env"]["TERM"], "xterm-256color");
        assert_eq!(parsed.events[0].0, 0.0);
        let last = record.lines.last().unwrap().t;
        let end = parsed.events.last().unwrap().0;
        assert!(
            (end - last).abs() < 1e-3,
            "ends at {end}, the record at {last}"
        );
        let vt = played(&parsed);
        let now = record.wall(record.fold().now_secs).parse().ok();
        let tick = (end * 1e6).round() as u64 / TICK.as_micros() as u64;
        let expected = crate::ui::replay::final_frame_at(&record, now, (w, h), tick);
        assert_eq!(screen_rows(&vt, w), rows_of(&expected, h), "at {w}x{h}");
        let coloured = (0..h).any(|r| {
            (0..w).any(|c| {
                vt.screen()
                    .cell(r, c)
                    .is_some_and(|cell| cell.fgcolor() != vt100::Color::Default)
            })
        });
        assert!(coloured, "the cast keeps the screen's colours");
    }
}

/// `--speed 4` plays the record four times faster: the same last screen, a quarter of the time.
#[test]
fn the_speed_divides_the_casts_times() {
    let record = crate::record::reader::parse(&record_of(&Story::landed())).unwrap();
    let normal = parse(&cast(&record, (100, 30), 1.0).unwrap());
    let fast = parse(&cast(&record, (100, 30), 4.0).unwrap());
    let end = |p: &Parsed| p.events.last().unwrap().0;
    assert!((end(&fast) * 4.0 - end(&normal)).abs() < 1e-3);
    assert_eq!(
        screen_rows(&played(&fast), 100),
        screen_rows(&played(&normal), 100)
    );
}

/// A record cut short is cast to the cut, and its last screen says so.
#[test]
fn a_cut_record_is_cast_to_the_cut() {
    let bytes = record_of(&Story::landed());
    let record = crate::record::reader::parse(&bytes[..bytes.len() * 2 / 3]).unwrap();
    assert!(record.cut.is_some());
    let parsed = parse(&cast(&record, (120, 36), 1.0).unwrap());
    let shown = screen_rows(&played(&parsed), 120).join("\n");
    assert!(shown.contains("cut short"), "{shown}");
}
