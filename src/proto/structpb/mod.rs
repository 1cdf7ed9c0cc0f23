//! `google.protobuf.Struct` decoded straight into `serde_json` values.
//!
//! The generated protocol types name this type wherever the protocol carries a
//! Kubernetes object. Decoding the wire format directly into a
//! `serde_json::Map` saves the copy from prost's own `Struct` tree, keeps keys
//! in sorted order (so encoding is deterministic), and hands the core the
//! value type that serde already understands.
//!
//! Numbers: the wire format has only doubles. A double with an integral value
//! that fits an `i64` becomes a JSON integer (Kubernetes integers arrive this
//! way and must print as `3`, not `3.0`), from 2^53 on the one with the
//! shortest digits, as Go's JSON writes it; other finite doubles stay floats,
//! and NaN or infinities, which JSON cannot hold, become `null`.
//!
//! Cost: every Kubernetes object of a call passes through here twice, so both
//! directions avoid prost's general machinery. Encoding writes each Struct
//! once and keeps the bytes for prost's repeated length questions (see
//! [`Struct`]); decoding reads each entry straight from the bytes and leaves to
//! prost only what it does not accept (see `direct`).

use crate::proto::hash_key::HashKey;
use prost::bytes::{Buf, BufMut, Bytes};
use prost::encoding::{encode_varint, encoded_len_varint, skip_field, DecodeContext, WireType};
use prost::DecodeError;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::sync::{Arc, OnceLock};

#[cfg(test)]
mod collision_tests;
mod decode;
mod hash;
#[cfg(test)]
mod hash_tests;
pub(in crate::proto) mod lazy;
#[cfg(test)]
mod lazy_tests;
mod members;
#[cfg(test)]
mod tests;
pub(in crate::proto) mod view;
#[cfg(test)]
mod view_tests;
mod write;

pub(in crate::proto) use decode::direct::Reader;
use decode::*;
pub use members::{EncodedMembers, ListWriter, ObjectWriter};
use view::{Index, Kind, Member, Node, ObjectView, Span, View};
pub(in crate::proto) use write::key;
use write::*;

/// A JSON object as carried by `google.protobuf.Struct`.
///
/// prost's generated code asks a message for its length at every level above it (a response
/// asks its desired state, which asks each map entry, which asks the resource, which asks the
/// Struct), and once more before writing it: without a memory, each resource's JSON tree would
/// be walked five or six times per response. So the first `encoded_len` encodes the fields once
/// and keeps the bytes; later lengths and `encode_raw` use them. A change to the object must
/// forget them, so the object is private and [`Struct::fields_mut`] is the only way to change
/// it. (The alternative, a hand-written encoder for the whole response, would measure once too
/// but would have to follow every change of the protocol by hand.) The bytes live as long as
/// the Struct: a response is dropped as soon as it is written.
///
/// A Struct can also be written straight as bytes ([`Struct::write`]): the core writes each
/// composed resource that way, since the response only needs its bytes. Its JSON object is then
/// decoded from those bytes on first read ([`Struct::fields`], equality, `Debug`), so render,
/// Wasm and the tests keep reading it as JSON. Bytes that [`Writer`] wrote always decode; were
/// they ever not to, the object holds the fields decoded before the fault (never a panic).
#[derive(Default)]
pub struct Struct {
    /// The object, when it was given as JSON, changed, or decoded to be changed.
    fields: Option<Map<String, Value>>,
    /// The object decoded from `encoded` on first read, when `fields` is `None`.
    decoded: OnceLock<Map<String, Value>>,
    /// The encoded fields, once something asked for them or when written directly; `OnceLock`
    /// because a message must be `Sync`. `fields`, or else these bytes, are the object.
    encoded: OnceLock<Encoded>,
    /// The fields as they came off the wire, undecoded, with their content hash: see
    /// [`Struct::from_wire`]. When set, `fields` and `encoded` are not.
    wire: Option<Wire>,
}

/// A Struct's fields as received, kept as bytes (a slice of the request's buffer where the
/// request was decoded from a `Bytes`), the hash of their content where it was taken, and
/// their index where they were kept to be viewed ([`Struct::merge_indexed`]).
#[derive(Clone)]
struct Wire {
    bytes: Bytes,
    hash: Option<u128>,
    index: Option<Arc<Index>>,
}

/// A Struct's encoded fields: the bytes, but for the lengths of its messages of
/// [`PENDING`] bytes or more, which go in as the bytes are copied into a response. A large
/// object (the composite's status at 1,000 repositories is 280 kB) is then copied once, into
/// the response, rather than once more to put its lengths in place.
#[derive(Clone, Default)]
struct Encoded {
    bytes: Vec<u8>,
    /// Where each length goes (the byte left for it in `bytes`) and the length, in order.
    lengths: Box<[(usize, usize)]>,
    /// The bytes the lengths take beyond the bytes left for them.
    extra: usize,
}

impl Encoded {
    fn len(&self) -> usize {
        self.bytes.len() + self.extra
    }

    /// Writes the encoded fields, each length in its place.
    fn write_to(&self, buf: &mut impl BufMut) {
        let mut from = 0;
        for &(at, len) in self.lengths.iter() {
            buf.put_slice(&self.bytes[from..at]);
            encode_varint(len as u64, buf);
            from = at + 1;
        }
        buf.put_slice(&self.bytes[from..]);
    }

    /// The encoded fields in one piece.
    fn contiguous(&self) -> Cow<'_, [u8]> {
        if self.lengths.is_empty() {
            Cow::Borrowed(&self.bytes)
        } else {
            let mut bytes = Vec::with_capacity(self.len());
            self.write_to(&mut bytes);
            Cow::Owned(bytes)
        }
    }
}

impl Struct {
    /// Wraps a JSON value; anything but an object becomes an empty object.
    pub fn from_value(value: Value) -> Struct {
        match value {
            Value::Object(fields) => Struct::from(fields),
            _ => Struct::default(),
        }
    }

    /// A Struct written field by field, in key order, straight into its encoding. Never
    /// inlined: profiles then show what writing a resource costs.
    ///
    /// The bytes are written in the buffer the Struct keeps, not copied out of a scratch
    /// buffer: a composition writes resources of much the same size and shape one after
    /// another, so a buffer a little larger than the last Struct's rarely grows, rarely wastes
    /// enough to be shrunk (see `Writer::into_encoded`), and the last one's lengths say which
    /// of this one's take two bytes (see `Writer::wide`).
    #[inline(never)]
    pub fn write(write: impl FnOnce(&mut ObjectWriter<'_>)) -> Struct {
        let mut writer = Writer::with_buffer(Vec::with_capacity(WRITTEN.get()));
        writer.wide = WIDE.get();
        write(&mut ObjectWriter::new(&mut writer));
        WIDE.set(writer.wide_now);
        let encoded = writer.into_encoded();
        WRITTEN.set(encoded.bytes.len() + encoded.bytes.len() / 8 + 16);
        Struct::written(encoded)
    }

    /// A Struct unlike those [`Struct::write`] writes one after another (the composite, after
    /// its resources), written the same way into a buffer of `capacity` bytes, without
    /// guesses taken from them or left for them.
    pub fn write_one(capacity: usize, write: impl FnOnce(&mut ObjectWriter<'_>)) -> Struct {
        let mut writer = Writer::with_buffer(Vec::with_capacity(capacity));
        write(&mut ObjectWriter::new(&mut writer));
        Struct::written(writer.into_encoded())
    }

    fn written(encoded: Encoded) -> Struct {
        Struct {
            fields: None,
            decoded: OnceLock::new(),
            encoded: OnceLock::from(encoded),
            wire: None,
        }
    }

    /// The Struct message at the start of `buf` (its length, then its fields), taken without
    /// decoding it: its bytes, and the hash of its content from one walk over them that builds
    /// nothing. The object is decoded only if it is read ([`Struct::fields`]).
    ///
    /// For the schemas Crossplane sends (`proto::Schema`): a function that has compiled a schema
    /// before finds it by this hash and never needs its tree. `None`, with nothing read, where
    /// the walk cannot vouch that prost would decode the bytes to the object it hashed (see
    /// `hash`): the caller then decodes the message as any other Struct, so what is refused and
    /// how stays prost's. From a `Bytes` buffer the bytes are not copied. Where the request's
    /// key already walked these very bytes, the hash it made is taken ([`with_known_hashes`]).
    pub(crate) fn from_wire(buf: &mut impl Buf) -> Option<Struct> {
        // A Struct of a live schema sits less deep in a request than one of a resource, for
        // which `direct::DEPTH` is reckoned: never deeper than prost allows.
        let (bytes, hash) = take_fields(buf, |fields| {
            known_hash(fields).or_else(|| hash::wire(fields, direct::DEPTH))
        })?;
        Some(Struct::kept(Wire {
            bytes,
            hash: Some(hash),
            index: None,
        }))
    }

    /// The Struct message at the start of `buf`, kept as its bytes with nothing read of them:
    /// for the resources of a request other than its composites (`proto::Resource`), of which
    /// the function reads a few fields, through [`Struct::view`], or none. `None`, with nothing
    /// read, where the message's length runs past the buffer or its places would not fit a
    /// view (`lazy::MAX_BYTES`): the caller then decodes it as any other Struct, as prost
    /// does. From a `Bytes` buffer the bytes are not copied.
    pub(crate) fn unread_from_wire(buf: &mut impl Buf) -> Option<Struct> {
        let (bytes, ()) = take_fields(buf, |fields| {
            (fields.len() <= lazy::MAX_BYTES).then_some(())
        })?;
        Some(Struct::kept(Wire {
            bytes,
            hash: None,
            index: None,
        }))
    }

    /// A field holding a Struct merged into `slot` as prost merges it, but that the first one
    /// is kept as its bytes, undecoded, with an index of them made in the one walk that checks
    /// them: for a request's composites (`proto::State`), which the function reads through
    /// [`Struct::view`]. From a `Bytes` buffer the bytes are not copied.
    ///
    /// The bytes are taken off the buffer first and walked where they then are, so the index's
    /// texts, checked as UTF-8 by the walk, are those of the bytes it keeps and are never
    /// checked again as they are read (`direct::index`). Where the walk refuses
    /// them, prost decodes the same bytes as it would have from the buffer, with the same
    /// recursion budget: what is refused and how stays prost's. The caller adds its message
    /// and field to an error.
    pub(crate) fn merge_indexed<B: Buf>(
        slot: &mut Option<Struct>,
        wire_type: WireType,
        buf: &mut B,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let taken = (wire_type == WireType::LengthDelimited && slot.is_none())
            .then(|| take_field(buf))
            .flatten();
        let Some(bytes) = taken else {
            let object = slot.get_or_insert_with(Struct::default);
            return prost::encoding::message::merge(wire_type, object, buf, ctx);
        };
        let Some(index) = direct::index(&bytes, direct::DEPTH) else {
            let object = slot.get_or_insert_with(Struct::default);
            let mut length = Vec::with_capacity(4);
            encode_varint(bytes.len() as u64, &mut length);
            let mut field = length.as_slice().chain(bytes);
            return prost::encoding::message::merge(wire_type, object, &mut field, ctx);
        };
        *slot = Some(Struct::kept(Wire {
            bytes,
            hash: None,
            index: Some(Arc::new(index)),
        }));
        Ok(())
    }

    /// A Struct kept as it came off the wire.
    fn kept(wire: Wire) -> Struct {
        Struct {
            fields: None,
            decoded: OnceLock::new(),
            encoded: OnceLock::new(),
            wire: Some(wire),
        }
    }

    /// A field holding a Struct merged into `slot` as prost merges it, but that the first one is
    /// taken off the wire by `take` where it takes it (`None`, with nothing read, where it does
    /// not). A second one merges into the first, as prost merges messages: decoded. The caller
    /// adds its message and field to an error.
    pub(crate) fn merge_kept<B: Buf>(
        slot: &mut Option<Struct>,
        wire_type: WireType,
        buf: &mut B,
        ctx: DecodeContext,
        take: impl FnOnce(&mut B) -> Option<Struct>,
    ) -> Result<(), DecodeError> {
        if wire_type == WireType::LengthDelimited && slot.is_none() {
            if let Some(taken) = take(buf) {
                *slot = Some(taken);
                return Ok(());
            }
        }
        let object = slot.get_or_insert_with(Struct::default);
        prost::encoding::message::merge(wire_type, object, buf, ctx)
    }

    /// The object as an [`ObjectView`]: of the bytes it was kept as where it came off the wire,
    /// with nothing decoded (through their index where they were indexed); of its fields
    /// otherwise.
    pub fn view(&self) -> ObjectView<'_> {
        match &self.wire {
            Some(Wire {
                index: Some(index), ..
            }) => ObjectView::Indexed(index, index.root()),
            Some(Wire { bytes, .. }) => ObjectView::Wire(bytes, lazy::ROOT),
            None => ObjectView::Json(self.fields()),
        }
    }

    /// A 128-bit hash of the object's content: equal objects hash the same however their
    /// entries were ordered on the wire, and a Struct taken off the wire undecoded
    /// ([`Struct::from_wire`]) answers without decoding.
    pub fn content_hash(&self) -> u128 {
        match &self.wire {
            Some(Wire {
                hash: Some(hash), ..
            }) => *hash,
            _ => hash::tree(self.fields()),
        }
    }

    /// The object, decoded for the caller alone where it is still bytes: not kept in the
    /// Struct, so that it is freed as soon as the caller is done with it (a live schema is
    /// decoded only to be compiled, and its tree must not live as long as the request).
    pub fn decoded_fields(&self) -> Cow<'_, Map<String, Value>> {
        match (&self.fields, self.decoded.get()) {
            (Some(fields), _) | (None, Some(fields)) => Cow::Borrowed(fields),
            (None, None) => Cow::Owned(self.decode_written()),
        }
    }

    /// Whether the object has no fields; a Struct taken off the wire answers without decoding.
    pub fn is_empty(&self) -> bool {
        match &self.wire {
            Some(wire) => wire.bytes.is_empty(),
            None => self.fields().is_empty(),
        }
    }

    /// The object as a JSON value.
    pub fn into_value(self) -> Value {
        Value::Object(self.into_fields())
    }

    /// The object.
    pub fn fields(&self) -> &Map<String, Value> {
        match &self.fields {
            Some(fields) => fields,
            None => self.decoded.get_or_init(|| self.decode_written()),
        }
    }

    /// The object, to change; forgets its encoding.
    pub fn fields_mut(&mut self) -> &mut Map<String, Value> {
        let fields = match self.fields.take() {
            Some(fields) => fields,
            None => self.decoded.take().unwrap_or_else(|| self.decode_written()),
        };
        self.encoded = OnceLock::new();
        self.wire = None;
        self.fields.insert(fields)
    }

    /// The object, taken out.
    pub fn into_fields(mut self) -> Map<String, Value> {
        match self.fields.take() {
            Some(fields) => fields,
            None => self.decoded.take().unwrap_or_else(|| self.decode_written()),
        }
    }

    /// The object decoded from the bytes it was written as, or taken off the wire as.
    fn decode_written(&self) -> Map<String, Value> {
        let mut object = Struct::from(Map::new());
        // Only bytes our Writer wrote, or that the walk of `from_wire` vouched for, get here,
        // and they decode; see the type's docs.
        if let Some(wire) = &self.wire {
            let _ = prost::Message::merge(&mut object, &wire.bytes[..]);
        } else if let Some(encoded) = self.encoded.get() {
            let _ = prost::Message::merge(&mut object, &encoded.contiguous()[..]);
        }
        object.into_fields()
    }

    /// The encoded fields, encoded on first use.
    fn encoded(&self) -> &Encoded {
        self.encoded
            .get_or_init(|| encode_object_fields(self.fields()))
    }
}

/// The content hash of a Struct message's fields given as their bytes, as [`Struct::content_hash`]
/// gives it under `key`; `None` where the bytes are not in the canonical form the hash reads
/// (`hash`).
pub(crate) fn wire_content_hash(key: HashKey, fields: &[u8]) -> Option<u128> {
    hash::wire_under(key, fields, direct::DEPTH)
}

/// The content hash of a Struct's fields found at one place in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KnownHash {
    address: usize,
    len: usize,
    hash: u128,
}

impl KnownHash {
    /// The hash `wire_content_hash` gave of `fields`, where they are.
    pub(crate) fn of(fields: &[u8], hash: u128) -> KnownHash {
        KnownHash {
            address: fields.as_ptr() as usize,
            len: fields.len(),
            hash,
        }
    }

    /// Whether these are the hash of `fields`, where they are.
    fn is_at(&self, fields: &[u8]) -> bool {
        self.address == fields.as_ptr() as usize && self.len == fields.len()
    }

    #[cfg(test)]
    pub(crate) fn hash(&self) -> u128 {
        self.hash
    }
}

thread_local! {
    /// The hashes [`with_known_hashes`] hands to the decoding it runs.
    static KNOWN_HASHES: Cell<Vec<KnownHash>> = const { Cell::new(Vec::new()) };
}

/// Runs `decode` with the content hashes of Structs already walked in the very bytes it
/// decodes, so that [`Struct::from_wire`] takes each from `known` rather than walk the same
/// bytes again: the server reads a request for its content key (`proto::request_key`), and
/// decodes it only if it has no answer for it, from the same buffer, which stays in place and
/// unchanged while it is decoded. A place holds only the hash of the bytes there; the hashes
/// are forgotten when `decode` returns, or unwinds.
pub(crate) fn with_known_hashes<T>(known: Vec<KnownHash>, decode: impl FnOnce() -> T) -> T {
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            KNOWN_HASHES.take();
        }
    }
    KNOWN_HASHES.set(known);
    let _forget = Forget;
    decode()
}

/// The hash of `fields` handed to the decoding under way, if they are at a place it knows.
fn known_hash(fields: &[u8]) -> Option<u128> {
    let known = KNOWN_HASHES.take();
    let hash = known.iter().find(|k| k.is_at(fields)).map(|k| k.hash);
    KNOWN_HASHES.set(known);
    hash
}

/// The fields of the Struct message at the start of `buf` (after its length), taken where
/// `check` makes something of them, with what it made; nothing read where it does not. From a
/// `Bytes` buffer the bytes are not copied.
fn take_fields<T>(
    buf: &mut impl Buf,
    check: impl FnOnce(&[u8]) -> Option<T>,
) -> Option<(Bytes, T)> {
    let chunk = buf.chunk();
    let mut reader = direct::Reader(chunk);
    let fields = reader.delimited()?;
    let made = check(fields)?;
    let (header, len) = (chunk.len() - reader.0.len() - fields.len(), fields.len());
    buf.advance(header);
    Some((buf.copy_to_bytes(len), made))
}

/// The length-delimited field at the start of `buf` (its length, then its bytes), taken off
/// the buffer: `None`, with nothing read, where its length is not a varint or runs past the
/// buffer's chunk.
fn take_field(buf: &mut impl Buf) -> Option<Bytes> {
    take_fields(buf, |_| Some(())).map(|(bytes, ())| bytes)
}

impl From<Map<String, Value>> for Struct {
    fn from(fields: Map<String, Value>) -> Self {
        Struct {
            fields: Some(fields),
            decoded: OnceLock::new(),
            encoded: OnceLock::new(),
            wire: None,
        }
    }
}

/// A copy is usually made to be changed: it starts without the encoding, unless the encoding
/// is all there is (then copying the bytes is cheaper than decoding them).
impl Clone for Struct {
    fn clone(&self) -> Self {
        match (&self.fields, self.encoded.get()) {
            (None, _) if self.wire.is_some() => Struct {
                fields: None,
                decoded: OnceLock::new(),
                encoded: OnceLock::new(),
                wire: self.wire.clone(),
            },
            (None, Some(encoded)) => Struct::written(encoded.clone()),
            _ => Struct::from(self.fields().clone()),
        }
    }
}

/// Equal objects are equal Structs, encoded or not.
impl PartialEq for Struct {
    fn eq(&self, other: &Self) -> bool {
        self.fields() == other.fields()
    }
}

impl fmt::Debug for Struct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Struct").field(self.fields()).finish()
    }
}

// Field numbers of google/protobuf/struct.proto.
const STRUCT_FIELDS: u32 = 1;
const ENTRY_KEY: u32 = 1;
const ENTRY_VALUE: u32 = 2;
const VALUE_NULL: u32 = 1;
const VALUE_NUMBER: u32 = 2;
const VALUE_STRING: u32 = 3;
const VALUE_BOOL: u32 = 4;
const VALUE_STRUCT: u32 = 5;
const VALUE_LIST: u32 = 6;
const LIST_VALUES: u32 = 1;

/// The key byte (field number and wire type) of each field of struct.proto, as the encoder
/// writes it, the decoder matches it and the content hash reads it.
mod field_keys {
    use super::write::key;
    use super::*;

    pub(super) const ENTRY: u8 = key(STRUCT_FIELDS, WireType::LengthDelimited);
    pub(super) const NAME: u8 = key(ENTRY_KEY, WireType::LengthDelimited);
    pub(super) const VALUE: u8 = key(ENTRY_VALUE, WireType::LengthDelimited);
    pub(super) const NULL: u8 = key(VALUE_NULL, WireType::Varint);
    pub(super) const NUMBER: u8 = key(VALUE_NUMBER, WireType::SixtyFourBit);
    pub(super) const STRING: u8 = key(VALUE_STRING, WireType::LengthDelimited);
    pub(super) const BOOL: u8 = key(VALUE_BOOL, WireType::Varint);
    pub(super) const OBJECT: u8 = key(VALUE_STRUCT, WireType::LengthDelimited);
    pub(super) const LIST: u8 = key(VALUE_LIST, WireType::LengthDelimited);
    pub(super) const ITEM: u8 = key(LIST_VALUES, WireType::LengthDelimited);
}

impl prost::Message for Struct {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match &self.wire {
            Some(wire) => buf.put_slice(&wire.bytes),
            None => self.encoded().write_to(buf),
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag == STRUCT_FIELDS && wire_type == WireType::LengthDelimited {
            if let Some((name, value, used)) = direct::struct_entry(buf.chunk()) {
                buf.advance(used);
                self.fields_mut().insert(name, value);
                return Ok(());
            }
        }
        merge_object_field(self.fields_mut(), tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        match &self.wire {
            Some(wire) => wire.bytes.len(),
            None => self.encoded().len(),
        }
    }

    fn clear(&mut self) {
        *self = Struct::from(Map::new());
    }
}

/// The JSON number for a protobuf double (see the module documentation).
pub fn json_number(number: f64) -> Value {
    const I64_BOUND: f64 = 9_223_372_036_854_775_808.0; // 2^63
    const EXACT_BOUND: f64 = 9_007_199_254_740_992.0; // 2^53
    let integral = number.fract() == 0.0 && number.abs() < I64_BOUND;
    let negative_zero = number == 0.0 && number.is_sign_negative();
    if integral && !negative_zero {
        let integer = if number.abs() < EXACT_BOUND {
            number as i64
        } else {
            shortest_integer(number)
        };
        Value::Number(Number::from(integer))
    } else {
        Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}

/// An integral double from 2^53 on, as the integer with the shortest digits that reads back as
/// the same double: what Go's JSON writes for it (2^60 is `1152921504606847000`), and so what a
/// Kubernetes object holds after Crossplane's JSON round trip. (Rust's `Display` writes those
/// digits; the double is unchanged, so the wire bytes are too.)
fn shortest_integer(number: f64) -> i64 {
    format!("{number}").parse().unwrap_or(number as i64)
}
