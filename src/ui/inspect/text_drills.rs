//! Two plain drill-downs: one stored revision's record in full (Enter on the history; the
//! description is often longer than its column), and the manifest (`m`, with
//! `--show-manifest`), its Secret values masked by the collector.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::fit;
use crate::ui::inspect::data::{self, InspectFrame};
use crate::ui::inspect::evidence::position;
use crate::ui::inspect::state::{Drill, InspectUi, Slot};
use crate::ui::panes::helm::window;
use crate::ui::panes::{filter_span, keyed_lines, pane_block, plain_lines};

pub fn render_revision(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &InspectUi) {
    let t = &v.theme;
    let i = v.inspection();
    let Some(Drill::Revision(rev)) = &ui.drill else {
        return;
    };
    let row = i.history.iter().find(|r| r.revision == *rev);
    let (glyph, style) = row
        .map(|r| data::status_mark(&r.status, t))
        .unwrap_or(("·", Style::new()));
    let mut title = vec![Span::raw(format!("revision {rev}"))];
    if let Some(r) = row {
        title.push(Span::styled(format!(" · {glyph} {}", r.status), style));
    }
    if Some(*rev) == i.revision {
        title.push(Span::styled(" · inspected", t.muted()));
    }
    let block = pane_block(title, true, t).title_bottom(Line::from(Span::styled(
        " esc back · ↑↓ revision ",
        t.muted(),
    )));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let Some(r) = row else {
        frame.render_widget(
            Paragraph::new(Span::styled("no such revision", t.muted())),
            inner,
        );
        return;
    };
    let key_w = 13;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let value_w = width.saturating_sub(key_w).max(10);
    let mut field = |key: &str, value: String, vstyle: Style| {
        let key_cell = |k: String| Span::styled(k, t.heading());
        lines.extend(keyed_lines(key, key_w, key_cell, (vstyle, value), value_w));
    };
    let updated = if r.updated.is_empty() {
        "–".to_string()
    } else {
        let ago = data::ago(&r.updated, v.data.now)
            .map(|a| format!(" ({a})"))
            .unwrap_or_default();
        format!("{}{ago}", r.updated)
    };
    field("status", format!("{glyph} {}", r.status), style);
    field("updated", updated, Style::new());
    field("chart", fit::inert(&r.chart).into_owned(), Style::new());
    field(
        "app version",
        fit::inert(&r.app_version).into_owned(),
        Style::new(),
    );
    field(
        "description",
        fit::inert(&r.description).into_owned(),
        Style::new(),
    );
    field(
        "stored in",
        format!("{} {}", r.storage.kubectl_name(), fit::inert(&r.object)),
        t.muted(),
    );
    if let Some(e) = &r.error {
        field("unreadable", fit::inert(e).into_owned(), t.bad());
    }
    if Some(*rev) != i.revision {
        field(
            "inspect it",
            format!(
                "helmdeck inspect {} -n {} --revision {rev}",
                i.release, i.namespace
            ),
            t.key(),
        );
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

pub fn render_manifest(frame: &mut Frame, area: Rect, v: &InspectFrame, ui: &mut InspectUi) {
    let t = v.theme;
    let i = v.inspection();
    let Some(Drill::Manifest(mut scroll)) = ui.drill.clone() else {
        return;
    };
    let lines = data::manifest_lines(i, ui.filters.get(Slot::Manifest));
    let mut title = vec![
        Span::raw(format!(
            "manifest of revision {}",
            i.revision.map(|r| r.to_string()).unwrap_or_default()
        )),
        Span::styled(" · Secret values masked", t.muted()),
        position(&scroll, lines.len(), area.height.saturating_sub(2), &t),
    ];
    if let Some(f) = filter_span(&ui.filters, Slot::Manifest, &t) {
        title.push(f);
    }
    let block = pane_block(title, true, &t).title_bottom(Line::from(Span::styled(
        " esc back · ↑↓ PgUp/PgDn g/G scroll · / search ",
        t.muted(),
    )));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [body] = Layout::vertical([Constraint::Fill(1)]).areas(inner);
    let mut visual = window(
        &lines,
        &mut scroll,
        body.height as usize,
        body.width as usize,
        |l, w| plain_lines(l, w),
    );
    if lines.is_empty() {
        visual.push(Line::from(Span::styled("(no line matches)", t.muted())));
    }
    frame.render_widget(Paragraph::new(visual), body);
    ui.drill = Some(Drill::Manifest(scroll));
}
