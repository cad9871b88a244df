//! The plan pane (`--plan`): every object the upgrade would change with its marker (`+` added,
//! `-` removed, `~` changed) and tags (`will roll`, `refused`), or the selected object's diff.
//! The diff is the engine's, Secret values already masked; it is made inert again here.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use crate::engine::plan::Change;
use crate::ui::app::UiState;
use crate::ui::fit;
use crate::ui::panes::{DeployFrame, pane_block, render_empty, table};
use crate::ui::plan;
use crate::ui::theme::Theme;

fn change_style(change: Change, t: &Theme) -> Style {
    match change {
        Change::Added => t.ok(),
        Change::Removed => t.bad(),
        Change::Changed => t.warn(),
    }
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState) {
    let Some(changes) = &ctx.state.changes else {
        return;
    };
    if ui.plan.diff.is_some() {
        render_diff(frame, area, ctx, ui);
        return;
    }
    let t = &ctx.theme;
    let home = &ctx.state.plan.namespace;
    let what = if changes.first_install {
        "Plan · first install".to_string()
    } else {
        "Plan".to_string()
    };
    let title = vec![
        Span::raw(what),
        Span::styled(format!("  {}", changes.summary()), t.muted()),
    ];
    let block = pane_block(title, true, t);
    if changes.objects.is_empty() {
        render_empty(
            frame,
            area,
            block,
            "no changes: the upgrade would apply the same objects",
            t,
        );
        return;
    }
    let width = block.inner(area).width as usize;
    let references: Vec<String> = changes
        .objects
        .iter()
        .map(|o| fit::inert(&o.reference(home)).into_owned())
        .collect();
    let name_w = fit::column(
        references.iter(),
        10,
        width.saturating_sub(14).max(10) / 2 + 8,
    );
    let rows: Vec<Row> = changes
        .objects
        .iter()
        .zip(&references)
        .map(|(o, reference)| {
            let mut tags = Vec::new();
            if o.will_roll {
                tags.push(Span::styled("will roll", t.progress()));
            }
            if let Some(why) = &o.refused {
                if o.will_roll {
                    tags.push(Span::raw("  "));
                }
                tags.push(Span::styled(
                    format!("helm will be refused: {}", fit::inert(why)),
                    t.bad(),
                ));
            }
            if let Some(note) = &o.note {
                if !tags.is_empty() {
                    tags.push(Span::raw("  "));
                }
                tags.push(Span::styled(fit::inert(note).into_owned(), t.muted()));
            }
            Row::new(vec![
                Cell::from(Span::styled(o.change.marker(), change_style(o.change, t))),
                Cell::from(fit::middle(reference, name_w).into_owned()),
                Cell::from(Line::from(tags)),
            ])
        })
        .collect();
    let header = table::header(["", "OBJECT", "WHAT HAPPENS"], &[], t);
    let widths = [
        Constraint::Length(1),
        Constraint::Length(name_w as u16),
        Constraint::Fill(1),
    ];
    let keys = plan::keys(ctx.state);
    let table = table::keyed(rows, widths, header, true, t).block(block);
    table::render_keyed(frame, area, table, &mut ui.plan.list, &keys);
}

fn render_diff(frame: &mut Frame, area: Rect, ctx: &DeployFrame, ui: &mut UiState) {
    let t = &ctx.theme;
    let Some(object) = ctx
        .state
        .changes
        .as_ref()
        .and_then(|p| p.objects.get(ui.plan.list.index))
    else {
        return;
    };
    let lines = plan::diff_lines(ctx.state, &ui.plan);
    let mut title = vec![
        Span::styled(object.change.marker(), change_style(object.change, t)),
        Span::raw(format!(
            " {}",
            fit::inert(&object.reference(&ctx.state.plan.namespace))
        )),
    ];
    for tag in object.tags() {
        title.push(Span::styled(format!("  {}", fit::inert(&tag)), t.muted()));
    }
    let block = pane_block(title, true, t);
    let inner = block.inner(area);
    let Some(scroll) = ui.plan.diff.as_mut() else {
        return;
    };
    scroll.height = inner.height as usize;
    let top = scroll.top.min(lines.len().saturating_sub(1));
    let shown: Vec<Line> = lines
        .iter()
        .skip(top)
        .take(inner.height as usize)
        .map(|l| {
            let style = if l.starts_with("+++") || l.starts_with("---") {
                t.muted()
            } else if l.starts_with('+') {
                t.ok()
            } else if l.starts_with('-') {
                t.bad()
            } else if l.starts_with("@@") {
                t.progress()
            } else {
                Style::new()
            };
            Line::from(Span::styled(
                fit::end(&fit::inert(l), inner.width as usize).into_owned(),
                style,
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(shown).block(block), area);
}
