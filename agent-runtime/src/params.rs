//! Strict decoding of action parameters: the JSON must have exactly the shape the action's
//! closed schema advertises.
//!
//! serde on its own is lenient where a schema is not: a derived struct ignores fields it does
//! not know and reads an array as its fields in order. [`decode`] runs the type's own
//! `Deserialize` over a deserializer that refuses both, so parameters mean what
//! [`ActionEntry::spec`](crate::ActionEntry::spec) tells tools and models they mean. Errors
//! name where the problem is (`at `card.number`: ...`) and quote values through
//! [`quote`](crate::quote), so a huge bad parameter gives a short error.
//!
//! An action that wants serde's lenient behaviour takes [`Lenient<P>`].
//!
//! Known limit: a struct with a `#[serde(flatten)]` field is read as a map by serde, so its
//! unknown fields are not detected (neither does its schema close it).

use std::fmt;
use std::ops::{Deref, DerefMut};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::quote::{ByteSize, QUOTE_LIMIT, Quoted, QuotedJson};

/// The longest error message [`ParamsError`] keeps (a custom `Deserialize` may quote its input).
const MESSAGE_LIMIT: usize = 4 * QUOTE_LIMIT;

/// Decodes `P` from `value`, refusing unknown fields and arrays where an object is expected.
pub fn decode<'de, P: Deserialize<'de>>(value: &'de Value) -> Result<P, ParamsError> {
    P::deserialize(Strict::root(value))
}

/// Parameters decoded the way serde does by default: unknown fields are ignored and a struct
/// may be given as an array of its fields in order. Take `Lenient<P>` instead of `P` in an
/// action to opt out of strict decoding for that action; its schema is still `P`'s, closed.
///
/// ```
/// use agent_runtime::action::decode_params;
/// use agent_runtime::params::Lenient;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Note { text: String }
///
/// let extra = json!({"text": "hi", "from": "a newer client"});
/// assert!(decode_params::<Note>("note", extra.clone()).is_err());
/// let note: Lenient<Note> = decode_params("note", extra).unwrap();
/// assert_eq!(note.text, "hi");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Lenient<P>(pub P);

impl<P> Lenient<P> {
    /// The parameters.
    pub fn into_inner(self) -> P {
        self.0
    }
}

impl<P> Deref for Lenient<P> {
    type Target = P;
    fn deref(&self) -> &P {
        &self.0
    }
}

impl<P> DerefMut for Lenient<P> {
    fn deref_mut(&mut self) -> &mut P {
        &mut self.0
    }
}

impl<'de, P: DeserializeOwned> Deserialize<'de> for Lenient<P> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The strict deserializer's `deserialize_any` reads anything, so the value comes out
        // whole and serde's own, lenient, deserializer reads it.
        let value = Value::deserialize(d)?;
        serde_json::from_value(value)
            .map(Lenient)
            .map_err(|e| de::Error::custom(bounded(e.to_string())))
    }
}

impl<P: JsonSchema> JsonSchema for Lenient<P> {
    fn inline_schema() -> bool {
        P::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        P::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        P::json_schema(generator)
    }
}

/// Parameters that do not fit their type: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsError {
    /// Keys and indexes from the outermost in, stored innermost first as errors bubble out.
    path: Vec<Segment>,
    message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl ParamsError {
    /// What is wrong, without the location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where it is wrong: `card.number`, `items[2]`; empty for the parameters as a whole.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for segment in self.path.iter().rev() {
            match segment {
                Segment::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn within(mut self, segment: Segment) -> Self {
        self.path.push(segment);
        self
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path(), self.message)
        }
    }
}

impl std::error::Error for ParamsError {}

impl de::Error for ParamsError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ParamsError {
            path: Vec::new(),
            message: bounded(msg.to_string()),
        }
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::custom(format_args!(
            "invalid type: {}, expected {expected}",
            Shown(unexpected)
        ))
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::custom(format_args!(
            "invalid value: {}, expected {expected}",
            Shown(unexpected)
        ))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format_args!(
            "unknown field `{}`, {}",
            name(field),
            one_of(expected, "fields")
        ))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format_args!(
            "unknown variant `{}`, {}",
            name(variant),
            one_of(expected, "variants")
        ))
    }
}

/// An unexpected input as serde describes it, with strings and bytes quoted within bounds.
struct Shown<'a>(Unexpected<'a>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unexpected::Str(s) => write!(f, "string {}", Quoted::new(s)),
            Unexpected::Bytes(b) => write!(f, "{} of bytes", ByteSize(b.len())),
            ref other => other.fmt(f),
        }
    }
}

fn one_of(expected: &[&str], what: &str) -> String {
    match expected {
        [] => format!("there are no {what}"),
        [one] => format!("expected `{one}`"),
        many => {
            let names: Vec<String> = many.iter().map(|n| format!("`{n}`")).collect();
            format!("expected one of {}", names.join(", "))
        }
    }
}

/// A name the caller chose (a key, a variant), cut like a quoted value.
fn name(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({})", &text[..cut], ByteSize(text.len())),
    }
}

fn bounded(mut message: String) -> String {
    if let Some((cut, _)) = message.char_indices().nth(MESSAGE_LIMIT) {
        let size = ByteSize(message.len());
        message.truncate(cut);
        message.push_str(&format!("… ({size} message)"));
    }
    message
}

/// The strict deserializer over a borrowed value.
#[derive(Clone, Copy)]
struct Strict<'de> {
    value: &'de Value,
    /// The value is a field of a struct that the struct does not know: serde skips such a
    /// value with `deserialize_ignored_any`, which is where it is refused.
    unknown_field_of: Option<&'static [&'static str]>,
    key: Option<&'de str>,
}

impl<'de> Strict<'de> {
    fn root(value: &'de Value) -> Self {
        Strict {
            value,
            unknown_field_of: None,
            key: None,
        }
    }

    fn unexpected(&self) -> Unexpected<'de> {
        match self.value {
            Value::Null => Unexpected::Unit,
            Value::Bool(b) => Unexpected::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Unexpected::Unsigned(u),
                (_, Some(i), _) => Unexpected::Signed(i),
                (_, _, Some(f)) => Unexpected::Float(f),
                _ => Unexpected::Other("number"),
            },
            Value::String(s) => Unexpected::Str(s),
            Value::Array(_) => Unexpected::Seq,
            Value::Object(_) => Unexpected::Map,
        }
    }
}

macro_rules! forward_to_any {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            self.deserialize_any(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Strict<'de> {
    type Error = ParamsError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else if let Some(f) = n.as_f64() {
                    visitor.visit_f64(f)
                } else {
                    Err(de::Error::custom(format_args!("unsupported number {n}")))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Items {
                items: items.iter(),
                index: 0,
            }),
            Value::Object(map) => visitor.visit_map(Entries::new(map, None)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        match self.value {
            Value::Object(map) => visitor.visit_map(Entries::new(map, Some(fields))),
            // serde would read the array as the fields in order; the schema says object.
            _ => Err(de::Error::invalid_type(self.unexpected(), &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        match self.value {
            Value::String(s) => visitor.visit_enum(BorrowedStrDeserializer::new(s)),
            Value::Object(map) if map.len() == 1 => {
                let (variant, value) = map.iter().next().expect("one entry");
                visitor.visit_enum(Variant { variant, value })
            }
            _ => Err(de::Error::invalid_type(
                self.unexpected(),
                &"a variant name or an object with one key",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match (self.unknown_field_of, self.key) {
            (Some(fields), Some(key)) => Err(de::Error::unknown_field(key, fields)),
            _ => visitor.visit_unit(),
        }
    }

    forward_to_any! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_str
        deserialize_string deserialize_bytes deserialize_byte_buf deserialize_unit
        deserialize_seq deserialize_map deserialize_identifier
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }
}

impl<'de> IntoDeserializer<'de, ParamsError> for Strict<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// The elements of an array, each strict, errors located by index.
struct Items<'de> {
    items: std::slice::Iter<'de, Value>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = ParamsError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ParamsError> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        seed.deserialize(Strict::root(item))
            .map(Some)
            .map_err(|e| e.within(Segment::Index(index)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of an object, each value strict, errors located by key. For a struct, `fields`
/// is what it knows, and a value it skips is an unknown field.
struct Entries<'de> {
    entries: serde_json::map::Iter<'de>,
    fields: Option<&'static [&'static str]>,
    value: Option<(&'de str, &'de Value)>,
}

impl<'de> Entries<'de> {
    fn new(map: &'de Map<String, Value>, fields: Option<&'static [&'static str]>) -> Self {
        Entries {
            entries: map.iter(),
            fields,
            value: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = ParamsError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ParamsError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, ParamsError> {
        let (key, value) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value was asked for before its key"))?;
        seed.deserialize(Strict {
            value,
            unknown_field_of: self.fields,
            key: Some(key),
        })
        .map_err(|e| e.within(Segment::Key(name(key))))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An externally tagged enum variant with content: `{"variant": value}`.
struct Variant<'de> {
    variant: &'de str,
    value: &'de Value,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = ParamsError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), ParamsError> {
        let variant = seed.deserialize(BorrowedStrDeserializer::new(self.variant))?;
        Ok((variant, self))
    }
}

impl<'de> Variant<'de> {
    fn content(&self) -> Strict<'de> {
        Strict::root(self.value)
    }

    fn locate(&self, e: ParamsError) -> ParamsError {
        e.within(Segment::Key(name(self.variant)))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'de> {
    type Error = ParamsError;

    fn unit_variant(self) -> Result<(), ParamsError> {
        match self.value {
            Value::Null => Ok(()),
            other => Err(self.locate(de::Error::custom(format_args!(
                "the variant takes no value, found {}",
                QuotedJson::new(other)
            )))),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, ParamsError> {
        seed.deserialize(self.content()).map_err(|e| self.locate(e))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        de::Deserializer::deserialize_seq(self.content(), visitor).map_err(|e| self.locate(e))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        de::Deserializer::deserialize_struct(self.content(), "", fields, visitor)
            .map_err(|e| self.locate(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Payment {
        amount: f64,
        card: Card,
        #[serde(default)]
        tags: BTreeMap<String, String>,
        #[serde(default)]
        items: Vec<Card>,
        #[serde(default)]
        kind: Option<Kind>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Card {
        number: String,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Once,
        Split { parts: u8 },
        Refund(String),
    }

    fn err(value: Value) -> String {
        decode::<Payment>(&value).unwrap_err().to_string()
    }

    #[test]
    fn well_formed_parameters_decode_as_serde_would() {
        let value = json!({
            "amount": 12,
            "card": {"number": "4242"},
            "tags": {"any": "key"},
            "items": [{"number": "1"}],
            "kind": {"split": {"parts": 3}},
        });
        let strict: Payment = decode(&value).unwrap();
        let lenient: Payment = serde_json::from_value(value).unwrap();
        assert_eq!(strict, lenient);
        let refund: Payment =
            decode(&json!({"amount": 1.5, "card": {"number": "x"}, "kind": {"refund": "r"}}))
                .unwrap();
        assert_eq!(refund.kind, Some(Kind::Refund("r".into())));
        let once: Payment =
            decode(&json!({"amount": 1, "card": {"number": "x"}, "kind": "once"})).unwrap();
        assert_eq!(once.kind, Some(Kind::Once));
    }

    #[test]
    fn unknown_fields_are_refused_at_any_depth_and_named() {
        assert_eq!(
            err(json!({"amount": 1, "card": {"number": "1"}, "note": "x"})),
            "at `note`: unknown field `note`, expected one of `amount`, `card`, `tags`, `items`, `kind`"
        );
        assert_eq!(
            err(json!({"amount": 1, "card": {"number": "1", "cvv": 123}})),
            "at `card.cvv`: unknown field `cvv`, expected `number`"
        );
        assert_eq!(
            err(
                json!({"amount": 1, "card": {"number": "1"}, "items": [{"number": "2"}, {"numbr": "3"}]})
            ),
            "at `items[1].numbr`: unknown field `numbr`, expected `number`"
        );
        assert_eq!(
            err(
                json!({"amount": 1, "card": {"number": "1"}, "kind": {"split": {"parts": 2, "x": 0}}})
            ),
            "at `kind.split.x`: unknown field `x`, expected `parts`"
        );
        // Whatever its size.
        let huge = json!({"amount": 1, "card": {"number": "1"}, "pad": "p".repeat(1_000_000)});
        assert!(err(huge).starts_with("at `pad`: unknown field `pad`"));
    }

    #[test]
    fn an_array_is_not_an_object() {
        assert_eq!(
            err(json!([1, {"number": "1"}])),
            "invalid type: sequence, expected struct Payment"
        );
        assert_eq!(
            err(json!({"amount": 1, "card": ["1"]})),
            "at `card`: invalid type: sequence, expected struct Card"
        );
    }

    #[test]
    fn type_errors_name_the_field_and_quote_within_bounds() {
        assert_eq!(
            err(json!({"amount": "ten", "card": {"number": "1"}})),
            "at `amount`: invalid type: string \"ten\", expected f64"
        );
        assert_eq!(err(json!({"amount": 1})), "missing field `card`");
        let big = "9".repeat(10_000_000);
        let message = err(json!({"amount": big, "card": {"number": "1"}}));
        assert!(message.len() < 200, "{} bytes", message.len());
        assert!(message.ends_with("…\" (10 MB), expected f64"), "{message}");
        let message = err(json!({"amount": 1, "card": {"number": "1"}, "kind": "k".repeat(5_000)}));
        assert!(
            message.starts_with("at `kind`: unknown variant `kkk"),
            "{message}"
        );
        assert!(message.len() < 300, "{message}");
        let long_key = "k".repeat(100_000);
        let message = err(json!({"amount": 1, "card": {"number": "1"}, long_key: 1}));
        assert!(message.len() < 400, "{message}");
    }

    #[test]
    fn lenient_parameters_read_as_serde_does() {
        let value = json!({"amount": 1, "card": ["1"], "extra": true});
        let Lenient(payment): Lenient<Payment> = decode(&value).unwrap();
        assert_eq!(payment.card.number, "1");
        let message = decode::<Lenient<Payment>>(&json!({"amount": "x".repeat(100_000)}))
            .unwrap_err()
            .to_string();
        assert!(message.len() < 400, "{message}");
    }
}
