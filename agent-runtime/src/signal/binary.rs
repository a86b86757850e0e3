//! The CloudEvents binary content mode: attributes as `ce-*` headers, the payload as the body.
//! The HTTP protocol binding uses it, and so can any transport with headers (NATS).
//!
//! Header values are percent-encoded where the binding says (space, `"`, `%` and anything
//! outside printable ASCII), `datacontenttype` is the `content-type` header, and extension
//! values travel as text (`true`, `42`): on the way in they stay strings, as the binding has no
//! way to tell their types.

use serde_json::{Map, Value};

use super::{Signal, SignalError};
use crate::quote::Quoted;

/// The prefix of attribute headers.
pub const HEADER_PREFIX: &str = "ce-";

/// A signal in binary mode: its headers (lowercase names; `content-type` when it has a media
/// type) and its body.
///
/// ```
/// use agent_runtime::Signal;
/// use agent_runtime::signal::{from_binary, to_binary};
/// use serde_json::json;
///
/// let signal = Signal::with_id("7", "order.paid", json!({"order": 7})).with_subject("order 7");
/// let (headers, body) = to_binary(&signal);
/// assert!(headers.contains(&("ce-subject".to_string(), "order%207".to_string())));
/// assert_eq!(body, br#"{"order":7}"#);
/// let back = from_binary(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), &body).unwrap();
/// assert_eq!(back, signal);
/// ```
pub fn to_binary(signal: &Signal) -> (Vec<(String, String)>, Vec<u8>) {
    let mut headers = Vec::with_capacity(6 + signal.extensions.len());
    let mut put = |name: &str, value: &str| {
        headers.push((format!("{HEADER_PREFIX}{name}"), percent_encode(value)));
    };
    put("specversion", &signal.spec_version);
    put("id", &signal.id);
    put("source", &signal.source);
    put("type", &signal.signal_type);
    if let Some(subject) = &signal.subject {
        put("subject", subject);
    }
    if let Some(time) = &signal.time {
        put(
            "time",
            &time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        );
    }
    if let Some(schema) = signal.data_schema() {
        put("dataschema", schema);
    }
    for (name, value) in &signal.extensions {
        match value {
            Value::String(text) => put(name, text),
            other => put(name, &other.to_string()),
        }
    }
    if let Some(content_type) = &signal.data_content_type {
        headers.push(("content-type".to_string(), content_type.clone()));
    }
    let body = match (signal.data_bytes(), &signal.data) {
        (Some(bytes), _) => bytes.to_vec(),
        (None, Value::Null) => Vec::new(),
        (None, Value::String(text)) if !is_json(signal.data_content_type.as_deref()) => {
            text.clone().into_bytes()
        }
        (None, data) => serde_json::to_vec(data).unwrap_or_default(),
    };
    (headers, body)
}

/// Reads a signal in binary mode from its headers (any case; those that are neither `ce-*` nor
/// `content-type` are ignored) and body, with every CloudEvents rule checked. A JSON media type
/// (or none) makes the body JSON data, a `text/*` one text, anything else bytes.
pub fn from_binary<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    body: &[u8],
) -> Result<Signal, SignalError> {
    let mut map = Map::new();
    let mut content_type = None;
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        if name == "content-type" {
            content_type = Some(value.to_string());
            continue;
        }
        let Some(attribute) = name.strip_prefix(HEADER_PREFIX) else {
            continue;
        };
        let decoded = percent_decode(value).ok_or_else(|| {
            SignalError::invalid(
                attribute,
                format!(
                    "the `{name}` header {} is not percent-encoded UTF-8",
                    Quoted::new(value)
                ),
            )
        })?;
        if matches!(attribute, "data" | "data_base64" | "datacontenttype") {
            return Err(SignalError::invalid(
                attribute,
                format!(
                    "`{name}` is not a header of binary mode; the payload is the body and its media type `content-type`"
                ),
            ));
        }
        map.insert(attribute.to_string(), Value::String(decoded));
    }
    if !map.contains_key("specversion") {
        return Err(SignalError::invalid(
            "specversion",
            "binary mode needs a `ce-specversion` header (or send `application/cloudevents+json`)",
        ));
    }
    if let Some(content_type) = &content_type {
        map.insert(
            "datacontenttype".to_string(),
            Value::String(content_type.clone()),
        );
    }
    let mut bytes = None;
    if !body.is_empty() {
        if is_json(content_type.as_deref()) {
            let data = serde_json::from_slice(body).map_err(|e| {
                SignalError::invalid(
                    "data",
                    format!("the body is not the JSON its media type says: {e}"),
                )
            })?;
            map.insert("data".to_string(), data);
        } else if let Some(text) = content_type
            .as_deref()
            .filter(|t| is_text(t))
            .and_then(|_| std::str::from_utf8(body).ok())
        {
            map.insert("data".to_string(), Value::String(text.to_string()));
        } else {
            bytes = Some(body.to_vec());
        }
    }
    let mut signal = Signal::from_json(Value::Object(map))?;
    if let Some(bytes) = bytes {
        let media = signal
            .data_content_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".to_string());
        signal = signal.with_bytes(media, bytes);
    }
    Ok(signal)
}

/// Whether a media type means JSON: none (JSON is the default), `application/json`, or a
/// `+json` suffix.
pub(crate) fn is_json(content_type: Option<&str>) -> bool {
    let Some(content_type) = content_type else {
        return true;
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

fn is_text(content_type: &str) -> bool {
    content_type
        .trim_start()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("text/"))
}

/// Percent-encodes what the HTTP binding says a header value may not hold as is.
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if (0x21..=0x7e).contains(&byte) && byte != b'"' && byte != b'%' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `value` with its `%XX` escapes decoded, if they make UTF-8 (header values, URI fragments).
pub(crate) fn percent_decode(value: &str) -> Option<String> {
    if !value.contains('%') {
        return Some(value.to_string());
    }
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(headers: &[(&str, &str)], body: &[u8]) -> Result<Signal, SignalError> {
        from_binary(headers.iter().copied(), body)
    }

    const BASE: [(&str, &str); 4] = [
        ("ce-specversion", "1.0"),
        ("ce-id", "1"),
        ("ce-source", "/shop"),
        ("ce-type", "order.paid"),
    ];

    #[test]
    fn every_payload_kind_round_trips() {
        let signals = [
            Signal::with_id("1", "a.b", json!({"n": 1}))
                .with_extension("traceparent", json!("00-x")),
            Signal::with_id("2", "a.b", json!("note"))
                .with_bytes("text/plain", b"hello \xe2\x82\xac".to_vec())
                .with_subject("caf\u{e9} 100%"),
            Signal::with_id("3", "a.b", Value::Null)
                .with_bytes("image/png", vec![0, 159, 146, 150]),
            Signal::with_id("4", "a.b", Value::Null).with_data_schema("https://example.com/s.json"),
        ];
        for signal in signals {
            let (headers, body) = to_binary(&signal);
            assert!(
                headers
                    .iter()
                    .all(|(_, v)| v.bytes().all(|b| (0x21..=0x7e).contains(&b))),
                "{headers:?}"
            );
            let back =
                from_binary(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), &body).unwrap();
            let text_as_data = signal.data_content_type.as_deref() == Some("text/plain");
            if text_as_data {
                assert_eq!(back.data, json!("hello \u{20ac}"));
                assert_eq!(back.subject, signal.subject);
            } else {
                assert_eq!(back, signal);
            }
        }
    }

    #[test]
    fn extension_values_travel_as_text() {
        let signal = Signal::with_id("1", "a.b", Value::Null)
            .with_extension("retries", json!(3))
            .with_extension("urgent", json!(true));
        let (headers, _) = to_binary(&signal);
        assert!(headers.contains(&("ce-retries".into(), "3".into())));
        let back = from_binary(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), &[]).unwrap();
        assert_eq!(back.extensions["urgent"], "true");
    }

    #[test]
    fn what_the_spec_refuses_is_refused_with_the_attribute() {
        let err = read(&BASE[1..], b"").unwrap_err();
        assert_eq!(err.attribute, "specversion");
        let mut headers = BASE.to_vec();
        headers[0] = ("ce-specversion", "0.3");
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "specversion");
        let mut headers = BASE.to_vec();
        headers[1] = ("CE-ID", "");
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "id");
        let mut headers = BASE.to_vec();
        headers.push(("ce-Bad_Name", "x"));
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "bad_name");
        let mut headers = BASE.to_vec();
        headers.push(("ce-subject", "%ZZ"));
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "subject");
        let mut headers = BASE.to_vec();
        headers.push(("ce-data", "x"));
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "data");
        let mut headers = BASE.to_vec();
        headers.push(("content-type", "application/json"));
        assert_eq!(read(&headers, b"{nope").unwrap_err().attribute, "data");
        let mut headers = BASE.to_vec();
        headers.push(("content-type", "not a media type"));
        assert_eq!(
            read(&headers, b"x").unwrap_err().attribute,
            "datacontenttype"
        );
        let mut headers = BASE.to_vec();
        headers.push(("ce-time", "yesterday"));
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "time");
    }

    #[test]
    fn other_headers_are_ignored_and_no_body_is_no_data() {
        let mut headers = BASE.to_vec();
        headers.push(("authorization", "Bearer x"));
        let signal = read(&headers, b"").unwrap();
        assert_eq!(signal.data, Value::Null);
        assert!(signal.extensions.is_empty());
    }
}
