//! GitHub Actions: workflow-command annotations for the verdict and each problem, and a Markdown
//! job summary. Pure formatting; the headless renderer decides when (`GITHUB_ACTIONS=true`) and
//! where they go.

use crate::engine::event::{Step, StepOutcome};
use crate::engine::state::DeployState;

/// The message part of a workflow command: GitHub reads `%`, CR and LF as its own escapes, and a
/// raw newline would end the command and start a line the runner might read as another one.
pub fn escape_data(s: &str) -> String {
    // Each line made plain (no terminal controls, no lone CR), the line breaks kept as GitHub's.
    s.split('\n')
        .map(crate::text::plain)
        .collect::<Vec<_>>()
        .join("\n")
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value (`title=…`): also `:` and `,`, which end a property.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation line per problem, then one for the verdict: errors when the deploy failed,
/// warnings when it is live with the init incomplete, a notice when it landed.
pub fn annotations(state: &DeployState) -> Vec<String> {
    let Some(v) = &state.verdict else {
        return vec![format!(
            "::error title={}::{}",
            escape_property("helmdeck: no verdict"),
            escape_data("the deploy ended without a verdict (fail closed)")
        )];
    };
    let level = match v.code() {
        0 => "notice",
        3 => "warning",
        _ => "error",
    };
    let problem_level = if v.code() == 0 { "warning" } else { level };
    let mut lines: Vec<String> = v
        .evidence
        .iter()
        .map(|e| {
            format!(
                "::{problem_level} title={}::{}",
                escape_property(&format!("helmdeck {}", state.plan.release)),
                escape_data(e)
            )
        })
        .collect();
    let mut message = v.reason.clone();
    if let Some(next) = &v.next {
        message.push_str(&format!("\nnext: {next}"));
    }
    lines.push(format!(
        "::{level} title={}::{}",
        escape_property(&format!(
            "helmdeck {}: {} (exit {})",
            state.plan.release,
            v.outcome.title(),
            v.code()
        )),
        escape_data(&message)
    ));
    lines
}

/// Text inside a Markdown table cell or list item: GitHub renders the summary's HTML too, so
/// `<` and `&` are escaped, and `|` would split the cell.
fn md(s: &str) -> String {
    crate::text::plain(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('`', "'")
}

/// The job summary: the verdict, the step table, the problems and what to do next.
pub fn summary(state: &DeployState) -> String {
    let mut out = format!(
        "## helmdeck · {} in {}\n\n",
        md(&state.plan.release),
        md(&state.plan.namespace)
    );
    match &state.verdict {
        Some(v) => out.push_str(&format!(
            "**{}** (exit {}): {}\n\n",
            v.outcome.title(),
            v.code(),
            md(&v.reason)
        )),
        None => out.push_str("**FAILED** (exit 1): the deploy ended without a verdict\n\n"),
    }
    out.push_str("| step | status | seconds | reason |\n| --- | --- | ---: | --- |\n");
    for step in Step::ALL {
        let s = state.steps.get(&step);
        let (status, reason) = match s.and_then(|s| s.outcome.as_ref()) {
            Some(StepOutcome::Succeeded) => ("✓ succeeded", String::new()),
            Some(StepOutcome::Failed { reason }) => ("✗ failed", md(reason)),
            Some(StepOutcome::Skipped { reason }) => ("– skipped", md(reason)),
            Some(StepOutcome::Cancelled) => ("✗ cancelled", String::new()),
            None if s.and_then(|s| s.started_at.as_ref()).is_some() => {
                ("… unfinished", String::new())
            }
            None => ("not run", String::new()),
        };
        let secs = s
            .and_then(|s| Some(s.ended_secs? - s.started_secs?))
            .map(|d| format!("{d:.1}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "| {} | {status} | {secs} | {reason} |\n",
            step.name()
        ));
    }
    if let Some(v) = &state.verdict {
        if !v.evidence.is_empty() {
            out.push_str("\n### Problems\n\n");
            for e in &v.evidence {
                out.push_str(&format!("- {}\n", md(e)));
            }
        }
        if let Some(next) = &v.next {
            out.push_str(&format!("\nNext: <code>{}</code>\n", md(next)));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::state::PlanSummary;
    use crate::engine::verdict::{Outcome, Verdict};

    fn failed() -> DeployState {
        let mut state = DeployState::new(PlanSummary {
            release: "demo".into(),
            namespace: "apps".into(),
            ..PlanSummary::default()
        });
        state.verdict = Some(Verdict {
            outcome: Outcome::Failed,
            reason: "rollout failed: 1 workload not ready".into(),
            evidence: vec!["Deployment/web: 50% | CrashLoopBackOff, <b>x</b>".into()],
            next: Some("helmdeck deploy demo ./chart --only rollout".into()),
        });
        state
    }

    /// `%`, CR and LF in a message, and also `:` and `,` in a property, are escaped as GitHub
    /// requires: none of them ends the command early.
    #[test]
    fn workflow_command_text_is_escaped() {
        assert_eq!(escape_data("50% a\nb: c, d"), "50%25 a%0Ab: c, d");
        assert!(!escape_data("a\rb\u{1b}[2J").contains(['\r', '\u{1b}']));
        assert_eq!(escape_property("a: b, 5%"), "a%3A b%2C 5%25");
    }

    /// A failed verdict: one `::error` per problem, then the verdict's own with its title, each a
    /// single line even when the next command follows the reason.
    #[test]
    fn a_failed_verdict_annotates_each_problem_and_the_verdict() {
        let lines = annotations(&failed());
        assert_eq!(
            lines,
            [
                "::error title=helmdeck demo::Deployment/web: 50%25 | CrashLoopBackOff, <b>x</b>",
                "::error title=helmdeck demo%3A FAILED (exit 1)::rollout failed: 1 workload not ready%0Anext: helmdeck deploy demo ./chart --only rollout",
            ]
        );
        assert!(lines.iter().all(|l| !l.contains('\n')));
    }

    /// Live with the init incomplete warns; a landed run gets a notice; no verdict is an error.
    #[test]
    fn the_annotation_level_follows_the_exit_code() {
        let mut state = failed();
        if let Some(v) = state.verdict.as_mut() {
            v.outcome = Outcome::LiveInitIncomplete;
        }
        assert!(
            annotations(&state)
                .iter()
                .all(|l| l.starts_with("::warning "))
        );
        if let Some(v) = state.verdict.as_mut() {
            v.outcome = Outcome::Landed;
            v.evidence.clear();
        }
        let lines = annotations(&state);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("::notice title=helmdeck demo%3A LANDED"));
        state.verdict = None;
        assert!(annotations(&state)[0].starts_with("::error "));
    }

    /// The summary's table cells cannot be split by `|` nor carry HTML from cluster text.
    #[test]
    fn the_summary_escapes_cluster_text() {
        let summary = summary(&failed());
        assert!(summary.contains("**FAILED** (exit 1): rollout failed"));
        assert!(summary.contains("| preflight | not run |  |  |"));
        assert!(
            summary.contains("- Deployment/web: 50% \\| CrashLoopBackOff, &lt;b&gt;x&lt;/b&gt;")
        );
        assert!(!summary.contains("<b>"));
    }
}
