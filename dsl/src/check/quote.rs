//! Echoing user text in diagnostics: in backticks, with control and invisible characters escaped
//! (`\u{0}`, bidi marks such as `\u{202e}`) so a message never hides or reorders what it shows,
//! and cut after [`QUOTE_LIMIT`] characters with `…` and the full size, so a megabyte token gives
//! a message of a few hundred bytes.

use std::fmt::Write as _;

/// How many characters of a token or name a diagnostic shows.
pub const QUOTE_LIMIT: usize = 64;

/// `` `text` ``, escaped and bounded: `` `aaaa…` (1 MB) `` when longer than [`QUOTE_LIMIT`].
pub fn quote_name(text: &str) -> String {
    let mut out = String::from("`");
    for (shown, c) in text.chars().enumerate() {
        if shown == QUOTE_LIMIT {
            let _ = write!(out, "…` ({})", byte_size(text.len()));
            return out;
        }
        push_escaped(&mut out, c);
    }
    out.push('`');
    out
}

/// One character as a diagnostic shows it on its own: `` `x` ``, or `` `\u{0}` ``.
pub fn quote_char(c: char) -> String {
    let mut out = String::from("`");
    push_escaped(&mut out, c);
    out.push('`');
    out
}

/// Whether `c` would be invisible, or change how the rest of a line reads, if printed raw.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c,
            // Bidi embeddings, overrides, isolates and marks (what "Trojan Source" uses).
            '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            // Zero-width characters, the soft hyphen, the byte-order mark.
            | '\u{ad}' | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
            // Line and paragraph separators.
            | '\u{2028}' | '\u{2029}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '`' => out.push_str("\\`"),
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// `1 MB`, `12 KB`, `300 bytes`: rounded down, enough to say how much was cut.
fn byte_size(bytes: usize) -> String {
    const KB: usize = 1 << 10;
    const MB: usize = 1 << 20;
    if bytes >= MB {
        format!("{} MB", bytes / MB)
    } else if bytes >= KB {
        format!("{} KB", bytes / KB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_backticked() {
        assert_eq!(quote_name("Open"), "`Open`");
        assert_eq!(quote_name("état"), "`état`");
    }

    #[test]
    fn invisible_characters_are_escaped() {
        assert_eq!(quote_name("a\u{0}b"), "`a\\u{0}b`");
        assert_eq!(quote_name("x\u{202e}y"), "`x\\u{202e}y`");
        assert_eq!(quote_name("\u{200b}"), "`\\u{200b}`");
        assert_eq!(quote_name("a\nb"), "`a\\nb`");
        assert_eq!(quote_char('\u{7f}'), "`\\u{7f}`");
    }

    #[test]
    fn long_text_is_elided_with_its_size() {
        let big = "a".repeat(1 << 20);
        let quoted = quote_name(&big);
        assert_eq!(quoted, format!("`{}…` (1 MB)", "a".repeat(QUOTE_LIMIT)));
        assert_eq!(quote_name(&"b".repeat(QUOTE_LIMIT)).len(), QUOTE_LIMIT + 2);
        assert!(quote_name(&"c".repeat(3000)).ends_with("…` (2 KB)"));
    }
}
