//! Untrusted text from the cluster (logs, events, messages, names, helm output) made inert
//! before it reaches a terminal or a report: escape sequences and control characters are
//! removed, BiDi overrides are dropped, and lines are capped.

/// Longest line kept, in characters; the rest is replaced by a marker.
pub const MAX_LINE_CHARS: usize = 4096;

/// Characters that reorder text on screen (Trojan Source) or hide it. The one list: the UI's
/// fast path (`ui::fit::inert`) asks it too before deciding text needs no sanitizing.
pub fn is_bidi_or_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'   // zero-width space/joiners, LRM, RLM
        | '\u{202A}'..='\u{202E}' // LRE, RLE, PDF, LRO, RLO
        | '\u{2066}'..='\u{2069}' // LRI, RLI, FSI, PDI
        | '\u{061C}'              // Arabic letter mark
        | '\u{FEFF}')
}

/// What to keep of escape sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: plain text.
    Nothing,
    /// SGR colour sequences (`ESC [ … m` with digits and `;` only); everything else goes.
    Colours,
}

/// Sanitizes one line (newlines inside become spaces).
pub fn sanitize_line(input: &str, keep: Keep) -> String {
    let mut out = String::with_capacity(input.len().min(MAX_LINE_CHARS + 32));
    let mut chars = input.chars().peekable();
    let mut kept = 0usize;
    let mut dropped = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                let seq = take_escape(&mut chars);
                if keep == Keep::Colours && is_sgr(&seq) {
                    out.push('\u{1b}');
                    out.push_str(&seq);
                }
            }
            // C1 CSI (U+009B) starts a sequence on some terminals.
            '\u{9b}' => {
                take_csi_body(&mut chars);
            }
            '\t' => push_capped(&mut out, ' ', &mut kept, &mut dropped),
            '\n' | '\r' => push_capped(&mut out, ' ', &mut kept, &mut dropped),
            c if c.is_control() || is_bidi_or_invisible(c) => {}
            c => push_capped(&mut out, c, &mut kept, &mut dropped),
        }
    }
    if dropped > 0 {
        out.push_str(&format!("…[{dropped} more characters]"));
    }
    out
}

fn push_capped(out: &mut String, c: char, kept: &mut usize, dropped: &mut usize) {
    if *kept < MAX_LINE_CHARS {
        out.push(c);
        *kept += 1;
    } else {
        *dropped += 1;
    }
}

/// Plain text: every sequence and control removed.
pub fn plain(input: &str) -> String {
    sanitize_line(input, Keep::Nothing)
}

/// Bytes that may not be UTF-8 (logs): decoded lossily, then made plain.
pub fn plain_bytes(input: &[u8]) -> String {
    plain(&String::from_utf8_lossy(input))
}

fn is_sgr(seq: &str) -> bool {
    seq.strip_prefix('[')
        .and_then(|s| s.strip_suffix('m'))
        .is_some_and(|body| body.chars().all(|c| c.is_ascii_digit() || c == ';'))
}

/// Consumes the rest of an escape sequence after ESC and returns it (without the ESC).
fn take_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut seq = String::new();
    match chars.next() {
        Some('[') => {
            seq.push('[');
            seq.push_str(&take_csi_body(chars));
        }
        // OSC, DCS, SOS, PM, APC: strings ended by BEL or ST (ESC \).
        Some(c @ (']' | 'P' | 'X' | '^' | '_')) => {
            seq.push(c);
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
                seq.push(c);
            }
        }
        // Two- or three-character sequences (charset selection and the like).
        Some(c) => {
            seq.push(c);
            if matches!(c, '(' | ')' | '*' | '+' | '#' | '%')
                && let Some(n) = chars.next()
            {
                seq.push(n);
            }
        }
        None => {}
    }
    seq
}

fn take_csi_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut body = String::new();
    for c in chars.by_ref() {
        body.push(c);
        // A final byte in 0x40..=0x7E ends the sequence.
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
        if body.len() > 64 {
            break;
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed() {
        let hostile = "ok\u{1b}[31mred\u{1b}[0m \u{1b}]0;pwned\u{7}title \u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\ \u{1b}[2J\u{1b}[Hclear\rcr\u{7}bell\u{8}bs";
        let out = plain(hostile);
        assert_eq!(out, "okred title link clear crbellbs");
        assert!(!out.contains('\u{1b}'));
    }

    #[test]
    fn colours_survive_only_as_sgr() {
        let out = sanitize_line(
            "\u{1b}[1;32mgreen\u{1b}[0m\u{1b}[2J\u{1b}[?1049h",
            Keep::Colours,
        );
        assert_eq!(out, "\u{1b}[1;32mgreen\u{1b}[0m");
    }

    #[test]
    fn bidi_controls_and_c1_are_dropped() {
        let out = plain("a\u{202E}evil\u{2066}b\u{9b}31mc\u{85}d");
        assert_eq!(out, "aevilbcd");
    }

    #[test]
    fn long_lines_are_capped_with_a_marker() {
        let line = "x".repeat(MAX_LINE_CHARS + 10);
        let out = plain(&line);
        assert!(out.starts_with(&"x".repeat(MAX_LINE_CHARS)));
        assert!(
            out.ends_with("…[10 more characters]"),
            "{}",
            &out[out.len() - 30..]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(plain_bytes(b"a\xff\xfeb"), "a\u{fffd}\u{fffd}b");
    }
}
