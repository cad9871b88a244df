//! `watch --follow`: the verdict of every revision judged so far, oldest first, one line each
//! (glyph, revision, the banner word, the exit code, when, the reason). The screen above it
//! shows the revision followed now; this pane is what an operator who looked away missed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::engine::verdict::Verdict;
use crate::ui::fit;
use crate::ui::panes::{DeployFrame, banner, pane_block};

/// Verdicts a follow keeps (the newest): one a revision would grow a follow left running for
/// days without bound; the pane shows a screen's worth anyway.
pub const HISTORY_KEPT: usize = 100;

/// One judged revision of a followed release.
#[derive(Debug, Clone)]
pub struct Judged {
    /// `None` when the pass ended before a revision was named (a timeout, an unreadable record).
    pub revision: Option<i64>,
    pub verdict: Verdict,
    /// The wall clock of the verdict (RFC 3339), shown as the time of day.
    pub at: Option<String>,
    /// The verdict's plain lines, as headless prints them: left in the scrollback on the way out.
    pub lines: Vec<String>,
}

/// Adds a verdict to `history`, dropping the oldest past [`HISTORY_KEPT`]; returns how many
/// were dropped (0 or 1).
pub fn remember(history: &mut Vec<Judged>, judged: Judged) -> usize {
    history.push(judged);
    let over = history.len().saturating_sub(HISTORY_KEPT);
    history.drain(..over);
    over
}

/// The rows the pane takes: none without history, else its newest lines (as many as `max`
/// leaves room for) and two borders.
pub fn height(history: &[Judged], max: u16) -> u16 {
    if history.is_empty() {
        return 0;
    }
    (history.len() as u16).min(max.saturating_sub(2).max(1)) + 2
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame) {
    let t = &ctx.theme;
    let history = ctx.history;
    // With history on screen the watch follows: a verdict shown is the last one, and the
    // engine already waits for the revision after it.
    let waiting = ctx.state.verdict.is_some();
    let mut title = vec![Span::raw("History")];
    let n = history.len();
    title.push(Span::styled(
        format!(
            "  {n} {}verdict{}{}",
            if n >= HISTORY_KEPT { "newest " } else { "" },
            if n == 1 { "" } else { "s" },
            if waiting {
                " · following: waiting for the next revision"
            } else {
                " · following"
            }
        ),
        t.muted(),
    ));
    let block = pane_block(title, false, t);
    let inner = block.inner(area);
    let shown = (inner.height as usize).min(n);
    let width = inner.width as usize;
    let lines: Vec<Line> = history[n - shown..]
        .iter()
        .map(|j| {
            let v = &j.verdict;
            let revision = match j.revision {
                Some(r) => format!("revision {r}"),
                None => "no revision".to_string(),
            };
            let at = j.at.as_deref().and_then(fit::clock).unwrap_or_default();
            let head = format!(
                "{} {revision:<12} {} exit {} {at}  ",
                banner::glyph(v.outcome),
                v.outcome.title(),
                v.code()
            );
            let room = width.saturating_sub(fit::width(&head));
            Line::from(vec![
                Span::styled(head, t.outcome(v.outcome)),
                Span::raw(fit::end(&fit::inert(&v.reason), room).into_owned()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::verdict::Outcome;

    fn judged(revision: i64) -> Judged {
        Judged {
            revision: Some(revision),
            verdict: Verdict {
                outcome: Outcome::Landed,
                reason: format!("revision {revision}"),
                evidence: vec![],
                next: None,
            },
            at: None,
            lines: vec![],
        }
    }

    /// A follow keeps its newest verdicts only: past the cap each new one drops the oldest.
    #[test]
    fn a_follow_keeps_the_newest_verdicts_only() {
        let mut history = Vec::new();
        let mut dropped = 0;
        for r in 1..=(HISTORY_KEPT as i64 + 5) {
            dropped += remember(&mut history, judged(r));
        }
        assert_eq!(dropped, 5);
        assert_eq!(history.len(), HISTORY_KEPT);
        assert_eq!(history[0].revision, Some(6));
        assert_eq!(
            history.last().unwrap().revision,
            Some(HISTORY_KEPT as i64 + 5)
        );
    }
}
