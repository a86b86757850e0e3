//! The CloudEvents JSON format for [`Signal`]: attributes at the top level, the payload in
//! `data` (JSON or text) or `data_base64` (bytes); `null` means absent.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Rare, Signal, SignalError, base64};
use crate::quote::Quoted;

impl Serialize for Signal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("specversion", &self.spec_version)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("source", &self.source)?;
        map.serialize_entry("type", &self.signal_type)?;
        if let Some(subject) = &self.subject {
            map.serialize_entry("subject", subject)?;
        }
        if let Some(time) = &self.time {
            map.serialize_entry("time", &time.to_rfc3339_opts(SecondsFormat::AutoSi, true))?;
        }
        if let Some(content_type) = &self.data_content_type {
            map.serialize_entry("datacontenttype", content_type)?;
        }
        if let Some(schema) = self.data_schema() {
            map.serialize_entry("dataschema", schema)?;
        }
        if let Some(bytes) = self.data_bytes() {
            map.serialize_entry("data_base64", &base64::encode(bytes))?;
        } else if !self.data.is_null() {
            map.serialize_entry("data", &self.data)?;
        }
        for (name, value) in &self.extensions {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Signal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SignalVisitor)
    }
}

struct SignalVisitor;

impl<'de> Visitor<'de> for SignalVisitor {
    type Value = Signal;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a CloudEvent in JSON (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Signal, A::Error> {
        let mut raw = Raw::default();
        while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
            let value: Value = map.next_value()?;
            raw.set(name, value);
        }
        raw.finish().map_err(serde::de::Error::custom)
    }
}

/// A key borrowed from the input when it can be: attribute names need no allocation.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an attribute name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The members of a CloudEvent's JSON object, sorted into attributes before any check.
#[derive(Default)]
struct Raw {
    specversion: Option<Value>,
    id: Option<Value>,
    source: Option<Value>,
    signal_type: Option<Value>,
    subject: Option<Value>,
    time: Option<Value>,
    datacontenttype: Option<Value>,
    dataschema: Option<Value>,
    data: Option<Value>,
    data_base64: Option<Value>,
    extensions: BTreeMap<String, Value>,
}

impl Raw {
    fn set(&mut self, name: Cow<'_, str>, value: Value) {
        let slot = match &*name {
            "specversion" => &mut self.specversion,
            "id" => &mut self.id,
            "source" => &mut self.source,
            "type" => &mut self.signal_type,
            "subject" => &mut self.subject,
            "time" => &mut self.time,
            "datacontenttype" => &mut self.datacontenttype,
            "dataschema" => &mut self.dataschema,
            "data" => &mut self.data,
            "data_base64" => &mut self.data_base64,
            _ => {
                // `null` means absent; the name and value are checked in `validate`.
                if !value.is_null() {
                    self.extensions.insert(name.into_owned(), value);
                }
                return;
            }
        };
        *slot = Some(value);
    }

    fn finish(self) -> Result<Signal, SignalError> {
        let spec_version = required(self.specversion, "specversion")?;
        let id = required(self.id, "id")?;
        let source = required(self.source, "source")?;
        let signal_type = required(self.signal_type, "type")?;
        let subject = string(self.subject, "subject")?;
        let time = match string(self.time, "time")? {
            None => None,
            Some(text) => Some(
                DateTime::parse_from_rfc3339(&text)
                    .map_err(|e| {
                        SignalError::invalid(
                            "time",
                            format!(
                                "{} is not an RFC 3339 timestamp ({e}); expected `2026-01-31T12:00:00Z`",
                                Quoted::new(&text)
                            ),
                        )
                    })?
                    .with_timezone(&Utc),
            ),
        };
        let data_content_type = string(self.datacontenttype, "datacontenttype")?;
        let data_schema = string(self.dataschema, "dataschema")?;
        let data = self.data.unwrap_or(Value::Null);
        let data_bytes = match string(self.data_base64, "data_base64")? {
            None => None,
            Some(_) if !data.is_null() => {
                return Err(SignalError::invalid(
                    "data_base64",
                    "a signal carries `data` or `data_base64`, not both",
                ));
            }
            Some(text) => Some(
                base64::decode(&text)
                    .map_err(|reason| SignalError::invalid("data_base64", reason))?,
            ),
        };
        let signal = Signal {
            spec_version,
            id,
            source,
            signal_type,
            subject,
            time,
            data_content_type,
            data,
            extensions: self.extensions,
            rare: Rare::of(data_schema, data_bytes),
        };
        signal.validate()?;
        Ok(signal)
    }
}

/// A string attribute; `None` when absent or `null`.
fn string(value: Option<Value>, attribute: &str) -> Result<Option<String>, SignalError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(SignalError::invalid(
            attribute,
            format!("must be a string, not {}", kind(&other)),
        )),
    }
}

fn required(value: Option<Value>, attribute: &str) -> Result<String, SignalError> {
    string(value, attribute)?.ok_or_else(|| SignalError::invalid(attribute, "is required"))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads and checks a CloudEvent from its JSON object.
pub(super) fn from_map(map: Map<String, Value>) -> Result<Signal, SignalError> {
    let mut raw = Raw::default();
    for (name, value) in map {
        raw.set(Cow::Owned(name), value);
    }
    raw.finish()
}
