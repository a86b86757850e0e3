//! A positional encoding of a [`Signal`] for the journal: every attribute in a fixed place
//! (no attribute names written) and the time as `[seconds, nanoseconds]` instead of RFC 3339
//! text, which is what a journaled step spent most of its encoding on. Self-describing formats
//! only (MessagePack in the journal); the CloudEvents JSON format is `json.rs`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer};
#[cfg(test)]
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::{Rare, Signal, SignalError};

/// A signal, written by position: the serde form of [`write_compact`]'s bytes (the reference
/// the tests hold the hand-written encoder to).
#[cfg(test)]
pub(crate) struct Compact<'a>(pub(crate) &'a Signal);

/// Appends `signal` in its compact form as MessagePack, the same bytes `rmp_serde` writes for
/// [`Compact`], without going through serde for the attributes every signal has (the journal
/// writes one per step). The payload and the rare attributes go through `rmp_serde` when set.
pub(crate) fn write_compact(
    out: &mut Vec<u8>,
    signal: &Signal,
) -> Result<(), rmp_serde::encode::Error> {
    let s = signal;
    write_array_header(out, 11);
    write_str(out, &s.spec_version)?;
    write_str(out, &s.id)?;
    write_str(out, &s.source)?;
    write_str(out, &s.signal_type)?;
    write_opt_str(out, s.subject.as_deref())?;
    match &s.time {
        Some(time) => write_time(out, time),
        None => out.push(NIL),
    }
    write_opt_str(out, s.data_content_type.as_deref())?;
    write_opt_str(out, s.data_schema())?;
    match &s.data {
        Value::Null => out.push(NIL),
        data => rmp_serde::encode::write(out, data)?,
    }
    match s.data_bytes() {
        None => out.push(NIL),
        bytes => rmp_serde::encode::write(out, &bytes)?,
    }
    if s.extensions.is_empty() {
        out.push(EMPTY_MAP);
    } else {
        rmp_serde::encode::write(out, &s.extensions)?;
    }
    Ok(())
}

// The few MessagePack forms a journaled step needs, written as `rmp` writes them (the shortest
// one for each value), without its generic writer: a step writes a dozen of them.
const NIL: u8 = 0xc0;
const EMPTY_MAP: u8 = 0x80;

/// The header of an array of fewer than 16 elements.
pub(crate) fn write_array_header(out: &mut Vec<u8>, len: u8) {
    debug_assert!(len < 16);
    out.push(0x90 | len);
}

/// An unsigned integer.
#[inline]
pub(crate) fn write_uint(out: &mut Vec<u8>, value: u64) {
    match value {
        0..128 => out.push(value as u8),
        128..256 => out.extend_from_slice(&[0xcc, value as u8]),
        256..65_536 => {
            out.push(0xcd);
            out.extend_from_slice(&(value as u16).to_be_bytes());
        }
        65_536..4_294_967_296 => {
            out.push(0xce);
            out.extend_from_slice(&(value as u32).to_be_bytes());
        }
        _ => {
            out.push(0xcf);
            out.extend_from_slice(&value.to_be_bytes());
        }
    }
}

/// A signed integer: a non-negative one as unsigned, as `rmp` does.
pub(crate) fn write_sint(out: &mut Vec<u8>, value: i64) {
    match value {
        0.. => write_uint(out, value as u64),
        -32..0 => out.push(value as i8 as u8),
        -128..-32 => out.extend_from_slice(&[0xd0, value as i8 as u8]),
        -32_768..-128 => {
            out.push(0xd1);
            out.extend_from_slice(&(value as i16).to_be_bytes());
        }
        -2_147_483_648..-32_768 => {
            out.push(0xd2);
            out.extend_from_slice(&(value as i32).to_be_bytes());
        }
        _ => {
            out.push(0xd3);
            out.extend_from_slice(&value.to_be_bytes());
        }
    }
}

/// A string, or nil.
fn write_opt_str(out: &mut Vec<u8>, text: Option<&str>) -> Result<(), rmp_serde::encode::Error> {
    match text {
        Some(text) => write_str(out, text),
        None => {
            out.push(NIL);
            Ok(())
        }
    }
}

/// A time as the array `[seconds, nanoseconds]` ([`time_parts`]).
pub(crate) fn write_time(out: &mut Vec<u8>, time: &DateTime<Utc>) {
    let (seconds, nanos) = time_parts(time);
    write_time_parts(out, seconds, nanos);
}

/// `[seconds, nanoseconds]`.
pub(crate) fn write_time_parts(out: &mut Vec<u8>, seconds: i64, nanos: u32) {
    write_array_header(out, 2);
    write_sint(out, seconds);
    write_uint(out, nanos.into());
}

/// A string.
#[inline]
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) -> Result<(), rmp_serde::encode::Error> {
    let len = text.len();
    match len {
        0..32 => out.push(0xa0 | len as u8),
        32..256 => out.extend_from_slice(&[0xd9, len as u8]),
        256..65_536 => {
            out.push(0xda);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => match u32::try_from(len) {
            Ok(len) => {
                out.push(0xdb);
                out.extend_from_slice(&len.to_be_bytes());
            }
            // Past MessagePack's limit: `rmp` reports it.
            Err(_) => return Ok(rmp::encode::write_str(out, text)?),
        },
    }
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

/// A time as `[seconds since the epoch, nanoseconds]`: exact, and a few bytes.
pub(crate) fn time_parts(time: &DateTime<Utc>) -> (i64, u32) {
    (time.timestamp(), time.timestamp_subsec_nanos())
}

/// The time [`time_parts`] wrote; `None` when the parts are out of range.
pub(crate) fn time_of((seconds, nanos): (i64, u32)) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(seconds, nanos)
}

#[cfg(test)]
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
