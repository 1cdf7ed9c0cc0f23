//! Content hashes: the same object gives the same 128-bit hash whether it is read from its
//! wire bytes or from its JSON tree, and whatever the order of its map entries (Go's protobuf
//! writes a map's entries in random order, so a live schema comes as other bytes on each call).
//!
//! The hash is defined over the canonical encoding of the content, the bytes Go and prost write:
//!
//! - a map entry whose value is a null, number, string or bool: XXH3-128 of the entry's bytes
//!   (key field, value field, shortest varints);
//! - an entry whose value is an object or a list: XXH3-128 of its key field's bytes, the
//!   value's hash and what the value is, or, for a key field too long for that to be one short
//!   input (240 bytes), the key field's hash mixed with the value's;
//! - an object: its number of entries and the sum of their hashes, so their order does not
//!   count; a list: its items' hashes folded in order, and their number.
//!
//! Every XXH3 here is keyed (`proto::hash_key`). An entry holding an object or a list is one
//! hash of its key field and its value's hash, where it was two (the key field's hash, then a
//! mix): a short input costs XXH3 less than two, which pays for part of the key's cost.
//!
//! [`wire`] reads a Struct's bytes once, building nothing, and answers only for bytes in that
//! canonical form which prost decodes to the same object: each field where the canonical
//! encoding puts it, shortest varints wherever bytes are hashed, UTF-8 text, finite numbers,
//! no key twice in an object (a repeated key keeps its last value, which a sum cannot tell),
//! and no deeper than prost's recursion limit allows. For anything else it answers `None`, and
//! the caller decodes the bytes and hashes the tree ([`tree`]): so the hash of an object is one
//! value whichever way it came, which `tests.rs` checks on random objects in random orders.
//!
//! Strength: 128 bits of XXH3 at every level, keyed with the process's seed
//! (`proto::hash_key`). An object's hash sums its entries' hashes, and a sum is linear: it
//! collides only where its entries' hashes do for entries that are random, not for entries
//! that are chosen. With a key anyone knows, two objects with one hash are found in seconds by
//! hashing candidate entries offline (Wagner's k-tree algorithm; `collision_tests.rs`
//! holds two label maps found so), however strong each entry's hash is. Under the seed the
//! server draws at start no hash can be computed outside the process, so that search cannot be
//! made. The other builds keep the fixed key, which the search works against; there the hash
//! finds no remembered answer, only a schema compiled for the same caller's calls.
//!
//! The memo: Go writes the entries of a map of up to eight in one of few orders (such a map is
//! one group of slots, which Go's iteration reads from a random slot and around), so the small
//! objects of a schema (a property's `type` and `description`) come as the same bytes call
//! after call, while the large objects around them do not. A memo remembers the small objects
//! walked, and the small entries holding an object or a list, by a print of their bytes
//! (XXH3-128, with the levels left and what the bytes are mixed in, so that the same bytes
//! deeper down are walked again), with their hash; a walk that meets the same bytes again takes
//! the hash without reading them. Prints are keyed as the hashes are: a print made under another
//! key finds no slot. A memo holds [`MEMO_SLOTS`] of them (256 KiB), each in one of a pair of
//! slots its print chooses; a new one takes the first and moves the one there to the second,
//! pushing out the older of the pair. A walk takes one of [`MEMOS`] memos that no other walk
//! holds, or walks without. The hash is the same with or without a memo; a wrong one needs two
//! 127-bit prints to collide.

use super::decode::direct::{utf8, Reader};
use super::field_keys::{BOOL, ENTRY, ITEM, LIST, NAME, NULL, NUMBER, OBJECT, STRING, VALUE};
use super::*;
use crate::proto::hash_key::HashKey;
use std::ops::RangeInclusive;
use std::sync::Mutex;

/// What a mix of two hashes stands for, so that an object entry, a list entry and a list item
/// of the same hashes hash apart; and the first byte of an object's and a list's summary, which
/// no value's encoding starts with.
const OBJECT_ENTRY: u8 = 1;
const LIST_ENTRY: u8 = 2;
const LIST_ITEM: u8 = 3;
const OBJECT_SUMMARY: u8 = 0xf0;
const LIST_SUMMARY: u8 = 0xf1;

/// Objects of up to this many entries are searched for a repeated key one by one; larger ones
/// (`properties` of a wide schema) are sorted, so a hostile object of many entries costs
/// `n log n`, not `n²`.
const LINEAR_KEYS: usize = 16;

/// A scratch list of key hashes larger than this is not kept for the next walk.
const KEYS_KEPT: usize = 1 << 16;

/// The objects and entries the memo takes, by the length of their bytes: below it, the walk
/// costs about what a lookup does; above it, they hold more maps, whose orders multiply (in the
/// benchmark's schemas, the objects up to 768 bytes come in at most 32 orders, 2,548 in all).
pub(super) const MEMO_BYTES: RangeInclusive<usize> = 48..=768;

/// The objects and entries a memo holds (a power of two, each 32 bytes).
pub(super) const MEMO_SLOTS: usize = 1 << 13;

/// The memos: more than the calls the server runs at once on most machines (one a core). They
/// are statics, zero pages until a walk writes to them, rather than on the allocator's heap:
/// there, mimalloc kept about 3 MB more anonymous memory with two threads' memos (BENCHMARKS.md).
#[cfg(not(target_family = "wasm"))]
const MEMOS: usize = 16;
/// One instance runs one call at a time.
#[cfg(target_family = "wasm")]
const MEMOS: usize = 1;

/// A memo slot: the print of an object's or entry's bytes (never 0, the print of an empty slot)
/// and its hash.
type Remembered = (u128, u128);

pub(super) type Memo = [Remembered; MEMO_SLOTS];

static MEMO_POOL: [Mutex<Memo>; MEMOS] = [const { Mutex::new([(0, 0); MEMO_SLOTS]) }; MEMOS];

thread_local! {
    /// The key prints of the objects being walked (the repeated-key check), kept between walks
    /// so that a walk allocates nothing once the thread has walked a schema.
    static KEYS: Cell<Vec<u128>> = const { Cell::new(Vec::new()) };
}

#[cfg(test)]
thread_local! {
    /// How many objects and entries the thread's walks took from a memo, for the tests.
    pub(super) static MEMO_HITS: Cell<usize> = const { Cell::new(0) };
}

/// The content hash of a Struct's fields given as their wire bytes (a Struct message without
/// its tag and length), read with `depth` levels of prost's recursion limit left, as
/// `direct::struct_entry` counts them; `None` where the bytes are not in canonical form.
pub(super) fn wire(fields: &[u8], depth: u32) -> Option<u128> {
    wire_under(HashKey::of_process(), fields, depth)
}

/// [`wire`] under `key`.
pub(super) fn wire_under(key: HashKey, fields: &[u8], depth: u32) -> Option<u128> {
    let mut memo = MEMO_POOL.iter().find_map(|memo| memo.try_lock().ok());
    wire_with(key, fields, depth, memo.as_deref_mut())
}

/// [`wire_under`] with the memo given.
pub(super) fn wire_with(
    key: HashKey,
    fields: &[u8],
    depth: u32,
    memo: Option<&mut Memo>,
) -> Option<u128> {
    let mut walk = Walk {
        key,
        keys: KEYS.take(),
        memo,
        remembering: false,
    };
    walk.keys.clear();
    let hash = walk.object(fields, depth);
    if walk.keys.capacity() <= KEYS_KEPT {
        KEYS.set(walk.keys);
    }
    hash
}

/// The content hash of a Struct's fields given as a JSON tree.
pub(super) fn tree(fields: &Map<String, Value>) -> u128 {
    tree_under(HashKey::of_process(), fields)
}

/// [`tree`] under `key`.
pub(super) fn tree_under(key: HashKey, fields: &Map<String, Value>) -> u128 {
    let mut scratch = Vec::new();
    tree_object(key, fields, &mut scratch)
}

/// The hash of an entry whose value is an object or a list (`what`): its key field's bytes, the
/// value's hash and `what`, in one hash where they fit [`NESTED_ENTRY_BYTES`], which nearly
/// every key does; a longer key field is hashed first and mixed in.
fn nested_entry(key: HashKey, key_field: &[u8], value: u128, what: u8) -> u128 {
    let len = key_field.len();
    let mut bytes = [0u8; NESTED_ENTRY_BYTES];
    let Some(field) = bytes
        .get_mut(..len)
        .filter(|_| len + 17 <= NESTED_ENTRY_BYTES)
    else {
        return mix(key, key.hash(key_field), value, what);
    };
    field.copy_from_slice(key_field);
    bytes[len..len + 16].copy_from_slice(&value.to_le_bytes());
    bytes[len + 16] = what;
    key.hash(&bytes[..len + 17])
}

/// The most bytes an entry holding an object or a list is hashed from at once: XXH3's longest
/// input without its loop over stripes, more than nearly every key field needs.
const NESTED_ENTRY_BYTES: usize = 240;

fn mix(key: HashKey, first: u128, second: u128, what: u8) -> u128 {
    let mut bytes = [0u8; 33];
    bytes[..16].copy_from_slice(&first.to_le_bytes());
    bytes[16..32].copy_from_slice(&second.to_le_bytes());
    bytes[32] = what;
    key.hash(&bytes)
}

fn summary(key: HashKey, what: u8, count: u64, hashes: u128) -> u128 {
    let mut bytes = [0u8; 25];
    bytes[0] = what;
    bytes[1..9].copy_from_slice(&count.to_le_bytes());
    bytes[9..].copy_from_slice(&hashes.to_le_bytes());
    key.hash(&bytes)
}

/// A value's hash in a walk: a scalar's is that of its bytes, which the caller hashes with what
/// is around them.
enum Hashed {
    Scalar,
    Nested { hash: u128, entry: u8 },
}

struct Walk<'m> {
    key: HashKey,
    keys: Vec<u128>,
    memo: Option<&'m mut Memo>,
    /// Whether an object or entry around the one being walked goes into the memo: each byte is
    /// printed at most once, and only the outermost small objects and entries are remembered.
    remembering: bool,
}

impl Walk<'_> {
    /// A Struct's fields, from the memo where a walk has met the same bytes before.
    fn object(&mut self, bytes: &[u8], depth: u32) -> Option<u128> {
        self.remembered(bytes, depth, OBJECT_SUMMARY, |walk| {
            walk.entries(bytes, depth)
        })
    }

    /// The hash `walk` gives of `bytes` (an object's fields, or an entry whose value is an
    /// object or a list: `what` tells them apart in the print), from the memo where a walk has
    /// met the same bytes with as many levels left; remembered if they are small enough.
    #[inline(always)]
    fn remembered(
        &mut self,
        bytes: &[u8],
        depth: u32,
        what: u8,
        walk: impl FnOnce(&mut Self) -> Option<u128>,
    ) -> Option<u128> {
        let Some(memo) = self.memo.as_deref() else {
            return walk(self);
        };
        if self.remembering || !MEMO_BYTES.contains(&bytes.len()) {
            return walk(self);
        }
        let print =
            (self.key.hash(bytes) ^ u128::from(depth) << 96 ^ u128::from(what) << 112) | 1 << 127;
        // The first of the pair of slots the print may be in: even, below MEMO_SLOTS.
        let pair = print as usize & (MEMO_SLOTS - 2);
        if let Some(&(_, hash)) = memo[pair..pair + 2].iter().find(|(seen, _)| *seen == print) {
            #[cfg(test)]
            MEMO_HITS.set(MEMO_HITS.get() + 1);
            return Some(hash);
        }
        self.remembering = true;
        let hash = walk(self);
        self.remembering = false;
        if let (Some(hash), Some(memo)) = (hash, self.memo.as_deref_mut()) {
            // The newest first; the one it pushes out was remembered before it.
            memo[pair + 1] = memo[pair];
            memo[pair] = (print, hash);
        }
        hash
    }

    /// A Struct's fields: its entries.
    fn entries(&mut self, bytes: &[u8], depth: u32) -> Option<u128> {
        let first_key = self.keys.len();
        let mut reader = Reader(bytes);
        let (mut count, mut sum) = (0u64, 0u128);
        while !reader.0.is_empty() {
            if reader.byte()? != ENTRY {
                return None;
            }
            sum = sum.wrapping_add(self.entry(reader.delimited()?, depth)?);
            count += 1;
        }
        if repeats(&mut self.keys[first_key..]) {
            return None;
        }
        self.keys.truncate(first_key);
        Some(summary(self.key, OBJECT_SUMMARY, count, sum))
    }

    /// One entry: its key field, then its value field, and nothing else. The levels counted as
    /// `direct::entry` and `direct::merge_value` count them.
    #[inline(always)]
    fn entry(&mut self, entry: &[u8], depth: u32) -> Option<u128> {
        let depth = depth.checked_sub(1)?;
        let mut reader = Reader(entry);
        if reader.byte()? != NAME {
            return None;
        }
        let key = reader.shortest_delimited()?;
        utf8(key)?;
        self.keys.push(key_print(key));
        let key_field = &entry[..entry.len() - reader.0.len()];
        if reader.byte()? != VALUE {
            return None;
        }
        let before = reader.0.len();
        let value = reader.delimited()?;
        if !reader.0.is_empty() {
            return None;
        }
        let shortest = before - value.len() == encoded_len_varint(value.len() as u64);
        let hash = |walk: &mut Self| match walk.value(value, depth.checked_sub(1)?)? {
            Hashed::Scalar if shortest => Some(walk.key.hash(entry)),
            Hashed::Scalar => None,
            Hashed::Nested { hash, entry } => Some(nested_entry(walk.key, key_field, hash, entry)),
        };
        // A scalar's entry is hashed as one XXH3 of its bytes, which is what a print costs.
        match value.first() {
            Some(&kind @ (OBJECT | LIST)) => self.remembered(entry, depth, kind, hash),
            _ => hash(self),
        }
    }

    /// A Value's fields: exactly one kind, written as prost and Go write it.
    #[inline(always)]
    fn value(&mut self, value: &[u8], depth: u32) -> Option<Hashed> {
        let (&kind, rest) = value.split_first()?;
        let scalar = match kind {
            NULL => rest == [0],
            NUMBER => <[u8; 8]>::try_from(rest).is_ok_and(|n| f64::from_le_bytes(n).is_finite()),
            STRING => {
                let mut reader = Reader(rest);
                reader
                    .shortest_delimited()
                    .is_some_and(|text| reader.0.is_empty() && utf8(text).is_some())
            }
            BOOL => matches!(rest, [0] | [1]),
            OBJECT | LIST => {
                let mut reader = Reader(rest);
                let fields = reader.delimited()?;
                if !reader.0.is_empty() {
                    return None;
                }
                let inner = depth.checked_sub(1)?;
                return Some(if kind == OBJECT {
                    Hashed::Nested {
                        hash: self.object(fields, inner)?,
                        entry: OBJECT_ENTRY,
                    }
                } else {
                    Hashed::Nested {
                        hash: self.list(fields, inner)?,
                        entry: LIST_ENTRY,
                    }
                });
            }
            _ => false,
        };
        scalar.then_some(Hashed::Scalar)
    }

    /// A ListValue's fields: its items.
    fn list(&mut self, bytes: &[u8], depth: u32) -> Option<u128> {
        let mut reader = Reader(bytes);
        let (mut count, mut folded) = (0u64, 0u128);
        while !reader.0.is_empty() {
            if reader.byte()? != ITEM {
                return None;
            }
            let item = reader.delimited()?;
            let hash = match self.value(item, depth.checked_sub(1)?)? {
                Hashed::Scalar => self.key.hash(item),
                Hashed::Nested { hash, .. } => hash,
            };
            folded = mix(self.key, folded, hash, LIST_ITEM);
            count += 1;
        }
        Some(summary(self.key, LIST_SUMMARY, count, folded))
    }
}

/// What tells a key from the others of its object, to find a key given twice: its first and
/// last eight bytes and its length, which is the key itself up to 16 bytes (nearly every key of
/// a schema). Two longer keys that share them count as repeated, and the object is then hashed
/// from its tree: slower, never wrong.
fn key_print(key: &[u8]) -> u128 {
    let word = |bytes: &[u8]| {
        let mut word = [0u8; 8];
        word[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(word)
    };
    let len = key.len();
    let (first, last) = if len > 8 {
        (word(&key[..8]), word(&key[len - 8..]))
    } else {
        (word(key), 0)
    };
    (u128::from(first) << 64 | u128::from(last)) ^ (len as u128) << 120
}

/// Whether a print is in `keys` twice (their order is lost).
fn repeats(keys: &mut [u128]) -> bool {
    if keys.len() <= LINEAR_KEYS {
        return (1..keys.len()).any(|i| keys[..i].contains(&keys[i]));
    }
    keys.sort_unstable();
    keys.windows(2).any(|pair| pair[0] == pair[1])
}

fn tree_object(key: HashKey, fields: &Map<String, Value>, scratch: &mut Vec<u8>) -> u128 {
    let sum = fields.iter().fold(0u128, |sum, (name, value)| {
        sum.wrapping_add(tree_entry(key, name, value, scratch))
    });
    summary(key, OBJECT_SUMMARY, fields.len() as u64, sum)
}

/// The hash of one entry of an object, as [`tree`] and [`wire`] make it.
pub(super) fn tree_entry(key: HashKey, name: &str, value: &Value, scratch: &mut Vec<u8>) -> u128 {
    // The value first: its walk takes the scratch buffer.
    let nested = match value {
        Value::Object(fields) => Some((tree_object(key, fields, scratch), OBJECT_ENTRY)),
        Value::Array(items) => Some((tree_list(key, items, scratch), LIST_ENTRY)),
        _ => None,
    };
    scratch.clear();
    scratch.push(NAME);
    encode_varint(name.len() as u64, scratch);
    scratch.extend_from_slice(name.as_bytes());
    if let Some((hash, what)) = nested {
        return nested_entry(key, scratch, hash, what);
    }
    scratch.push(VALUE);
    encode_varint(scalar_len(value) as u64, scratch);
    write_scalar(value, scratch);
    key.hash(scratch)
}

fn tree_list(key: HashKey, items: &[Value], scratch: &mut Vec<u8>) -> u128 {
    let folded = items.iter().fold(0u128, |folded, item| {
        let hash = match item {
            Value::Object(fields) => tree_object(key, fields, scratch),
            Value::Array(items) => tree_list(key, items, scratch),
            scalar => {
                scratch.clear();
                write_scalar(scalar, scratch);
                key.hash(scratch)
            }
        };
        mix(key, folded, hash, LIST_ITEM)
    });
    summary(key, LIST_SUMMARY, items.len() as u64, folded)
}

/// The length of a scalar's Value fields.
fn scalar_len(scalar: &Value) -> usize {
    match scalar {
        Value::Number(_) => 9,
        Value::String(text) => 1 + encoded_len_varint(text.len() as u64) + text.len(),
        _ => 2,
    }
}

/// A scalar's Value fields, as prost and Go write them (as `Writer::scalar` does).
fn write_scalar(scalar: &Value, out: &mut Vec<u8>) {
    match scalar {
        Value::Bool(b) => out.extend_from_slice(&[BOOL, u8::from(*b)]),
        Value::Number(n) => {
            out.push(NUMBER);
            out.put_f64_le(n.as_f64().unwrap_or(0.0));
        }
        Value::String(text) => {
            out.push(STRING);
            encode_varint(text.len() as u64, out);
            out.extend_from_slice(text.as_bytes());
        }
        _ => out.extend_from_slice(&[NULL, 0]),
    }
}
