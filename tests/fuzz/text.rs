//! The sanitizer (crates/helmdeck-formats/src/text.rs) and the width cuts (src/ui/fit.rs): whatever goes in, what comes
//! out is inert (no ESC, C0, C1 or BiDi control) and bounded, and nothing panics.

use helmdeck::text::{self, Keep, MAX_LINE_CHARS};
use helmdeck::time::AgeStyle;
use helmdeck::ui::fit;
use proptest::collection::vec;
use proptest::prelude::*;

use crate::fuzz;
use crate::inputs::hostile_text;

/// Characters that reorder or hide text on screen (Unicode's BiDi controls, the zero-width
/// characters and the BOM). Listed here again on purpose: the test states the promise
/// independently of the code it checks.
fn is_bidi_or_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{061C}' | '\u{FEFF}')
}

/// No escape sequence, no C0/DEL/C1 control, no BiDi control.
fn assert_inert(out: &str, input: &str) -> Result<(), TestCaseError> {
    if let Some(c) = out
        .chars()
        .find(|&c| c.is_control() || is_bidi_or_invisible(c))
    {
        return Err(TestCaseError::fail(format!(
            "{c:?} survived in {out:?} (from {input:?})"
        )));
    }
    Ok(())
}

/// The marker the sanitizer appends to a capped line.
fn cap_marker(out: &str) -> bool {
    out.rsplit_once("…[").is_some_and(|(_, tail)| {
        tail.strip_suffix(" more characters]")
            .is_some_and(|n| n.parse::<usize>().is_ok_and(|n| n > 0))
    })
}

/// Bounded: at most the cap, plus the marker when something was cut.
fn assert_capped(out: &str) -> Result<(), TestCaseError> {
    let chars = out.chars().count();
    if chars > MAX_LINE_CHARS {
        prop_assert!(cap_marker(out), "over the cap without the marker");
        prop_assert!(chars <= MAX_LINE_CHARS + 40, "{chars} characters");
    }
    Ok(())
}

/// Removes SGR sequences (`ESC [ digits/; m`); fails on any other use of ESC.
fn strip_sgr(out: &str) -> Result<String, TestCaseError> {
    let mut rest = out;
    let mut plain = String::new();
    while let Some(i) = rest.find('\u{1b}') {
        plain.push_str(&rest[..i]);
        let seq = &rest[i + 1..];
        let body = seq
            .strip_prefix('[')
            .ok_or_else(|| TestCaseError::fail(format!("ESC not followed by [ in {out:?}")))?;
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .ok_or_else(|| TestCaseError::fail(format!("unterminated SGR in {out:?}")))?;
        prop_assert_eq!(
            body[end..].chars().next(),
            Some('m'),
            "non-SGR sequence kept in {:?}",
            out
        );
        rest = &body[end + 1..];
    }
    plain.push_str(rest);
    Ok(plain)
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn sanitizer_plain() {
    fuzz("sanitizer_plain", hostile_text, |input| {
        let out = text::plain(&input);
        assert_inert(&out, &input)?;
        assert_capped(&out)?;
        if out.chars().count() <= MAX_LINE_CHARS {
            prop_assert_eq!(text::plain(&out), out.clone(), "not idempotent");
        }
        let ordinary = input.chars().count() <= MAX_LINE_CHARS
            && !input
                .chars()
                .any(|c| c.is_control() || is_bidi_or_invisible(c));
        if ordinary {
            prop_assert_eq!(&out, &input, "ordinary text changed");
        }
        Ok(())
    });
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn sanitizer_keeps_only_sgr() {
    fuzz("sanitizer_keeps_only_sgr", hostile_text, |input| {
        let out = text::sanitize_line(&input, Keep::Colours);
        let without = strip_sgr(&out)?;
        assert_inert(&without, &input)?;
        // Keeping colours changes nothing else.
        prop_assert_eq!(without, text::plain(&input));
        Ok(())
    });
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn sanitizer_bytes() {
    let bytes = || {
        prop_oneof![
            vec(any::<u8>(), 0..256),
            hostile_text().prop_map(String::into_bytes),
        ]
    };
    fuzz("sanitizer_bytes", bytes, |input| {
        let out = text::plain_bytes(&input);
        assert_inert(&out, &String::from_utf8_lossy(&input))?;
        assert_capped(&out)?;
        Ok(())
    });
}

/// The widths the UI asks for: none, tiny, a pane, wider than any line here.
fn columns() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..6, 0usize..200, Just(usize::MAX / 2)]
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn fit_inert() {
    fuzz("fit_inert", hostile_text, |input| {
        let out = fit::inert(&input);
        assert_inert(&out, &input)?;
        // The sanitizer's cap in bytes, plus its marker.
        prop_assert!(out.len() <= MAX_LINE_CHARS * 4 + 64, "{} bytes", out.len());
        if input
            .chars()
            .all(|c| !c.is_control() && !is_bidi_or_invisible(c))
            && input.len() <= MAX_LINE_CHARS * 4
        {
            prop_assert_eq!(out.as_ref(), input.as_str(), "ordinary text changed");
        }
        Ok(())
    });
}

/// The cuts measured on what the UI gives them: text made inert first (a control character has
/// no width of its own, so widths of raw text mean nothing on screen).
#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn fit_cuts_by_width() {
    let inert = || hostile_text().prop_map(|s| fit::inert(&s).into_owned());
    fuzz(
        "fit_cuts_by_width",
        || (inert(), columns()),
        |(input, max)| {
            let end = fit::end(&input, max);
            prop_assert!(
                fit::width(&end) <= max,
                "end: {:?} is wider than {}",
                end,
                max
            );
            if end != input {
                let kept = end.strip_suffix('…').unwrap_or(&end);
                prop_assert!(input.starts_with(kept), "end: {:?} is not a prefix", kept);
            }

            let middle = fit::middle(&input, max);
            prop_assert!(
                fit::width(&middle) <= max,
                "middle: {:?} is wider than {}",
                middle,
                max
            );

            for p in &fit::wrap(&input, max) {
                // A character wider than the whole width stands alone.
                prop_assert!(
                    fit::width(p) <= max.max(1) || p.chars().count() == 1,
                    "wrap: {:?} is wider than {}",
                    p,
                    max.max(1)
                );
            }

            let cols = max.min(300);
            let padded = fit::pad(&input, cols);
            prop_assert!(
                fit::width(&padded) >= cols,
                "pad: {:?} is narrower than {}",
                padded,
                cols
            );
            Ok(())
        },
    );
}

/// On raw text the cuts only promise not to panic and not to lose or invent text.
#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn fit_cuts_raw_text() {
    fuzz(
        "fit_cuts_raw_text",
        || (hostile_text(), columns()),
        |(input, max)| {
            let end = fit::end(&input, max);
            if end != input {
                let kept = end.strip_suffix('…').unwrap_or(&end);
                prop_assert!(input.starts_with(kept), "end: {:?} is not a prefix", kept);
            }
            let _ = fit::middle(&input, max);
            let pieces = fit::wrap(&input, max);
            prop_assert!(!pieces.is_empty());
            prop_assert_eq!(pieces.concat(), input.clone(), "wrap lost text");
            let padded = fit::pad(&input, max.min(300));
            prop_assert!(padded.starts_with(input.as_str()));
            Ok(())
        },
    );
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn fit_times_and_durations() {
    let time = || {
        prop_oneof![
            hostile_text(),
            "[0-9]{1,6}-[0-9]{1,2}-[0-9]{1,2}T[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\\.[0-9]{1,12})?(Z|[+-][0-9]{2}:[0-9]{2})",
        ]
    };
    fuzz(
        "fit_times_and_durations",
        || (time(), time(), any::<f64>(), any::<i64>()),
        |(a, b, secs, age)| {
            let _ = fit::between(&a, &b);
            let _ = fit::clock(&a);
            let now = "2026-12-01T10:00:00Z".parse().ok();
            let _ = fit::age_at(Some(&a), now);
            prop_assert!(!fit::duration(secs).is_empty());
            for style in [AgeStyle::Short, AgeStyle::Kubectl, AgeStyle::TwoUnits] {
                prop_assert!(!helmdeck::time::age(age, style).is_empty());
            }
            Ok(())
        },
    );
}
