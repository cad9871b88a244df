//! Moving around, the same on both screens: the focused pane, a selection remembered by key, a
//! scrolled text, the typed filters, and the keys that change them.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A fixed set of values in their order: a screen's panes (in Tab order), the lists it filters.
pub trait Ordered: Copy + Eq + 'static {
    const ALL: &'static [Self];

    fn index(self) -> usize {
        Self::ALL.iter().position(|v| *v == self).unwrap_or(0)
    }

    /// The one after, and after the last the first (Tab).
    fn next(self) -> Self {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    /// The one before, and before the first the last (Shift+Tab).
    fn prev(self) -> Self {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}

/// Tab and Shift+Tab move the focus; `true` when the key was one of them.
pub fn cycle_focus<P: Ordered>(focus: &mut P, code: KeyCode) -> bool {
    match code {
        KeyCode::Tab => *focus = focus.next(),
        KeyCode::BackTab => *focus = focus.prev(),
        _ => return false,
    }
    true
}

/// One typed filter per list a screen narrows (`S` names the list), and the one being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filters<S: Ordered> {
    /// In the order of `S::ALL`.
    texts: Vec<String>,
    /// The filter being typed, if any.
    pub editing: Option<S>,
}

impl<S: Ordered> Default for Filters<S> {
    fn default() -> Self {
        Filters {
            texts: vec![String::new(); S::ALL.len()],
            editing: None,
        }
    }
}

impl<S: Ordered> Filters<S> {
    pub fn get(&self, slot: S) -> &str {
        &self.texts[slot.index()]
    }

    pub fn set(&mut self, slot: S, text: &str) {
        text.clone_into(&mut self.texts[slot.index()]);
    }

    pub fn clear(&mut self, slot: S) {
        self.texts[slot.index()].clear();
    }

    /// `/`: keys go to this filter until Enter or Esc.
    pub fn edit(&mut self, slot: S) {
        self.editing = Some(slot);
    }

    pub fn is_editing(&self, slot: S) -> bool {
        self.editing == Some(slot)
    }

    /// The text being typed, for the key bar.
    pub fn typing(&self) -> Option<&str> {
        self.editing.map(|slot| self.get(slot))
    }

    /// A key while a filter is typed: it goes to that filter (Enter keeps it, Esc clears it,
    /// and either ends the typing). The filter it went to; `None` when none is being typed.
    pub fn type_key(&mut self, key: KeyEvent) -> Option<S> {
        let slot = self.editing?;
        if type_filter(&mut self.texts[slot.index()], key) {
            self.editing = None;
        }
        Some(slot)
    }
}

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
    pub fn resolve<K: AsRef<str>>(&mut self, keys: &[K]) -> Option<usize> {
        if keys.is_empty() {
            return None;
        }
        let index = match self
            .key
            .as_ref()
            .and_then(|k| keys.iter().position(|x| x.as_ref() == k))
        {
            _ if !self.touched => 0,
            Some(i) => i,
            None => self.index.min(keys.len() - 1),
        };
        self.index = index;
        self.key = Some(keys[index].as_ref().to_string());
        Some(index)
    }

    pub fn move_by<K: AsRef<str>>(&mut self, keys: &[K], delta: isize) {
        let Some(i) = self.resolve(keys) else { return };
        let to = (i as isize + delta).clamp(0, keys.len() as isize - 1) as usize;
        self.touched = true;
        self.index = to;
        self.key = Some(keys[to].as_ref().to_string());
    }

    fn jump<K: AsRef<str>>(&mut self, keys: &[K], last: bool) {
        if keys.is_empty() {
            return;
        }
        let to = if last { keys.len() - 1 } else { 0 };
        self.touched = true;
        self.index = to;
        self.key = Some(keys[to].as_ref().to_string());
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
    /// `12/40`: the first line shown (counted from 1) of `total`.
    pub fn at(&self, total: usize) -> String {
        format!("{}/{total}", (self.top + 1).min(total))
    }

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
pub fn move_selection<K: AsRef<str>>(sel: &mut Selection, keys: &[K], code: KeyCode) {
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

/// The same keys on a scrolled text: following its end (a log's tail), or anchored at a line.
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
fn type_filter(filter: &mut String, key: KeyEvent) -> bool {
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
