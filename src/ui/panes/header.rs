//! Two lines: what is deployed where (release, namespace, context, chart, revisions, clock),
//! then the step strip `preflight ▸ upgrade ▸ rollout ▸ init ▸ verdict` with each step's state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::engine::event::RollbackStatus;
use crate::engine::event::{Step, StepOutcome};
use crate::engine::verdict::Outcome;
use crate::ui::fit;
use crate::ui::model::{self, Mark};
use crate::ui::panes::{DeployFrame, mark_style};
use crate::ui::theme::Theme;

fn chart_label(ctx: &DeployFrame) -> String {
    match &ctx.state.chart_version {
        Some(c) => c.clone(),
        None => {
            let path = ctx.state.plan.chart.trim_end_matches('/');
            path.rsplit('/').next().unwrap_or(path).to_string()
        }
    }
}

fn revision_label(ctx: &DeployFrame) -> String {
    let s = ctx.state;
    match (s.revision_before, s.revision) {
        (Some(b), Some(r)) => match s.rollback.as_ref().and_then(|rb| rb.revision) {
            Some(w) => format!("revision {b} → {r} ↺ {w}"),
            None => format!("revision {b} → {r}"),
        },
        (None, Some(r)) => format!("install → revision {r}"),
        (Some(b), None) if s.plan.only.is_some() => format!("revision {b}"),
        (Some(b), None) => format!("revision {b} → {}", b + 1),
        (None, None) => "new install".into(),
    }
}

/// The first line: identity on the left, the clock on the right.
fn title_line<'a>(ctx: &DeployFrame<'a>, width: usize) -> Line<'a> {
    let t = &ctx.theme;
    let s = ctx.state;
    let clock = format!(" {} ", fit::duration(ctx.elapsed));
    let mut facts = format!(
        " {} → {}",
        fit::inert(&s.plan.release),
        fit::inert(&s.plan.namespace)
    );
    if let Some(ctx) = ctx.context {
        facts.push_str(&format!(" @ {}", fit::inert(ctx)));
    }
    facts.push_str(&format!(
        " · {} · {}",
        fit::inert(&chart_label(ctx)),
        revision_label(ctx)
    ));
    if let Some(title) = ctx.title {
        facts.push_str(&format!(" · {}", fit::inert(title)));
    }
    brand_line(&facts, clock, width, t)
}

/// ` helmdeck ` reversed, then `facts` (cut to fit), then `clock` at the right edge.
pub fn brand_line<'a>(facts: &str, clock: String, width: usize, t: &Theme) -> Line<'a> {
    let brand = " helmdeck ";
    let room = width.saturating_sub(fit::width(brand) + fit::width(&clock));
    let facts = fit::end(facts, room).into_owned();
    let pad = room.saturating_sub(fit::width(&facts));
    Line::from(vec![
        Span::styled(brand, t.key().add_modifier(Modifier::REVERSED)),
        Span::styled(facts, t.bold()),
        Span::raw(" ".repeat(pad)),
        Span::styled(clock, t.muted()),
    ])
}

fn step_detail(ctx: &DeployFrame, step: Step, mark: Mark) -> String {
    let s = ctx.state;
    let st = s.steps.get(&step);
    match mark {
        Mark::Done => match st.and_then(|x| Some(x.ended_secs? - x.started_secs?)) {
            Some(d) => fit::duration(d),
            None => String::new(),
        },
        Mark::Running => {
            let since = st
                .and_then(|x| x.started_secs)
                .map(|at| fit::duration(ctx.elapsed - at))
                .unwrap_or_default();
            if step == Step::Rollout && !s.workloads.is_empty() {
                let gating = s.gating().count();
                let ready = s.gating().filter(|w| w.ready).count();
                format!("{ready}/{gating} gating ready {since}")
            } else {
                since
            }
        }
        Mark::Failed => "failed".into(),
        Mark::Cancelled => "cancelled".into(),
        Mark::Skipped => match st.and_then(|x| x.outcome.as_ref()) {
            Some(StepOutcome::Skipped { reason }) if reason.starts_with("not configured") => {
                "not configured".into()
            }
            _ => "skipped".into(),
        },
        Mark::Pending | Mark::Optional => String::new(),
    }
}

/// One part of the step strip: a step (or helmdeck's rollback, or the verdict) with its mark,
/// name and detail, and the glyph and style it is drawn with.
pub struct StripPart {
    pub mark: Mark,
    pub name: String,
    pub detail: String,
    pub glyph: &'static str,
    pub style: Style,
    /// The last part: the verdict (pending until there is one).
    pub verdict: bool,
}

/// The step strip's parts, in order: the steps (the plan step only on runs that have one),
/// helmdeck's rollback when it ran, then the verdict. The deploy screen's header and the fleet
/// screen's rows draw the same parts.
pub fn strip_parts(ctx: &DeployFrame, tick: u64) -> Vec<StripPart> {
    let t = &ctx.theme;
    // The plan step shows only on runs that have one (`--plan`).
    let planned = ctx.state.plan.plan;
    let steps: Vec<Step> = Step::ALL
        .into_iter()
        .flat_map(|s| {
            let plan = (s == Step::Preflight && planned).then_some(Step::Plan);
            std::iter::once(s).chain(plan)
        })
        .collect();
    let part = |mark: Mark, name: &str, detail: String| StripPart {
        mark,
        name: name.to_string(),
        detail,
        glyph: mark.glyph(tick),
        style: mark_style(mark, t),
        verdict: false,
    };
    let mut parts: Vec<StripPart> = steps
        .iter()
        .map(|step| {
            let mark = model::step_mark(ctx.state, *step);
            part(mark, step.name(), step_detail(ctx, *step, mark))
        })
        .collect();
    // helmdeck's rollback follows the failed steps: both revisions show.
    if let Some(rb) = &ctx.state.rollback {
        let mark = match rb.status {
            RollbackStatus::RolledBack => Mark::Done,
            RollbackStatus::Failed => Mark::Failed,
            RollbackStatus::Running => Mark::Running,
        };
        let detail = match rb.revision {
            Some(w) => format!("{} → {} as revision {w}", rb.from, rb.to),
            None => format!("{} → {}", rb.from, rb.to),
        };
        parts.push(part(mark, "rollback", detail));
    }
    let verdict = match &ctx.state.verdict {
        Some(v) => {
            let mark = match v.outcome {
                Outcome::Landed | Outcome::DryRun | Outcome::NoChanges => Mark::Done,
                Outcome::Failed => Mark::Failed,
                Outcome::LiveInitIncomplete | Outcome::ChangesPending => Mark::Cancelled,
            };
            let glyph = match v.outcome {
                Outcome::LiveInitIncomplete | Outcome::ChangesPending => "!",
                _ => mark.glyph(tick),
            };
            StripPart {
                glyph,
                style: t.outcome(v.outcome),
                ..part(
                    mark,
                    "verdict",
                    format!("{} (exit {})", v.outcome.title(), v.code()),
                )
            }
        }
        None => part(Mark::Pending, "verdict", String::new()),
    };
    parts.push(StripPart {
        verdict: true,
        ..verdict
    });
    parts
}

/// The step strip; details are dropped when the width is short.
fn strip<'a>(ctx: &DeployFrame<'a>, tick: u64, width: usize) -> Line<'a> {
    let t = &ctx.theme;
    let parts = strip_parts(ctx, tick);
    // Details: 2 all, 1 only for the running step, 0 none.
    let render = |details: u8, sep: &'static str| -> Vec<Span<'a>> {
        let mut spans = vec![Span::raw(" ")];
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(sep, t.muted()));
            }
            spans.push(Span::styled(format!("{} ", p.glyph), p.style));
            let name_style = if p.mark == Mark::Running {
                p.style.add_modifier(Modifier::BOLD)
            } else {
                p.style
            };
            spans.push(Span::styled(p.name.clone(), name_style));
            let shown = match details {
                2 => true,
                1 => p.mark == Mark::Running,
                _ => false,
            };
            if shown && !p.detail.is_empty() {
                spans.push(Span::styled(format!(" {}", p.detail), p.style));
            }
        }
        spans
    };
    for (details, sep) in [(2, "  ▸  "), (2, " ▸ "), (1, " ▸ ")] {
        let spans = render(details, sep);
        if spans.iter().map(|s| s.width()).sum::<usize>() <= width {
            return Line::from(spans);
        }
    }
    Line::from(render(0, " ▸ "))
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame, tick: u64) {
    let width = area.width as usize;
    let lines = vec![title_line(ctx, width), strip(ctx, tick, width)];
    frame.render_widget(Paragraph::new(lines), area);
}
