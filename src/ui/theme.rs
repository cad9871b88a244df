//! Colours and emphasis in one place. Status never relies on colour alone (every state also has
//! a glyph and a word); under `NO_COLOR` only the colours go: bold, dim and reverse stay.

use ratatui::style::{Color, Modifier, Style};

use crate::engine::verdict::Outcome;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub colour: bool,
}

/// `NO_COLOR` set to anything non-empty turns colours off (no-color.org).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

impl Theme {
    pub fn from_env() -> Theme {
        Theme {
            colour: !no_color_env(),
        }
    }

    pub const fn plain() -> Theme {
        Theme { colour: false }
    }

    pub const fn coloured() -> Theme {
        Theme { colour: true }
    }

    pub fn fg(&self, c: Color) -> Style {
        if self.colour {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub fn ok(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn bad(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }

    pub fn progress(&self) -> Style {
        self.fg(Color::Cyan)
    }

    pub fn muted(&self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Optional workloads: DIM plus a dark grey; DIM alone without colour.
    pub fn optional(&self) -> Style {
        self.fg(Color::DarkGray).add_modifier(Modifier::DIM)
    }

    pub fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn heading(&self) -> Style {
        self.fg(Color::Gray).add_modifier(Modifier::BOLD)
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.colour) {
            (true, true) => Style::new().fg(Color::Cyan),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, _) => self.muted(),
        }
    }

    pub fn title(&self, focused: bool) -> Style {
        let s = Style::new().add_modifier(Modifier::BOLD);
        if focused && self.colour {
            s.fg(Color::Cyan)
        } else {
            s
        }
    }

    /// The selected row: reversed in the focused pane, bold elsewhere.
    pub fn selected(&self, focused: bool) -> Style {
        if focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// The colour of an outcome: green, red, amber.
    pub fn outcome(&self, o: Outcome) -> Style {
        match o {
            Outcome::Landed | Outcome::DryRun | Outcome::NoChanges => self.ok(),
            Outcome::Failed => self.bad(),
            Outcome::LiveInitIncomplete | Outcome::ChangesPending => self.warn(),
        }
    }

    /// The banner word: reversed colour block, bold either way.
    pub fn banner_word(&self, o: Outcome) -> Style {
        self.word_block(match o {
            Outcome::Landed | Outcome::DryRun | Outcome::NoChanges => Color::Green,
            Outcome::Failed => Color::Red,
            Outcome::LiveInitIncomplete | Outcome::ChangesPending => Color::Yellow,
        })
    }

    /// A banner's word in a `bg` block (black on it); bold and reversed without colour.
    pub fn word_block(&self, bg: Color) -> Style {
        let base = Style::new().add_modifier(Modifier::BOLD);
        if self.colour {
            base.fg(Color::Black).bg(bg)
        } else {
            base.add_modifier(Modifier::REVERSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_keeps_dim_and_drops_colours() {
        let s = Theme::plain().optional();
        assert!(s.add_modifier.contains(Modifier::DIM));
        assert_eq!(s.fg, None);
        let s = Theme::coloured().optional();
        assert!(s.add_modifier.contains(Modifier::DIM));
        assert_eq!(s.fg, Some(Color::DarkGray));
        assert_eq!(Theme::plain().bad().fg, None);
        assert!(
            Theme::plain()
                .banner_word(Outcome::Failed)
                .add_modifier
                .contains(Modifier::REVERSED)
        );
    }
}
