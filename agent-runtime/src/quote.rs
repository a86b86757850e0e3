//! Quoting user values in errors and logs without repeating them whole.
//!
//! Anything a caller sent (a parameter, a signal's data, a key, a model's tool arguments) may be
//! megabytes long. Every error message, log line and error signal that quotes such a value goes
//! through [`Quoted`] (text) or [`QuotedJson`] (a JSON value): at most [`QUOTE_LIMIT`]
//! characters, then `…` and the full size, so a 10 MB bad parameter gives an error of a few
//! hundred bytes.
//!
//! ```
//! use agent_runtime::quote::{Quoted, QuotedJson};
//! assert_eq!(Quoted::new("short").to_string(), "\"short\"");
//! let big = "a".repeat(10_000_000);
//! let quoted = Quoted::new(&big).to_string();
//! assert!(quoted.ends_with("aaa…\" (10 MB)"), "{quoted}");
//! assert!(quoted.len() < 100);
//! let json = serde_json::json!({"note": big});
//! assert!(QuotedJson::new(&json).to_string().ends_with("… (10 MB)"));
//! ```

use std::fmt::{self, Write as _};
use std::io;

use serde_json::Value;

/// How many characters of a value an error or log line shows.
pub const QUOTE_LIMIT: usize = 64;

/// A user's text as errors quote it: in double quotes with Rust escapes (so a newline cannot
/// forge a log line), cut after [`QUOTE_LIMIT`] characters with `…` and the full size in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(&'a str);

impl<'a> Quoted<'a> {
    /// Quotes `text`.
    pub fn new(text: &'a str) -> Self {
        Quoted(text)
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(QUOTE_LIMIT) {
            None => write!(f, "{:?}", self.0),
            Some((cut, _)) => {
                let shown = format!("{:?}", &self.0[..cut]);
                // `shown` ends with the closing quote `Debug` added.
                write!(
                    f,
                    "{}…\" ({})",
                    &shown[..shown.len() - 1],
                    ByteSize(self.0.len())
                )
            }
        }
    }
}

/// A name or id the caller chose (an action or event name, a signal type, an instruction id)
/// as an error keeps it: whole when it is at most [`QUOTE_LIMIT`] characters, else
/// cut with `…` and its size, so the error, its message and the error signal built from it
/// stay small. A short `String` is moved through; a long one copies only the part it keeps.
///
/// ```
/// use agent_runtime::quote::clip;
/// assert_eq!(clip("order.pay"), "order.pay");
/// assert_eq!(clip(&"x".repeat(5_000)), format!("{}… (5 KB)", "x".repeat(64)));
/// ```
pub fn clip<T: AsRef<str> + Into<String>>(text: T) -> String {
    let cut = text
        .as_ref()
        .char_indices()
        .nth(QUOTE_LIMIT)
        .map(|(at, _)| at);
    match cut {
        // A `String` moves through without a copy.
        None => text.into(),
        Some(cut) => {
            let text = text.as_ref();
            format!("{}… ({})", &text[..cut], ByteSize(text.len()))
        }
    }
}

/// A JSON value as errors quote it: its compact JSON, cut after [`QUOTE_LIMIT`] characters
/// with `…` and the size of the whole serialization. Serializes without keeping more than the
/// shown part, so quoting a huge value costs time, not memory.
#[derive(Debug, Clone, Copy)]
pub struct QuotedJson<'a>(&'a Value);

impl<'a> QuotedJson<'a> {
    /// Quotes `value`.
    pub fn new(value: &'a Value) -> Self {
        QuotedJson(value)
    }
}

impl fmt::Display for QuotedJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut head = Head::default();
        // `Head` never fails; an error here could only come from serde_json itself.
        serde_json::to_writer(&mut head, self.0).map_err(|_| fmt::Error)?;
        // The kept bytes may end inside a character; show only the whole ones.
        let text = match std::str::from_utf8(&head.bytes) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&head.bytes[..e.valid_up_to()]).unwrap_or_default(),
        };
        match text.char_indices().nth(QUOTE_LIMIT) {
            None if head.total == head.bytes.len() => f.write_str(text),
            None => write!(f, "{text}… ({})", ByteSize(head.total)),
            Some((cut, _)) => write!(f, "{}… ({})", &text[..cut], ByteSize(head.total)),
        }
    }
}

/// Keeps the first bytes written (enough for [`QUOTE_LIMIT`] characters) and counts the rest.
#[derive(Default)]
struct Head {
    bytes: Vec<u8>,
    total: usize,
}

impl io::Write for Head {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = (QUOTE_LIMIT * 4).saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
        self.total += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A size in bytes for people: `812 bytes`, `1.5 KB`, `10 MB` (decimal units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub usize);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
        if self.0 < 1000 {
            return write!(f, "{} bytes", self.0);
        }
        let mut value = self.0 as f64 / 1000.0;
        let mut unit = 0;
        while value >= 999.95 && unit < UNITS.len() - 1 {
            value /= 1000.0;
            unit += 1;
        }
        let mut number = format!("{value:.1}");
        if number.ends_with(".0") {
            number.truncate(number.len() - 2);
        }
        f.write_str(&number)?;
        f.write_char(' ')?;
        f.write_str(UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_text_is_quoted_whole_and_escaped() {
        assert_eq!(Quoted::new("a\nb\"").to_string(), r#""a\nb\"""#);
        let exactly = "x".repeat(QUOTE_LIMIT);
        assert_eq!(Quoted::new(&exactly).to_string(), format!("\"{exactly}\""));
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary_with_its_size() {
        let text = "é".repeat(1000);
        let quoted = Quoted::new(&text).to_string();
        assert_eq!(
            quoted,
            format!("\"{}…\" (2 KB)", "é".repeat(QUOTE_LIMIT)),
            "2000 bytes"
        );
        let quoted = Quoted::new(&"a".repeat(10_000_000)).to_string();
        assert_eq!(quoted, format!("\"{}…\" (10 MB)", "a".repeat(QUOTE_LIMIT)));
    }

    #[test]
    fn json_is_cut_with_the_size_of_its_serialization() {
        assert_eq!(QuotedJson::new(&json!({"a": 1})).to_string(), r#"{"a":1}"#);
        let value = json!(["b".repeat(1500)]);
        let quoted = QuotedJson::new(&value).to_string();
        assert_eq!(
            quoted,
            format!("[\"{}… (1.5 KB)", "b".repeat(QUOTE_LIMIT - 2))
        );
        let multibyte = json!("ü".repeat(500));
        assert!(
            QuotedJson::new(&multibyte)
                .to_string()
                .ends_with("… (1 KB)")
        );
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        let cases = [
            (0, "0 bytes"),
            (999, "999 bytes"),
            (1000, "1 KB"),
            (1550, "1.6 KB"),
            (999_999, "1 MB"),
            (10_485_760, "10.5 MB"),
            (3_000_000_000, "3 GB"),
        ];
        for (bytes, shown) in cases {
            assert_eq!(ByteSize(bytes).to_string(), shown, "{bytes}");
        }
    }
}
