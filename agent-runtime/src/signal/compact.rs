//! A positional encoding of a [`Signal`] for the journal: every attribute in a fixed place
//! (no attribute names written) and the time as `[seconds, nanoseconds]` instead of RFC 3339
//! text, which is what a journaled step spent most of its encoding on. Self-describing formats
//! only (MessagePack in the journal); the CloudEvents JSON format is `json.rs`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Rare, Signal, SignalError};

/// A signal, written by position.
pub(crate) struct Compact<'a>(pub(crate) &'a Signal);

/// A time as `[seconds since the epoch, nanoseconds]`: exact, and a few bytes.
pub(crate) fn time_parts(time: &DateTime<Utc>) -> (i64, u32) {
    (time.timestamp(), time.timestamp_subsec_nanos())
}

/// The time [`time_parts`] wrote; `None` when the parts are out of range.
pub(crate) fn time_of((seconds, nanos): (i64, u32)) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(seconds, nanos)
}

impl Serialize for Compact<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let s = self.0;
        (
            &s.spec_version,
            &s.id,
            &s.source,
            &s.signal_type,
            &s.subject,
            s.time.as_ref().map(time_parts),
            &s.data_content_type,
            s.data_schema(),
            &s.data,
            s.data_bytes(),
            &s.extensions,
        )
            .serialize(serializer)
    }
}

/// The attributes in the order [`Compact`] writes them.
type Parts = (
    String,
    String,
    String,
    String,
    Option<String>,
    Option<(i64, u32)>,
    Option<String>,
    Option<String>,
    Value,
    Option<Vec<u8>>,
    BTreeMap<String, Value>,
);

/// A signal read back from its [`Compact`] form, checked as any decoded signal is.
pub(crate) struct Decoded(pub(crate) Signal);

impl<'de> Deserialize<'de> for Decoded {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (
            spec_version,
            id,
            source,
            signal_type,
            subject,
            time,
            data_content_type,
            data_schema,
            data,
            data_bytes,
            extensions,
        ) = Parts::deserialize(deserializer)?;
        let time = match time {
            None => None,
            Some(parts) => Some(time_of(parts).ok_or_else(|| {
                serde::de::Error::custom(SignalError::invalid(
                    "time",
                    "the stored time is out of range",
                ))
            })?),
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
            extensions,
            rare: Rare::of(data_schema, data_bytes),
        };
        signal.validate().map_err(serde::de::Error::custom)?;
        Ok(Decoded(signal))
    }
}
