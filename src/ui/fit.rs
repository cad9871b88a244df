//! Text made to fit a cell: by display width (wide characters count two), never by bytes.
//! Whatever the engine sent, what reaches the screen here is inert and bounded.

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::text;
use crate::time::{self, AgeStyle};

/// Longer strings are cut by the sanitizer before any width is measured.
const MAX_BYTES: usize = text::MAX_LINE_CHARS * 4;

pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// A column's width: its widest cell (display width), kept within `min..=max` (`min` when the
/// column is empty).
pub fn column<S: AsRef<str>>(cells: impl IntoIterator<Item = S>, min: usize, max: usize) -> usize {
    cells
        .into_iter()
        .map(|c| width(c.as_ref()))
        .max()
        .unwrap_or(min)
        .clamp(min, max)
}

fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// The text as plain, bounded, one-line text: a no-op (no copy) for ordinary text.
pub fn inert(s: &str) -> Cow<'_, str> {
    let hostile = s.len() > MAX_BYTES
        || s.chars()
            .any(|c| c.is_control() || text::is_bidi_or_invisible(c));
    if hostile {
        Cow::Owned(text::plain(s))
    } else {
        Cow::Borrowed(s)
    }
}

/// At most `max` columns wide, cut at the end with `…`.
pub fn end(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = prefix(s, max - 1).to_string();
    out.push('…');
    Cow::Owned(out)
}

/// The longest prefix at most `max` columns wide. Summing character widths can undercount
/// what the terminal draws (`❤` + VS16 is one column per character, two as a pair), so the
/// sum is checked against the width of the whole and the end trimmed while it is too wide.
fn prefix(s: &str, max: usize) -> &str {
    let mut end = 0;
    let mut w = 0;
    for (i, c) in s.char_indices() {
        let cw = char_width(c);
        if w + cw > max {
            break;
        }
        w += cw;
        end = i + c.len_utf8();
    }
    let mut cut = &s[..end];
    while width(cut) > max
        && let Some(last) = cut.chars().next_back()
    {
        cut = &cut[..cut.len() - last.len_utf8()];
    }
    cut
}

/// The longest suffix at most `max` columns wide (see [`prefix`]).
fn suffix(s: &str, max: usize) -> &str {
    let mut start = s.len();
    let mut w = 0;
    for (i, c) in s.char_indices().rev() {
        let cw = char_width(c);
        if w + cw > max {
            break;
        }
        w += cw;
        start = i;
    }
    let mut cut = &s[start..];
    while width(cut) > max
        && let Some(first) = cut.chars().next()
    {
        cut = &cut[first.len_utf8()..];
    }
    cut
}

/// At most `max` columns wide, cut in the middle with `…` (names keep both ends).
pub fn middle(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    if max < 3 {
        return end(s, max);
    }
    let room = max - 1;
    let tail_room = room / 2;
    let head_room = room - tail_room;
    let mut out = prefix(s, head_room).to_string();
    out.push('…');
    out.push_str(suffix(s, tail_room));
    Cow::Owned(out)
}

/// Padded with spaces to `w` columns (longer text is returned as is).
pub fn pad(s: &str, w: usize) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(width(s))));
    out
}

/// Splits into pieces of at most `max` columns (at least one piece, possibly empty).
pub fn wrap(s: &str, max: usize) -> Vec<&str> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let mut piece = prefix(rest, max);
        if piece.is_empty() {
            // A character wider than the whole width stands alone.
            let first = rest.chars().next().map_or(0, char::len_utf8);
            piece = &rest[..first];
        }
        rest = &rest[piece.len()..];
        out.push(piece);
        if rest.is_empty() {
            return out;
        }
    }
}

/// Human duration: `9.8s`, `42s`, `3m05s`, `1h02m`.
pub fn duration(secs: f64) -> String {
    let secs = secs.max(0.0);
    if secs < 10.0 {
        return format!("{secs:.1}s");
    }
    let s = secs as u64;
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// Seconds between two RFC 3339 times, when both parse.
pub fn between(from: &str, to: &str) -> Option<f64> {
    let a: jiff::Timestamp = from.parse().ok()?;
    let b: jiff::Timestamp = to.parse().ok()?;
    Some(b.duration_since(a).as_secs_f64())
}

/// Seconds from an RFC 3339 time to `now`.
pub fn since(from: &str, now: jiff::Timestamp) -> Option<f64> {
    let a: jiff::Timestamp = from.parse().ok()?;
    Some(now.duration_since(a).as_secs_f64())
}

/// The age of an RFC 3339 time at `now` (`5m`); blank when either is unknown.
pub fn age_at(at: Option<&str>, now: Option<jiff::Timestamp>) -> String {
    match (at, now) {
        (Some(at), Some(now)) => since(at, now)
            .map(|s| time::age(s as i64, AgeStyle::Short))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// `HH:MM:SS` (UTC) of an RFC 3339 time.
pub fn clock(at: &str) -> Option<String> {
    let t: jiff::Timestamp = at.parse().ok()?;
    Some(t.strftime("%H:%M:%S").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_by_display_width() {
        assert_eq!(end("hello", 5), "hello");
        assert_eq!(end("hello world", 6), "hello…");
        assert_eq!(width(&end("日本語のテキスト", 7)), 7);
        assert_eq!(end("日本語", 4), "日…");
        assert_eq!(end("abc", 0), "");
    }

    #[test]
    fn names_lose_their_middle() {
        assert_eq!(middle("demo-gpu-client-7c9f", 20), "demo-gpu-client-7c9f");
        let m = middle("demo-gpu-client-7c9f8d6b5-abcde", 15);
        assert_eq!(m, "demo-gp…5-abcde");
        assert_eq!(width(&m), 15);
    }

    #[test]
    fn wraps_wide_text_within_the_width() {
        let parts = wrap("ab日本cd", 3);
        assert_eq!(parts, vec!["ab", "日", "本c", "d"]);
        assert!(parts.iter().all(|p| width(p) <= 3));
        assert_eq!(wrap("", 5), vec![""]);
    }

    /// Found by tests/fuzz (fit_cuts_by_width): `❤` + VS16 is one column per character but two
    /// as a pair, so cuts that summed character widths came out a column too wide.
    #[test]
    fn emoji_presentation_sequences_stay_within_the_width() {
        let heart = "❤\u{fe0f}";
        assert_eq!(width(heart), 2);
        let s = format!("a{heart}b{heart}cd{heart}");
        for max in 0..=width(&s) {
            assert!(width(&end(&s, max)) <= max, "end {max}: {:?}", end(&s, max));
            assert!(
                width(&middle(&s, max)) <= max,
                "middle {max}: {:?}",
                middle(&s, max)
            );
            let pieces = wrap(&s, max);
            assert_eq!(pieces.concat(), s);
            assert!(
                pieces.iter().all(|p| width(p) <= max.max(1)),
                "wrap {max}: {pieces:?}"
            );
        }
        assert_eq!(
            end(&s, 3),
            "a❤…",
            "the heart loses its selector, and a column"
        );
        assert_eq!(wrap(&format!("{heart}A"), 1), ["❤", "\u{fe0f}A"]);
    }

    #[test]
    fn inert_strips_what_the_engine_should_have() {
        assert!(matches!(inert("plain text"), Cow::Borrowed(_)));
        assert_eq!(inert("a\u{1b}]0;x\u{7}b\u{202e}c"), "abc");
        let huge = "x".repeat(2_000_000);
        assert!(inert(&huge).len() < 5_000);
    }

    #[test]
    fn durations_and_ages() {
        assert_eq!(duration(9.84), "9.8s");
        assert_eq!(duration(185.0), "3m05s");
        assert_eq!(
            between("2026-12-01T10:00:00Z", "2026-12-01T10:00:04.5Z"),
            Some(4.5)
        );
        assert_eq!(
            clock("2026-12-01T10:02:03.123456Z").as_deref(),
            Some("10:02:03")
        );
    }
}
