//! Strings, numbers, durations, literals, paths and Rust types: the leaves of the grammar.
//! The grammar accepts numbers and durations loosely; here they are read, and a malformed one is
//! a precise `E0003` instead of a generic syntax error.

use pest::iterators::Pair;

use super::{Rule, span};
use crate::check::quote::quote_name;
use crate::check::{Ctxt, Diagnostic, codes};
use crate::model::{DurationMs, FileId, Literal, Name, Spanned};

/// A name (`ident` pair).
pub fn name(file: FileId, pair: &Pair<'_, Rule>) -> Name {
    Spanned::new(pair.as_str().to_string(), span(file, pair))
}

/// A `string` pair, unescaped. Unknown escapes are reported; the text is kept as written.
pub fn string(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>) -> Spanned<String> {
    let raw = pair.as_str();
    let inner = &raw[1..raw.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, 'n')) => out.push('\n'),
            Some((_, 't')) => out.push('\t'),
            Some((_, 'r')) => out.push('\r'),
            Some((_, '0')) => out.push('\0'),
            Some((_, '\\')) => out.push('\\'),
            Some((_, '"')) => out.push('"'),
            other => {
                let start = pair.as_span().start() + 1 + i;
                let len = 1 + other.map_or(0, |(_, c)| c.len_utf8());
                cx.push(
                    Diagnostic::error(
                        codes::BAD_LITERAL,
                        crate::model::Span::File {
                            file,
                            start,
                            end: start + len,
                        },
                        format!(
                            "unknown escape `{}` in a string",
                            &inner[i..i + len.min(inner.len() - i)]
                        ),
                    )
                    .label("unknown escape")
                    .help("the escapes are `\\n`, `\\t`, `\\r`, `\\0`, `\\\\` and `\\\"`"),
                );
            }
        }
    }
    Spanned::new(out, span(file, pair))
}

/// A number read as written: an integer unless it has a fraction or exponent.
pub enum Number {
    /// `42`, `-3`.
    Int(i128),
    /// `2.5`.
    Float(f64),
}

/// A `number` pair.
pub fn number(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>) -> Option<Spanned<Number>> {
    let text = pair.as_str();
    let clean = text.replace('_', "");
    let value = if let Ok(i) = clean.parse::<i128>() {
        Some(Number::Int(i))
    } else if clean.contains('.') && !clean.ends_with('.') {
        clean
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Number::Float)
    } else {
        None
    };
    if value.is_none() {
        let digits = clean.trim_start_matches('-');
        let message = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!("{} is too large", quote_name(text))
        } else {
            format!("{} is not a number", quote_name(text))
        };
        cx.push(
            Diagnostic::error(codes::BAD_LITERAL, span(file, pair), message)
                .label("malformed number")
                .help("write an integer such as `42` or `-3`, or a decimal such as `0.5`"),
        );
    }
    value.map(|v| Spanned::new(v, span(file, pair)))
}

/// An integer in `lo..=hi`; anything else is reported as `E0003` (the range is the type's: the
/// checks report values that fit the type but not the rule).
pub fn int(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>, what: &str) -> Option<Spanned<i64>> {
    let number = number(cx, file, pair)?;
    match number.value {
        Number::Int(i) => match i64::try_from(i) {
            Ok(i) => Some(Spanned::new(i, number.span)),
            Err(_) => {
                cx.push(
                    Diagnostic::error(
                        codes::BAD_LITERAL,
                        number.span,
                        format!("`{}` is too large for {what}", pair.as_str()),
                    )
                    .label("too large"),
                );
                None
            }
        },
        Number::Float(_) => {
            cx.push(
                Diagnostic::error(
                    codes::BAD_LITERAL,
                    number.span,
                    format!("{what} must be a whole number, found `{}`", pair.as_str()),
                )
                .label("expected an integer")
                .help("write it without a fraction"),
            );
            None
        }
    }
}

/// A non-negative integer that fits `u32` (counts: `repeat(3)`, `max_tokens 512`).
pub fn count(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>, what: &str) -> Option<Spanned<u32>> {
    let value = int(cx, file, pair, what)?;
    match u32::try_from(value.value) {
        Ok(n) => Some(Spanned::new(n, value.span)),
        Err(_) => {
            cx.push(
                Diagnostic::error(
                    codes::BAD_LITERAL,
                    value.span,
                    format!(
                        "{what} must be between 0 and {}, found `{}`",
                        u32::MAX,
                        value.value
                    ),
                )
                .label("out of range"),
            );
            None
        }
    }
}

/// A `duration` pair (`500ms`, `2s`, `30m`, `1h`).
pub fn duration(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>) -> Option<Spanned<DurationMs>> {
    match DurationMs::parse(pair.as_str()) {
        Ok(d) => Some(Spanned::new(d, span(file, pair))),
        Err(message) => {
            cx.push(
                Diagnostic::error(codes::BAD_LITERAL, span(file, pair), message)
                    .label("malformed duration")
                    .help("a duration is a whole number and a unit: `500ms`, `2s`, `30m` or `1h`"),
            );
            None
        }
    }
}

/// A `literal` pair.
pub fn literal(cx: &Ctxt, file: FileId, pair: Pair<'_, Rule>) -> Option<Spanned<Literal>> {
    let at = span(file, &pair);
    let inner = pair.into_inner().next()?;
    let value = match inner.as_rule() {
        Rule::string => Literal::Str(string(cx, file, &inner).value),
        Rule::number => match number(cx, file, &inner)?.value {
            Number::Int(i) => Literal::Int(i),
            Number::Float(f) => Literal::Float(f),
        },
        Rule::lit_true => Literal::Bool(true),
        Rule::lit_false => Literal::Bool(false),
        Rule::lit_none => Literal::None,
        Rule::list => {
            let mut items = Vec::new();
            for item in inner.into_inner() {
                items.push(literal(cx, file, item)?);
            }
            Literal::List(items)
        }
        _ => return None,
    };
    Some(Spanned::new(value, at))
}

/// A `path` pair as a `syn::Path`, spanned at the whole path. The name is its last segment.
pub fn path(file: FileId, pair: &Pair<'_, Rule>) -> Option<(Spanned<syn::Path>, Name)> {
    let at = span(file, pair);
    let text = pair.as_str();
    let last = text.rsplit("::").next().unwrap_or(text);
    let start = pair.as_span().end() - last.len();
    let name = Spanned::new(
        last.to_string(),
        crate::model::Span::File {
            file,
            start,
            end: pair.as_span().end(),
        },
    );
    // Keywords and other names Rust cannot take are reported by the checker on `name`; the path
    // itself is built from raw-safe segments so lowering never fails on them.
    let segments = text.split("::").map(|segment| {
        if crate::check::is_identifier(segment) || matches!(segment, "crate" | "self" | "super") {
            syn::Ident::new(segment, proc_macro2::Span::call_site())
        } else {
            syn::Ident::new("__invalid", proc_macro2::Span::call_site())
        }
    });
    let path = syn::Path {
        leading_colon: None,
        segments: segments.map(syn::PathSegment::from).collect(),
    };
    Some((Spanned::new(path, at), name))
}

/// A `rust_type` pair, read by syn.
pub fn rust_type(cx: &Ctxt, file: FileId, pair: &Pair<'_, Rule>) -> Option<Spanned<syn::Type>> {
    match syn::parse_str::<syn::Type>(pair.as_str()) {
        Ok(ty) => Some(Spanned::new(ty, span(file, pair))),
        Err(e) => {
            cx.push(
                Diagnostic::error(
                    codes::SYNTAX,
                    span(file, pair),
                    format!("{} is not a Rust type: {e}", quote_name(pair.as_str())),
                )
                .label("not a type")
                .help("write a Rust type such as `u32`, `String` or `Vec<String>`"),
            );
            None
        }
    }
}
