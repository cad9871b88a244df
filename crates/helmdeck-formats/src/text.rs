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

/// An error message fit for one line of output: the first line of each layer of the chain
/// (later lines of a parser's message quote the input), made plain, layers that repeat what an
/// earlier one said dropped, and anything that looks like a credential masked.
pub fn one_line<'a>(
    layers: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    for layer in layers {
        let text = layer.to_string();
        let first = plain(text.lines().next().unwrap_or("")).trim().to_string();
        if first.is_empty() || parts.iter().any(|p| p.contains(&first)) {
            continue;
        }
        parts.push(first);
    }
    mask_credentials(&parts.join(": "))
}

/// What is left of a parser's message about a file that may hold secrets (a kubeconfig,
/// helmdeck.toml, a values file): its first line only (the rest is a snippet of the file),
/// plain, with every double-quoted part (a value the parser quotes) and anything that looks
/// like a credential masked.
pub fn file_error(message: &str) -> String {
    let first = plain(message.lines().next().unwrap_or(""))
        .trim()
        .to_string();
    mask_credentials(&mask_quoted(&first))
}

/// `"…"` spans become `"***"`. A lone quote (as in ``expected `"` ``) is left as it is.
pub fn mask_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else {
            break;
        };
        out.push_str(&rest[..=open]);
        out.push_str("***\"");
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Words that name a credential: the value after one of them (`token: x`, `password=x`) is
/// masked wherever it shows.
const CREDENTIAL_WORDS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "secret",
    "client-key-data",
    "client-key",
    "credential",
    "apikey",
    "api-key",
];

/// The value after a credential word and `:` or `=` becomes `***`, up to the next space, quote,
/// comma or bracket.
pub fn mask_credentials(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut masked: Vec<(usize, usize)> = Vec::new();
    for word in CREDENTIAL_WORDS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(word) {
            let end_of_word = from + at + word.len();
            from = end_of_word;
            let after = &lower[end_of_word..];
            let gap = after.len() - after.trim_start_matches(['"', '\'', ' ', '_', '-']).len();
            let after = &after[gap..];
            if !after.starts_with([':', '=']) {
                continue;
            }
            let value_from = end_of_word + gap + 1;
            let value = &text[value_from..];
            let lead = value.len() - value.trim_start_matches([' ', '"', '\'']).len();
            let start = value_from + lead;
            let len = text[start..]
                .find(|c: char| c.is_whitespace() || "\"',[]{}".contains(c))
                .unwrap_or(text.len() - start);
            if len > 0 {
                masked.push((start, start + len));
            }
        }
    }
    masked.sort();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in masked {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str("***");
        at = end;
    }
    out.push_str(&text[at..]);
    out
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

/// A panic as the one plain line printed when stdout is not a terminal (a pipe, a CI log):
/// its message's first line and where it happened, never a report or a backtrace. `payload`
/// is the panic's (`&str` or `String`; anything else is unnamed).
pub fn panic_line(payload: &(dyn std::any::Any + Send), location: Option<(&str, u32)>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message");
    let first = plain(message.lines().next().unwrap_or(""));
    let at = location
        .map(|(file, line)| format!(" (at {file}:{line})"))
        .unwrap_or_default();
    format!("helmdeck: internal error, a bug: {}{at}", first.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_one_plain_line() {
        let payload: Box<dyn std::any::Any + Send> =
            Box::new(String::from("index out of range\n\u{1b}[31mmore\nstack"));
        assert_eq!(
            panic_line(payload.as_ref(), Some(("src/inspect/text.rs", 12))),
            "helmdeck: internal error, a bug: index out of range (at src/inspect/text.rs:12)"
        );
        let payload: Box<dyn std::any::Any + Send> = Box::new("boom");
        assert_eq!(
            panic_line(payload.as_ref(), None),
            "helmdeck: internal error, a bug: boom"
        );
        let payload: Box<dyn std::any::Any + Send> = Box::new(7u8);
        assert!(panic_line(payload.as_ref(), None).contains("a panic without a message"));
    }

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
    fn file_errors_keep_one_line_and_no_value() {
        let toml = "TOML parse error at line 1, column 10\n  |\n1 | values = \"hunter4\"\n  |";
        assert_eq!(file_error(toml), "TOML parse error at line 1, column 10");
        assert_eq!(
            file_error("invalid type: string \"hunter4\", expected a sequence"),
            "invalid type: string \"***\", expected a sequence"
        );
        assert_eq!(
            file_error("invalid basic string, expected `\"`"),
            "invalid basic string, expected `\"`"
        );
        assert_eq!(
            file_error("line 4: bad line:     token: hunter2 [x\nmore"),
            "line 4: bad line:     token: *** [x"
        );
    }

    #[test]
    fn credentials_are_masked_wherever_they_show() {
        assert_eq!(mask_credentials("token: abc def"), "token: *** def");
        assert_eq!(mask_credentials("Password=hunter2,x"), "Password=***,x");
        assert_eq!(
            mask_credentials("client-key-data: \"QUJD\""),
            "client-key-data: \"***\""
        );
        assert_eq!(
            mask_credentials("the token is missing"),
            "the token is missing"
        );
        assert_eq!(
            mask_credentials("api_token=1 secret = 2"),
            "api_token=*** secret = ***"
        );
    }

    #[test]
    fn one_line_takes_each_layers_first_line_once() {
        let inner = std::io::Error::other("failed to parse: line 3\n  | token: hunter2");
        let outer = color_eyre::eyre::Report::new(inner).wrap_err("reading the kubeconfig");
        assert_eq!(
            one_line(outer.chain()),
            "reading the kubeconfig: failed to parse: line 3"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(plain_bytes(b"a\xff\xfeb"), "a\u{fffd}\u{fffd}b");
    }
}
