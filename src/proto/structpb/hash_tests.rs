//! The content hash (`hash.rs`) and the lazy schema (`proto::Schema`): the hash of a Struct's
//! bytes is that of the object prost decodes from them, whatever the order of their entries.

use super::*;
use crate::proto::Schema;
use generated::Schema as GeneratedSchema;
use proptest::prelude::*;
use prost::Message;
use serde_json::json;

/// An xorshift generator: reproducible shuffles and damage.
pub(super) fn generator(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    }
}

/// A Struct's fields encoded as Go's protobuf writes them (each field once, shortest varints,
/// both fields of a map entry), with each object's entries in the order `random` picks.
pub(super) fn go_encoded(
    fields: &Map<String, Value>,
    random: &mut impl FnMut(usize) -> usize,
) -> Vec<u8> {
    let mut entries: Vec<(&String, &Value)> = fields.iter().collect();
    for i in (1..entries.len()).rev() {
        entries.swap(i, random(i + 1));
    }
    let mut out = Vec::new();
    for (name, value) in entries {
        let mut entry = Vec::new();
        prost::encoding::string::encode(ENTRY_KEY, name, &mut entry);
        delimited(ENTRY_VALUE, &go_value(value, random), &mut entry);
        delimited(STRUCT_FIELDS, &entry, &mut out);
    }
    out
}

fn go_value(value: &Value, random: &mut impl FnMut(usize) -> usize) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        Value::Null => prost::encoding::int32::encode(VALUE_NULL, &0, &mut out),
        Value::Bool(b) => prost::encoding::bool::encode(VALUE_BOOL, b, &mut out),
        Value::Number(n) => {
            prost::encoding::double::encode(VALUE_NUMBER, &n.as_f64().unwrap(), &mut out)
        }
        Value::String(text) => prost::encoding::string::encode(VALUE_STRING, text, &mut out),
        Value::Object(fields) => delimited(VALUE_STRUCT, &go_encoded(fields, random), &mut out),
        Value::Array(items) => {
            let mut list = Vec::new();
            for item in items {
                delimited(LIST_VALUES, &go_value(item, random), &mut list);
            }
            delimited(VALUE_LIST, &list, &mut out);
        }
    }
    out
}

fn delimited(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    prost::encoding::encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// JSON values with numbers as the wire gives them (`json_number`), keys that share
/// prefixes, and text of every UTF-8 width.
pub(super) fn json_tree() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(|n| json_number(if n.is_finite() { n } else { 0.5 })),
        (-1000i64..1000).prop_map(|n| json_number(n as f64)),
        "[a-z\u{e9}\u{4e2d}\u{1f600} ]{0,12}".prop_map(Value::String),
        "x{120,140}".prop_map(Value::String),
    ];
    scalar.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-c]{0,3}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// One to three changes to bytes: where, a byte, and how (replaced, inserted, removed, or the
/// bytes cut there).
pub(super) fn damage() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..4), 1..4)
}

/// `bytes` with `damage` done to them.
pub(super) fn damaged(mut bytes: Vec<u8>, damage: Vec<(usize, u8, u8)>) -> Vec<u8> {
    for (at, byte, how) in damage {
        let at = at % (bytes.len() + 1);
        match how {
            0 if at < bytes.len() => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

pub(super) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(fields) => fields,
        other => Map::from_iter([("value".to_owned(), other)]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The lazy read (the walk of the bytes) and the eager one (decode, then hash the tree)
    /// give one hash, in every order of the entries.
    #[test]
    fn the_hash_of_the_bytes_is_that_of_the_decoded_tree(tree in json_tree(), seed in 1u64..) {
        let fields = object(tree);
        let mut random = generator(seed);
        let first = go_encoded(&fields, &mut random);
        let reordered = go_encoded(&fields, &mut random);
        let decoded = Struct::decode(first.as_slice()).unwrap().into_fields();
        prop_assert_eq!(&decoded, &fields);
        let expected = hash::tree(&fields);
        prop_assert_eq!(hash::wire(&first, direct::DEPTH), Some(expected));
        prop_assert_eq!(hash::wire(&reordered, direct::DEPTH), Some(expected));
        // Our own encoding (sorted, with two-byte length guesses) hashes the same where the
        // walk takes it, and the Struct answers with the tree's hash either way.
        let ours = Struct::from(fields.clone()).encode_to_vec();
        if let Some(hash) = hash::wire(&ours, direct::DEPTH) {
            prop_assert_eq!(hash, expected);
        }
        prop_assert_eq!(Struct::from(fields).content_hash(), expected);
    }

    /// Whatever bytes the walk vouches for, prost decodes, to the object whose hash it gave.
    #[test]
    fn the_walk_vouches_only_for_what_prost_decodes_to_the_same_hash(
        tree in json_tree(),
        seed in 1u64..,
        damage in damage(),
    ) {
        let bytes = damaged(go_encoded(&object(tree), &mut generator(seed)), damage);
        if let Some(hash) = hash::wire(&bytes, direct::DEPTH) {
            let decoded = Struct::decode(bytes.as_slice());
            prop_assert!(decoded.is_ok(), "{:?}", decoded);
            prop_assert_eq!(hash::tree(decoded.unwrap().fields()), hash);
        }
    }
}

#[test]
fn different_objects_hash_apart() {
    let objects = [
        json!({}),
        json!({"a": null}),
        json!({"a": false}),
        json!({"a": 0}),
        json!({"a": ""}),
        json!({"a": {}}),
        json!({"a": []}),
        json!({"a": [null]}),
        json!({"a": [{}]}),
        json!({"a": [[]]}),
        json!({"a": {"b": 1}}),
        json!({"b": {"a": 1}}),
        json!({"a": [1, 2]}),
        json!({"a": [2, 1]}),
        json!({"a": 1, "b": 2}),
        json!({"a": 2, "b": 1}),
        json!({"ab": 1}),
        json!({"a": "b1"}),
    ];
    let hashes: std::collections::BTreeSet<u128> = objects
        .iter()
        .map(|o| Struct::from_value(o.clone()).content_hash())
        .collect();
    assert_eq!(hashes.len(), objects.len());
}

#[test]
fn a_key_given_twice_is_left_to_prost() {
    // {"a": 1, "a": 2} and {"a": 2, "a": 1}: one sum of entries, but prost keeps the last.
    let entry = |n: f64| {
        let mut entry = Vec::new();
        prost::encoding::string::encode(ENTRY_KEY, &"a".to_owned(), &mut entry);
        let mut value = Vec::new();
        prost::encoding::double::encode(VALUE_NUMBER, &n, &mut value);
        delimited(ENTRY_VALUE, &value, &mut entry);
        let mut out = Vec::new();
        delimited(STRUCT_FIELDS, &entry, &mut out);
        out
    };
    let twice = [entry(1.0), entry(2.0)].concat();
    assert_eq!(hash::wire(&twice, direct::DEPTH), None);
    let schema = schema_message(&twice);
    let decoded = Schema::decode(schema.as_slice()).unwrap();
    let openapi = decoded.openapi_v3.unwrap();
    assert_eq!(openapi.fields()["a"], json!(2));
    assert_eq!(openapi.content_hash(), hash::tree(&object(json!({"a": 2}))));
}

#[test]
fn non_canonical_bytes_are_left_to_prost() {
    let canonical = go_encoded(&object(json!({"a": "x"})), &mut generator(1));
    assert!(hash::wire(&canonical, direct::DEPTH).is_some());
    let cases: [&[u8]; 5] = [
        // A length of one byte written in two.
        &[
            0x0a, 0x09, 0x0a, 0x81, 0x00, b'a', 0x12, 0x03, 0x1a, 0x01, b'x',
        ],
        // The value field before the key field.
        &[0x0a, 0x08, 0x12, 0x03, 0x1a, 0x01, b'x', 0x0a, 0x01, b'a'],
        // A bool of 2, which prost reads as true.
        &[0x0a, 0x07, 0x0a, 0x01, b'a', 0x12, 0x02, 0x20, 0x02],
        // An unknown field in the entry.
        &[
            0x0a, 0x09, 0x0a, 0x01, b'a', 0x12, 0x02, 0x20, 0x01, 0x18, 0x01,
        ],
        // A Value without a kind (null to prost).
        &[0x0a, 0x05, 0x0a, 0x01, b'a', 0x12, 0x00],
    ];
    for bytes in cases {
        assert_eq!(hash::wire(bytes, direct::DEPTH), None, "{bytes:02x?}");
        let eager = Struct::decode(bytes).unwrap();
        let lazy = Schema::decode(schema_message(bytes).as_slice()).unwrap();
        let lazy = lazy.openapi_v3.unwrap();
        assert_eq!(lazy.content_hash(), hash::tree(eager.fields()));
        assert_eq!(lazy, eager);
    }
}

/// A Schema message around a Struct's fields.
fn schema_message(fields: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    delimited(1, fields, &mut out);
    out
}

mod generated {
    use crate::proto::Struct;

    /// `Schema` as prost generates it: what the hand-written one must decode like, errors
    /// and all (prost names the message in them).
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct Schema {
        #[prost(message, optional, tag = "1")]
        pub(super) openapi_v3: Option<Struct>,
    }
}

#[test]
fn a_schema_is_taken_off_the_wire_undecoded_and_reads_as_generated() {
    let fields = object(json!({
        "type": "object", "description": "d\u{e9}".repeat(100),
        "properties": {"spec": {"type": "object", "required": ["forProvider"],
                                "x-kubernetes-validations": [{"rule": "has(self.a)"}]}},
        "default": {"n": 1.5, "b": true, "z": null}
    }));
    let bytes = schema_message(&go_encoded(&fields, &mut generator(7)));
    let buffer = Bytes::from(bytes.clone());
    let lazy = Schema::decode(buffer.clone()).unwrap();
    let openapi = lazy.openapi_v3.as_ref().unwrap();
    let wire = openapi.wire.as_ref().expect("kept as bytes");
    // A slice of the request's buffer, not a copy.
    assert!(buffer.as_ptr_range().contains(&wire.bytes.as_ptr()));
    assert_eq!(openapi.content_hash(), hash::tree(&fields));
    assert!(openapi.decoded.get().is_none() && openapi.fields.is_none());
    assert!(!openapi.is_empty());
    // Read, it is the object; encoded, the same bytes.
    assert_eq!(openapi.fields(), &fields);
    assert_eq!(lazy.encode_to_vec(), bytes);
    let generated = GeneratedSchema::decode(bytes.as_slice()).unwrap();
    assert_eq!(generated.openapi_v3.as_ref(), lazy.openapi_v3.as_ref());
    assert_eq!(lazy.clone(), lazy);
    assert_eq!(Schema::default().encode_to_vec(), Vec::<u8>::new());
}

#[test]
fn a_damaged_schema_fails_as_the_generated_one_does() {
    let fields = object(json!({"a": [1, "b", {"c": null}], "d": {"e": true}}));
    let bytes = schema_message(&go_encoded(&fields, &mut generator(3)));
    let mut random = generator(11);
    let mut cases: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
    for _ in 0..5_000 {
        let mut damaged = bytes.clone();
        for _ in 0..1 + random(3) {
            let i = random(damaged.len());
            damaged[i] = random(256) as u8;
        }
        cases.push(damaged);
    }
    // The schema field twice: prost merges the second into the first.
    cases.push([bytes.clone(), bytes.clone()].concat());
    let mut errors = 0;
    for case in &cases {
        let lazy = Schema::decode(case.as_slice()).map_err(|e| e.to_string());
        let generated = GeneratedSchema::decode(case.as_slice()).map_err(|e| e.to_string());
        match (&lazy, &generated) {
            (Ok(lazy), Ok(generated)) => {
                assert_eq!(lazy.openapi_v3, generated.openapi_v3, "{case:02x?}");
                if let Some(openapi) = &lazy.openapi_v3 {
                    assert_eq!(openapi.content_hash(), hash::tree(openapi.fields()));
                }
            }
            _ => assert_eq!(lazy.clone().err(), generated.clone().err(), "{case:02x?}"),
        }
        errors += usize::from(generated.is_err());
    }
    assert!(errors > cases.len() / 10, "{errors}");
}

#[test]
fn nesting_beyond_prosts_limit_is_left_to_prost() {
    let mut value = json!("x");
    for _ in 0..40 {
        value = json!({ "a": value });
    }
    let fields = object(value);
    let bytes = go_encoded(&fields, &mut generator(5));
    // Three of prost's levels per object: 40 objects do not fit in 96.
    assert_eq!(hash::wire(&bytes, direct::DEPTH), None);
    assert!(hash::wire(&bytes, 200).is_some());
    // The memo holds the bytes walked with 200 levels left; with fewer, they are walked again.
    assert_eq!(hash::wire(&bytes, direct::DEPTH), None);
}

/// The memo: the small entries of a schema walked before (a property and its object) and the
/// small objects of a list are taken from it, the large objects and lists around them walked
/// again, and the hash is the one the walk gives.
#[test]
fn small_entries_and_objects_seen_before_come_from_the_memo() {
    let property = |i: usize| json!({"type": "string", "description": format!("the field number {i} of this object")});
    let properties: Map<String, Value> = (0..40)
        .map(|i| (format!("field{i}"), property(i)))
        .collect();
    let examples: Vec<Value> = (0..20)
        .map(|i| json!({"name": format!("example {i}"), "value": "an example of this object"}))
        .collect();
    let schema = object(json!({"type": "object", "properties": properties, "examples": examples}));
    let expected = hash::tree(&schema);
    let hits = || hash::MEMO_HITS.get();
    // A memo of its own: the shared ones take other tests' walks, which may take their slots.
    let mut memo: Box<hash::Memo> = vec![(0, 0); hash::MEMO_SLOTS]
        .into_boxed_slice()
        .try_into()
        .unwrap();
    let mut wire =
        |bytes: &[u8]| hash::wire_with(HashKey::fixed(), bytes, direct::DEPTH, Some(&mut memo));
    let mut random = generator(11);
    let first = go_encoded(&schema, &mut random);
    let before = hits();
    assert_eq!(wire(&first), Some(expected));
    assert_eq!(hits(), before);
    // Other orders: a property and an example have two each, all seen after a few walks.
    for _ in 0..20 {
        let again = go_encoded(&schema, &mut random);
        assert_eq!(wire(&again), Some(expected));
    }
    let again = go_encoded(&schema, &mut random);
    let before_last = hits();
    assert_eq!(wire(&again), Some(expected));
    // Each of the 40 properties and 20 examples, but for those whose two orders share a slot
    // with another's and took it (the slots are fixed by the bytes, so this count is too).
    let found = hits() - before_last;
    assert!((54..=60).contains(&found), "{found}");
    // The object, its properties and its list are larger than the memo takes.
    let examples_bytes = Struct::from(object(json!({"examples": examples}))).encode_to_vec();
    let largest = *hash::MEMO_BYTES.end();
    assert!(examples_bytes.len() > largest && first.len() > largest);
}
