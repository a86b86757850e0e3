//! Signals: CloudEvents 1.0 messages that arrive at an agent and that `Emit` sends.
//!
//! The rules of the spec are checked on every way in: serde (`serde_json::from_value::<Signal>`
//! and any other deserializer), [`Signal::from_json`], and the agent server's door
//! ([`Signal::validate`] runs before a signal is queued or published), so nothing invalid is
//! stored or routed. Each refusal is a [`SignalError`] naming the attribute.

mod base64;
mod binary;
pub(crate) mod compact;
mod json;
mod rules;
mod size;
mod trace_context;

pub(crate) use binary::percent_decode;
pub use binary::{Binding, ContentMode, HEADER_PREFIX, from_binary, to_binary};
pub use trace_context::{TRACEPARENT, TRACESTATE, TraceContext};

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// The CloudEvents spec version every signal declares.
pub const SPEC_VERSION: &str = "1.0";

/// The source used when a signal is created without one.
pub const DEFAULT_SOURCE: &str = "/stratagem";

/// The media type every signal built by [`Signal::new`] and [`Signal::with_id`] declares.
const JSON_MEDIA_TYPE: &str = "application/json";

/// A CloudEvents 1.0 message.
///
/// Serializes as CloudEvents JSON (structured mode): `specversion`, `id`, `source`, `type`,
/// optional `subject`, `time`, `datacontenttype`, `dataschema`, the payload as `data` (JSON or
/// text) or `data_base64` (bytes), and extension attributes at the top level.
///
/// The rules (each refusal names the attribute):
/// - `specversion` is exactly `1.0`; `id`, `source` and `type` are non-empty strings and
///   `source` is a URI reference (`/orders`, `urn:shop:orders`, `https://shop.example`);
/// - `subject`, when present, is not empty; `time` is an RFC 3339 timestamp;
///   `datacontenttype` is an RFC 2046 media type (`application/json`,
///   `text/plain; charset=utf-8`); `dataschema` is an absolute URI;
/// - extension names are lowercase ASCII letters and digits and not one of the spec's own
///   attribute names; their values are booleans, integers in the signed 32-bit range or strings;
/// - `data` and `data_base64` never come together, and `data_base64` is valid base64.
///
/// In JSON an attribute whose value is `null` is absent, as the JSON format says.
///
/// ```
/// use agent_runtime::Signal;
/// use serde_json::json;
/// let s = Signal::new("order.pay", json!({"amount": 12.5})).with_subject("order-17");
/// let wire = serde_json::to_value(&s).unwrap();
/// assert_eq!(wire["specversion"], "1.0");
/// assert_eq!(wire["type"], "order.pay");
/// assert_eq!(wire["data"]["amount"], 12.5);
/// let back: Signal = serde_json::from_value(wire).unwrap();
/// assert_eq!(back, s);
///
/// let refused = serde_json::from_value::<Signal>(json!({
///     "specversion": "1.0", "id": "", "source": "/shop", "type": "order.pay"
/// }));
/// assert_eq!(refused.unwrap_err().to_string(), "invalid CloudEvents attribute `id`: must not be empty");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    /// Always [`SPEC_VERSION`].
    pub spec_version: String,
    /// Unique per source; not empty.
    pub id: String,
    /// A URI reference naming the producer.
    pub source: String,
    /// Dot-separated type, matched by routes (`order.pay`); not empty.
    pub signal_type: String,
    /// What the signal is about, within the source; not empty when present.
    pub subject: Option<String>,
    /// When it was produced.
    pub time: Option<DateTime<Utc>>,
    /// The media type of the payload (`application/json` unless said otherwise).
    pub data_content_type: Option<String>,
    /// The payload when it is JSON or text (`Null` when there is none or it is bytes).
    pub data: Value,
    /// CloudEvents extension attributes (lowercase alphanumeric names; boolean, 32-bit integer
    /// or string values).
    pub extensions: BTreeMap<String, Value>,
    /// `dataschema` and a binary payload, read through [`Signal::data_schema`] and
    /// [`Signal::data_bytes`].
    rare: Option<Box<Rare>>,
}

/// The attributes few signals carry, boxed so that every signal (and every directive that
/// holds one) stays as small as it was without them.
#[derive(Debug, Clone, PartialEq, Default)]
struct Rare {
    data_schema: Option<String>,
    data_bytes: Option<Vec<u8>>,
}

impl Rare {
    /// The box a signal holds for these attributes; none when both are absent.
    fn of(data_schema: Option<String>, data_bytes: Option<Vec<u8>>) -> Option<Box<Rare>> {
        (data_schema.is_some() || data_bytes.is_some()).then(|| {
            Box::new(Rare {
                data_schema,
                data_bytes,
            })
        })
    }
}

/// Why a signal does not follow the CloudEvents 1.0 rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CloudEvents attribute `{attribute}`: {reason}")]
pub struct SignalError {
    /// The attribute (or extension name) at fault.
    pub attribute: String,
    /// What is wrong with it, with a hint where one helps.
    pub reason: String,
}

impl SignalError {
    pub(crate) fn invalid(attribute: &str, reason: impl Into<String>) -> Self {
        SignalError {
            attribute: attribute.to_string(),
            reason: reason.into(),
        }
    }
}

fn not_empty(attribute: &str, value: &str) -> Result<(), SignalError> {
    if value.is_empty() {
        return Err(SignalError::invalid(attribute, "must not be empty"));
    }
    Ok(())
}

impl Signal {
    /// A signal of this type and data, with a fresh id, the current time and the default source.
    pub fn new(signal_type: impl Into<String>, data: Value) -> Self {
        Signal {
            spec_version: SPEC_VERSION.to_string(),
            id: crate::journal::context::fresh_id(),
            source: DEFAULT_SOURCE.to_string(),
            signal_type: signal_type.into(),
            subject: None,
            time: Some(crate::journal::context::now()),
            data_content_type: Some(JSON_MEDIA_TYPE.to_string()),
            data,
            extensions: BTreeMap::new(),
            rare: None,
        }
    }

    /// A signal with a chosen id and no timestamp: what a pure `cmd` produces so that its output
    /// is deterministic. The host may stamp `time` when it delivers the signal.
    pub fn with_id(id: impl Into<String>, signal_type: impl Into<String>, data: Value) -> Self {
        // Built field by field: `Signal::new` would draw a UUID and read the clock only for
        // both to be thrown away (AI strategies emit several of these per step).
        Signal {
            spec_version: SPEC_VERSION.to_string(),
            id: id.into(),
            source: DEFAULT_SOURCE.to_string(),
            signal_type: signal_type.into(),
            subject: None,
            time: None,
            data_content_type: Some(JSON_MEDIA_TYPE.to_string()),
            data,
            extensions: BTreeMap::new(),
            rare: None,
        }
    }

    /// Sets the source.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }

    /// Sets the subject.
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Adds an extension attribute.
    #[must_use]
    pub fn with_extension(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extensions.insert(name.into(), value);
        self
    }

    /// Sets `dataschema`, the absolute URI of the schema `data` follows.
    #[must_use]
    pub fn with_data_schema(mut self, uri: impl Into<String>) -> Self {
        self.rare.get_or_insert_default().data_schema = Some(uri.into());
        self
    }

    /// Makes the payload bytes of this media type (sent as `data_base64` in JSON).
    #[must_use]
    pub fn with_bytes(mut self, content_type: impl Into<String>, bytes: Vec<u8>) -> Self {
        self.data = Value::Null;
        self.rare.get_or_insert_default().data_bytes = Some(bytes);
        self.data_content_type = Some(content_type.into());
        self
    }

    /// `dataschema`: the absolute URI of the schema `data` follows, if given.
    pub fn data_schema(&self) -> Option<&str> {
        self.rare.as_ref()?.data_schema.as_deref()
    }

    /// The payload when it is bytes (`data_base64` on the wire).
    pub fn data_bytes(&self) -> Option<&[u8]> {
        self.rare.as_ref()?.data_bytes.as_deref()
    }

    /// The signal's type (`order.pay`).
    pub fn signal_type(&self) -> &str {
        &self.signal_type
    }

    /// Reads a CloudEvent in the JSON format, with every rule checked.
    ///
    /// ```
    /// use agent_runtime::Signal;
    /// use serde_json::json;
    /// let err = Signal::from_json(json!({
    ///     "specversion": "1.0", "id": "1", "source": "/shop", "type": "order.pay",
    ///     "Trace.Id": "x"
    /// })).unwrap_err();
    /// assert_eq!(err.attribute, "Trace.Id");
    /// ```
    pub fn from_json(value: Value) -> Result<Signal, SignalError> {
        match value {
            Value::Object(map) => json::from_map(map),
            _ => Err(SignalError::invalid(
                "specversion",
                "a CloudEvent in JSON is an object",
            )),
        }
    }

    /// Checks every CloudEvents 1.0 rule; the first attribute that breaks one.
    pub fn validate(&self) -> Result<(), SignalError> {
        if self.spec_version != SPEC_VERSION {
            return Err(SignalError::invalid(
                "specversion",
                format!(
                    "unsupported version {}; expected `1.0`",
                    crate::quote::Quoted::new(&self.spec_version)
                ),
            ));
        }
        not_empty("id", &self.id)?;
        not_empty("source", &self.source)?;
        // The runtime's own constants are valid (a test checks them with the full rules): most
        // signals an agent emits carry them, and skipping their parse gives the same answer.
        if self.source != DEFAULT_SOURCE {
            rules::check_uri_reference("source", &self.source)?;
        }
        not_empty("type", &self.signal_type)?;
        if let Some(subject) = &self.subject {
            not_empty("subject", subject)?;
        }
        if let Some(content_type) = &self.data_content_type
            && content_type != JSON_MEDIA_TYPE
        {
            rules::check_media_type("datacontenttype", content_type)?;
        }
        if let Some(schema) = self.data_schema() {
            not_empty("dataschema", schema)?;
            rules::check_absolute_uri("dataschema", schema)?;
        }
        if self.data_bytes().is_some() && !self.data.is_null() {
            return Err(SignalError::invalid(
                "data_base64",
                "a signal carries `data` or `data_base64`, not both",
            ));
        }
        for (name, value) in &self.extensions {
            rules::check_extension_name(name)?;
            rules::check_extension_value(name, value)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
