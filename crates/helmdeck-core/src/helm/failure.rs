//! helm's own error, as it printed it on stderr when it failed. helm writes one `Error:` line
//! and, for errors that gather several causes ("2 errors occurred:"), the causes on the lines
//! after it; the first line alone often names no cause at all.

use crate::text;

/// Most lines of helm's error that the one-sentence reason carries; all of them go to evidence.
pub const REASON_LINES: usize = 5;

/// helm's error: from the last `Error:` line to the end of stderr, made plain, blank lines
/// dropped. Empty when helm printed no `Error:` line.
pub fn error_lines<S: AsRef<str>>(stderr_tail: &[S]) -> Vec<String> {
    let Some(start) = stderr_tail
        .iter()
        .rposition(|l| l.as_ref().starts_with("Error:"))
    else {
        return Vec::new();
    };
    stderr_tail[start..]
        .iter()
        .map(|l| text::plain(l.as_ref()).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The error as one reason: its first `REASON_LINES` lines joined by spaces, with a count of
/// the lines left out (they are whole in the evidence). `None` without an `Error:` line.
pub fn reason<S: AsRef<str>>(stderr_tail: &[S]) -> Option<String> {
    let lines = error_lines(stderr_tail);
    if lines.is_empty() {
        return None;
    }
    let mut out = lines[..lines.len().min(REASON_LINES)].join(" ");
    let more = lines.len().saturating_sub(REASON_LINES);
    if more > 0 {
        let s = if more == 1 { "" } else { "s" };
        out.push_str(&format!(" (+{more} more line{s} in the evidence)"));
    }
    Some(out)
}

/// helm's failure in helm's words, never a debug-printed status: its `Error:` lines (see
/// [`reason`]), else its last stderr line with how it ended, else how it ended. `what` names
/// the command (`helm`, `helm rollback`, `helm's dry run`).
pub fn in_helms_words<S: AsRef<str>>(
    what: &str,
    stderr_tail: &[S],
    code: Option<i32>,
    signal: Option<i32>,
) -> String {
    if let Some(reason) = reason(stderr_tail) {
        return reason;
    }
    let how = match (code, signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "an unknown exit".into(),
    };
    let last = stderr_tail
        .iter()
        .rev()
        .map(|l| text::plain(l.as_ref()).trim().to_string())
        .find(|l| !l.is_empty());
    match last {
        Some(line) => format!("{what} ended with {how}: {line}"),
        None => format!("{what} ended with {how} and printed nothing on stderr"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_CAUSES: [&str; 5] = [
        "WARNING: Kubernetes configuration file is group-readable.",
        "Error: UPGRADE FAILED: 2 errors occurred:",
        "\t* Deployment.apps \"demo-api\" is invalid: spec.selector: field is immutable",
        "\t* Service \"demo-web\" is invalid: spec.clusterIP: field is immutable",
        "",
    ];

    #[test]
    fn the_cause_lines_after_the_error_line_are_kept() {
        assert_eq!(
            error_lines(&TWO_CAUSES),
            vec![
                "Error: UPGRADE FAILED: 2 errors occurred:",
                "* Deployment.apps \"demo-api\" is invalid: spec.selector: field is immutable",
                "* Service \"demo-web\" is invalid: spec.clusterIP: field is immutable",
            ]
        );
        assert_eq!(
            reason(&TWO_CAUSES).as_deref(),
            Some(
                "Error: UPGRADE FAILED: 2 errors occurred: * Deployment.apps \"demo-api\" is \
                 invalid: spec.selector: field is immutable * Service \"demo-web\" is invalid: \
                 spec.clusterIP: field is immutable"
            )
        );
    }

    #[test]
    fn a_single_error_line_is_the_reason_and_only_the_last_error_counts() {
        let tail = [
            "Error: an older error",
            "retrying",
            "Error: context deadline exceeded",
        ];
        assert_eq!(
            reason(&tail).as_deref(),
            Some("Error: context deadline exceeded")
        );
        assert_eq!(reason(&["no error line here"]), None);
        assert!(error_lines::<&str>(&[]).is_empty());
    }

    #[test]
    fn at_most_five_lines_in_the_reason_the_rest_counted() {
        let mut tail = vec!["Error: 7 errors occurred:".to_string()];
        tail.extend((1..=7).map(|i| format!("\t* cause {i}")));
        assert_eq!(error_lines(&tail).len(), 8);
        assert_eq!(
            reason(&tail).as_deref(),
            Some(
                "Error: 7 errors occurred: * cause 1 * cause 2 * cause 3 * cause 4 \
                 (+3 more lines in the evidence)"
            )
        );
    }

    #[test]
    fn a_failure_is_said_in_helms_words_never_as_a_debug_status() {
        let tail = [
            "level=WARN msg=\"This chart contains CRDs.\"",
            "Error: unable to build kubernetes objects",
        ];
        assert_eq!(
            in_helms_words("helm", &tail, Some(1), None),
            "Error: unable to build kubernetes objects"
        );
        let last = in_helms_words("helm test", &["", "timed out\u{1b}[2J", ""], Some(1), None);
        assert!(
            last.starts_with("helm test ended with exit 1: timed out") && !last.contains('\u{1b}'),
            "{last}"
        );
        assert_eq!(
            in_helms_words::<&str>("helm rollback", &[], None, Some(9)),
            "helm rollback ended with signal 9 and printed nothing on stderr"
        );
        for said in [
            in_helms_words::<&str>("helm", &[], Some(1), None),
            in_helms_words::<&str>("helm", &[], None, None),
        ] {
            assert!(!said.contains("Some(") && !said.contains("None"), "{said}");
        }
    }

    #[test]
    fn control_characters_in_helm_output_are_made_plain() {
        let tail = ["Error: bad \u{1b}[31mred\u{1b}[0m", "\t* cause\u{7}"];
        let lines = error_lines(&tail);
        assert!(
            lines
                .iter()
                .all(|l| !l.contains('\u{1b}') && !l.contains('\u{7}'))
        );
    }
}
