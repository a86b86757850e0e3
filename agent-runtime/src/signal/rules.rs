//! The CloudEvents 1.0 rules for attribute values: URI references, absolute URIs, RFC 2046
//! media types, extension names and extension value types.

use serde_json::Value;

use super::SignalError;
use crate::quote::Quoted;

/// The attributes the spec defines, which extensions may not take as names (`data` and
/// `data_base64` are the payload's members in the JSON format).
pub(crate) const RESERVED: [&str; 10] = [
    "specversion",
    "id",
    "source",
    "type",
    "subject",
    "time",
    "datacontenttype",
    "dataschema",
    "data",
    "data_base64",
];

/// A byte-class table, built at compile time: one lookup per byte instead of a scan of the
/// allowed punctuation.
const fn table(punctuation: &[u8], alphanumeric: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = alphanumeric && (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let mut i = 0;
    while i < punctuation.len() {
        t[punctuation[i] as usize] = true;
        i += 1;
    }
    t
}

/// Characters RFC 3986 allows in a URI outside of percent-encodings.
const URI_CHARS: [bool; 256] = table(b"-._~:/?#[]@!$&'()*+,;=", true);

/// RFC 2045 token characters: visible ASCII but the tspecials.
const TOKEN_CHARS: [bool; 256] = table(b"!#$%&'*+-.^_`{|}~", true);

fn uri_char(c: u8) -> bool {
    URI_CHARS[c as usize]
}

/// An RFC 3986 URI-reference (a URI, or a relative reference such as `/orders`), checked in
/// one pass.
pub(crate) fn check_uri_reference(attribute: &str, value: &str) -> Result<(), SignalError> {
    let bytes = value.as_bytes();
    let authority = authority(value);
    let mut fragments = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3);
                if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return Err(SignalError::invalid(
                        attribute,
                        format!("`%` at byte {i} is not followed by two hex digits"),
                    ));
                }
                i += 3;
                continue;
            }
            b'#' => fragments += 1,
            // `[` and `]` only delimit an IP literal in the authority.
            b'[' | b']' if !authority.contains(&i) => {
                return Err(SignalError::invalid(
                    attribute,
                    "`[` and `]` are only allowed around an IP address in the authority",
                ));
            }
            _ if !uri_char(c) => {
                return Err(SignalError::invalid(
                    attribute,
                    format!(
                        "character {:?} at byte {i} is not allowed in a URI reference (percent-encode it)",
                        value[i..].chars().next().unwrap_or('?')
                    ),
                ));
            }
            _ => {}
        }
        i += 1;
    }
    // The fragment may not contain another `#`.
    if fragments > 1 {
        return Err(SignalError::invalid(attribute, "more than one `#`"));
    }
    // A colon before the first `/`, `?` or `#` ends a scheme, which must be well formed.
    let head_end = value.find(['/', '?', '#']).unwrap_or(value.len());
    if let Some(colon) = value[..head_end].find(':')
        && !is_scheme(&value[..colon])
    {
        return Err(SignalError::invalid(
            attribute,
            format!(
                "{} is not a URI scheme (a letter, then letters, digits, `+`, `-` or `.`)",
                Quoted::new(&value[..colon])
            ),
        ));
    }
    Ok(())
}

/// The byte range of the `//authority` part (empty if the reference has none).
fn authority(value: &str) -> std::ops::Range<usize> {
    let Some(start) = value.find("//") else {
        return 0..0;
    };
    let scheme_part = &value[..start];
    if !(scheme_part.is_empty()
        || (scheme_part.ends_with(':') && !scheme_part.contains(['/', '?', '#'])))
    {
        return 0..0;
    }
    let rest = &value[start + 2..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    start..start + 2 + end
}

fn is_scheme(s: &str) -> bool {
    let mut chars = s.bytes();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
}

/// An absolute URI: a URI reference with a scheme.
pub(crate) fn check_absolute_uri(attribute: &str, value: &str) -> Result<(), SignalError> {
    check_uri_reference(attribute, value)?;
    let head_end = value.find(['/', '?', '#']).unwrap_or(value.len());
    if !value[..head_end].contains(':') {
        return Err(SignalError::invalid(
            attribute,
            "must be an absolute URI, with a scheme (`https://example.com/schema`)",
        ));
    }
    Ok(())
}

fn token_char(c: u8) -> bool {
    TOKEN_CHARS[c as usize]
}

fn token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(token_char)
}

/// An RFC 2046 media type: `type/subtype` and `; name=value` parameters, where a value is a
/// token or a quoted string.
pub(crate) fn check_media_type(attribute: &str, value: &str) -> Result<(), SignalError> {
    let bad = |why: &str| {
        SignalError::invalid(
            attribute,
            format!(
                "`{value}` is not a media type ({why}); expected `type/subtype` such as `application/json`"
            ),
        )
    };
    let (essence, mut params) = value.split_once(';').unwrap_or((value, ""));
    if value.contains(';') && params.trim().is_empty() {
        return Err(bad("a `;` without a parameter"));
    }
    let (kind, subtype) = essence.split_once('/').ok_or_else(|| bad("no `/`"))?;
    if !token(kind.trim_start()) || !token(subtype.trim_end()) {
        return Err(bad("the type and subtype must be tokens"));
    }
    while !params.is_empty() {
        let (name, rest) = params
            .split_once('=')
            .ok_or_else(|| bad("a parameter has no `=`"))?;
        if !token(name.trim()) {
            return Err(bad("a parameter name must be a token"));
        }
        let rest = rest.trim_start();
        let (parameter_value, after) = if let Some(quoted) = rest.strip_prefix('"') {
            let end = closing_quote(quoted).ok_or_else(|| bad("an unterminated quoted string"))?;
            (None, &quoted[end + 1..])
        } else {
            let end = rest.find(';').unwrap_or(rest.len());
            (Some(rest[..end].trim_end()), &rest[end..])
        };
        if parameter_value.is_some_and(|v| !token(v)) {
            return Err(bad("a parameter value must be a token or a quoted string"));
        }
        let after = after.trim_start();
        params = match after.strip_prefix(';') {
            Some(next) if next.trim().is_empty() => {
                return Err(bad("a `;` without a parameter"));
            }
            Some(next) => next,
            None if after.is_empty() => "",
            None => return Err(bad("text after a parameter value")),
        };
    }
    Ok(())
}

/// The index of the `"` that ends a quoted string (after the opening one), honouring `\`.
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.bytes().enumerate() {
        match c {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return Some(i),
            _ => {}
        }
    }
    None
}

/// An extension attribute name: lowercase ASCII letters and digits, not a reserved name.
pub(crate) fn check_extension_name(name: &str) -> Result<(), SignalError> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    {
        return Err(SignalError::invalid(
            name,
            "an extension name is lowercase ASCII letters and digits only",
        ));
    }
    if RESERVED.contains(&name) {
        return Err(SignalError::invalid(
            name,
            "a reserved attribute name cannot be an extension",
        ));
    }
    Ok(())
}

/// An extension value of a CloudEvents type in JSON: a boolean, an integer in the signed
/// 32-bit range, or a string (strings carry the String, Binary, URI, URI-reference and
/// Timestamp types).
pub(crate) fn check_extension_value(name: &str, value: &Value) -> Result<(), SignalError> {
    match value {
        Value::Bool(_) | Value::String(_) => Ok(()),
        Value::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => Ok(()),
        Value::Number(_) => Err(SignalError::invalid(
            name,
            "a number extension must be an integer between -2147483648 and 2147483647",
        )),
        Value::Null => Err(SignalError::invalid(
            name,
            "an extension cannot be null (leave it out)",
        )),
        Value::Array(_) | Value::Object(_) => Err(SignalError::invalid(
            name,
            "an extension is a boolean, an integer or a string, not an array or object",
        )),
    }
}
