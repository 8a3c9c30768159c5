//! One-pass decoding of the objects whose variant one member decides (`type` for content blocks,
//! the presence of `text` for resource contents), without going through `serde_json::Value`.
//!
//! Members read before the deciding one are kept as [`Value`]s (their strings are moved out of
//! them later, never copied again); once the variant is known, the kept members and the rest of
//! the object go straight into the variant's derived `Deserialize`, so a member that comes after
//! the tag (the usual order) is read once from the input into its field. Only a variant this
//! model does not know is kept whole as a [`Value`], as before.
//!
//! What a known variant sees is exactly what its derived `Deserialize` would see of the whole
//! object minus the tag, in order: unknown members are skipped, a repeated member is serde's
//! `duplicate field` error, a missing one its `missing field` error. A repeated tag is an error
//! too: the variant would depend on which of them counts.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::{
    BorrowedStrDeserializer, MapAccessDeserializer, SeqAccessDeserializer, StringDeserializer,
};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

/// An enum decoded from an object by its members, with a catch-all variant for anything else.
pub(super) trait Object: Sized {
    /// What `expecting` says.
    const EXPECTING: &'static str;
    /// Decodes the object whose members `map` gives.
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
    /// A value that is not a known variant, kept as it came.
    fn unknown(value: Value) -> Self;
}

/// An [`Object`] whose variant the member named [`TAG`](Self::TAG) decides.
pub(super) trait Tagged: Object {
    /// The variants this model knows.
    type Kind;
    /// The member that names the variant.
    const TAG: &'static str;
    /// The known variant a tag names.
    fn kind(tag: &str) -> Option<Self::Kind>;
    /// Decodes a known variant from `members`: the object without its tag.
    fn known<'de, D: Deserializer<'de>>(kind: Self::Kind, members: D) -> Result<Self, D::Error>;
}

/// Decodes an [`Object`] in one pass; a value that is not an object is
/// [`unknown`](Object::unknown), as it was when everything went through `Value`.
pub(super) fn deserialize<'de, T: Object, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_any(ObjectVisitor(PhantomData))
}

/// [`Object::from_map`] for a [`Tagged`] enum: the members before the tag are kept as values;
/// a known tag sends them and the rest to its variant, any other tag (or none) makes the whole
/// object [`unknown`](Object::unknown).
pub(super) fn tagged_from_map<'de, T: Tagged, A: MapAccess<'de>>(mut map: A) -> Result<T, A::Error> {
    let mut before = Vec::new();
    while let Some(key) = map.next_key_seed(KeySeed)? {
        if key.as_str() != T::TAG {
            before.push((key.into_string(), map.next_value::<Value>()?));
            continue;
        }
        return match map.next_value_seed(TagSeed::<T>(PhantomData))? {
            Tag::Known(kind) => {
                let members = Members::new(before, map, None, Some(T::TAG));
                T::known(kind, MapAccessDeserializer::new(members))
            }
            Tag::Other(tag) => {
                let mut object: Map<String, Value> = before.into_iter().collect();
                object.insert(T::TAG.to_owned(), tag);
                while let Some(key) = map.next_key_seed(KeySeed)? {
                    if key.as_str() == T::TAG {
                        return Err(de::Error::duplicate_field(T::TAG));
                    }
                    object.insert(key.into_string(), map.next_value()?);
                }
                Ok(T::unknown(Value::Object(object)))
            }
        };
    }
    Ok(T::unknown(Value::Object(before.into_iter().collect())))
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Object> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }

    // Not an object: an unknown variant, kept as it came (as when it went through `Value`).

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(T::unknown)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok(T::unknown(Value::String(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
        Ok(T::unknown(Value::String(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
        Ok(T::unknown(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok(T::unknown(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok(T::unknown(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::unknown(Value::from(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::unknown(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::unknown(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserialize(deserializer)
    }
}

/// Decodes a struct from the members of an object after the first ones were read as values
/// (`before`), and possibly after a key whose value comes next (`next`): the members in their
/// order, as the struct's derived `Deserialize` expects them.
pub(super) fn from_members<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    before: Vec<(String, Value)>,
    next: Option<&'static str>,
    map: A,
) -> Result<T, A::Error> {
    T::deserialize(MapAccessDeserializer::new(Members::new(before, map, next, None)))
}

/// Decodes a struct from members that were all read as values.
pub(super) fn from_values<'de, T: Deserialize<'de>, E: de::Error>(
    members: Vec<(String, Value)>,
) -> Result<T, E> {
    let members = Members::<'de, NoMembers<E>>::new(members, NoMembers(PhantomData), None, None);
    T::deserialize(MapAccessDeserializer::new(members))
}

/// An object key as it came: borrowed from the input when it has no escapes.
pub(super) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(key) => key,
            Key::Owned(key) => key,
        }
    }

    pub(super) fn into_string(self) -> String {
        match self {
            Key::Borrowed(key) => key.to_owned(),
            Key::Owned(key) => key,
        }
    }
}

/// Reads an object key as a [`Key`].
pub(super) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key<'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v))
    }
}

/// The value of a tag: a variant this model knows, or anything else as it came.
enum Tag<K> {
    Known(K),
    Other(Value),
}

struct TagSeed<T>(PhantomData<T>);

impl<'de, T: Tagged> DeserializeSeed<'de> for TagSeed<T> {
    type Value = Tag<T::Kind>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, T: Tagged> Visitor<'de> for TagSeed<T> {
    type Value = Tag<T::Kind>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        match T::kind(v) {
            Some(kind) => Ok(Tag::Known(kind)),
            None => Ok(Tag::Other(Value::String(v.to_owned()))),
        }
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        match T::kind(&v) {
            Some(kind) => Ok(Tag::Known(kind)),
            None => Ok(Tag::Other(Value::String(v))),
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Tag::Other(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Tag::Other(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Tag::Other(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Tag::Other(Value::from(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Tag::Other(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Tag::Other(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        Value::deserialize(deserializer).map(Tag::Other)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Tag::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Tag::Other)
    }
}

/// The members of an object in their order: first those already read as values (`before`),
/// then `next` (a key read whose value is still in `rest`), then the rest of the object. A
/// `reject`ed key among the rest is a duplicate of the tag.
struct Members<'de, A: MapAccess<'de>> {
    before: std::vec::IntoIter<(String, Value)>,
    /// The value of the key from `before` just handed out.
    value: Option<Value>,
    next: Option<&'static str>,
    rest: A,
    reject: Option<&'static str>,
    _input: PhantomData<&'de ()>,
}

impl<'de, A: MapAccess<'de>> Members<'de, A> {
    fn new(
        before: Vec<(String, Value)>,
        rest: A,
        next: Option<&'static str>,
        reject: Option<&'static str>,
    ) -> Self {
        Members { before: before.into_iter(), value: None, next, rest, reject, _input: PhantomData }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        if let Some((key, value)) = self.before.next() {
            self.value = Some(value);
            return seed.deserialize(StringDeserializer::new(key)).map(Some);
        }
        if let Some(key) = self.next.take() {
            return seed.deserialize(BorrowedStrDeserializer::new(key)).map(Some);
        }
        match self.rest.next_key_seed(KeySeed)? {
            None => Ok(None),
            Some(key) if Some(key.as_str()) == self.reject => {
                Err(de::Error::duplicate_field(self.reject.unwrap_or_default()))
            }
            Some(Key::Borrowed(key)) => seed.deserialize(BorrowedStrDeserializer::new(key)).map(Some),
            Some(Key::Owned(key)) => seed.deserialize(StringDeserializer::new(key)).map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value).map_err(de::Error::custom),
            None => self.rest.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        let known = self.before.len() + usize::from(self.next.is_some());
        Some(known + self.rest.size_hint().unwrap_or(0))
    }
}

/// An object with no more members.
struct NoMembers<E>(PhantomData<E>);

impl<'de, E: de::Error> MapAccess<'de> for NoMembers<E> {
    type Error = E;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, _seed: K) -> Result<Option<K::Value>, E> {
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, _seed: V) -> Result<V::Value, E> {
        Err(de::Error::custom("a value without its member name"))
    }
}
