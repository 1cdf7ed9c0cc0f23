//! A Struct read where its bytes are, with nothing walked ahead: for the resources a call reads
//! a few fields of (`proto::Resource`), whose views are [`ObjectView::Wire`].
//!
//! A member is found by scanning the members of its object, each value skipped by its length,
//! and read as decoding reads it: of a name given twice the last, of a value given several
//! kinds the last kind, a non-finite number as null. Nothing is checked before it is read, so
//! what is never read is never checked either. Bytes that are not a Struct read, as far as they
//! are read, as absent: a scan stops at the first field it cannot read, a string that is not
//! UTF-8 is null, and a name that is not is skipped. docs/design.md says why this is the
//! contract for these resources.
//!
//! A value is named by its place in the bytes, an [`At`], so that a view of it is as small as
//! a view of an indexed value (two words: the bytes and the place) and is passed in registers.
//!
//! [`ObjectView::Wire`]: crate::proto::ObjectView::Wire

use super::decode::direct::{
    utf8, Reader, BOOL, DEPTH, ITEM, KEY, LIST, NULL, NUMBER, OBJECT, STRING, STRUCT_ENTRY, VALUE,
};
use super::{
    json_number, ENTRY_KEY, ENTRY_VALUE, LIST_VALUES, STRUCT_FIELDS, VALUE_LIST, VALUE_NULL,
};
use serde_json::{Map, Value};

/// Where a value is in the bytes: the offset of its kind field (the field of a
/// `google.protobuf.Value` that gives its kind and content), or one of the marks below.
pub(crate) type At = u32;
/// A value given no kind: null.
pub(crate) const NO_KIND: At = u32::MAX;
/// The Struct itself: the bytes are its fields.
pub(crate) const ROOT: At = u32::MAX - 1;
/// The longest bytes whose places fit an [`At`] beside the marks.
pub(crate) const MAX_BYTES: usize = ROOT as usize;

/// A value read from its place.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wired<'a> {
    /// `null`, a number JSON cannot hold, or a string that is not UTF-8.
    Null,
    Bool(bool),
    /// A finite number.
    Number(f64),
    String(&'a str),
    /// A Struct's fields.
    Object(&'a [u8]),
    /// A ListValue's fields.
    List(&'a [u8]),
}

/// The value at `at` in `base`.
pub(crate) fn read(base: &[u8], at: At) -> Wired<'_> {
    match at {
        ROOT => return Wired::Object(base),
        NO_KIND => return Wired::Null,
        _ => {}
    }
    let mut reader = Reader(base.get(at as usize..).unwrap_or_default());
    let read = match reader.key() {
        Some(NULL) => Some(Wired::Null),
        Some(NUMBER) => reader.double().map(|number| {
            if number.is_finite() {
                Wired::Number(number)
            } else {
                Wired::Null
            }
        }),
        Some(STRING) => reader
            .delimited()
            .map(|text| utf8(text).map_or(Wired::Null, Wired::String)),
        Some(BOOL) => reader.varint().map(|flag| Wired::Bool(flag != 0)),
        Some(OBJECT) => reader.delimited().map(Wired::Object),
        Some(LIST) => reader.delimited().map(Wired::List),
        _ => None,
    };
    // Only places of fields read whole are made: the `None` is never taken.
    read.unwrap_or(Wired::Null)
}

/// The fields of the object at `at` (none where the value there is not an object).
pub(crate) fn object_fields(base: &[u8], at: At) -> &[u8] {
    match read(base, at) {
        Wired::Object(fields) => fields,
        _ => &[],
    }
}

/// The fields of the list at `at` (none where the value there is not a list).
pub(crate) fn list_fields(base: &[u8], at: At) -> &[u8] {
    match read(base, at) {
        Wired::List(list) => list,
        _ => &[],
    }
}

/// The member `name` of the Struct whose fields are `fields`, a part of `base`.
pub(crate) fn get(base: &[u8], fields: &[u8], name: &str) -> Option<At> {
    let [found] = get_all(base, fields, [name]);
    found
}

/// The members `names` of the Struct whose fields are `fields`, found in one scan.
pub(crate) fn get_all<const N: usize>(
    base: &[u8],
    fields: &[u8],
    names: [&str; N],
) -> [Option<At>; N] {
    let mut found = [None; N];
    for entry in Entries(fields) {
        let Some(name) = entry_name(entry) else {
            continue;
        };
        if let Some(at) = names.iter().position(|wanted| wanted.as_bytes() == name) {
            found[at] = Some(entry);
        }
    }
    found.map(|entry| entry.map(|entry| place(base, entry_value(entry))))
}

/// The members of the Struct whose fields are `fields`, sorted by name, each name once (the
/// last given).
pub(crate) fn members<'a>(base: &[u8], fields: &'a [u8]) -> Vec<(&'a str, At)> {
    // Inserted one by one (a later entry of a name replaces the earlier), not sorted: a sort
    // is one more copy of the standard library's in the WebAssembly builds.
    let mut named = std::collections::BTreeMap::new();
    for entry in Entries(fields) {
        if let Some(name) = entry_name(entry).and_then(utf8) {
            named.insert(name, entry);
        }
    }
    named
        .into_iter()
        .map(|(name, entry)| (name, place(base, entry_value(entry))))
        .collect()
}

/// The next item of the ListValue whose unread fields are `list` (a part of `base`), which it
/// moves past.
pub(crate) fn next_item(base: &[u8], list: &mut &[u8]) -> Option<At> {
    next_kind(list).map(|kind| place(base, kind))
}

/// The number of items of the ListValue whose fields are `list`.
pub(crate) fn item_count(mut list: &[u8]) -> usize {
    let mut count = 0;
    while next_kind(&mut list).is_some() {
        count += 1;
    }
    count
}

/// The kind field of the next item of `list`, which it moves past.
fn next_kind<'a>(list: &mut &'a [u8]) -> Option<Option<&'a [u8]>> {
    let mut reader = Reader(list);
    let item = loop {
        if reader.0.is_empty() {
            break None;
        }
        match reader.key() {
            Some(ITEM) => break reader.delimited().map(value),
            Some(other)
                if reader
                    .other(other, LIST_VALUES..=LIST_VALUES, DEPTH)
                    .is_some() => {}
            _ => break None,
        }
    };
    // A list read to a fault ends there.
    *list = if item.is_some() { reader.0 } else { &[] };
    item
}

/// The value at `at` as an owned `serde_json` value, `depth` levels of objects and lists at
/// most (as many as decoding takes); what is deeper is null.
pub(crate) fn to_value(base: &[u8], at: At, depth: u32) -> Value {
    match read(base, at) {
        Wired::Null => Value::Null,
        Wired::Bool(flag) => Value::Bool(flag),
        Wired::Number(number) => json_number(number),
        Wired::String(text) => Value::String(text.to_owned()),
        Wired::Object(fields) if depth > 0 => Value::Object(to_map(base, fields, depth - 1)),
        Wired::List(mut list) if depth > 0 => {
            let mut items = Vec::new();
            while let Some(item) = next_item(base, &mut list) {
                items.push(to_value(base, item, depth - 1));
            }
            Value::Array(items)
        }
        Wired::Object(_) | Wired::List(_) => Value::Null,
    }
}

/// The Struct whose fields are `fields` as an owned `serde_json` object; see [`to_value`].
pub(crate) fn to_map(base: &[u8], fields: &[u8], depth: u32) -> Map<String, Value> {
    members(base, fields)
        .into_iter()
        .map(|(name, at)| (name.to_owned(), to_value(base, at, depth)))
        .collect()
}

/// The outermost depth of [`to_value`]: that of the direct decoder.
pub(crate) const TO_VALUE_DEPTH: u32 = DEPTH;

/// The place of a kind field, a part of `base`.
fn place(base: &[u8], kind: Option<&[u8]>) -> At {
    match kind {
        // Within `base`, which is at most `MAX_BYTES` long.
        Some(kind) => (kind.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize) as At,
        None => NO_KIND,
    }
}

/// The map entries of a Struct's fields, each an entry message's bytes; other fields skipped.
struct Entries<'a>(&'a [u8]);

impl<'a> Iterator for Entries<'a> {
    type Item = &'a [u8];

    /// Nearly every entry is under 16 KiB, its key one byte and its length one or two: read
    /// at once.
    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let (len, rest) = match *self.0 {
            [] => return None,
            [key, low, ref rest @ ..] if u32::from(key) == STRUCT_ENTRY && low < 0x80 => {
                (usize::from(low), rest)
            }
            [key, low, high, ref rest @ ..] if u32::from(key) == STRUCT_ENTRY && high < 0x80 => {
                (usize::from(low & 0x7f) | usize::from(high) << 7, rest)
            }
            _ => return self.next_slowly(),
        };
        if len > rest.len() {
            return self.next_slowly();
        }
        let (entry, rest) = rest.split_at(len);
        self.0 = rest;
        Some(entry)
    }
}

impl<'a> Entries<'a> {
    fn next_slowly(&mut self) -> Option<&'a [u8]> {
        let mut reader = Reader(self.0);
        let mut entry = None;
        while !reader.0.is_empty() {
            match reader.key() {
                Some(STRUCT_ENTRY) => {
                    entry = reader.delimited();
                    break;
                }
                Some(other)
                    if reader
                        .other(other, STRUCT_FIELDS..=STRUCT_FIELDS, DEPTH)
                        .is_some() => {}
                _ => break,
            }
        }
        // A Struct read to a fault ends there.
        self.0 = if entry.is_some() { reader.0 } else { &[] };
        entry
    }
}

/// An entry as Go and prost write it, its key and then its value, each once, the key under
/// 128 bytes: the key and the value field's bytes, read at once. `None` for any other form.
#[inline(always)]
fn written_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let [key, len, rest @ ..] = entry else {
        return None;
    };
    let len = usize::from(*len);
    if u32::from(*key) != KEY || len >= 0x80 || len > rest.len() {
        return None;
    }
    let (name, value) = rest.split_at(len);
    let mut reader = Reader(value);
    match reader.key() {
        Some(VALUE) => {
            let value = reader.delimited()?;
            reader.0.is_empty().then_some((name, value))
        }
        _ => None,
    }
}

/// The key of a map entry, as bytes: the last given, empty where none is; `None` where the
/// entry cannot be read.
#[inline(always)]
fn entry_name(entry: &[u8]) -> Option<&[u8]> {
    match written_entry(entry) {
        Some((name, _)) => Some(name),
        None => entry_name_slowly(entry),
    }
}

fn entry_name_slowly(entry: &[u8]) -> Option<&[u8]> {
    let mut reader = Reader(entry);
    let mut name: &[u8] = &[];
    while !reader.0.is_empty() {
        match reader.key()? {
            KEY => name = reader.delimited()?,
            VALUE => {
                reader.delimited()?;
            }
            other => reader.other(other, ENTRY_KEY..=ENTRY_VALUE, DEPTH)?,
        }
    }
    Some(name)
}

/// The kind field of a map entry's value: each value field merges into the one before, so the
/// last kind in any of them is the value's. `None` where none is given.
fn entry_value(entry: &[u8]) -> Option<&[u8]> {
    if let Some((_, value)) = written_entry(entry) {
        return self::value(value);
    }
    let mut reader = Reader(entry);
    let mut kind = None;
    while !reader.0.is_empty() {
        let read = match reader.key() {
            Some(VALUE) => reader
                .delimited()
                .map(|bytes| merge_value(bytes, &mut kind)),
            Some(KEY) => reader.delimited().map(drop),
            Some(other) => reader.other(other, ENTRY_KEY..=ENTRY_VALUE, DEPTH),
            None => None,
        };
        if read.is_none() {
            break;
        }
    }
    kind
}

/// The kind field of a Value message.
fn value(bytes: &[u8]) -> Option<&[u8]> {
    let mut kind = None;
    merge_value(bytes, &mut kind);
    kind
}

/// A Value message's fields merged into `kind`: each kind field read whole replaces what came
/// before.
fn merge_value<'a>(bytes: &'a [u8], kind: &mut Option<&'a [u8]>) {
    let mut reader = Reader(bytes);
    while !reader.0.is_empty() {
        let field = reader.0;
        let read = match reader.key() {
            Some(NULL | BOOL) => reader.varint().map(drop),
            Some(NUMBER) => reader.double().map(drop),
            Some(STRING | OBJECT | LIST) => reader.delimited().map(drop),
            Some(other) => match reader.other(other, VALUE_NULL..=VALUE_LIST, DEPTH) {
                Some(()) => continue,
                None => None,
            },
            None => None,
        };
        match read {
            Some(()) => *kind = Some(field),
            None => return,
        }
    }
}
