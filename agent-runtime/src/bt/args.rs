//! Action arguments written in a tree (`action move_to(speed = 2, mode = "fast")`), as constant
//! data: generated trees hold them in statics and actions decode them straight into their typed
//! parameters, with no JSON and no allocation (unless the parameters own data, like a `String`).

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

use crate::error::ActionError;

/// One literal argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    /// `"text"`.
    Str(&'static str),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `none`.
    None,
    /// `[a, b]`.
    List(&'static [Arg]),
}

/// Named arguments, in the order written: what an action leaf passes as parameters.
#[derive(Clone, Copy, PartialEq)]
pub struct Args(pub &'static [(&'static str, Arg)]);

impl Args {
    /// No arguments (they decode as an empty object, like a signal without data).
    pub const NONE: Args = Args(&[]);

    /// Decodes the arguments into an action's parameter type.
    #[inline]
    pub fn decode<P: DeserializeOwned>(self, action: &str) -> Result<P, ActionError> {
        P::deserialize(self).map_err(|e: de::value::Error| ActionError::invalid_params(action, e))
    }

    /// The arguments as a JSON object (for an async action's instruction).
    pub fn to_json(self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_json()))
                .collect(),
        )
    }
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl Arg {
    /// The argument as JSON.
    pub fn to_json(self) -> Value {
        match self {
            Arg::Str(s) => Value::from(s),
            Arg::Int(n) => i64::try_from(n)
                .map(Value::from)
                .or_else(|_| u64::try_from(n).map(Value::from))
                .unwrap_or_else(|_| Value::from(n as f64)),
            Arg::Float(x) => Value::from(x),
            Arg::Bool(b) => Value::from(b),
            Arg::None => Value::Null,
            Arg::List(items) => Value::Array(items.iter().map(|a| a.to_json()).collect()),
        }
    }
}

impl<'de> Deserializer<'de> for Args {
    type Error = de::value::Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let mut map = de::value::MapDeserializer::new(self.0.iter().copied());
        let value = visitor.visit_map(&mut map)?;
        map.end()?;
        Ok(value)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, de::value::Error> for Arg {
    type Deserializer = Arg;
    fn into_deserializer(self) -> Arg {
        self
    }
}

impl<'de> Deserializer<'de> for Arg {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Arg::Str(s) => visitor.visit_borrowed_str(s),
            Arg::Int(n) => match (i64::try_from(n), u64::try_from(n)) {
                (Ok(n), _) => visitor.visit_i64(n),
                (_, Ok(n)) => visitor.visit_u64(n),
                _ => visitor.visit_i128(n),
            },
            Arg::Float(x) => visitor.visit_f64(x),
            Arg::Bool(b) => visitor.visit_bool(b),
            Arg::None => visitor.visit_none(),
            Arg::List(items) => {
                let mut seq = de::value::SeqDeserializer::new(items.iter().copied());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Arg::None => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self {
            // A unit variant written as a string: `mode = "fast"`.
            Arg::Str(s) => s
                .into_deserializer()
                .deserialize_enum(name, variants, visitor),
            other => other.deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Move {
        speed: u8,
        mode: Mode,
        label: Option<String>,
        #[serde(default)]
        waypoints: Vec<f64>,
        careful: Option<bool>,
    }

    #[test]
    fn arguments_decode_into_typed_parameters() {
        const ARGS: Args = Args(&[
            ("speed", Arg::Int(2)),
            ("mode", Arg::Str("fast")),
            ("label", Arg::None),
            ("waypoints", Arg::List(&[Arg::Float(1.5), Arg::Int(3)])),
            ("careful", Arg::Bool(true)),
        ]);
        let params: Move = ARGS.decode("move_to").unwrap();
        assert_eq!(
            params,
            Move {
                speed: 2,
                mode: Mode::Fast,
                label: None,
                waypoints: vec![1.5, 3.0],
                careful: Some(true)
            }
        );
        assert_eq!(
            ARGS.to_json(),
            json!({"speed": 2, "mode": "fast", "label": null, "waypoints": [1.5, 3], "careful": true})
        );
        let _ = Mode::Slow;
    }

    #[test]
    fn mismatches_are_invalid_parameters_naming_the_action() {
        let err = Args(&[("speed", Arg::Int(300)), ("mode", Arg::Str("fast"))])
            .decode::<Move>("move_to")
            .unwrap_err();
        assert_eq!(err.kind(), crate::ActionErrorKind::InvalidParams);
        assert!(
            err.message()
                .starts_with("invalid parameters for `move_to`"),
            "{err}"
        );
        let err = Args::NONE.decode::<Move>("move_to").unwrap_err();
        assert!(err.message().contains("missing field `speed`"), "{err}");
        assert_eq!(
            Args::NONE.decode::<crate::NoParams>("x").unwrap(),
            crate::NoParams {}
        );
    }
}
