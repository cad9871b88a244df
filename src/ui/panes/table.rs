//! Tables whose selected row is remembered by key ([`Selection`]): the header row and the
//! drawing that keeps the selection and the scroll offset between frames.

use std::ops::Range;

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
    keys: &[impl AsRef<str>],
) {
    let selected = sel.resolve(keys);
    let mut ts = TableState::default()
        .with_offset(sel.offset)
        .with_selected(selected);
    frame.render_stateful_widget(table, area, &mut ts);
    sel.offset = ts.offset();
}

/// The rows of a keyed table that can reach the screen, resolved from its selection.
pub struct Window {
    pub rows: Range<usize>,
    selected: Option<usize>,
}

/// Resolves the selection among `keys` and the rows a table `lines` high can show from where
/// its offset and selection stand. Ratatui's table only reaches rows from the nearer of the two
/// to a screen past the farther (every row is at least one line high), so a pane that builds
/// just these draws the frame it would draw with all of them, at the cost of what fits: a
/// thousand workloads cost a screenful of rows per frame, not a thousand.
pub fn window(sel: &mut Selection, keys: &[impl AsRef<str>], lines: usize) -> Window {
    let selected = sel.resolve(keys);
    let Some(last) = keys.len().checked_sub(1) else {
        return Window {
            rows: 0..0,
            selected,
        };
    };
    let offset = sel.offset.min(last);
    let (near, far) = selected.map_or((offset, offset), |s| (s.min(offset), s.max(offset)));
    Window {
        rows: near..(far + lines + 1).min(keys.len()),
        selected,
    }
}

/// Draws `table`, built from the rows of `window` only, as [`render_keyed`] draws the whole.
pub fn render_window(
    frame: &mut Frame,
    area: Rect,
    table: Table,
    sel: &mut Selection,
    window: &Window,
) {
    let first = window.rows.start;
    let last = window.rows.end.saturating_sub(1);
    let mut ts = TableState::default()
        .with_offset(sel.offset.min(last).saturating_sub(first))
        .with_selected(window.selected.map(|s| s - first));
    frame.render_stateful_widget(table, area, &mut ts);
    sel.offset = ts.offset() + first;
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::text::Text;

    use super::*;

    fn rows(heights: &[u16], range: Range<usize>) -> Vec<Row<'static>> {
        range
            .map(|i| {
                let lines: Vec<Line> = (0..heights[i])
                    .map(|l| Line::from(format!("row {i}.{l}")))
                    .collect();
                Row::new([Cell::from(Text::from(lines))]).height(heights[i])
            })
            .collect()
    }

    fn draw(height: u16, f: impl FnOnce(&mut Frame)) -> ratatui::buffer::Buffer {
        let mut terminal = Terminal::new(TestBackend::new(12, height)).expect("a test terminal");
        terminal.draw(f).expect("a frame");
        terminal.backend().buffer().clone()
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 512, ..Default::default() })]
        /// Whatever the rows' heights, the offset kept and the selection, the windowed table
        /// draws the same frame and keeps the same offset as the table of every row.
        #[test]
        fn a_window_of_the_rows_draws_what_all_of_them_draw(
            heights in proptest::collection::vec(1u16..=2, 1..80),
            offset in 0usize..100,
            pick in 0usize..100,
            touched in proptest::bool::ANY,
            height in 2u16..20,
        ) {
            let keys: Vec<String> = (0..heights.len()).map(|i| i.to_string()).collect();
            let start = Selection {
                key: Some(keys[pick % keys.len()].clone()),
                index: 0,
                offset,
                touched,
            };
            let header = || Row::new(["H"]);
            let theme = Theme::plain();
            let mut all = start.clone();
            let whole = draw(height, |f| {
                let table = keyed(rows(&heights, 0..heights.len()), [Constraint::Fill(1)], header(), true, &theme);
                render_keyed(f, f.area(), table, &mut all, &keys);
            });
            let mut some = start.clone();
            let windowed = draw(height, |f| {
                let w = window(&mut some, &keys, f.area().height as usize);
                let table = keyed(rows(&heights, w.rows.clone()), [Constraint::Fill(1)], header(), true, &theme);
                render_window(f, f.area(), table, &mut some, &w);
            });
            proptest::prop_assert_eq!(whole, windowed);
            proptest::prop_assert_eq!(all.offset, some.offset);
        }
    }
}
