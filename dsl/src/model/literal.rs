//! Literals and durations as written in the language.

use super::span::Spanned;
use crate::check::quote::quote_name;

/// A literal: a state field's default or an action argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `"text"`.
    Str(String),
    /// `42`, `-3`.
    Int(i128),
    /// `2.5`.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `none`.
    None,
    /// `[a, b]`.
    List(Vec<Spanned<Literal>>),
}

/// A duration literal (`500ms`, `2s`, `30m`, `1h`), in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationMs(pub u64);

impl DurationMs {
    /// Parses `<digits><unit>` with unit `ms`, `s`, `m` or `h`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let split = text
            .find(|c: char| !c.is_ascii_digit() && c != '_')
            .ok_or_else(|| {
                let n = quote_name(text).trim_matches('`').to_string();
                format!("`{n}` has no unit; write it as `{n}ms`, `{n}s`, `{n}m` or `{n}h`")
            })?;
        let (digits, unit) = text.split_at(split);
        let digits = digits.replace('_', "");
        if digits.is_empty() {
            return Err(format!(
                "{} is not a duration; expected a number then `ms`, `s`, `m` or `h`",
                quote_name(text)
            ));
        }
        let factor = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            other => {
                return Err(match unit_of_word(other) {
                    Some(unit) => {
                        format!(
                            "unknown duration unit {}; write it as `{digits}{unit}`",
                            quote_name(other)
                        )
                    }
                    None => {
                        format!(
                            "unknown duration unit {}; expected `ms`, `s`, `m` or `h`",
                            quote_name(other)
                        )
                    }
                });
            }
        };
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("{} is too large for a duration", quote_name(text)))?;
        n.checked_mul(factor)
            .map(DurationMs)
            .ok_or_else(|| format!("{} is too large for a duration", quote_name(text)))
    }
}

/// The duration unit a word means (`seconds` -> `s`, `min` -> `m`), for the fix of a unit
/// written as a word (`after 30 seconds`, `30sec`). `None` for other words.
pub fn unit_of_word(word: &str) -> Option<&'static str> {
    Some(match word.to_ascii_lowercase().as_str() {
        "ms" | "msec" | "msecs" | "millis" | "millisecond" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "m" | "min" | "mins" | "minute" | "minutes" => "m",
        "h" | "hr" | "hrs" | "hour" | "hours" => "h",
        _ => return None,
    })
}

/// For a number followed by its unit as a separate word (`30 seconds`): the error's message and
/// help, naming the fix (`30s`). `None` if the word is no unit.
pub fn separated_unit(digits: &str, word: &str) -> Option<(String, String)> {
    let unit = unit_of_word(word)?;
    let fixed = format!("{digits}{unit}");
    Some((
        format!("a duration's unit goes right after its number: `{fixed}`, not `{digits} {word}`"),
        format!("write `{fixed}` (units are `ms`, `s`, `m` and `h`)"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(DurationMs::parse("500ms"), Ok(DurationMs(500)));
        assert_eq!(DurationMs::parse("2s"), Ok(DurationMs(2_000)));
        assert_eq!(DurationMs::parse("30m"), Ok(DurationMs(1_800_000)));
        assert_eq!(DurationMs::parse("1h"), Ok(DurationMs(3_600_000)));
        assert_eq!(DurationMs::parse("1_000ms"), Ok(DurationMs(1_000)));
        assert!(DurationMs::parse("10").unwrap_err().contains("has no unit"));
        assert!(
            DurationMs::parse("10d")
                .unwrap_err()
                .contains("unknown duration unit `d`")
        );
        assert!(
            DurationMs::parse("99999999999999999999h")
                .unwrap_err()
                .contains("too large")
        );
    }
}
