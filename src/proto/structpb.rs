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
//! way and must print as `3`, not `3.0`), other finite doubles stay floats,
//! and NaN or infinities, which JSON cannot hold, become `null`.
//!
//! Cost: every Kubernetes object of a call passes through here twice, so both
//! directions avoid prost's general machinery. Encoding writes each Struct
//! once and keeps the bytes for prost's repeated length questions (see
//! [`Struct`]); decoding reads each entry straight from the bytes and leaves to
//! prost only what it does not accept (see `direct`).

use prost::bytes::{Buf, BufMut};
use prost::encoding::{encode_varint, encoded_len_varint, skip_field, DecodeContext, WireType};
use prost::DecodeError;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::sync::OnceLock;

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
        self.fields.insert(fields)
    }

    /// The object, taken out.
    pub fn into_fields(mut self) -> Map<String, Value> {
        match self.fields.take() {
            Some(fields) => fields,
            None => self.decoded.take().unwrap_or_else(|| self.decode_written()),
        }
    }

    /// The object decoded from the bytes it was written as.
    fn decode_written(&self) -> Map<String, Value> {
        let Some(encoded) = self.encoded.get() else {
            return Map::new();
        };
        let mut object = Struct::from(Map::new());
        // Only bytes our Writer wrote get here, and they decode; see the type's docs.
        let _ = prost::Message::merge(&mut object, &encoded.contiguous()[..]);
        object.into_fields()
    }

    /// The encoded fields, encoded on first use.
    fn encoded(&self) -> &Encoded {
        self.encoded
            .get_or_init(|| encode_object_fields(self.fields()))
    }
}

impl From<Map<String, Value>> for Struct {
    fn from(fields: Map<String, Value>) -> Self {
        Struct {
            fields: Some(fields),
            decoded: OnceLock::new(),
            encoded: OnceLock::new(),
        }
    }
}

/// A copy is usually made to be changed: it starts without the encoding, unless the encoding
/// is all there is (then copying the bytes is cheaper than decoding them).
impl Clone for Struct {
    fn clone(&self) -> Self {
        match (&self.fields, self.encoded.get()) {
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

impl prost::Message for Struct {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.encoded().write_to(buf);
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
        self.encoded().len()
    }

    fn clear(&mut self) {
        *self = Struct::from(Map::new());
    }
}

// ---- encoding -------------------------------------------------------------

thread_local! {
    /// Where Structs given as JSON are encoded before their bytes are copied out at their exact
    /// size: growing a fresh buffer for each Struct, reallocation after reallocation, cost
    /// more than writing.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// The capacity the next [`Struct::write`] starts with: a little more than the last took.
    static WRITTEN: Cell<usize> = const { Cell::new(256) };
    /// Which nested messages of the last [`Struct::write`] had two-byte lengths (see
    /// [`Writer::wide`]).
    static WIDE: Cell<u64> = const { Cell::new(0) };
}

/// A scratch buffer larger than this is not kept for the next Struct: one unusually large
/// object must not hold its memory for the life of the thread.
const SCRATCH_KEPT: usize = 256 * 1024;

/// The fields of a Struct, encoded. Never inlined: profiles then show what it costs.
#[inline(never)]
fn encode_object_fields(map: &Map<String, Value>) -> Encoded {
    let mut writer = Writer::scratch();
    writer.object(map);
    writer.take_encoded()
}

/// Encodes with a fresh [`Writer`]: for the decoding helpers below, which are messages only
/// to be decoded by prost and are never encoded on the wire path.
fn encoded(write: impl FnOnce(&mut Writer)) -> Box<[u8]> {
    let mut writer = Writer::new();
    write(&mut writer);
    writer.bytes()
}

/// The key byte of a field: every field here has a number below 16, so one byte.
const fn key(tag: u32, wire_type: WireType) -> u8 {
    ((tag << 3) | wire_type as u32) as u8
}

/// Writes Struct, Value and ListValue fields in one walk of the tree (measuring first would
/// walk it twice, a BTreeMap per object). Every nested message is preceded by its length,
/// unknown until the message is written, so each gets a placeholder, filled in when it closes
/// with the shortest varint, as prost writes it:
///
/// - One byte, right for the many messages under 128 bytes. A message of 128 bytes to 16 kB
///   then needs two, and its bytes move up one to make room ([`Writer::close_long`]).
///   Messages that end at the same byte (a member's entry, Value and Struct) close together
///   ([`Writer::close_together`]): their bytes move once for all their lengths, not once per
///   message.
/// - Two bytes where a guess says so, and then nothing moves: for a nested member that
///   [`Struct::write`] writes (`metadata`, `spec`, `forProvider`), whether the same member of
///   the last Struct written on the thread took two-byte lengths (`wide`), as a composition
///   writes resources of one shape after another; for an object or list item of a list,
///   whether the item before did ([`Writer::list`]). A wrong guess moves the bytes back to
///   one-byte placeholders, which close as above ([`Writer::close_wide`]).
/// - None yet for a message of 16 kB or more (a varint of three bytes or more): its length
///   waits in `pending` and is written as the bytes are copied out ([`Encoded::write_to`]), so its
///   bytes move once, not once per level (at 1,000 repositories the composite's status,
///   280 kB, sits in six messages). Any message around a pending one is at least as large,
///   so pending too: a message whose bytes move never holds a pending length. A message's
///   length counts the extra bytes of the pending lengths inside it, not in the buffer yet.
struct Writer {
    out: Vec<u8>,
    /// Lengths not yet written, in the order their messages closed: the placeholder's index
    /// (the byte left for it) and the length.
    pending: Vec<(usize, usize)>,
    /// The bytes the varints in `pending` take beyond their placeholders.
    pending_extra: usize,
    /// A guess, for each of the first 64 nested messages [`Writer::entry_message`] writes (in
    /// [`Struct::write`]: `metadata`, `spec`, `forProvider`...), that the three lengths of the
    /// member (its entry, Value, and Struct or ListValue) take two bytes. Those get two-byte
    /// placeholders, filled in place when the guess is right, so none of the member's bytes
    /// move; a wrong guess moves them back to one-byte placeholders and closes as usual.
    /// A composition writes resources of the same shape one after another, so the guess is
    /// what the last Struct written on the thread had (`wide_now` of that one).
    wide: u64,
    /// What `wide` will be for the next Struct: the members that took two-byte lengths.
    wide_now: u64,
    /// How many members `entry_message` started.
    messages: u32,
}

/// The size from which a message's length waits in `pending`: its varint takes three bytes.
const PENDING: usize = 1 << 14;

impl Writer {
    fn new() -> Self {
        Writer::with_buffer(Vec::new())
    }

    fn with_buffer(out: Vec<u8>) -> Self {
        Writer {
            out,
            pending: Vec::new(),
            pending_extra: 0,
            wide: 0,
            wide_now: 0,
            messages: 0,
        }
    }

    /// A writer on the thread's scratch buffer.
    fn scratch() -> Self {
        let mut out = SCRATCH.take();
        out.clear();
        Writer::with_buffer(out)
    }

    /// The bytes written into the scratch buffer, copied out at their exact size; the buffer
    /// goes back for the next Struct.
    fn take_encoded(mut self) -> Encoded {
        let encoded = Encoded {
            bytes: self.out.clone(),
            lengths: self.pending_in_order(),
            extra: self.pending_extra,
        };
        if self.out.capacity() <= SCRATCH_KEPT {
            SCRATCH.set(self.out);
        }
        encoded
    }

    /// The bytes written, every length in place, in a box of their exact size.
    fn bytes(self) -> Box<[u8]> {
        self.into_encoded().contiguous().into()
    }

    /// The bytes written and the lengths not yet in place, in the buffer they were written in
    /// unless it is more than a quarter too large: a response holds every resource's bytes
    /// until it is written (1,000 of them at 1,000 repositories).
    fn into_encoded(mut self) -> Encoded {
        if self.out.capacity() - self.out.len() > self.out.len() / 4 {
            self.out.shrink_to_fit();
        }
        Encoded {
            lengths: self.pending_in_order(),
            bytes: self.out,
            extra: self.pending_extra,
        }
    }

    /// The pending lengths, in the order of their places.
    fn pending_in_order(&mut self) -> Box<[(usize, usize)]> {
        // A message closes after those inside it, whose places follow its own.
        self.pending.sort_unstable_by_key(|&(at, _)| at);
        std::mem::take(&mut self.pending).into_boxed_slice()
    }

    /// The fields of a Struct: one map entry per member.
    fn object(&mut self, map: &Map<String, Value>) {
        for (name, value) in map {
            self.member(name, value);
        }
    }

    /// A map entry holding `value`.
    fn member(&mut self, name: &str, value: &Value) {
        let (entry, inner) = self.open_entry(name);
        match self.open_value(value) {
            Some(fields) => self.close_together([fields, inner, entry]),
            None => self.close_together([inner, entry]),
        }
    }

    /// Starts a map entry (a Struct's field) up to its value's fields: the entry's key and
    /// length placeholder, the name, and the value's key and placeholder. Returns where the
    /// entry's and the value's bytes start. The bytes go in three copies rather than one push
    /// each: every push checks the capacity.
    #[inline]
    fn open_entry(&mut self, name: &str) -> (usize, usize) {
        const ENTRY: u8 = key(STRUCT_FIELDS, WireType::LengthDelimited);
        const NAME: u8 = key(ENTRY_KEY, WireType::LengthDelimited);
        let entry = if name.len() < 0x80 {
            self.out
                .extend_from_slice(&[ENTRY, 0, NAME, name.len() as u8]);
            self.out.len() - 2
        } else {
            let entry = self.open(STRUCT_FIELDS);
            self.out.push(NAME);
            self.varint(name.len());
            entry
        };
        self.out.extend_from_slice(name.as_bytes());
        (entry, self.open(ENTRY_VALUE))
    }

    /// The fields of one map entry.
    fn entry(&mut self, name: &str, value: &Value) {
        self.out.push(key(ENTRY_KEY, WireType::LengthDelimited));
        self.varint(name.len());
        self.out.extend_from_slice(name.as_bytes());
        let inner = self.open(ENTRY_VALUE);
        self.value(value);
        self.close(inner);
    }

    /// The fields of a ListValue. Its items tend to be alike (the composite's status lists a
    /// Struct of a few hundred bytes per repository): an object or list item whose item
    /// before took two-byte lengths gets two-byte placeholders (see [`Writer::close_wide`]).
    fn list(&mut self, items: &[Value]) {
        let mut wide = false;
        for item in items {
            wide = match item {
                Value::Object(map) => self.item_message(wide, VALUE_STRUCT, |w| w.object(map)),
                Value::Array(items) => self.item_message(wide, VALUE_LIST, |w| w.list(items)),
                scalar => {
                    let inner = self.open(LIST_VALUES);
                    self.scalar(scalar);
                    self.close(inner);
                    false
                }
            };
        }
    }

    /// A list item holding a message (Struct or ListValue) whose fields `fields` writes, with
    /// two-byte placeholders when `wide` (the item before took two-byte lengths). Returns
    /// whether this one's lengths took two bytes, the guess for the next item.
    #[inline]
    fn item_message(&mut self, wide: bool, tag: u32, fields: impl FnOnce(&mut Writer)) -> bool {
        let starts = if wide {
            let inner = self.open_wide(LIST_VALUES);
            [self.open_wide(tag), inner]
        } else {
            let inner = self.open(LIST_VALUES);
            [self.open(tag), inner]
        };
        fields(self);
        if wide {
            self.close_wide(starts)
        } else {
            let two_bytes = self.two_bytes(starts);
            self.close_together(starts);
            two_bytes
        }
    }

    /// The fields of a Value.
    fn value(&mut self, value: &Value) {
        if let Some(fields) = self.open_value(value) {
            self.close(fields);
        }
    }

    /// The fields of a Value, leaving the Struct or ListValue of an object or a list open for
    /// the caller to close with the messages around it: where it starts.
    #[inline]
    fn open_value(&mut self, value: &Value) -> Option<usize> {
        match value {
            Value::Object(map) => {
                let fields = self.open(VALUE_STRUCT);
                self.object(map);
                Some(fields)
            }
            Value::Array(items) => {
                let fields = self.open(VALUE_LIST);
                self.list(items);
                Some(fields)
            }
            scalar => {
                self.scalar(scalar);
                None
            }
        }
    }

    /// The fields of a bool Value.
    #[inline]
    fn boolean(&mut self, b: bool) {
        self.out
            .extend_from_slice(&[key(VALUE_BOOL, WireType::Varint), u8::from(b)]);
    }

    /// The fields of a Value holding neither an object nor a list.
    #[inline]
    fn scalar(&mut self, value: &Value) {
        match value {
            Value::Null => self
                .out
                .extend_from_slice(&[key(VALUE_NULL, WireType::Varint), 0]),
            Value::Bool(b) => self.boolean(*b),
            Value::Number(n) => {
                let number = n.as_f64().unwrap_or(0.0).to_le_bytes();
                let mut field = [key(VALUE_NUMBER, WireType::SixtyFourBit); 9];
                field[1..].copy_from_slice(&number);
                self.out.extend_from_slice(&field);
            }
            Value::String(text) => self.string(text),
            // Not reached (callers write objects and lists themselves), but as a Value.
            Value::Object(_) | Value::Array(_) => self.value(value),
        }
    }

    /// The fields of a string Value.
    #[inline]
    fn string(&mut self, text: &str) {
        const STRING: u8 = key(VALUE_STRING, WireType::LengthDelimited);
        if text.len() < 0x80 {
            self.out.extend_from_slice(&[STRING, text.len() as u8]);
        } else {
            self.out.push(STRING);
            self.varint(text.len());
        }
        self.out.extend_from_slice(text.as_bytes());
    }

    /// A map entry whose value's fields `value` writes.
    #[inline]
    fn entry_with(&mut self, name: &str, value: impl FnOnce(&mut Writer)) {
        let (entry, inner) = self.open_entry(name);
        value(self);
        self.close_together([inner, entry]);
    }

    /// A map entry whose value is a message (Struct or ListValue) whose fields `fields` writes,
    /// with two-byte placeholders where `wide` guesses they fit.
    #[inline]
    fn entry_message(&mut self, name: &str, tag: u32, fields: impl FnOnce(&mut Writer)) {
        let bit = 1u64.checked_shl(self.messages).unwrap_or(0);
        self.messages += 1;
        let wide = self.wide & bit != 0 && name.len() < 0x80;
        let starts = if wide {
            let entry = self.out.len() + 3;
            self.out.extend_from_slice(&[
                key(STRUCT_FIELDS, WireType::LengthDelimited),
                0,
                0,
                key(ENTRY_KEY, WireType::LengthDelimited),
                name.len() as u8,
            ]);
            self.out.extend_from_slice(name.as_bytes());
            let inner = self.open_wide(ENTRY_VALUE);
            [self.open_wide(tag), inner, entry]
        } else {
            let (entry, inner) = self.open_entry(name);
            [self.open(tag), inner, entry]
        };
        fields(self);
        let two_bytes = if wide {
            self.close_wide(starts)
        } else {
            let two_bytes = self.two_bytes(starts);
            self.close_together(starts);
            two_bytes
        };
        if two_bytes {
            self.wide_now |= bit;
        }
    }

    /// Starts the length-delimited field `tag` with a two-byte length placeholder.
    #[inline]
    fn open_wide(&mut self, tag: u32) -> usize {
        self.out
            .extend_from_slice(&[key(tag, WireType::LengthDelimited), 0, 0]);
        self.out.len()
    }

    /// Whether messages that end together, innermost first, opened with one-byte
    /// placeholders, will all take two-byte lengths: the innermost's, and the outermost's
    /// once the lengths inside it have.
    #[inline]
    fn two_bytes<const N: usize>(&self, starts: [usize; N]) -> bool {
        let end = self.out.len();
        end - starts[0] >= 0x80 && end - starts[N - 1] + N - 1 < PENDING
    }

    /// Ends messages that end together, innermost first, opened with two-byte placeholders
    /// ([`Writer::open_wide`]), and returns whether their lengths all took two bytes: then
    /// they go in place and nothing moves. Otherwise the bytes move back to one-byte
    /// placeholders (and any pending lengths inside with them) and close as any others.
    #[inline]
    fn close_wide<const N: usize>(&mut self, starts: [usize; N]) -> bool {
        let end = self.out.len();
        if end - starts[0] >= 0x80 && end - starts[N - 1] < PENDING {
            for start in starts {
                let len = end - start;
                self.out[start - 2] = len as u8 | 0x80;
                self.out[start - 1] = (len >> 7) as u8;
            }
            true
        } else {
            self.close_narrowed(starts);
            false
        }
    }

    /// Moves the bytes after each two-byte placeholder back by one byte for it and each one
    /// before it, and closes the messages as any others.
    #[cold]
    fn close_narrowed<const N: usize>(&mut self, starts: [usize; N]) {
        let end = self.out.len();
        let mut narrowed = starts;
        for outer in (0..N).rev() {
            let start = starts[outer];
            let stretch_end = if outer == 0 {
                end
            } else {
                starts[outer - 1] - 2
            };
            narrowed[outer] = start - (N - outer);
            self.out.copy_within(start..stretch_end, narrowed[outer]);
        }
        self.out.truncate(end - N);
        for pending in self.pending.iter_mut().rev() {
            if pending.0 < starts[0] {
                break;
            }
            pending.0 -= N;
        }
        self.close_together(narrowed);
    }

    /// A length: most are below 128, one byte, without prost's loop through `BufMut`.
    #[inline]
    fn varint(&mut self, value: usize) {
        if value < 0x80 {
            self.out.push(value as u8);
        } else {
            encode_varint(value as u64, &mut self.out);
        }
    }

    /// Starts the length-delimited field `tag`: its key and a one-byte length placeholder.
    /// Returns where the message's bytes start.
    #[inline]
    fn open(&mut self, tag: u32) -> usize {
        self.out
            .extend_from_slice(&[key(tag, WireType::LengthDelimited), 0]);
        self.out.len()
    }

    /// Ends the message started at `start`, writing its length before it.
    #[inline]
    fn close(&mut self, start: usize) {
        let len = self.out.len() - start;
        if len < 0x80 {
            self.out[start - 1] = len as u8;
        } else {
            self.close_long(start, len);
        }
    }

    /// Ends messages that end at the same byte, innermost first (a Struct, its Value and the
    /// map entry holding it): one comparison when all are short, and when some are long, their
    /// bytes move once for all of their lengths rather than once per message.
    #[inline]
    fn close_together<const N: usize>(&mut self, starts: [usize; N]) {
        let end = self.out.len();
        if end - starts[N - 1] < 0x80 {
            for start in starts {
                self.out[start - 1] = (end - start) as u8;
            }
        } else {
            self.close_long_together(starts);
        }
    }

    /// Ends messages that end together, the outermost of 128 bytes or more.
    #[inline(never)]
    fn close_long_together<const N: usize>(&mut self, starts: [usize; N]) {
        let end = self.out.len();
        if end - starts[N - 1] + N > PENDING {
            // Lengths that may take three bytes or hold pending ones: one at a time.
            for start in starts {
                self.close(start);
            }
            return;
        }
        // Each length counts the byte each long one inside it adds; all take one or two.
        let mut lens = [0; N];
        let mut extra = 0;
        for (len, start) in lens.iter_mut().zip(starts) {
            *len = end - start + extra;
            extra += usize::from(*len >= 0x80);
        }
        for _ in 0..extra {
            self.out.push(0);
        }
        // From the innermost out, the bytes after each placeholder move up by the bytes the
        // lengths before them add, and the length goes in front of them.
        let mut shift = extra;
        let mut moved = end;
        for (start, len) in starts.into_iter().zip(lens) {
            self.out.copy_within(start..moved, start + shift);
            if len < 0x80 {
                self.out[start + shift - 1] = len as u8;
            } else {
                self.out[start + shift - 2] = len as u8 | 0x80;
                self.out[start + shift - 1] = (len >> 7) as u8;
                shift -= 1;
            }
            moved = start - 1;
        }
        debug_assert_eq!(shift, 0);
    }

    /// Ends a message of 128 bytes or more, `len` of them in the buffer. Below `PENDING`
    /// bytes there is no pending length inside, as those messages are larger still: the
    /// bytes move up one for a two-byte length, and the varint goes in.
    #[inline(never)]
    fn close_long(&mut self, start: usize, len: usize) {
        if len < PENDING {
            self.out.push(0);
            self.out.copy_within(start..start + len, start + 1);
            self.out[start - 1] = len as u8 | 0x80;
            self.out[start] = (len >> 7) as u8;
        } else {
            self.close_pending(start, len);
        }
    }

    /// Notes the length of a message of `PENDING` bytes or more, to be written when the bytes
    /// are copied out, with the extra bytes of the pending lengths inside it: those closed
    /// since it opened, last in the list.
    #[cold]
    fn close_pending(&mut self, start: usize, len: usize) {
        let inside = self
            .pending
            .iter()
            .rev()
            .take_while(|&&(at, _)| at >= start);
        let len = len
            + inside
                .map(|&(_, len)| encoded_len_varint(len as u64) - 1)
                .sum::<usize>();
        self.pending.push((start - 1, len));
        self.pending_extra += encoded_len_varint(len as u64) - 1;
    }
}

/// Writes a Struct's members straight into its encoding, in key order: the bytes are those of
/// the equivalent `Map` (a BTreeMap, so keys in byte order), which a debug build checks.
pub struct ObjectWriter<'w> {
    writer: &'w mut Writer,
    /// The last key written, to check the order.
    #[cfg(debug_assertions)]
    last: Option<String>,
}

impl<'w> ObjectWriter<'w> {
    fn new(writer: &'w mut Writer) -> Self {
        ObjectWriter {
            writer,
            #[cfg(debug_assertions)]
            last: None,
        }
    }

    /// Checks, in a debug build, that `name` comes after the last member.
    #[inline]
    fn check_order(&mut self, name: &str) {
        #[cfg(debug_assertions)]
        {
            debug_assert!(
                self.last.as_deref().is_none_or(|last| last < name),
                "members out of order: {:?} then {name:?}",
                self.last
            );
            self.last = Some(name.to_owned());
        }
        #[cfg(not(debug_assertions))]
        let _ = name;
    }

    /// Writes a member `name` with a string value.
    pub fn string(&mut self, name: &str, text: &str) {
        self.check_order(name);
        self.writer.entry_with(name, |w| w.string(text));
    }

    /// A JSON value as it is, such as one taken from the request.
    pub fn value(&mut self, name: &str, value: &Value) {
        self.check_order(name);
        self.writer.member(name, value);
    }

    /// A JSON object as it is.
    pub fn map(&mut self, name: &str, map: &Map<String, Value>) {
        self.check_order(name);
        self.writer
            .entry_message(name, VALUE_STRUCT, |w| w.object(map));
    }

    /// A nested object, written member by member in key order.
    pub fn object(&mut self, name: &str, write: impl FnOnce(&mut ObjectWriter<'_>)) {
        self.check_order(name);
        self.writer
            .entry_message(name, VALUE_STRUCT, |w| write(&mut ObjectWriter::new(w)));
    }

    /// Writes a member `name` with a boolean value.
    pub fn bool(&mut self, name: &str, value: bool) {
        self.check_order(name);
        self.writer.entry_with(name, |w| w.boolean(value));
    }

    /// A list of strings.
    pub fn strings<'s>(&mut self, name: &str, items: impl IntoIterator<Item = &'s str>) {
        self.list(name, |list| {
            for item in items {
                list.string(item);
            }
        });
    }

    /// A list, written item by item.
    pub fn list(&mut self, name: &str, write: impl FnOnce(&mut ListWriter<'_>)) {
        self.check_order(name);
        self.writer.entry_message(name, VALUE_LIST, |writer| {
            write(&mut ListWriter {
                writer,
                wide: false,
            })
        });
    }

    /// The members of `earlier`, copied in key order, except those named in `ours` (sorted):
    /// `write` writes each of those (or leaves it out) where it falls in the order. This is how
    /// a step sets a few members of an object that earlier steps may have filled.
    pub fn merge(
        &mut self,
        earlier: Option<&Map<String, Value>>,
        ours: &[&str],
        mut write: impl FnMut(&mut Self, &str),
    ) {
        debug_assert!(ours.is_sorted(), "ours out of order: {ours:?}");
        let mut pending = ours.iter().copied().peekable();
        for (name, value) in earlier.into_iter().flatten() {
            while let Some(own) = pending.next_if(|own| *own < name.as_str()) {
                write(self, own);
            }
            if !ours.contains(&name.as_str()) {
                self.value(name, value);
            }
        }
        for own in pending {
            write(self, own);
        }
    }
}

/// Writes a ListValue's items straight into its encoding.
pub struct ListWriter<'w> {
    writer: &'w mut Writer,
    /// Whether the item before took two-byte lengths (see [`Writer::item_message`]).
    wide: bool,
}

impl ListWriter<'_> {
    /// Writes a string item.
    pub fn string(&mut self, text: &str) {
        let inner = self.writer.open(LIST_VALUES);
        self.writer.string(text);
        self.writer.close(inner);
        self.wide = false;
    }

    /// An object, written member by member in key order.
    pub fn object(&mut self, write: impl FnOnce(&mut ObjectWriter<'_>)) {
        self.wide = self.writer.item_message(self.wide, VALUE_STRUCT, |w| {
            write(&mut ObjectWriter::new(w))
        });
    }
}

// ---- decoding -------------------------------------------------------------
//
// Two decoders. The direct one reads an entry of a Struct straight from the bytes, without
// prost's per-message machinery (a `merge_loop` and a fresh `String` merged into for every key
// and string); it handles well-formed input. Whatever it does not accept (malformed bytes,
// groups, nesting near the recursion limit) is decoded again by prost through the message types
// further down, as before, so values, errors and their messages stay exactly prost's.

/// The direct decoder. It answers `None` for anything prost might refuse, and otherwise what
/// prost would decode.
mod direct {
    use super::*;
    use std::ops::RangeInclusive;

    /// The recursion budget prost leaves in the context it hands `Struct::merge_field`, at the
    /// deepest place the protocol carries a Struct: a resource in a map of a State (request,
    /// state, map entry, resource and Struct each take one of prost's 100 levels). The
    /// context's count is private, so the direct decoder assumes this smallest one. Where more
    /// is left (an `input`, a composite, a Struct decoded alone), it gives up a little early and
    /// prost decodes the rest of that entry with the real budget: it never accepts a nesting
    /// prost would refuse (`depth_limits_are_those_of_prosts_recursion_limit`).
    const DEPTH: u32 = 96;

    // The keys (field number and wire type) the decoder expects, as the values of their varints:
    // each loop matches a key against these at once, and only another key is taken apart and
    // checked (`Reader::other`).
    const STRUCT_ENTRY: u32 = key(STRUCT_FIELDS, WireType::LengthDelimited) as u32;
    const KEY: u32 = key(ENTRY_KEY, WireType::LengthDelimited) as u32;
    const VALUE: u32 = key(ENTRY_VALUE, WireType::LengthDelimited) as u32;
    const NULL: u32 = key(VALUE_NULL, WireType::Varint) as u32;
    const NUMBER: u32 = key(VALUE_NUMBER, WireType::SixtyFourBit) as u32;
    const STRING: u32 = key(VALUE_STRING, WireType::LengthDelimited) as u32;
    const BOOL: u32 = key(VALUE_BOOL, WireType::Varint) as u32;
    const OBJECT: u32 = key(VALUE_STRUCT, WireType::LengthDelimited) as u32;
    const LIST: u32 = key(VALUE_LIST, WireType::LengthDelimited) as u32;
    const ITEM: u32 = key(LIST_VALUES, WireType::LengthDelimited) as u32;

    /// One entry of a Struct (its length, then its fields) from the start of `bytes`: the key,
    /// the value and how many bytes it took.
    pub(super) fn struct_entry(bytes: &[u8]) -> Option<(String, Value, usize)> {
        let mut reader = Reader(bytes);
        let entry = reader.delimited()?;
        let (name, value) = self::entry(entry, DEPTH)?;
        Some((name, value, bytes.len() - reader.0.len()))
    }

    // Each function below takes `depth`, the count of prost's `DecodeContext` when prost would
    // call `merge_field` on the message being read, and checks it where prost does: before
    // merging a nested message and before skipping an unknown field.

    /// A Struct's fields.
    ///
    /// One `insert` per entry: encoders write the keys sorted, so each insert searches the
    /// whole leaf, but building from a Vec (`Map::from_iter`: collect, sort, dedup, bulk push)
    /// or inserting backwards measured slower for objects of a Kubernetes object's size.
    fn object(bytes: &[u8], depth: u32) -> Option<Map<String, Value>> {
        let mut reader = Reader(bytes);
        let mut map = Map::new();
        while !reader.0.is_empty() {
            match reader.key()? {
                STRUCT_ENTRY => {
                    let (name, value) = entry(reader.delimited()?, depth)?;
                    // Last wins for a repeated key, as in prost's map merge.
                    map.insert(name, value);
                }
                other => reader.other(other, STRUCT_FIELDS..=STRUCT_FIELDS, depth)?,
            }
        }
        Some(map)
    }

    /// The fields of one map entry, merged as the message one level below `depth`.
    ///
    /// Inlined, with [`merge_value`], into the loop of [`object`]: one call per object instead
    /// of two per entry, each with its frame and its result copied out (~6% of decoding).
    #[inline(always)]
    fn entry(bytes: &[u8], depth: u32) -> Option<(String, Value)> {
        let depth = depth.checked_sub(1)?;
        let mut reader = Reader(bytes);
        let mut name = "";
        // A value field merges into the value so far: a second one without a kind keeps it.
        let mut value = Value::Null;
        while !reader.0.is_empty() {
            match reader.key()? {
                KEY => name = utf8(reader.delimited()?)?,
                VALUE => {
                    let inner = depth.checked_sub(1)?;
                    merge_value(reader.delimited()?, inner, &mut value)?;
                }
                other => reader.other(other, ENTRY_KEY..=ENTRY_VALUE, depth)?,
            }
        }
        Some((name.to_owned(), value))
    }

    /// A Value's fields, merged into `value`: each kind replaces what came before.
    #[inline(always)]
    fn merge_value(bytes: &[u8], depth: u32, value: &mut Value) -> Option<()> {
        let mut reader = Reader(bytes);
        while !reader.0.is_empty() {
            let kind = match reader.key()? {
                NULL => {
                    reader.varint()?;
                    Value::Null
                }
                NUMBER => json_number(reader.double()?),
                STRING => Value::String(utf8(reader.delimited()?)?.to_owned()),
                BOOL => Value::Bool(reader.varint()? != 0),
                OBJECT => {
                    let inner = depth.checked_sub(1)?;
                    Value::Object(object(reader.delimited()?, inner)?)
                }
                LIST => {
                    let inner = depth.checked_sub(1)?;
                    Value::Array(list(reader.delimited()?, inner)?)
                }
                other => {
                    reader.other(other, VALUE_NULL..=VALUE_LIST, depth)?;
                    continue;
                }
            };
            // What this replaces is nearly always the null the value started as: forgetting a
            // null (nothing to free) spares every value a call to `Value`'s drop glue, which
            // then runs only for a kind that comes twice.
            let before = std::mem::replace(value, kind);
            if matches!(before, Value::Null) {
                std::mem::forget(before);
            }
        }
        Some(())
    }

    /// A ListValue's fields.
    fn list(bytes: &[u8], depth: u32) -> Option<Vec<Value>> {
        let mut reader = Reader(bytes);
        let mut items = Vec::new();
        while !reader.0.is_empty() {
            match reader.key()? {
                ITEM => {
                    let inner = depth.checked_sub(1)?;
                    let mut item = Value::Null;
                    merge_value(reader.delimited()?, inner, &mut item)?;
                    items.push(item);
                }
                other => reader.other(other, LIST_VALUES..=LIST_VALUES, depth)?,
            }
        }
        Some(items)
    }

    /// A key or string as prost checks it: valid UTF-8.
    ///
    /// Nearly all are ASCII and short, where std's `from_utf8` (not inlined, then a loop set up
    /// for long input) cost about a hundred instructions each, 5% of a call: [`ascii`] answers
    /// for most in a few, and the rest go through `from_utf8`.
    #[inline(always)]
    fn utf8(bytes: &[u8]) -> Option<&str> {
        if ascii(bytes) {
            // SAFETY: ASCII is valid UTF-8.
            Some(unsafe { std::str::from_utf8_unchecked(bytes) })
        } else {
            std::str::from_utf8(bytes).ok()
        }
    }

    /// Whether `bytes` are all ASCII. From 4 to 64 bytes (nearly every key and value), a few
    /// word loads cover them, the last overlapping the others; std's `is_ascii` checks the
    /// tail byte by byte, and takes other lengths.
    #[inline(always)]
    fn ascii(bytes: &[u8]) -> bool {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        match (bytes.len(), bytes.last_chunk::<8>()) {
            (8..=64, Some(last)) => {
                let words = bytes.chunks_exact(8).flat_map(<&[u8; 8]>::try_from);
                let all = words.map(|word| u64::from_le_bytes(*word));
                all.fold(u64::from_le_bytes(*last), |or, word| or | word) & HIGH == 0
            }
            (4..=7, _) => match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
                (Some(first), Some(last)) => {
                    (u32::from_le_bytes(*first) | u32::from_le_bytes(*last)) & HIGH as u32 == 0
                }
                _ => false,
            },
            _ => bytes.is_ascii(),
        }
    }

    /// The rest of a varint whose first byte is 128 or more, as prost reads it: up to ten
    /// bytes, the tenth at most 1. Its value and length; a function of the bytes rather than of
    /// the [`Reader`], so that the reader stays in registers in the loops above.
    #[cold]
    fn long_varint(bytes: &[u8]) -> Option<(u64, usize)> {
        let mut value = 0u64;
        for (i, &byte) in bytes.iter().take(10).enumerate() {
            if i == 9 && byte > 1 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Some((value, i + 1));
            }
        }
        None
    }

    /// The bytes not read yet.
    struct Reader<'a>(&'a [u8]);

    impl<'a> Reader<'a> {
        /// A varint. Inlined, as every key and length goes through it and nearly all are one
        /// byte.
        #[inline(always)]
        fn varint(&mut self) -> Option<u64> {
            match self.0.first() {
                Some(&byte) if byte < 0x80 => {
                    self.0 = &self.0[1..];
                    Some(u64::from(byte))
                }
                _ => {
                    let (value, len) = long_varint(self.0)?;
                    self.0 = self.0.get(len..)?;
                    Some(value)
                }
            }
        }

        /// A key, not yet checked: the loops match it against the keys they expect, and hand
        /// any other to [`Reader::other`].
        #[inline(always)]
        fn key(&mut self) -> Option<u32> {
            u32::try_from(self.varint()?).ok()
        }

        /// A key other than those expected: skipped as prost's `skip_field` would, refused
        /// where prost's `decode_key` errs (a wire type of 6 or 7, field number 0) or where
        /// prost's merge would (an expected field number, `known`, with another wire type).
        fn other(&mut self, key: u32, known: RangeInclusive<u32>, depth: u32) -> Option<()> {
            let wire_type = WireType::try_from(u64::from(key & 0x07)).ok()?;
            let tag = key >> 3;
            if tag == 0 || known.contains(&tag) {
                return None;
            }
            self.skip(wire_type, depth)
        }

        /// A length-delimited field's bytes.
        #[inline(always)]
        fn delimited(&mut self) -> Option<&'a [u8]> {
            let len = usize::try_from(self.varint()?).ok()?;
            if len > self.0.len() {
                return None;
            }
            let (field, rest) = self.0.split_at(len);
            self.0 = rest;
            Some(field)
        }

        fn double(&mut self) -> Option<f64> {
            let (bytes, rest) = self.0.split_first_chunk::<8>()?;
            self.0 = rest;
            Some(f64::from_le_bytes(*bytes))
        }

        /// Skips an unknown field as prost's `skip_field` does, which first checks the
        /// recursion limit; groups are left to prost.
        fn skip(&mut self, wire_type: WireType, depth: u32) -> Option<()> {
            if depth == 0 {
                return None;
            }
            let len = match wire_type {
                WireType::Varint => return self.varint().map(drop),
                WireType::SixtyFourBit => 8,
                WireType::ThirtyTwoBit => 4,
                WireType::LengthDelimited => return self.delimited().map(drop),
                WireType::StartGroup | WireType::EndGroup => return None,
            };
            self.0 = self.0.get(len..)?;
            Some(())
        }
    }
}

/// One field of a Struct merged by prost: what the direct decoder did not take.
fn merge_object_field(
    fields: &mut Map<String, Value>,
    tag: u32,
    wire_type: WireType,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    if tag != STRUCT_FIELDS {
        return skip_field(wire_type, tag, buf, ctx);
    }
    let mut entry = Entry::default();
    prost::encoding::message::merge(wire_type, &mut entry, buf, ctx)?;
    fields.insert(entry.key, entry.value.0);
    Ok(())
}

/// A Struct decoded by prost alone: the direct decoder's depth budget is only valid at the
/// top of a Struct field, so once prost decodes an entry, it decodes everything inside it.
#[derive(Default, Debug)]
struct JsonObject(Map<String, Value>);

impl prost::Message for JsonObject {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&encoded(|w| w.object(&self.0)));
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        merge_object_field(&mut self.0, tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        encoded(|w| w.object(&self.0)).len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// One `map<string, Value>` entry of a Struct while it is decoded.
#[derive(Default, Debug)]
struct Entry {
    key: String,
    value: JsonValue,
}

impl prost::Message for Entry {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&encoded(|w| w.entry(&self.key, &self.value.0)));
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            ENTRY_KEY => prost::encoding::string::merge(wire_type, &mut self.key, buf, ctx),
            ENTRY_VALUE => prost::encoding::message::merge(wire_type, &mut self.value, buf, ctx),
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        encoded(|w| w.entry(&self.key, &self.value.0)).len()
    }

    fn clear(&mut self) {
        *self = Entry::default();
    }
}

/// A `google.protobuf.Value` while it is decoded. An absent kind is `null`.
#[derive(Default, Debug)]
struct JsonValue(Value);

impl prost::Message for JsonValue {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&encoded(|w| w.value(&self.0)));
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            VALUE_NULL => {
                let mut null_value = 0i32;
                prost::encoding::int32::merge(wire_type, &mut null_value, buf, ctx)?;
                self.0 = Value::Null;
            }
            VALUE_NUMBER => {
                let mut number = 0f64;
                prost::encoding::double::merge(wire_type, &mut number, buf, ctx)?;
                self.0 = json_number(number);
            }
            VALUE_STRING => {
                let mut text = String::new();
                prost::encoding::string::merge(wire_type, &mut text, buf, ctx)?;
                self.0 = Value::String(text);
            }
            VALUE_BOOL => {
                let mut flag = false;
                prost::encoding::bool::merge(wire_type, &mut flag, buf, ctx)?;
                self.0 = Value::Bool(flag);
            }
            VALUE_STRUCT => {
                let mut object = JsonObject::default();
                prost::encoding::message::merge(wire_type, &mut object, buf, ctx)?;
                self.0 = Value::Object(object.0);
            }
            VALUE_LIST => {
                let mut list = JsonList::default();
                prost::encoding::message::merge(wire_type, &mut list, buf, ctx)?;
                self.0 = Value::Array(list.0);
            }
            _ => skip_field(wire_type, tag, buf, ctx)?,
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        encoded(|w| w.value(&self.0)).len()
    }

    fn clear(&mut self) {
        self.0 = Value::Null;
    }
}

/// A `google.protobuf.ListValue` while it is decoded.
#[derive(Default, Debug)]
struct JsonList(Vec<Value>);

impl prost::Message for JsonList {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&encoded(|w| w.list(&self.0)));
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != LIST_VALUES {
            return skip_field(wire_type, tag, buf, ctx);
        }
        let mut item = JsonValue::default();
        prost::encoding::message::merge(wire_type, &mut item, buf, ctx)?;
        self.0.push(item.0);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        encoded(|w| w.list(&self.0)).len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// The JSON number for a protobuf double (see the module documentation).
pub fn json_number(number: f64) -> Value {
    const I64_BOUND: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let integral = number.fract() == 0.0 && number.abs() < I64_BOUND;
    let negative_zero = number == 0.0 && number.is_sign_negative();
    if integral && !negative_zero {
        Value::Number(Number::from(number as i64))
    } else {
        Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::encoding::encode_key;
    use prost::Message;
    use serde_json::json;

    fn round_trip(value: Value) -> Value {
        let bytes = Struct::from_value(value).encode_to_vec();
        Struct::decode(bytes.as_slice()).unwrap().into_value()
    }

    #[test]
    fn nested_values_survive_a_round_trip() {
        let value = json!({
            "a": null, "b": true, "c": 3, "d": -1.5, "e": "text", "f": {"g": [1, "x", {"h": []}]},
            "": {"empty": {}}
        });
        assert_eq!(round_trip(value.clone()), value);
    }

    #[test]
    fn encoding_matches_prost_types() {
        let value = json!({"z": [1.25, false, null], "a": {"k": "v"}, "n": 7});
        let ours = Struct::from_value(value).encode_to_vec();
        let theirs = prost_types::Struct::decode(ours.as_slice()).unwrap();
        assert_eq!(theirs.encode_to_vec(), ours);
        assert_eq!(
            theirs.fields["n"].kind,
            Some(prost_types::value::Kind::NumberValue(7.0))
        );
    }

    #[test]
    fn nested_lengths_are_measured_in_encoding_order() {
        let value = json!({
            "a": [{"b": [1, {"c": "d"}, []], "e": {}}, [[{"f": null}]]],
            "g": {"h": {"i": [true, {"j": [{}]}]}, "k": "l"},
            "m": []
        });
        let ours = Struct::from_value(value.clone()).encode_to_vec();
        let theirs = prost_types::Struct::decode(ours.as_slice()).unwrap();
        assert_eq!(theirs.encode_to_vec(), ours);
        assert_eq!(Struct::from_value(value.clone()).encoded_len(), ours.len());
        assert_eq!(round_trip(value.clone()), value);
    }

    #[test]
    fn long_messages_get_longer_length_prefixes_as_prost_types_writes_them() {
        // Lengths of one, two and three varint bytes, at every level of nesting.
        let value = json!({
            "short": "x".repeat(127),
            "two": "y".repeat(128),
            "three": "z".repeat(20_000),
            "list": [{"a": "b".repeat(300)}, ["c".repeat(16_384)], "d"],
            "deep": {"e": {"f": {"g": "h".repeat(200)}}},
            "k".repeat(150): null
        });
        let ours = Struct::from_value(value.clone()).encode_to_vec();
        let theirs = prost_types::Struct::decode(ours.as_slice()).unwrap();
        assert_eq!(theirs.encode_to_vec(), ours);
        assert_eq!(Struct::from_value(value.clone()).encoded_len(), ours.len());
        assert_eq!(round_trip(value.clone()), value);
    }

    #[test]
    fn lengths_around_128_and_16384_bytes_match_prost_types() {
        // Each of the entry, Value and Struct or ListValue lengths around a string crosses a
        // varint boundary in turn (and at 16384 the size from which lengths wait to be
        // written), in an entry, in a list item and at both at once.
        for (boundary, below) in [(128, 12), (16_384, 12), (1 << 21, 8)] {
            for len in boundary - below..boundary + 4 {
                let text = "s".repeat(len);
                let value = json!({
                    "o": {"t": text},
                    "l": [text],
                    "n": [{"t": text}, [[text]]],
                    "m": {"o": {"l": [{"t": text}]}}
                });
                let ours = Struct::from_value(value.clone()).encode_to_vec();
                let theirs = prost_types::Struct::decode(ours.as_slice()).unwrap();
                assert_eq!(theirs.encode_to_vec(), ours, "{len}");
                assert_eq!(round_trip(value.clone()), value);
            }
        }
    }

    /// Trees of every kind of value whose messages fall on both sides of each size the writer
    /// treats apart (one-, two- and three-byte lengths), with pending lengths beside, inside
    /// and before one another and before lengths written at once, written both ways.
    #[test]
    fn random_trees_encode_as_prost_types_does() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        fn tree(depth: usize, random: &mut impl FnMut(usize) -> usize) -> Value {
            match random(if depth == 0 { 4 } else { 7 }) {
                0 => Value::Null,
                1 => Value::Bool(random(2) == 0),
                2 => json!(random(1000) as f64 / 8.0),
                3 => {
                    let sizes = [0, 100, 2_000, PENDING - 150, PENDING - 150];
                    Value::String("t".repeat(sizes[random(5)] + random(150)))
                }
                4 | 5 => (0..random(5))
                    .map(|i| {
                        (
                            format!("{i}{}", "k".repeat(random(3))),
                            tree(depth - 1, random),
                        )
                    })
                    .collect::<Map<_, _>>()
                    .into(),
                _ => (0..random(5)).map(|_| tree(depth - 1, random)).collect(),
            }
        }
        for _ in 0..300 {
            let members: Map<String, Value> = (0..1 + random(4))
                .map(|i| (format!("m{i}"), tree(4, &mut random)))
                .collect();
            let ours = Struct::from(members.clone()).encode_to_vec();
            let theirs = prost_types::Struct::decode(ours.as_slice()).unwrap();
            assert_eq!(theirs.encode_to_vec(), ours);
            // Written twice: the second time, with the first's guesses of two-byte lengths.
            for _ in 0..2 {
                let written = Struct::write(|o| write_members(o, &members));
                assert_eq!(written.encode_to_vec(), ours);
                let decoded = Struct::decode(ours.as_slice()).unwrap();
                assert_eq!(written.into_fields(), decoded.into_fields());
            }
        }
    }

    /// Writes `members` through each of `ObjectWriter`'s ways.
    fn write_members(o: &mut ObjectWriter<'_>, members: &Map<String, Value>) {
        for (name, value) in members {
            match value {
                Value::Object(map) if name.len() % 2 == 0 => {
                    o.object(name, |o| write_members(o, map))
                }
                Value::Object(map) => o.map(name, map),
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    o.strings(name, items.iter().filter_map(Value::as_str))
                }
                value => o.value(name, value),
            }
        }
    }

    /// What `Struct::write` gives for the members of `sample_members`.
    fn written() -> Struct {
        let long = "x".repeat(200);
        Struct::write(|o| {
            o.string("a", "text");
            o.object("b", |b| {
                b.string("long", &long);
                b.object("nested", |n| n.string("k", "v"));
            });
            o.map("c", &Map::from_iter([("z".to_owned(), json!([1.5, null]))]));
            o.strings("d", ["one", "two"]);
            o.value("e", &json!({"x": [true, {"y": -3}], "w": false}));
        })
    }

    fn sample_members() -> Value {
        json!({
            "a": "text",
            "b": {"long": "x".repeat(200), "nested": {"k": "v"}},
            "c": {"z": [1.5, null]},
            "d": ["one", "two"],
            "e": {"x": [true, {"y": -3}], "w": false},
        })
    }

    #[test]
    fn a_written_struct_encodes_as_its_json_would() {
        let json = Struct::from_value(sample_members());
        assert_eq!(written().encode_to_vec(), json.encode_to_vec());
        assert_eq!(written().encoded_len(), json.encoded_len());
    }

    #[test]
    fn a_written_struct_reads_as_json() {
        assert_eq!(
            written().fields(),
            &sample_members().as_object().cloned().unwrap()
        );
        assert_eq!(written(), Struct::from_value(sample_members()));
        assert_eq!(written().clone().into_value(), sample_members());
        assert_eq!(
            format!("{:?}", written()),
            format!("{:?}", Struct::from_value(sample_members()))
        );
        // Changed, it is encoded again from the changed object.
        let mut changed = written();
        changed.fields_mut().insert("f".into(), json!(1));
        let mut expected = sample_members();
        expected["f"] = json!(1);
        assert_eq!(
            changed.encode_to_vec(),
            Struct::from_value(expected).encode_to_vec()
        );
    }

    #[test]
    fn merge_keeps_earlier_members_and_puts_ours_in_order() {
        let earlier = json!({"a": 1, "c": {"old": true}, "d": "gone", "z": [2]});
        let merged = Struct::write(|o| {
            o.merge(
                earlier.as_object(),
                &["b", "c", "d"],
                |o, name| match name {
                    "d" => {}
                    _ => o.string(name, "ours"),
                },
            )
        });
        let expected = json!({"a": 1, "b": "ours", "c": "ours", "z": [2]});
        assert_eq!(merged.into_value(), expected);
        assert_eq!(
            written_bytes(&Struct::from_value(expected)),
            written_bytes(&Struct::write(|o| {
                o.merge(earlier.as_object(), &["b", "c", "d"], |o, name| {
                    if name != "d" {
                        o.string(name, "ours")
                    }
                })
            }))
        );
        let none = Struct::write(|o| o.merge(None, &["x", "y"], |o, name| o.bool(name, true)));
        assert_eq!(none.into_value(), json!({"x": true, "y": true}));
    }

    #[test]
    fn lists_of_objects_encode_as_their_json_would() {
        // Items alternate around the two-byte length boundary, so the writer's guess from the
        // item before is right and wrong in turn.
        let sizes = [1, 200, 300, 5, 130, 126, 20_000, 0, 150];
        let written = Struct::write(|o| {
            o.list("items", |items| {
                for size in sizes {
                    items.object(|i| {
                        i.bool("ok", true);
                        i.string("text", &"x".repeat(size));
                    });
                }
                items.string("two");
                items.object(|i| i.bool("last", false));
            })
        });
        let mut expected: Vec<Value> = sizes
            .iter()
            .map(|size| json!({"ok": true, "text": "x".repeat(*size)}))
            .collect();
        expected.extend([json!("two"), json!({"last": false})]);
        let json = Struct::from_value(json!({ "items": expected }));
        assert_eq!(written_bytes(&written), written_bytes(&json));
        // The 20 kB item's lengths go in as the bytes are copied out: counted, and read back.
        assert_eq!(written.encoded_len(), written_bytes(&json).len());
        assert_eq!(written.fields(), json.fields());
    }

    #[test]
    fn a_struct_written_alone_is_written_as_any_other() {
        let members = |o: &mut ObjectWriter| {
            o.string("big", &"x".repeat(20_000));
            o.object("small", |s| s.bool("ok", true));
        };
        // A buffer too small, and one too large, for what is written.
        for capacity in [0, 100_000] {
            let alone = Struct::write_one(capacity, members);
            assert_eq!(
                written_bytes(&alone),
                written_bytes(&Struct::write(members))
            );
        }
    }

    fn written_bytes(s: &Struct) -> Vec<u8> {
        prost::Message::encode_to_vec(s)
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "members out of order")]
    fn members_out_of_order_are_a_bug() {
        Struct::write(|o| {
            o.string("b", "");
            o.string("a", "");
        });
    }

    #[test]
    fn a_change_forgets_the_encoding() {
        let mut object = Struct::from_value(json!({"a": 1}));
        let before = object.encode_to_vec();
        assert_eq!(object.encoded_len(), before.len());
        object.fields_mut().insert("b".into(), json!("two"));
        let after = object.encode_to_vec();
        assert_eq!(
            after,
            Struct::from_value(json!({"a": 1, "b": "two"})).encode_to_vec()
        );
        assert_eq!(object.encoded_len(), after.len());
        object.clear();
        assert_eq!(object.encoded_len(), 0);
        // A copy and an equal Struct do not depend on what was encoded.
        let encoded = Struct::from_value(json!({"c": [true]}));
        encoded.encoded_len();
        assert_eq!(encoded.clone(), Struct::from_value(json!({"c": [true]})));
    }

    /// What prost alone makes of `bytes` (the decoder before the direct one), and what
    /// `Struct` makes of them.
    fn both_decoders(bytes: &[u8]) -> (Result<Value, String>, Result<Value, String>) {
        let prost = JsonObject::decode(bytes)
            .map(|o| Value::Object(o.0))
            .map_err(|e| e.to_string());
        let ours = Struct::decode(bytes)
            .map(Struct::into_value)
            .map_err(|e| e.to_string());
        (prost, ours)
    }

    /// A document with every kind of value, unknown fields and a repeated key, encoded.
    fn sample() -> Vec<u8> {
        let value = json!({
            "a": null, "b": true, "c": 3, "d": -1.5, "e": "text", "f": {"g": [1, "x", {"h": []}]},
            "long": "l".repeat(130), "": {"empty": {}}, "u": "\u{e9}t\u{e9}"
        });
        let mut bytes = Struct::from_value(value).encode_to_vec();
        // Unknown fields of every wire type in the Struct, an entry and a Value; a repeated
        // key (last wins); an entry whose value field comes twice, the second without a kind.
        let mut entry = vec![0x0a, 0x01, b'c', 0x12, 0x02, 0x20, 0x01];
        entry.extend([0x18, 0x05, 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4]);
        entry.extend([0x12, 0x03, 0x38, 0x96, 0x01]);
        entry.extend([0x1a, 0x02, b'z', b'z']);
        bytes.extend([0x0a, entry.len() as u8]);
        bytes.extend(entry);
        bytes.extend([0x10, 0x07, 0x1a, 0x01, b'q', 0x25, 0, 0, 0, 0]);
        bytes
    }

    #[test]
    fn the_direct_decoder_agrees_with_prost_on_well_formed_input() {
        let bytes = sample();
        let (prost, ours) = both_decoders(&bytes);
        assert!(prost.is_ok(), "{prost:?}");
        assert_eq!(ours, prost);
        assert_eq!(ours.unwrap()["c"], json!(true));
        // And the direct decoder, not prost, took every entry.
        let mut rest = bytes.as_slice();
        let mut entries = 0;
        while let Some(&key) = rest.first() {
            if key == 0x0a {
                let (_, _, used) = direct::struct_entry(&rest[1..]).expect("a direct decoding");
                rest = &rest[1 + used..];
                entries += 1;
            } else {
                let mut unknown = &rest[1..];
                let wire_type = WireType::try_from(u64::from(key & 7)).unwrap();
                skip_field(
                    wire_type,
                    u32::from(key >> 3),
                    &mut unknown,
                    DecodeContext::default(),
                )
                .unwrap();
                rest = unknown;
            }
        }
        assert_eq!(entries, 10);
    }

    #[test]
    fn the_direct_decoder_agrees_with_prost_on_damaged_input() {
        // Every truncation, and every byte replaced by values that break varints, keys, wire
        // types, lengths and UTF-8; then random damage to two or three bytes at once.
        let bytes = sample();
        let mut cases: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
        for i in 0..bytes.len() {
            for replacement in [0x00, 0x01, 0x02, 0x07, 0x0b, 0x0c, 0x7f, 0x80, 0xc3, 0xff] {
                let mut damaged = bytes.clone();
                damaged[i] = replacement;
                cases.push(damaged);
            }
            for delta in [1u8, 0xff] {
                let mut damaged = bytes.clone();
                damaged[i] = damaged[i].wrapping_add(delta);
                cases.push(damaged);
            }
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..20_000 {
            let mut damaged = bytes.clone();
            for _ in 0..2 + random(2) {
                let i = random(damaged.len());
                damaged[i] = random(256) as u8;
            }
            cases.push(damaged);
        }
        let mut errors = 0;
        for case in &cases {
            let (prost, ours) = both_decoders(case);
            assert_eq!(ours, prost, "{case:02x?}");
            errors += usize::from(prost.is_err());
        }
        // The damage reaches the error paths as well as the decoded values.
        assert!(
            errors > cases.len() / 10 && errors < cases.len() * 9 / 10,
            "{errors}"
        );
    }

    #[test]
    fn integral_doubles_become_integers_and_nan_becomes_null() {
        assert_eq!(json_number(3.0), json!(3));
        assert_eq!(json_number(-0.0), json!(-0.0));
        assert_eq!(json_number(0.5), json!(0.5));
        assert_eq!(json_number(f64::NAN), Value::Null);
        assert_eq!(json_number(1e300), json!(1e300));
    }

    /// `depth` objects or lists inside each other around `innermost`.
    fn nested(depth: usize, list: bool, innermost: &Value) -> Value {
        (0..depth).fold(innermost.clone(), |inner, _| {
            if list {
                Value::Array(vec![inner])
            } else {
                json!({ "k": inner })
            }
        })
    }

    /// The deepest nesting that still decodes at each place the protocol carries a Struct: the
    /// decoder's depth limit, as prost's recursion limit (100 messages) set it, so that a
    /// faster decoder accepts exactly the documents the original one did.
    #[test]
    fn depth_limits_are_those_of_prosts_recursion_limit() {
        use crate::proto::v1::{Resource, Resources, RunFunctionRequest, Schema, State};
        type Place = fn(Struct) -> Vec<u8>;
        fn resource(s: Struct) -> Resource {
            Resource {
                resource: Some(s),
                ..Resource::default()
            }
        }
        let places: [(&str, Place); 6] = [
            ("struct", |s| s.encode_to_vec()),
            ("input", |s| {
                RunFunctionRequest {
                    input: Some(s),
                    ..RunFunctionRequest::default()
                }
                .encode_to_vec()
            }),
            ("observed composite", |s| {
                RunFunctionRequest {
                    observed: Some(State {
                        composite: Some(resource(s)),
                        ..State::default()
                    }),
                    ..RunFunctionRequest::default()
                }
                .encode_to_vec()
            }),
            ("desired resource", |s| {
                RunFunctionRequest {
                    desired: Some(State {
                        resources: [("r".to_string(), resource(s))].into(),
                        ..State::default()
                    }),
                    ..RunFunctionRequest::default()
                }
                .encode_to_vec()
            }),
            ("required resource", |s| {
                RunFunctionRequest {
                    required_resources: [(
                        "r".to_string(),
                        Resources {
                            items: vec![resource(s)],
                        },
                    )]
                    .into(),
                    ..RunFunctionRequest::default()
                }
                .encode_to_vec()
            }),
            ("required schema", |s| {
                RunFunctionRequest {
                    required_schemas: [(
                        "s".to_string(),
                        Schema {
                            openapi_v3: Some(s),
                        },
                    )]
                    .into(),
                    ..RunFunctionRequest::default()
                }
                .encode_to_vec()
            }),
        ];
        // Objects take three levels of prost's recursion each (Struct, entry, Value) and lists
        // two (ListValue, Value): the innermost values shift the limit through every remainder.
        let shapes = [
            (false, json!(true)),
            (false, json!([true])),
            (false, json!([[true]])),
            (true, json!(true)),
            (true, json!({"k": true})),
        ];
        let mut deepest = Vec::new();
        for (name, place) in places {
            for (list, innermost) in &shapes {
                let decodes = |depth: usize| {
                    let document =
                        Struct::from_value(json!({ "k": nested(depth, *list, innermost) }));
                    let bytes = place(document);
                    if name == "struct" {
                        Struct::decode(bytes.as_slice()).is_ok()
                    } else {
                        RunFunctionRequest::decode(bytes.as_slice()).is_ok()
                    }
                };
                let limit = (0..200).find(|&depth| !decodes(depth)).expect("a limit");
                let kind = if *list { "lists" } else { "objects" };
                deepest.push(format!("{name}: {kind} around {innermost} {}", limit - 1));
            }
        }
        // Measured with prost's own decoding of every level (before the direct decoder).
        let expected = [
            "struct: objects around true 32",
            "struct: objects around [true] 32",
            "struct: objects around [[true]] 31",
            "struct: lists around true 49",
            "struct: lists around {\"k\":true} 47",
            "input: objects around true 32",
            "input: objects around [true] 31",
            "input: objects around [[true]] 31",
            "input: lists around true 48",
            "input: lists around {\"k\":true} 47",
            "observed composite: objects around true 31",
            "observed composite: objects around [true] 31",
            "observed composite: objects around [[true]] 30",
            "observed composite: lists around true 47",
            "observed composite: lists around {\"k\":true} 46",
            "desired resource: objects around true 31",
            "desired resource: objects around [true] 30",
            "desired resource: objects around [[true]] 30",
            "desired resource: lists around true 47",
            "desired resource: lists around {\"k\":true} 45",
            "required resource: objects around true 31",
            "required resource: objects around [true] 30",
            "required resource: objects around [[true]] 30",
            "required resource: lists around true 47",
            "required resource: lists around {\"k\":true} 45",
            "required schema: objects around true 31",
            "required schema: objects around [true] 31",
            "required schema: objects around [[true]] 30",
            "required schema: lists around true 47",
            "required schema: lists around {\"k\":true} 46",
        ];
        assert_eq!(deepest, expected);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        // 200 nested list values: deeper than prost's recursion limit.
        let mut bytes: Vec<u8> = Vec::new();
        for _ in 0..200 {
            let mut outer = Vec::new();
            encode_key(VALUE_LIST, WireType::LengthDelimited, &mut outer);
            let mut list = Vec::new();
            encode_key(LIST_VALUES, WireType::LengthDelimited, &mut list);
            encode_varint(bytes.len() as u64, &mut list);
            list.extend_from_slice(&bytes);
            encode_varint(list.len() as u64, &mut outer);
            outer.extend_from_slice(&list);
            bytes = outer;
        }
        let mut doc = Vec::new();
        encode_key(STRUCT_FIELDS, WireType::LengthDelimited, &mut doc);
        let mut entry = Vec::new();
        prost::encoding::string::encode(ENTRY_KEY, &"k".to_string(), &mut entry);
        encode_key(ENTRY_VALUE, WireType::LengthDelimited, &mut entry);
        encode_varint(bytes.len() as u64, &mut entry);
        entry.extend_from_slice(&bytes);
        encode_varint(entry.len() as u64, &mut doc);
        doc.extend_from_slice(&entry);
        assert!(Struct::decode(doc.as_slice()).is_err());
    }
}
