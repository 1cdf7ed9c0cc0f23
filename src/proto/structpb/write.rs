//! Encoding: Structs given as JSON, and the writer of the wire format under the objects
//! written field by field (`members.rs`).

use super::field_keys::{BOOL, ENTRY, ITEM, NAME, NULL, NUMBER, STRING, VALUE};
use super::*;

thread_local! {
    /// Where Structs given as JSON are encoded before their bytes are copied out at their exact
    /// size: growing a fresh buffer for each Struct, reallocation after reallocation, cost
    /// more than writing.
    pub(super) static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// The capacity the next [`Struct::write`] starts with: a little more than the last took.
    pub(super) static WRITTEN: Cell<usize> = const { Cell::new(256) };
    /// Which nested messages of the last [`Struct::write`] had two-byte lengths (see
    /// [`Writer::wide`]).
    pub(super) static WIDE: Cell<u64> = const { Cell::new(0) };
}

/// A scratch buffer larger than this is not kept for the next Struct: one unusually large
/// object must not hold its memory for the life of the thread.
pub(super) const SCRATCH_KEPT: usize = 256 * 1024;

/// The fields of a Struct, encoded. Never inlined: profiles then show what it costs.
#[inline(never)]
pub(super) fn encode_object_fields(map: &Map<String, Value>) -> Encoded {
    let mut writer = Writer::scratch();
    writer.object(map);
    writer.take_encoded()
}

/// Encodes with a fresh [`Writer`]: for the decoding helpers below, which are messages only
/// to be decoded by prost and are never encoded on the wire path.
pub(super) fn encoded(write: impl FnOnce(&mut Writer)) -> Box<[u8]> {
    let mut writer = Writer::new();
    write(&mut writer);
    writer.bytes()
}

/// The key byte of a field: every field here has a number below 16, so one byte.
pub(in crate::proto) const fn key(tag: u32, wire_type: WireType) -> u8 {
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
pub(super) struct Writer {
    pub(super) out: Vec<u8>,
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
    pub(super) wide: u64,
    /// What `wide` will be for the next Struct: the members that took two-byte lengths.
    pub(super) wide_now: u64,
    /// How many members `entry_message` started.
    messages: u32,
}

/// The size from which a message's length waits in `pending`: its varint takes three bytes.
pub(super) const PENDING: usize = 1 << 14;

impl Writer {
    pub(super) fn new() -> Self {
        Writer::with_buffer(Vec::new())
    }

    pub(super) fn with_buffer(out: Vec<u8>) -> Self {
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
    pub(super) fn bytes(self) -> Box<[u8]> {
        self.into_encoded().contiguous().into()
    }

    /// The bytes written and the lengths not yet in place, in the buffer they were written in
    /// unless it is more than a quarter too large: a response holds every resource's bytes
    /// until it is written (1,000 of them at 1,000 repositories).
    pub(super) fn into_encoded(mut self) -> Encoded {
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
    pub(super) fn object(&mut self, map: &Map<String, Value>) {
        for (name, value) in map {
            self.member(name, value);
        }
    }

    /// A map entry holding `value`.
    pub(super) fn member(&mut self, name: &str, value: &Value) {
        match value {
            Value::String(text) => return self.string_entry(name, text),
            Value::Bool(b) => return self.bool_entry(name, *b),
            _ => {}
        }
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
    pub(super) fn entry(&mut self, name: &str, value: &Value) {
        self.out.push(NAME);
        self.varint(name.len());
        self.out.extend_from_slice(name.as_bytes());
        let inner = self.open(ENTRY_VALUE);
        self.value(value);
        self.close(inner);
    }

    /// The fields of a ListValue. Its items tend to be alike (the composite's status lists a
    /// Struct of a few hundred bytes per repository): an object or list item whose item
    /// before took two-byte lengths gets two-byte placeholders (see [`Writer::close_wide`]).
    pub(super) fn list(&mut self, items: &[Value]) {
        let mut wide = false;
        for item in items {
            wide = match item {
                Value::Object(map) => self.item_message(wide, VALUE_STRUCT, |w| w.object(map)),
                Value::Array(items) => self.item_message(wide, VALUE_LIST, |w| w.list(items)),
                Value::String(text) => {
                    self.string_item(text);
                    false
                }
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
    pub(super) fn item_message(
        &mut self,
        wide: bool,
        tag: u32,
        fields: impl FnOnce(&mut Writer),
    ) -> bool {
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
    pub(super) fn value(&mut self, value: &Value) {
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
        self.out.extend_from_slice(&[BOOL, u8::from(b)]);
    }

    /// The fields of a Value holding neither an object nor a list.
    #[inline]
    fn scalar(&mut self, value: &Value) {
        match value {
            Value::Null => self.out.extend_from_slice(&[NULL, 0]),
            Value::Bool(b) => self.boolean(*b),
            Value::Number(n) => {
                let number = n.as_f64().unwrap_or(0.0).to_le_bytes();
                let mut field = [NUMBER; 9];
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
        if text.len() < 0x80 {
            self.out.extend_from_slice(&[STRING, text.len() as u8]);
        } else {
            self.out.push(STRING);
            self.varint(text.len());
        }
        self.out.extend_from_slice(text.as_bytes());
    }

    /// A map entry holding a string Value. Its lengths are known before its first byte, so
    /// an entry under 128 bytes (nearly every member a composition writes: names, keys,
    /// kinds) goes out in one reservation with no placeholder to fill in.
    #[inline]
    pub(super) fn string_entry(&mut self, name: &str, text: &str) {
        // The Value's field, then the entry's: the name's field and the Value's.
        let value = 2 + text.len();
        let entry = 2 + name.len() + 2 + value;
        if entry < 0x80 {
            self.out.reserve(2 + entry);
            self.out
                .extend_from_slice(&[ENTRY, entry as u8, NAME, name.len() as u8]);
            self.out.extend_from_slice(name.as_bytes());
            self.out
                .extend_from_slice(&[VALUE, value as u8, STRING, text.len() as u8]);
            self.out.extend_from_slice(text.as_bytes());
        } else {
            self.entry_with(name, |w| w.string(text));
        }
    }

    /// A list item holding a string Value, its lengths known as a string entry's are.
    #[inline]
    pub(super) fn string_item(&mut self, text: &str) {
        let item = 2 + text.len();
        if item < 0x80 {
            self.out.reserve(2 + item);
            self.out
                .extend_from_slice(&[ITEM, item as u8, STRING, text.len() as u8]);
            self.out.extend_from_slice(text.as_bytes());
        } else {
            let inner = self.open(LIST_VALUES);
            self.string(text);
            self.close(inner);
        }
    }

    /// A map entry holding a bool Value, whose lengths are known as a string entry's are.
    #[inline]
    pub(super) fn bool_entry(&mut self, name: &str, b: bool) {
        let entry = 2 + name.len() + 4;
        if entry < 0x80 {
            self.out.reserve(2 + entry);
            self.out
                .extend_from_slice(&[ENTRY, entry as u8, NAME, name.len() as u8]);
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(&[VALUE, 2, BOOL, u8::from(b)]);
        } else {
            self.entry_with(name, |w| w.boolean(b));
        }
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
    pub(super) fn entry_message(&mut self, name: &str, tag: u32, fields: impl FnOnce(&mut Writer)) {
        let bit = 1u64.checked_shl(self.messages).unwrap_or(0);
        self.messages += 1;
        let wide = self.wide & bit != 0 && name.len() < 0x80;
        let starts = if wide {
            let entry = self.out.len() + 3;
            self.out
                .extend_from_slice(&[ENTRY, 0, 0, NAME, name.len() as u8]);
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
    pub(super) fn open(&mut self, tag: u32) -> usize {
        self.out
            .extend_from_slice(&[key(tag, WireType::LengthDelimited), 0]);
        self.out.len()
    }

    /// Ends the message started at `start`, writing its length before it.
    #[inline]
    pub(super) fn close(&mut self, start: usize) {
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
