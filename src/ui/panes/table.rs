//! Tables whose selected row is remembered by key ([`Selection`]): the header row and the
//! drawing that keeps the selection and the scroll offset between frames.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row, Table, TableState};

use crate::ui::nav::Selection;
use crate::ui::theme::Theme;

/// A cell aligned right (counts, codes, durations).
pub fn right<'a>(line: impl Into<Line<'a>>) -> Cell<'a> {
    Cell::from(line.into().alignment(Alignment::Right))
}

/// The header row in the heading style; the columns at `right_aligned` align right.
pub fn header<'a>(
    names: impl IntoIterator<Item = &'a str>,
    right_aligned: &[usize],
    t: &Theme,
) -> Row<'a> {
    Row::new(names.into_iter().enumerate().map(|(i, h)| {
        if right_aligned.contains(&i) {
            right(h)
        } else {
            Cell::from(Line::from(h))
        }
    }))
    .style(t.heading())
}

/// A table under `header`, one column apart, its selected row highlighted (brighter when
/// `focused`).
pub fn keyed<'a>(
    rows: Vec<Row<'a>>,
    widths: impl IntoIterator<Item = Constraint>,
    header: Row<'a>,
    focused: bool,
    t: &Theme,
) -> Table<'a> {
    Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(t.selected(focused))
}

/// Draws `table` with the row of `sel` among `keys` highlighted, from the offset it kept.
pub fn render_keyed(
    frame: &mut Frame,
    area: Rect,
    table: Table,
    sel: &mut Selection,
    keys: &[String],
) {
    let selected = sel.resolve(keys);
    let mut ts = TableState::default()
        .with_offset(sel.offset)
        .with_selected(selected);
    frame.render_stateful_widget(table, area, &mut ts);
    sel.offset = ts.offset();
}
