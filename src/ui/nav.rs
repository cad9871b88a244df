//! Moving around, the same on both screens: a selection remembered by key, a scrolled text, a
//! typed filter, and the keys that change them.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A selected row, remembered by key so it survives rows appearing, changing and filtering.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub key: Option<String>,
    /// The row index last resolved (the fallback when the key disappears).
    pub index: usize,
    /// The first visible row (kept between frames).
    pub offset: usize,
    /// The operator moved it; until then it stays on the first row as rows arrive.
    pub touched: bool,
}

impl Selection {
    /// The index of the selected row among `keys`: the key's row, else the nearest row.
    pub fn resolve(&mut self, keys: &[String]) -> Option<usize> {
        if keys.is_empty() {
            return None;
        }
        let index = match self
            .key
            .as_ref()
            .and_then(|k| keys.iter().position(|x| x == k))
        {
            _ if !self.touched => 0,
            Some(i) => i,
            None => self.index.min(keys.len() - 1),
        };
        self.index = index;
        self.key = Some(keys[index].clone());
        Some(index)
    }

    pub fn move_by(&mut self, keys: &[String], delta: isize) {
        let Some(i) = self.resolve(keys) else { return };
        let to = (i as isize + delta).clamp(0, keys.len() as isize - 1) as usize;
        self.touched = true;
        self.index = to;
        self.key = Some(keys[to].clone());
    }

    fn jump(&mut self, keys: &[String], last: bool) {
        if keys.is_empty() {
            return;
        }
        let to = if last { keys.len() - 1 } else { 0 };
        self.touched = true;
        self.index = to;
        self.key = Some(keys[to].clone());
    }
}

/// A scrolled text pane: following the end, or anchored at a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scroll {
    pub follow: bool,
    /// The first line shown when not following.
    pub top: usize,
    /// Rows the pane had at the last frame (for paging).
    pub height: usize,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll {
            follow: true,
            top: 0,
            height: 10,
        }
    }
}

impl Scroll {
    fn up(&mut self, total: usize, by: usize) {
        if self.follow {
            self.follow = false;
            self.top = total.saturating_sub(self.height);
        }
        self.top = self.top.saturating_sub(by);
    }

    fn down(&mut self, total: usize, by: usize) {
        if self.follow {
            return;
        }
        self.top += by;
        if self.top + self.height >= total {
            self.follow = true;
        }
    }

    pub fn toggle(&mut self, total: usize) {
        if self.follow {
            self.follow = false;
            self.top = total.saturating_sub(self.height);
        } else {
            self.follow = true;
        }
    }
}

/// ↑↓ (j k), PgUp PgDn, g G (Home End) on a list.
pub fn move_selection(sel: &mut Selection, keys: &[String], code: KeyCode) {
    match code {
        KeyCode::Up | KeyCode::Char('k') => sel.move_by(keys, -1),
        KeyCode::Down | KeyCode::Char('j') => sel.move_by(keys, 1),
        KeyCode::PageUp => sel.move_by(keys, -10),
        KeyCode::PageDown => sel.move_by(keys, 10),
        KeyCode::Char('g') | KeyCode::Home => sel.jump(keys, false),
        KeyCode::Char('G') | KeyCode::End => sel.jump(keys, true),
        _ => {}
    }
}

/// The same keys on a text view: following its end (a log's tail), or anchored at a line.
pub fn scroll_text(scroll: &mut Scroll, total: usize, code: KeyCode) {
    let page = scroll.height.max(2) - 1;
    match code {
        KeyCode::Up | KeyCode::Char('k') => scroll.up(total, 1),
        KeyCode::Down | KeyCode::Char('j') => scroll.down(total, 1),
        KeyCode::PageUp => scroll.up(total, page),
        KeyCode::PageDown => scroll.down(total, page),
        KeyCode::Char('g') | KeyCode::Home => {
            scroll.follow = false;
            scroll.top = 0;
        }
        KeyCode::Char('G') | KeyCode::End => scroll.follow = true,
        _ => {}
    }
}

/// A key typed into a filter; `true` when the typing ends (Enter keeps the filter, Esc clears
/// it).
pub fn type_filter(filter: &mut String, key: KeyEvent) -> bool {
    match key.code {
        KeyCode::Esc => {
            filter.clear();
            return true;
        }
        KeyCode::Enter => return true,
        KeyCode::Backspace => {
            filter.pop();
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => filter.push(c),
        _ => {}
    }
    false
}

pub fn is_ctrl_c(key: KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('C'))
}

/// The keys that close the help overlay.
pub fn closes_help(code: KeyCode) -> bool {
    matches!(
        code,
        KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter
    )
}
