//! Signals: CloudEvents-shaped messages that arrive at an agent and that `Emit` sends.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The CloudEvents spec version every signal declares.
pub const SPEC_VERSION: &str = "1.0";

/// The source used when a signal is created without one.
pub const DEFAULT_SOURCE: &str = "/stratagem";

/// A CloudEvents 1.0 message.
///
/// Serializes as CloudEvents JSON (structured mode): `specversion`, `id`, `source`, `type`,
/// optional `subject`, `time`, `datacontenttype`, `data`, and extension attributes at the top level.
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
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// Always [`SPEC_VERSION`].
    #[serde(rename = "specversion", deserialize_with = "spec_version")]
    pub spec_version: String,
    /// Unique per source.
    pub id: String,
    /// A URI reference naming the producer.
    pub source: String,
    /// Dot-separated type, matched by routes (`order.pay`).
    #[serde(rename = "type")]
    pub signal_type: String,
    /// What the signal is about, within the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// When it was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<DateTime<Utc>>,
    /// The media type of `data` (`application/json` unless said otherwise).
    #[serde(
        rename = "datacontenttype",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub data_content_type: Option<String>,
    /// The payload.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
    /// CloudEvents extension attributes (lowercase alphanumeric names).
    #[serde(flatten)]
    pub extensions: BTreeMap<String, Value>,
}

fn spec_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = String::deserialize(d)?;
    if v.split('.').next() == Some("1") {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "unsupported CloudEvents specversion `{v}`; expected `1.0`"
        )))
    }
}

impl Signal {
    /// A signal of this type and data, with a fresh id, the current time and the default source.
    pub fn new(signal_type: impl Into<String>, data: Value) -> Self {
        Signal {
            spec_version: SPEC_VERSION.to_string(),
            id: uuid::Uuid::now_v7().to_string(),
            source: DEFAULT_SOURCE.to_string(),
            signal_type: signal_type.into(),
            subject: None,
            time: Some(Utc::now()),
            data_content_type: Some("application/json".to_string()),
            data,
            extensions: BTreeMap::new(),
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
            data_content_type: Some("application/json".to_string()),
            data,
            extensions: BTreeMap::new(),
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

    /// The signal's type (`order.pay`).
    pub fn signal_type(&self) -> &str {
        &self.signal_type
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_as_cloudevents_json() {
        let s = Signal::with_id("42", "order.pay", json!({"amount": 1}))
            .with_source("/shop")
            .with_extension("traceparent", json!("00-abc"));
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({
                "specversion": "1.0",
                "id": "42",
                "source": "/shop",
                "type": "order.pay",
                "datacontenttype": "application/json",
                "data": {"amount": 1},
                "traceparent": "00-abc",
            })
        );
    }

    #[test]
    fn reads_minimal_cloudevents() {
        let s: Signal = serde_json::from_value(json!({
            "specversion": "1.0", "id": "1", "source": "/x", "type": "a.b"
        }))
        .unwrap();
        assert_eq!(s.signal_type(), "a.b");
        assert_eq!(s.data, Value::Null);
        assert!(s.extensions.is_empty());
    }

    #[test]
    fn rejects_other_spec_versions() {
        let err = serde_json::from_value::<Signal>(json!({
            "specversion": "0.3", "id": "1", "source": "/x", "type": "a"
        }))
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("unsupported CloudEvents specversion `0.3`")
        );
    }
}
