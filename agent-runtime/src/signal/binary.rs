//! The CloudEvents binary content mode: attributes as `ce-*` headers, the payload as the body.
//! One mapping serves the HTTP protocol binding and the NATS one ([`Binding`]); they differ
//! only in where `datacontenttype` travels.
//!
//! Header values are percent-encoded where the bindings say (space, `"`, `%` and anything
//! outside printable ASCII); on the way in a double-quoted value is unquoted first, then
//! percent-decoded once, and escapes that do not make UTF-8 are refused. Extension values
//! travel as text (`true`, `42`): on the way in they stay strings, as the bindings have no way
//! to tell their types.

use serde_json::{Map, Value};

use super::{Signal, SignalError};
use crate::quote::Quoted;

/// The prefix of attribute headers.
pub const HEADER_PREFIX: &str = "ce-";

/// How a transport puts a signal in a message: the CloudEvents content modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContentMode {
    /// The whole CloudEvent as JSON in the body (`application/cloudevents+json`).
    #[default]
    Structured,
    /// Attributes as `ce-*` headers, the payload as the body ([`Binding`]).
    Binary,
}

/// The protocol binding a binary-mode message follows.
///
/// ```
/// use agent_runtime::Signal;
/// use agent_runtime::signal::Binding;
/// use serde_json::json;
///
/// let signal = Signal::with_id("7", "order.paid", json!({"order": 7}));
/// let (headers, body) = Binding::Nats.to_binary(&signal);
/// assert!(headers.contains(&("ce-datacontenttype".to_string(), "application/json".to_string())));
/// let (http_headers, _) = Binding::Http.to_binary(&signal);
/// assert!(http_headers.contains(&("content-type".to_string(), "application/json".to_string())));
/// let back = Binding::Nats
///     .from_binary(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), &body)
///     .unwrap();
/// assert_eq!(back, signal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Binding {
    /// The HTTP protocol binding: `datacontenttype` is the `content-type` header, and a
    /// `ce-datacontenttype` header is refused.
    Http,
    /// The NATS protocol binding (NATS 2.2 and later, which carry headers):
    /// `datacontenttype` is the `ce-datacontenttype` header like any other attribute, since a
    /// `content-type` of `application/cloudevents` is what marks a structured message. A
    /// `content-type` of another media type is read as `datacontenttype` when there is no
    /// `ce-datacontenttype`, for senders used to HTTP; the two disagreeing is refused.
    Nats,
}

/// A signal in the HTTP binding's binary mode: [`Binding::Http`]'s
/// [`to_binary`](Binding::to_binary).
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
    Binding::Http.to_binary(signal)
}

/// Reads a signal in the HTTP binding's binary mode: [`Binding::Http`]'s
/// [`from_binary`](Binding::from_binary).
pub fn from_binary<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    body: &[u8],
) -> Result<Signal, SignalError> {
    Binding::Http.from_binary(headers, body)
}

impl Binding {
    /// The header `datacontenttype` travels in.
    fn content_type_header(self) -> &'static str {
        match self {
            Binding::Http => "content-type",
            Binding::Nats => "ce-datacontenttype",
        }
    }

    /// A signal's headers (lowercase names) and body in this binding's binary mode.
    pub fn to_binary(self, signal: &Signal) -> (Vec<(String, String)>, Vec<u8>) {
        let mut headers = Vec::with_capacity(7 + signal.extensions.len());
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
            // `content-type` is the protocol's own header, with its own syntax: as is.
            let value = match self {
                Binding::Http => content_type.clone(),
                Binding::Nats => percent_encode(content_type),
            };
            headers.push((self.content_type_header().to_string(), value));
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

    /// Reads a signal in this binding's binary mode from its headers (any case; those that are
    /// neither `ce-*` nor `content-type` are ignored) and body, with every CloudEvents rule
    /// checked. A JSON media type (or none) makes the body JSON data, a `text/*` one text,
    /// anything else bytes.
    pub fn from_binary<'a>(
        self,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        body: &[u8],
    ) -> Result<Signal, SignalError> {
        let mut map = Map::new();
        let mut content_type = None;
        // A NATS message's `content-type`, kept apart from `ce-datacontenttype`.
        let mut plain_content_type = None;
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            if name != "content-type" && !name.starts_with(HEADER_PREFIX) {
                continue;
            }
            if name == "content-type" {
                // The protocol's own header, as is (a media type is ASCII).
                match self {
                    Binding::Http => content_type = Some(value.trim().to_string()),
                    Binding::Nats => plain_content_type = Some(value.trim().to_string()),
                }
                continue;
            }
            let attribute = &name[HEADER_PREFIX.len()..];
            let decoded = header_value(value).ok_or_else(|| {
                SignalError::invalid(
                    attribute,
                    format!(
                        "the `{name}` header {} is not percent-encoded UTF-8",
                        Quoted::new(value)
                    ),
                )
            })?;
            if name == self.content_type_header() {
                content_type = Some(decoded);
                continue;
            }
            if matches!(attribute, "data" | "data_base64" | "datacontenttype") {
                return Err(SignalError::invalid(
                    attribute,
                    format!(
                        "`{name}` is not a header of binary mode; the payload is the body and its media type `{}`",
                        self.content_type_header()
                    ),
                ));
            }
            map.insert(attribute.to_string(), Value::String(decoded));
        }
        match (&content_type, plain_content_type) {
            (None, plain) => content_type = plain,
            (Some(ours), Some(plain)) if !plain.eq_ignore_ascii_case(ours) => {
                return Err(SignalError::invalid(
                    "datacontenttype",
                    format!(
                        "`ce-datacontenttype` {} and `content-type` {} disagree",
                        Quoted::new(ours),
                        Quoted::new(&plain)
                    ),
                ));
            }
            _ => {}
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
}

/// A header value as the bindings say to read it: a double-quoted string unquoted (RFC 9110
/// `quoted-string`, backslash escapes), then one round of percent-decoding.
fn header_value(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(quoted) => {
            let mut unquoted = String::with_capacity(quoted.len());
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => unquoted.push(chars.next()?),
                    '"' => return None,
                    c => unquoted.push(c),
                }
            }
            percent_decode(&unquoted)
        }
        None => percent_decode(value),
    }
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

    fn nats(headers: &[(&str, &str)], body: &[u8]) -> Result<Signal, SignalError> {
        Binding::Nats.from_binary(headers.iter().copied(), body)
    }

    #[test]
    fn nats_maps_every_attribute_to_a_ce_header_and_back() {
        let time = "2026-01-02T03:04:05Z".parse().unwrap();
        let mut full = Signal::with_id("9", "order.paid", json!({"order": 9}))
            .with_source("urn:shop:eu")
            .with_subject("caf\u{e9} \"9\"")
            .with_data_schema("https://example.com/order.json")
            .with_extension(
                "traceparent",
                json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            )
            .with_extension("tracestate", json!("k=v"));
        full.time = Some(time);
        full.data_content_type = Some("application/json; charset=utf-8".to_string());
        let signals = [
            full,
            Signal::with_id("10", "a.b", Value::Null).with_bytes("image/png", vec![0, 159, 255]),
            Signal::with_id("11", "a.b", json!("hello \u{20ac}"))
                .with_bytes("text/plain", "hello \u{20ac}".into()),
        ];
        for signal in signals {
            let (headers, body) = Binding::Nats.to_binary(&signal);
            let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
            assert!(
                names.iter().all(|n| n.starts_with(HEADER_PREFIX)),
                "{names:?}"
            );
            assert!(names.contains(&"ce-datacontenttype"), "{names:?}");
            assert!(
                headers
                    .iter()
                    .all(|(_, v)| v.bytes().all(|b| (0x21..=0x7e).contains(&b))),
                "{headers:?}"
            );
            let back = Binding::Nats
                .from_binary(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), &body)
                .unwrap();
            if signal.data_content_type.as_deref() == Some("text/plain") {
                assert_eq!(back.data, json!("hello \u{20ac}"));
            } else {
                assert_eq!(back, signal);
            }
        }
        let quoted = Signal::with_id("9", "a.b", Value::Null).with_subject("caf\u{e9} \"9\"");
        let (headers, _) = Binding::Nats.to_binary(&quoted);
        assert!(headers.contains(&("ce-subject".into(), "caf%C3%A9%20%229%22".into())));
    }

    #[test]
    fn nats_refuses_what_the_spec_refuses() {
        assert_eq!(nats(&BASE[1..], b"").unwrap_err().attribute, "specversion");
        let mut headers = BASE.to_vec();
        headers[3] = ("ce-type", "");
        assert_eq!(nats(&headers, b"").unwrap_err().attribute, "type");
        let mut headers = BASE.to_vec();
        headers.push(("ce-data", "x"));
        assert_eq!(nats(&headers, b"").unwrap_err().attribute, "data");
        let mut headers = BASE.to_vec();
        headers.push(("ce-data_base64", "eA=="));
        assert_eq!(nats(&headers, b"").unwrap_err().attribute, "data_base64");
        let mut headers = BASE.to_vec();
        headers.push(("ce-datacontenttype", "application%2Fjson"));
        assert_eq!(nats(&headers, b"{nope").unwrap_err().attribute, "data");
        let mut headers = BASE.to_vec();
        headers.push(("ce-datacontenttype", "no%20media%20type"));
        assert_eq!(
            nats(&headers, b"x").unwrap_err().attribute,
            "datacontenttype"
        );
        let mut headers = BASE.to_vec();
        headers.push(("ce-datacontenttype", "text/plain"));
        headers.push(("content-type", "application/json"));
        assert_eq!(
            nats(&headers, b"x").unwrap_err().attribute,
            "datacontenttype"
        );
        // An overlong encoding of a space is not UTF-8.
        let mut headers = BASE.to_vec();
        headers.push(("ce-subject", "a%C0%A0b"));
        assert_eq!(nats(&headers, b"").unwrap_err().attribute, "subject");
        let mut headers = BASE.to_vec();
        headers.push(("ce-dataschema", "relative/path"));
        assert_eq!(nats(&headers, b"").unwrap_err().attribute, "dataschema");
        let mut headers = BASE.to_vec();
        headers.push(("ce-time", "2026-13-01"));
        assert_eq!(nats(&headers, b"").unwrap_err().attribute, "time");
        // HTTP's `content-type` header is NATS's `ce-datacontenttype`, and the reverse is refused.
        let mut headers = BASE.to_vec();
        headers.push(("ce-datacontenttype", "application/json"));
        assert_eq!(
            read(&headers, b"{}").unwrap_err().attribute,
            "datacontenttype"
        );
    }

    #[test]
    fn nats_reads_a_plain_content_type_when_the_attribute_is_absent() {
        let mut headers = BASE.to_vec();
        headers.push(("Content-Type", "text/plain"));
        let signal = nats(&headers, b"hi").unwrap();
        assert_eq!(signal.data_content_type.as_deref(), Some("text/plain"));
        assert_eq!(signal.data, json!("hi"));
    }

    #[test]
    fn quoted_header_values_are_unquoted_then_percent_decoded() {
        let mut headers = BASE.to_vec();
        headers.push(("ce-subject", r#""order \"7\" %E2%82%AC""#));
        for signal in [read(&headers, b"").unwrap(), nats(&headers, b"").unwrap()] {
            assert_eq!(signal.subject.as_deref(), Some("order \"7\" \u{20ac}"));
        }
        let mut headers = BASE.to_vec();
        headers.push(("ce-subject", r#""a"b""#));
        assert_eq!(read(&headers, b"").unwrap_err().attribute, "subject");
        let mut headers = BASE.to_vec();
        headers.push(("ce-subject", "%e2%82%ac"));
        assert_eq!(
            read(&headers, b"").unwrap().subject.as_deref(),
            Some("\u{20ac}")
        );
    }
}
