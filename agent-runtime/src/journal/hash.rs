//! The state hash: a stable 64-bit digest of a value's serde serialization.
//!
//! Stable means the same value gives the same hash in every process and every build of the same
//! definition: it is a fixed word-wise hash over the serialized data (no random seed), and
//! maps are hashed independently of their iteration order (each entry hashed on its own, the
//! entry hashes combined by addition), so a `HashMap` in a state hashes the same after a
//! checkpoint round trip reordered it. Written as a serde `Serializer` so hashing allocates nothing.

use std::fmt;

use serde::ser::{self, Serialize};

/// A stable digest of an agent's state (see [`StateHash::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateHash(pub u64);

impl StateHash {
    /// The hash of `value`'s serialization. Maps hash the same whatever their order.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use agent_runtime::journal::StateHash;
    /// let a: HashMap<_, _> = [("x", 1), ("y", 2)].into();
    /// let b: HashMap<_, _> = [("y", 2), ("x", 1)].into();
    /// assert_eq!(StateHash::of(&a), StateHash::of(&b));
    /// assert_ne!(StateHash::of(&1u32), StateHash::of(&2u32));
    /// ```
    pub fn of<T: Serialize + ?Sized>(value: &T) -> StateHash {
        let mut hasher = WordHasher::new();
        // Our serializer never fails; a failing `Serialize` impl still hashes what it wrote.
        let _ = value.serialize(&mut hasher);
        StateHash(hasher.0)
    }
}

impl fmt::Display for StateHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl Serialize for StateHash {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for StateHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        u64::from_str_radix(&text, 16)
            .map(StateHash)
            .map_err(|_| ser_error::<D::Error>(&text))
    }
}

fn ser_error<E: serde::de::Error>(text: &str) -> E {
    E::custom(format_args!(
        "`{text}` is not a state hash (16 hexadecimal digits)"
    ))
}

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// 2^64 / the golden ratio, odd: multiplying by it is a bijection that spreads every bit up.
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hasher: FNV-1a's structure (xor, then multiply) on 8-byte words instead of bytes, each
/// step followed by a xorshift that carries high bits down. Every step is a bijection of the
/// running value, so two inputs that differ in one word always hash differently; words make
/// it about eight times faster than byte-wise FNV-1a, which the journal pays on every step.
struct WordHasher(u64);

impl WordHasher {
    fn new() -> Self {
        WordHasher(OFFSET)
    }

    #[inline]
    fn word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(MIX);
        self.0 ^= self.0 >> 29;
    }

    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for chunk in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.word(u64::from_le_bytes(word));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            // The last 1 to 7 bytes, zero-padded, with their count in the top byte so that
            // `[1]` and `[1, 0]` differ.
            self.word(tail_word(rest) | (rest.len() as u64) << 56);
        }
    }

    /// A type tag, so `1u8` and `"\u{1}"` or `[]` and `{}` differ.
    #[inline]
    fn tag(&mut self, tag: u8) {
        // `bytes(&[tag])`: one byte, its count in the top byte.
        self.word(u64::from(tag) | 1 << 56);
    }

    /// A length-prefixed string, so `("ab", "c")` and `("a", "bc")` differ.
    #[inline]
    fn text(&mut self, text: &str) {
        // `bytes` of the length's 8 little-endian bytes: that one word.
        self.word(text.len() as u64);
        self.bytes(text.as_bytes());
    }
}

/// 1 to 7 bytes as the low bytes of a little-endian word, the others zero: two overlapping
/// loads instead of a copy of unknown length.
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    if n >= 4 {
        let low = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let high = u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]);
        u64::from(low) | u64::from(high) << (8 * (n - 4))
    } else if n >= 2 {
        let low = u16::from_le_bytes([rest[0], rest[1]]);
        let high = u16::from_le_bytes([rest[n - 2], rest[n - 1]]);
        u64::from(low) | u64::from(high) << (8 * (n - 2))
    } else {
        u64::from(rest[0])
    }
}

/// Hashes a struct field by field exactly as [`StateHash::of`] hashes its serialization, and
/// can stop and resume: the running value after the fields that never change can be kept and
/// continued from, so they are hashed once.
pub(crate) struct StructHasher(WordHasher);

impl StructHasher {
    /// Starts a struct, as `serialize_struct` does.
    pub(crate) fn begin() -> Self {
        let mut hasher = WordHasher::new();
        hasher.tag(15);
        StructHasher(hasher)
    }

    /// Continues from a [`running`](StructHasher::running) value.
    pub(crate) fn resume(running: u64) -> Self {
        StructHasher(WordHasher(running))
    }

    /// Hashes one field, as `SerializeStruct::serialize_field` does.
    pub(crate) fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) {
        let _ = ser::SerializeStruct::serialize_field(&mut &mut self.0, key, value);
    }

    /// The value so far.
    pub(crate) fn running(&self) -> u64 {
        self.0.0
    }

    /// Ends the struct, as `SerializeStruct::end` does.
    pub(crate) fn finish(mut self) -> StateHash {
        self.0.tag(16);
        StateHash(self.0.0)
    }
}

/// The serializer never fails; serde requires an error type all the same.
#[derive(Debug)]
pub(crate) struct Never;

impl fmt::Display for Never {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a custom serialization failed while hashing")
    }
}

impl std::error::Error for Never {}

impl ser::Error for Never {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Never
    }
}

macro_rules! int {
    ($($method:ident $ty:ty => $tag:expr;)*) => {$(
        fn $method(self, v: $ty) -> Result<(), Never> {
            self.tag($tag);
            self.bytes(&v.to_le_bytes());
            Ok(())
        }
    )*};
}

impl<'a> ser::Serializer for &'a mut WordHasher {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = MapHasher<'a>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> Result<(), Never> {
        self.tag(1);
        self.bytes(&[u8::from(v)]);
        Ok(())
    }

    // Every integer hashes as 64 or 128 bits, so a field widened from `u32` to `u64` keeps its
    // hash, as it keeps its JSON.
    fn serialize_i8(self, v: i8) -> Result<(), Never> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Never> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Never> {
        self.serialize_i64(v.into())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Never> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Never> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Never> {
        self.serialize_u64(v.into())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Never> {
        self.serialize_f64(v.into())
    }

    int! {
        serialize_i64 i64 => 2;
        serialize_u64 u64 => 3;
        serialize_i128 i128 => 4;
        serialize_u128 u128 => 5;
        serialize_f64 f64 => 6;
    }

    fn serialize_char(self, v: char) -> Result<(), Never> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Never> {
        self.tag(7);
        self.text(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Never> {
        self.tag(8);
        self.bytes(&(v.len() as u64).to_le_bytes());
        self.bytes(v);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Never> {
        self.tag(9);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Never> {
        self.tag(10);
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Never> {
        self.tag(11);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Never> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Never> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        self.tag(12);
        self.text(variant);
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Never> {
        self.tag(13);
        Ok(self)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self, Never> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Self, Never> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Never> {
        self.tag(12);
        self.text(variant);
        self.serialize_seq(None)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapHasher<'a>, Never> {
        Ok(MapHasher {
            out: self,
            sum: 0,
            entry: WordHasher::new(),
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        self.tag(15);
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Never> {
        self.tag(12);
        self.text(variant);
        self.serialize_struct(variant, 0)
    }
}

impl ser::SerializeSeq for &mut WordHasher {
    type Ok = ();
    type Error = Never;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), Never> {
        self.tag(14);
        Ok(())
    }
}

impl ser::SerializeTuple for &mut WordHasher {
    type Ok = ();
    type Error = Never;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), Never> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for &mut WordHasher {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), Never> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for &mut WordHasher {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), Never> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeStruct for &mut WordHasher {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        self.text(key);
        value.serialize(&mut **self)
    }
    fn skip_field(&mut self, _: &'static str) -> Result<(), Never> {
        Ok(())
    }
    fn end(self) -> Result<(), Never> {
        self.tag(16);
        Ok(())
    }
}

impl ser::SerializeStructVariant for &mut WordHasher {
    type Ok = ();
    type Error = Never;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<(), Never> {
        ser::SerializeStruct::end(self)
    }
}

/// Hashes each entry on its own and sums the entry hashes: the order of entries does not count.
pub(crate) struct MapHasher<'a> {
    out: &'a mut WordHasher,
    sum: u64,
    entry: WordHasher,
}

impl ser::SerializeMap for MapHasher<'_> {
    type Ok = ();
    type Error = Never;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Never> {
        self.entry = WordHasher::new();
        key.serialize(&mut self.entry)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        value.serialize(&mut self.entry)?;
        self.sum = self.sum.wrapping_add(self.entry.0);
        Ok(())
    }
    fn end(self) -> Result<(), Never> {
        self.out.tag(17);
        self.out.bytes(&self.sum.to_le_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_hash_equal_and_different_ones_differ() {
        assert_eq!(
            StateHash::of(&json!({"a": [1, 2]})),
            StateHash::of(&json!({"a": [1, 2]}))
        );
        assert_ne!(
            StateHash::of(&json!({"a": [1, 2]})),
            StateHash::of(&json!({"a": [2, 1]}))
        );
        assert_ne!(
            StateHash::of(&json!({"a": 1})),
            StateHash::of(&json!({"b": 1}))
        );
        assert_ne!(StateHash::of(&("ab", "c")), StateHash::of(&("a", "bc")));
        assert_ne!(StateHash::of(&Some(0u8)), StateHash::of(&0u8));
        assert_ne!(StateHash::of(&json!([])), StateHash::of(&json!({})));
        // Words and the padded tail: every length from 0 to 17 bytes, and one byte changed.
        let hashes: Vec<StateHash> = (0..18u8)
            .map(|n| StateHash::of(&serde_bytes_like((0..n).collect())))
            .collect();
        for (i, a) in hashes.iter().enumerate() {
            assert!(hashes[i + 1..].iter().all(|b| a != b), "length {i}");
        }
        let mut changed: Vec<u8> = (0..17).collect();
        changed[12] = 99;
        assert_ne!(
            StateHash::of(&serde_bytes_like(changed)),
            StateHash::of(&serde_bytes_like((0..17).collect()))
        );
    }

    /// A value that serializes as bytes.
    fn serde_bytes_like(bytes: Vec<u8>) -> impl Serialize {
        struct Bytes(Vec<u8>);
        impl Serialize for Bytes {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
        Bytes(bytes)
    }

    #[test]
    fn the_hash_round_trips_as_hex_text() {
        let hash = StateHash::of(&"state");
        let text = serde_json::to_string(&hash).unwrap();
        assert_eq!(text.len(), 18);
        assert_eq!(serde_json::from_str::<StateHash>(&text).unwrap(), hash);
        let bad = serde_json::from_str::<StateHash>("\"zz\"").unwrap_err();
        assert!(bad.to_string().contains("not a state hash"), "{bad}");
    }
}

#[cfg(test)]
mod pinned {
    use super::*;
    use crate::Agent;
    use crate::agent::DynAgent;
    use crate::testing::Counter;
    use serde_json::json;

    /// Journals written by earlier builds replay only if the hash of a value never changes.
    #[test]
    fn hashes_are_the_same_in_every_build() {
        let value = json!({"a": [1, 2.5, "xyz"], "b": null, "c": {"d": true, "e": "twelve bytes"}});
        let tuple = (
            "hello world, this is long",
            7u8,
            -3i32,
            Some(1u128),
            'é',
            (),
        );
        let mut counter = Agent::new(Counter {
            value: 42,
            log: vec!["one".into(), "seventeen chars!!".into()],
            meta: json!({"k": [true]}),
        })
        .with_id("0190a5b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b");
        // Values taken with the byte-wise remainder and the whole agent hashed every step.
        assert_eq!(StateHash::of(&value), StateHash(0x1055_283e_c998_4a7e));
        assert_eq!(StateHash::of(&tuple), StateHash(0x12c0_b102_cd0c_647f));
        assert_eq!(StateHash::of(&counter), StateHash(0xbdd7_acfb_ae26_8bee));
        // The journal's hash (the part that a step cannot change hashed once) is the same.
        assert_eq!(DynAgent::state_hash(&counter), StateHash::of(&counter));
        counter.state_mut().value = 43;
        assert_eq!(StateHash::of(&counter), StateHash(0xf142_1397_54ca_b4a8));
        assert_eq!(DynAgent::state_hash(&counter), StateHash::of(&counter));
        // A new id is a new agent: its hash starts over.
        let renamed = counter.clone().with_id("other");
        assert_ne!(
            DynAgent::state_hash(&renamed),
            DynAgent::state_hash(&counter)
        );
        assert_eq!(DynAgent::state_hash(&renamed), StateHash::of(&renamed));
    }
}
