//! Helm's colours: a raw helm line is sanitized keeping only SGR sequences (every other escape
//! and control goes), then the SGR sequences become styles. Under `NO_COLOR` colours are
//! dropped and emphasis (bold, underline) stays.

use ratatui::style::{Color, Modifier, Style};

use crate::text::{self, Keep};

/// Pieces of one line with their style; the text holds no escape or control character.
pub fn styled(raw: &str, base: Style, colour: bool) -> Vec<(Style, String)> {
    let clean = text::sanitize_line(raw, Keep::Colours);
    let mut out: Vec<(Style, String)> = Vec::new();
    let mut style = base;
    let mut rest = clean.as_str();
    while let Some(at) = rest.find('\u{1b}') {
        if at > 0 {
            out.push((style, rest[..at].to_string()));
        }
        let seq = &rest[at + 1..];
        // Kept sequences are exactly `[` digits/`;` `m`.
        let end = seq.find('m').unwrap_or(seq.len());
        let params = seq.get(1..end).unwrap_or("");
        style = apply(style, base, params, colour);
        rest = seq.get(end + 1..).unwrap_or("");
    }
    if !rest.is_empty() {
        out.push((style, rest.to_string()));
    }
    out
}

/// The text of a line without its colours.
pub fn plain_text(raw: &str) -> String {
    text::plain(raw)
}

fn apply(mut style: Style, base: Style, params: &str, colour: bool) -> Style {
    let nums: Vec<u16> = if params.is_empty() {
        vec![0]
    } else {
        params.split(';').map(|p| p.parse().unwrap_or(0)).collect()
    };
    let mut i = 0;
    while i < nums.len() {
        let n = nums[i];
        match n {
            0 => style = base,
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            7 => style = style.add_modifier(Modifier::REVERSED),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            30..=37 | 90..=97 if colour => style = style.fg(basic(n)),
            40..=47 | 100..=107 if colour => style = style.bg(basic(n - 10)),
            39 => style.fg = base.fg,
            49 => style.bg = base.bg,
            38 | 48 => {
                let (c, used) = extended(&nums[i + 1..]);
                i += used;
                if colour && let Some(c) = c {
                    style = if n == 38 { style.fg(c) } else { style.bg(c) };
                }
            }
            _ => {}
        }
        i += 1;
    }
    style
}

fn basic(n: u16) -> Color {
    match n {
        30 => Color::Black,
        31 => Color::Red,
        32 => Color::Green,
        33 => Color::Yellow,
        34 => Color::Blue,
        35 => Color::Magenta,
        36 => Color::Cyan,
        37 => Color::Gray,
        90 => Color::DarkGray,
        91 => Color::LightRed,
        92 => Color::LightGreen,
        93 => Color::LightYellow,
        94 => Color::LightBlue,
        95 => Color::LightMagenta,
        96 => Color::LightCyan,
        _ => Color::White,
    }
}

/// `5;N` or `2;R;G;B` after 38/48: the colour and how many numbers it used.
fn extended(rest: &[u16]) -> (Option<Color>, usize) {
    match rest {
        [5, n, ..] => (Some(Color::Indexed((*n).min(255) as u8)), 2),
        [2, r, g, b, ..] => (
            Some(Color::Rgb(
                (*r).min(255) as u8,
                (*g).min(255) as u8,
                (*b).min(255) as u8,
            )),
            4,
        ),
        [] => (None, 0),
        _ => (None, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgr_becomes_style_and_nothing_else_survives() {
        let raw = "\u{1b}[1;32mdeployed\u{1b}[0m ok \u{1b}]0;title\u{7}\u{1b}[2Jx";
        let parts = styled(raw, Style::new(), true);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].1, "deployed");
        assert_eq!(parts[0].0.fg, Some(Color::Green));
        assert!(parts[0].0.add_modifier.contains(Modifier::BOLD));
        assert_eq!(parts[1].1, " ok x");
        assert_eq!(parts[1].0, Style::new());
        assert!(parts.iter().all(|(_, t)| !t.contains('\u{1b}')));
    }

    #[test]
    fn no_color_keeps_emphasis_only() {
        let parts = styled("\u{1b}[31;1mError\u{1b}[38;5;200m!", Style::new(), false);
        assert_eq!(parts[0].0.fg, None);
        assert!(parts[0].0.add_modifier.contains(Modifier::BOLD));
        assert_eq!(parts[1].0.fg, None);
    }

    #[test]
    fn extended_colours_parse() {
        let parts = styled("\u{1b}[38;2;1;2;3ma\u{1b}[48;5;17mb", Style::new(), true);
        assert_eq!(parts[0].0.fg, Some(Color::Rgb(1, 2, 3)));
        assert_eq!(parts[1].0.bg, Some(Color::Indexed(17)));
    }
}
