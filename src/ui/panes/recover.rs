//! The `u` and `R` prompts: what would be rolled back, the exact command, and whether `y` may
//! run it. Lock text comes from the cluster (a record's description), so it is made inert.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};

use crate::ui::fit;
use crate::ui::panes::help::centered;
use crate::ui::panes::{DeployFrame, wrap_spans};
use crate::ui::recover;
use crate::ui::theme::Theme;

fn prompt(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    body: Vec<(Style, String)>,
    answer: Option<&str>,
    t: &Theme,
) {
    let width = area.width.saturating_sub(4).min(76);
    let inner = width.saturating_sub(4) as usize;
    let mut lines: Vec<Line> = Vec::new();
    for (style, text) in body {
        if text.is_empty() {
            lines.push(Line::from(""));
        } else {
            lines.extend(wrap_spans(&[(style, text)], inner));
        }
    }
    lines.push(Line::from(""));
    let mut keys = Vec::new();
    if let Some(what) = answer {
        keys.extend([
            Span::styled("y", t.key()),
            Span::raw(format!(": {what}    ")),
        ]);
    }
    keys.extend([Span::styled("n", t.key()), Span::raw(" / Esc: close")]);
    lines.push(Line::from(keys));
    let height = lines.len() as u16 + 2;
    let rect = centered(area, width, height);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(t.warn())
        .title(Span::styled(format!(" {title} "), t.warn()));
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(block.padding(Padding::horizontal(1))),
        rect,
    );
}

pub fn render_unlock(frame: &mut Frame, area: Rect, ctx: &DeployFrame) {
    let t = &ctx.theme;
    let Some(lock) = &ctx.state.lock else {
        return;
    };
    let release = fit::inert(&ctx.state.plan.release).into_owned();
    let mut body = vec![
        (
            t.bold(),
            format!("Release {release} is locked by a stuck operation"),
        ),
        (Style::new(), String::new()),
        (
            Style::new(),
            format!(
                "pending   revision {} ({}), written {}",
                lock.revision,
                fit::inert(&lock.status),
                fit::inert(&lock.age)
            ),
        ),
        (
            Style::new(),
            format!(
                "record    {}",
                lock.description
                    .as_deref()
                    .map_or("(no description in it)".into(), |d| fit::inert(d)
                        .into_owned())
            ),
        ),
        (
            Style::new(),
            format!(
                "deployed  {}",
                lock.last_deployed
                    .map_or("none: no revision was ever deployed".into(), |v| format!(
                        "revision {v}"
                    ))
            ),
        ),
        (Style::new(), String::new()),
    ];
    let answer = if lock.last_deployed.is_none() {
        body.push((
            Style::new(),
            "Nothing to roll back to. The command that deletes the stuck record (the release's \
             resources stay; the next deploy installs over them); helmdeck never runs it:"
                .into(),
        ));
        body.push((t.key(), fit::inert(&lock.command).into_owned()));
        None
    } else if let Some(why) = &lock.refusal {
        body.push((t.bad(), fit::inert(why).into_owned()));
        body.push((t.muted(), fit::inert(&lock.command).into_owned()));
        None
    } else {
        body.push((
            Style::new(),
            "y reads the lock again (another operator may have cleared it), runs:".into(),
        ));
        body.push((t.key(), fit::inert(&lock.command).into_owned()));
        body.push((
            Style::new(),
            "with its output in the helm pane, then carries on with the deploy.".into(),
        ));
        Some("roll it back and deploy")
    };
    prompt(frame, area, "stuck lock", body, answer, t);
}

pub fn render_rollback(frame: &mut Frame, area: Rect, ctx: &DeployFrame) {
    let t = &ctx.theme;
    let Some(to) = recover::rollback_offer(ctx.state) else {
        return;
    };
    let ours = ctx.state.revision.unwrap_or_default();
    let body = vec![
        (
            t.bold(),
            format!("Roll revision {ours} back to revision {to}?"),
        ),
        (Style::new(), String::new()),
        (
            Style::new(),
            "Runs, as --rollback-on-failure does, and tracks the new revision's rollout:".into(),
        ),
        (t.key(), recover::rollback_command(ctx.state, to)),
        (Style::new(), String::new()),
        (
            t.muted(),
            "The verdict stays 1: this run's revision failed either way.".into(),
        ),
    ];
    prompt(frame, area, "rollback?", body, Some("roll back"), t);
}
