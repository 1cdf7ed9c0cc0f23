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

/// Strings and bools are written in one go while the entry or list item holding them stays
/// under 128 bytes; on either side of that, by their name's length or their text's, the bytes
/// are prost's.
#[test]
fn entries_written_in_one_go_match_prost_types_on_both_sides_of_128_bytes() {
    let prost = |value: Value| {
        let encoded = Struct::from_value(value).encode_to_vec();
        prost_types::Struct::decode(encoded.as_slice())
            .unwrap()
            .encode_to_vec()
    };
    for name_len in [1, 60, 115, 119, 120, 121, 122, 127, 128, 130] {
        let name = "n".repeat(name_len);
        for text_len in (0..8).chain(100..132) {
            let text = "t".repeat(text_len);
            let written = Struct::write(|o| o.string(&name, &text));
            assert_eq!(
                written.encode_to_vec(),
                prost(json!({ &name: text })),
                "{name_len} {text_len}"
            );
            let list = Struct::write(|o| o.strings(&name, [text.as_str(), "x"]));
            assert_eq!(
                list.encode_to_vec(),
                prost(json!({ &name: [text, "x"] })),
                "{name_len} {text_len}"
            );
        }
        for flag in [false, true] {
            let written = Struct::write(|o| o.bool(&name, flag));
            assert_eq!(written.encode_to_vec(), prost(json!({ &name: flag })));
        }
    }
}

/// Members encoded once and copied into objects give the bytes of the same members written
/// in place, whether the copies or the objects around them take one-, two- or three-byte
/// lengths, and after Structs of another shape (whose length guesses they inherit).
#[test]
fn members_encoded_once_copy_in_as_written_in_place() {
    for len in (0..4).chain(100..132).chain(16_370..16_390) {
        let text = "s".repeat(len);
        let map = Map::from_iter([("t".to_owned(), json!(text))]);
        let members = EncodedMembers::write(|m| {
            m.map("m", &map);
            m.string("s", &text);
        });
        // One member alone: its first name is its last.
        let last = EncodedMembers::write(|m| m.string("z", "last"));
        let json = Struct::from_value(json!({
            "a": "x",
            "b": {"m": {"t": text}, "s": text},
            "c": {"k": "v", "m": {"t": text}, "s": text},
            "z": "last",
        }));
        for copied in [true, false, true] {
            let add = |o: &mut ObjectWriter<'_>| {
                if copied {
                    o.members(&members);
                } else {
                    o.map("m", &map);
                    o.string("s", &text);
                }
            };
            let written = Struct::write(|o| {
                o.string("a", "x");
                o.object("b", add);
                o.object("c", |c| {
                    c.string("k", "v");
                    add(c);
                });
                o.members(&last);
            });
            assert_eq!(
                written.encode_to_vec(),
                json.encode_to_vec(),
                "{len} {copied}"
            );
            assert_eq!(written.encoded_len(), json.encoded_len(), "{len} {copied}");
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
            Value::Object(map) if name.len() % 2 == 0 => o.object(name, |o| write_members(o, map)),
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
pub(super) fn sample() -> Vec<u8> {
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
    // From 2^53 on, the shortest digits that read back as the same double, as Go writes them.
    assert_eq!(json_number(2f64.powi(53)), json!(9_007_199_254_740_992_i64));
    assert_eq!(
        json_number(2f64.powi(60)),
        json!(1_152_921_504_606_847_000_i64)
    );
    assert_eq!(
        json_number(-(2f64.powi(62))),
        json!(-4_611_686_018_427_388_000_i64)
    );
    assert_eq!(1_152_921_504_606_847_000_i64 as f64, 2f64.powi(60));
    assert_eq!(json_number(2f64.powi(63)), json!(2f64.powi(63)));
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

/// The deepest nesting that still decodes at each place the protocol carries a Struct that is
/// decoded or walked: the decoder's depth limit, as prost's recursion limit (100 messages) set
/// it, so that a faster decoder accepts exactly the documents the original one did. A resource
/// kept unread (`proto::Resource`) is not walked, so no depth refuses it when a request is
/// decoded; its reads are bounded instead (`lazy_tests::no_nesting_overflows_the_stack`).
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
    let places: [(&str, Place); 4] = [
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
                let document = Struct::from_value(json!({ "k": nested(depth, *list, innermost) }));
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
        "required schema: objects around true 31",
        "required schema: objects around [true] 31",
        "required schema: objects around [[true]] 30",
        "required schema: lists around true 47",
        "required schema: lists around {\"k\":true} 46",
    ];
    assert_eq!(deepest, expected);
    let unread: [(&str, Place); 3] = [
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
        ("observed resource", |s| {
            RunFunctionRequest {
                observed: Some(State {
                    resources: [("r".to_string(), resource(s))].into(),
                    ..State::default()
                }),
                ..RunFunctionRequest::default()
            }
            .encode_to_vec()
        }),
    ];
    for (name, place) in unread {
        for (list, innermost) in &shapes {
            let document = Struct::from_value(json!({ "k": nested(199, *list, innermost) }));
            let bytes = place(document);
            assert!(
                RunFunctionRequest::decode(bytes.as_slice()).is_ok(),
                "{name}"
            );
        }
    }
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
