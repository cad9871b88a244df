//! What the deploy and inspect screen tests share: the sizes every screen is snapshotted at,
//! keys pressed as an operator presses them, and the check that nothing on screen is live.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The smallest supported terminal and a large one.
pub const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// A screen's key handling, whatever it reads (the deploy state, an inspection); each
/// screen's tests implement it.
pub trait Keys {
    type Data;
    type Effect;
    fn key(&mut self, key: KeyEvent, data: &Self::Data) -> Self::Effect;
}

/// One key, without modifiers.
pub fn press<U: Keys>(ui: &mut U, data: &U::Data, code: KeyCode) -> U::Effect {
    ui.key(KeyEvent::new(code, KeyModifiers::NONE), data)
}

/// Each character of `text`, as typed.
pub fn type_text<U: Keys>(ui: &mut U, data: &U::Data, text: &str) {
    for c in text.chars() {
        press(ui, data, KeyCode::Char(c));
    }
}

/// No control character (but the line breaks) and no BiDi control reached the screen.
pub fn assert_inert(screen: &str) {
    for c in screen.chars() {
        assert!(!c.is_control() || c == '\n', "control {c:?} on screen");
        assert!(
            !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
            "BiDi control on screen"
        );
    }
}

/// Row `y` of a drawn buffer, as text.
pub fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// Where `needle` first shows from row `from` down: its cell (column, row).
pub fn find_text(buf: &Buffer, needle: &str, from: u16) -> (u16, u16) {
    for y in from..buf.area.height {
        let line = row_text(buf, y);
        if let Some(at) = line.find(needle) {
            return (line[..at].chars().count() as u16, y);
        }
    }
    panic!("{needle} not on screen");
}
