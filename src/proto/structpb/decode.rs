//! Decoding.
//!
//! Two decoders. The direct one reads an entry of a Struct straight from the bytes, without
//! prost's per-message machinery (a `merge_loop` and a fresh `String` merged into for every key
//! and string); it handles well-formed input. Whatever it does not accept (malformed bytes,
//! groups, nesting near the recursion limit) is decoded again by prost through the message types
//! further down, as before, so values, errors and their messages stay exactly prost's.

use super::*;

/// The direct decoder. It answers `None` for anything prost might refuse, and otherwise what
/// prost would decode.
pub(in crate::proto) mod direct {
    use super::*;
    use std::ops::RangeInclusive;

    /// The recursion budget prost leaves in the context it hands `Struct::merge_field`, at the
    /// deepest place the protocol carries a Struct: a resource in a map of a State (request,
    /// state, map entry, resource and Struct each take one of prost's 100 levels). The
    /// context's count is private, so the direct decoder assumes this smallest one. Where more
    /// is left (an `input`, a composite, a Struct decoded alone), it gives up a little early and
    /// prost decodes the rest of that entry with the real budget: it never accepts a nesting
    /// prost would refuse (`depth_limits_are_those_of_prosts_recursion_limit`).
    pub(in crate::proto::structpb) const DEPTH: u32 = 96;

    // The keys (field number and wire type) the decoder expects, as the values of their varints:
    // each loop matches a key against these at once, and only another key is taken apart and
    // checked (`Reader::other`).
    pub(in crate::proto::structpb) const STRUCT_ENTRY: u32 = field_keys::ENTRY as u32;
    pub(in crate::proto::structpb) const KEY: u32 = field_keys::NAME as u32;
    pub(in crate::proto::structpb) const VALUE: u32 = field_keys::VALUE as u32;
    pub(in crate::proto::structpb) const NULL: u32 = field_keys::NULL as u32;
    pub(in crate::proto::structpb) const NUMBER: u32 = field_keys::NUMBER as u32;
    pub(in crate::proto::structpb) const STRING: u32 = field_keys::STRING as u32;
    pub(in crate::proto::structpb) const BOOL: u32 = field_keys::BOOL as u32;
    pub(in crate::proto::structpb) const OBJECT: u32 = field_keys::OBJECT as u32;
    pub(in crate::proto::structpb) const LIST: u32 = field_keys::LIST as u32;
    pub(in crate::proto::structpb) const ITEM: u32 = field_keys::ITEM as u32;

    /// One entry of a Struct (its length, then its fields) from the start of `bytes`: the key,
    /// the value and how many bytes it took.
    pub(in crate::proto::structpb) fn struct_entry(bytes: &[u8]) -> Option<(String, Value, usize)> {
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

    /// An [`Index`] of a Struct's fields (a Struct message without its tag and length), made
    /// in one walk that reads them as [`object`] does, taking what it takes and refusing what it
    /// refuses: so the bytes a Struct is kept as undecoded are exactly those it would have
    /// decoded from. The index keeps `fields`, and every text in it was checked as UTF-8 here,
    /// in those very bytes, so reading one needs no check again.
    pub(in crate::proto::structpb) fn index(fields: &Bytes, depth: u32) -> Option<Index> {
        if u32::try_from(fields.len()).is_err() {
            return None;
        }
        // About one value and one member for every 16 bytes of a Kubernetes object.
        let mut indexer = Indexer {
            fields,
            nodes: Vec::with_capacity(fields.len() / 16),
            members: Vec::with_capacity(fields.len() / 16),
            items: Vec::new(),
            open_members: Vec::new(),
            open_items: Vec::new(),
        };
        let root = indexer.object(fields, depth)?;
        // SAFETY: every string and member name the walk put in the index went through `utf8`
        // first (`Indexer::entry`, `Indexer::value`), over `fields`, which a `Bytes` never changes.
        Some(unsafe {
            Index::new(
                fields.clone(),
                indexer.nodes,
                indexer.members,
                indexer.items,
                root,
            )
        })
    }

    /// The walk of [`index`]. The members and items of the objects and lists being read wait
    /// in `open_*` until their container is read whole; then they move, together, to the
    /// index (an object's sorted by name first), so that each container's are in one range.
    struct Indexer<'b> {
        fields: &'b [u8],
        nodes: Vec<Node>,
        members: Vec<Member>,
        items: Vec<u32>,
        open_members: Vec<Member>,
        open_items: Vec<u32>,
    }

    impl<'b> Indexer<'b> {
        /// Where `part`, a slice of `fields`, is in it.
        fn span(&self, part: &[u8]) -> Span {
            Span {
                start: (part.as_ptr() as usize - self.fields.as_ptr() as usize) as u32,
                len: part.len() as u32,
            }
        }

        fn node(&mut self, node: Node) -> u32 {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }

        /// A Struct's fields, as [`object`] reads them.
        fn object(&mut self, bytes: &'b [u8], depth: u32) -> Option<Span> {
            let mut reader = Reader(bytes);
            let open = self.open_members.len();
            while !reader.0.is_empty() {
                match reader.key()? {
                    STRUCT_ENTRY => {
                        let member = self.entry(reader.delimited()?, depth)?;
                        self.open_members.push(member);
                    }
                    other => reader.other(other, STRUCT_FIELDS..=STRUCT_FIELDS, depth)?,
                }
            }
            Some(self.close_object(open))
        }

        /// Moves the members of the object read since `open` to the index, sorted by name and,
        /// of a name given twice, the last (as a protobuf map keeps it).
        fn close_object(&mut self, open: usize) -> Span {
            let fields = self.fields;
            let name = |member: &Member| &fields[member.name.range()];
            let members = &mut self.open_members[open..];
            // Go writes a map's entries in random order; every other encoder sorts them.
            if !members.is_sorted_by(|a, b| name(a) < name(b)) {
                // Stable: of equal names, the last given stays last.
                members.sort_by(|a, b| name(a).cmp(name(b)));
                let mut kept = open;
                for at in open..self.open_members.len() {
                    let next = self.open_members.get(at + 1);
                    if next.is_some_and(|next| name(next) == name(&self.open_members[at])) {
                        continue;
                    }
                    self.open_members[kept] = self.open_members[at];
                    kept += 1;
                }
                self.open_members.truncate(kept);
            }
            let start = self.members.len() as u32;
            self.members.extend(self.open_members.drain(open..));
            Span {
                start,
                len: self.members.len() as u32 - start,
            }
        }

        /// One map entry, as [`entry`] reads it.
        #[inline(always)]
        fn entry(&mut self, bytes: &'b [u8], depth: u32) -> Option<Member> {
            let depth = depth.checked_sub(1)?;
            let mut reader = Reader(bytes);
            let mut name = Span::default();
            let mut value = Node::Null;
            while !reader.0.is_empty() {
                match reader.key()? {
                    KEY => {
                        let key = reader.delimited()?;
                        utf8(key)?;
                        name = self.span(key);
                    }
                    VALUE => {
                        let inner = depth.checked_sub(1)?;
                        self.value(reader.delimited()?, inner, &mut value)?;
                    }
                    other => reader.other(other, ENTRY_KEY..=ENTRY_VALUE, depth)?,
                }
            }
            let value = self.node(value);
            Some(Member { name, value })
        }

        /// A Value's fields, as [`merge_value`] reads them: each kind replaces what came
        /// before (what an object or list replaced stays in the index, unreferenced).
        #[inline(always)]
        fn value(&mut self, bytes: &'b [u8], depth: u32, value: &mut Node) -> Option<()> {
            let mut reader = Reader(bytes);
            while !reader.0.is_empty() {
                *value = match reader.key()? {
                    NULL => {
                        reader.varint()?;
                        Node::Null
                    }
                    NUMBER => {
                        let number = reader.double()?;
                        if number.is_finite() {
                            Node::Number(number)
                        } else {
                            Node::Null
                        }
                    }
                    STRING => {
                        let text = reader.delimited()?;
                        utf8(text)?;
                        Node::String(self.span(text))
                    }
                    BOOL => Node::Bool(reader.varint()? != 0),
                    OBJECT => {
                        let inner = depth.checked_sub(1)?;
                        Node::Object(self.object(reader.delimited()?, inner)?)
                    }
                    LIST => {
                        let inner = depth.checked_sub(1)?;
                        Node::List(self.list(reader.delimited()?, inner)?)
                    }
                    other => {
                        reader.other(other, VALUE_NULL..=VALUE_LIST, depth)?;
                        continue;
                    }
                };
            }
            Some(())
        }

        /// A ListValue's fields, as [`list`] reads them.
        fn list(&mut self, bytes: &'b [u8], depth: u32) -> Option<Span> {
            let mut reader = Reader(bytes);
            let open = self.open_items.len();
            while !reader.0.is_empty() {
                match reader.key()? {
                    ITEM => {
                        let inner = depth.checked_sub(1)?;
                        let mut item = Node::Null;
                        self.value(reader.delimited()?, inner, &mut item)?;
                        let item = self.node(item);
                        self.open_items.push(item);
                    }
                    other => reader.other(other, LIST_VALUES..=LIST_VALUES, depth)?,
                }
            }
            let start = self.items.len() as u32;
            self.items.extend(self.open_items.drain(open..));
            Some(Span {
                start,
                len: self.items.len() as u32 - start,
            })
        }
    }

    /// A key or string as prost checks it: valid UTF-8.
    ///
    /// Nearly all are ASCII and short, where std's `from_utf8` (not inlined, then a loop set up
    /// for long input) cost about a hundred instructions each, 5% of a call: [`ascii`] answers
    /// for most in a few, and the rest go through `from_utf8`.
    #[inline(always)]
    pub(in crate::proto) fn utf8(bytes: &[u8]) -> Option<&str> {
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
            (65.., _) => long_ascii(bytes),
            _ => bytes.is_ascii(),
        }
    }

    /// [`ascii`] of more than 64 bytes (descriptions, mostly): 32 bytes a step, four words
    /// or-ed together.
    fn long_ascii(bytes: &[u8]) -> bool {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let word = |chunk: &[u8]| {
            chunk
                .first_chunk::<8>()
                .map_or(0, |w| u64::from_le_bytes(*w))
        };
        let mut chunks = bytes.chunks_exact(32);
        let mut or = 0;
        for chunk in &mut chunks {
            or |= word(chunk) | word(&chunk[8..]) | word(&chunk[16..]) | word(&chunk[24..]);
        }
        // The last 32 bytes, overlapping those done: there are more than 64.
        let tail = &bytes[bytes.len() - 32..];
        or |= word(tail) | word(&tail[8..]) | word(&tail[16..]) | word(&tail[24..]);
        or & HIGH == 0
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

    /// The bytes not read yet. `proto::request_key` reads a request with it too.
    pub(in crate::proto) struct Reader<'a>(pub(in crate::proto) &'a [u8]);

    impl<'a> Reader<'a> {
        /// A varint. Inlined, as every key and length goes through it and nearly all are one
        /// byte; the lengths of 128 bytes to 16 KiB (descriptions, nested objects: a fifth of a
        /// live schema's entries) take two, read here too rather than in [`long_varint`].
        #[inline(always)]
        pub(in crate::proto) fn varint(&mut self) -> Option<u64> {
            match *self.0 {
                [byte, ..] if byte < 0x80 => {
                    self.0 = &self.0[1..];
                    Some(u64::from(byte))
                }
                [low, high, ..] if high < 0x80 => {
                    self.0 = &self.0[2..];
                    Some(u64::from(low & 0x7f) | u64::from(high) << 7)
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
        pub(in crate::proto::structpb) fn key(&mut self) -> Option<u32> {
            u32::try_from(self.varint()?).ok()
        }

        /// A key other than those expected: skipped as prost's `skip_field` would, refused
        /// where prost's `decode_key` errs (a wire type of 6 or 7, field number 0) or where
        /// prost's merge would (an expected field number, `known`, with another wire type).
        pub(in crate::proto::structpb) fn other(
            &mut self,
            key: u32,
            known: RangeInclusive<u32>,
            depth: u32,
        ) -> Option<()> {
            let wire_type = WireType::try_from(u64::from(key & 0x07)).ok()?;
            let tag = key >> 3;
            if tag == 0 || known.contains(&tag) {
                return None;
            }
            self.skip(wire_type, depth)
        }

        /// One byte: a key of one byte is compared as it is (`hash`).
        #[inline(always)]
        pub(in crate::proto) fn byte(&mut self) -> Option<u8> {
            let (&byte, rest) = self.0.split_first()?;
            self.0 = rest;
            Some(byte)
        }

        /// A length-delimited field's bytes, its length written in the shortest varint.
        #[inline(always)]
        pub(in crate::proto::structpb) fn shortest_delimited(&mut self) -> Option<&'a [u8]> {
            let before = self.0.len();
            let field = self.delimited()?;
            let shortest =
                before - self.0.len() - field.len() == encoded_len_varint(field.len() as u64);
            shortest.then_some(field)
        }

        /// A length-delimited field's bytes.
        #[inline(always)]
        pub(in crate::proto) fn delimited(&mut self) -> Option<&'a [u8]> {
            let len = usize::try_from(self.varint()?).ok()?;
            if len > self.0.len() {
                return None;
            }
            let (field, rest) = self.0.split_at(len);
            self.0 = rest;
            Some(field)
        }

        pub(in crate::proto::structpb) fn double(&mut self) -> Option<f64> {
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
pub(super) fn merge_object_field(
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
pub(super) struct JsonObject(pub(super) Map<String, Value>);

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
pub(super) struct Entry {
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
pub(super) struct JsonValue(pub(super) Value);

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
pub(super) struct JsonList(pub(super) Vec<Value>);

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
