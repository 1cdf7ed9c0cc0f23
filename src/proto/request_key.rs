//! A request's content key: one 128-bit hash of a `RunFunctionRequest`'s bytes that is the same
//! whatever order its maps' entries came in, read in one pass that builds nothing.
//!
//! Crossplane sends the same request on every reconcile of an unchanged claim (its poll
//! interval, a minute by default), but never the same bytes: Go writes the entries of a map
//! (a `Struct`'s fields, the observed resources, the live schemas) in random order. Two
//! requests with one key decode to the same message, unless their 128-bit hashes collide, so
//! the function's answer to one is its answer to the other, byte for byte (the core is a
//! function of the decoded request alone). The server keeps answers by this key
//! (`server::memo`).
//!
//! Strength: XXH3-128 keyed with the process's seed (`hash_key`). A map's entries are summed,
//! and a sum of hashes anyone can compute is no defence: two label maps with one sum are found
//! offline in seconds (the k-sum problem, Wagner's k-tree algorithm), whatever the
//! strength of each entry's hash. Under the seed the server draws at start, no hash can be
//! computed outside the process, so that search cannot be made; what is left is chance, about
//! 2^-128 a pair of requests, and weaknesses of XXH3 itself, which is fast rather than
//! cryptographic. The server checks every hit against a second digest in debug builds and
//! tests (`server::memo`).
//!
//! How the bytes are read:
//!
//! - A message is a sequence of fields, folded in the order they come, each field's number
//!   with it: a field given twice is two items of the sequence, as prost merges it twice.
//! - A field this module does not know the shape of (a scalar, `meta`, an enum, a field newer
//!   than this code) is folded as its bytes.
//! - A `Struct` is its content hash (`structpb`'s, the one the live schemas are cached by).
//! - A map's entries, a run of one field's occurrences with nothing between, are summed, so
//!   their order does not count, with their number. Every key of the run must differ: prost
//!   keeps a repeated key's last value, which a sum cannot tell.
//!
//! `None` where the walk cannot vouch for that: a map entry that is not a key then a value, a
//! key given twice, a `Struct` that is not in the canonical form its hash reads, or bytes that
//! do not parse. The caller then answers without a key, as if it had never seen the request.

use super::hash_key::HashKey;
use super::structpb::{key, wire_content_hash, with_known_hashes, KnownHash, Reader};
use super::v1::RunFunctionRequest;
use prost::bytes::Bytes;
use prost::encoding::{skip_field, DecodeContext, WireType};
use prost::{DecodeError, Message};

/// What a field holds, as far as the key reads it.
enum Shape {
    /// Hashed as its bytes.
    Bytes,
    /// A `google.protobuf.Struct`: its content hash.
    Struct,
    /// A live schema's `Struct`, whose hash decoding asks for again (`Struct::from_wire`): its
    /// place and hash are noted for it.
    SchemaStruct,
    /// A message whose length-delimited fields listed here are read by their shape; any other
    /// field is hashed as its bytes.
    Message(&'static [(u32, Shape)]),
    /// A `map<string, V>`, V of the shape given.
    Map(&'static Shape),
}

/// `Resource`: the object, its connection details, `ready` (a varint, as its bytes).
const RESOURCE: Shape = Shape::Message(&[(1, Shape::Struct), (2, Shape::Map(&Shape::Bytes))]);

/// `State`: the composite, the composed resources by name.
const STATE: Shape = Shape::Message(&[(1, RESOURCE), (2, Shape::Map(&RESOURCE))]);

/// `Resources`: the items, in order.
const RESOURCES: Shape = Shape::Message(&[(1, RESOURCE)]);

/// `Credentials`: `credential_data`, a `CredentialData` of its `data` map.
const CREDENTIALS: Shape =
    Shape::Message(&[(1, Shape::Message(&[(1, Shape::Map(&Shape::Bytes))]))]);

/// `Schema`: `openapi_v3`.
const SCHEMA: Shape = Shape::Message(&[(1, Shape::SchemaStruct)]);

/// `RunFunctionRequest`, v1 and v1beta1 alike; `meta` (field 1) is hashed as its bytes.
const REQUEST: &[(u32, Shape)] = &[
    (2, STATE),
    (3, STATE),
    (4, Shape::Struct),
    (5, Shape::Struct),
    (6, Shape::Map(&RESOURCES)),
    (7, Shape::Map(&CREDENTIALS)),
    (8, Shape::Map(&RESOURCES)),
    (9, Shape::Map(&SCHEMA)),
];

/// What each item folded into a message's hash is, so that no two sequences of items fold the
/// same bytes.
const FIELD_BYTES: u8 = 1;
const FIELD_NESTED: u8 = 2;
const FIELD_MAP: u8 = 3;
const ENTRY_VALUE: u8 = 4;
const ENTRY_NO_VALUE: u8 = 5;

/// A map entry's key field, field 1, and value field, field 2, both length-delimited.
const ENTRY_KEY_BYTE: u8 = key(1, WireType::LengthDelimited);
const ENTRY_VALUE_BYTE: u8 = key(2, WireType::LengthDelimited);

/// The content key of a `RunFunctionRequest` given as its bytes, under the process's key
/// ([`HashKey::of_process`]); `None` where the walk cannot vouch that another request with this
/// key decodes to the same message.
pub fn content_key(request: &[u8]) -> Option<u128> {
    content_key_under(HashKey::of_process(), request)
}

/// [`content_key`] under `key`.
pub fn content_key_under(key: HashKey, request: &[u8]) -> Option<u128> {
    content_key_noting(key, request, &mut Vec::new())
}

/// A request read for its content key, to decode only where no answer is remembered for it.
pub struct KeyedRequest {
    bytes: Bytes,
    key: Option<u128>,
    /// Where each live schema's `Struct` is in `bytes`, with its hash.
    schemas: Vec<KnownHash>,
}

impl KeyedRequest {
    /// Reads `bytes` for their content key ([`content_key`]).
    pub fn read(bytes: Bytes) -> KeyedRequest {
        let mut schemas = Vec::new();
        let key = content_key_noting(HashKey::of_process(), &bytes, &mut schemas);
        KeyedRequest {
            bytes,
            key,
            schemas,
        }
    }

    /// The content key; `None` where the walk could not vouch for one.
    pub fn key(&self) -> Option<u128> {
        self.key
    }

    /// The request's bytes, as read.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The request, decoded as prost decodes it, from the bytes read. The live schemas' hashes
    /// the key's walk made are taken as they are (`Struct::from_wire`), not made again by a
    /// second walk over the same schemas: the bytes are held here, unchanged, since.
    pub fn decode(self) -> Result<RunFunctionRequest, DecodeError> {
        let KeyedRequest { bytes, schemas, .. } = self;
        with_known_hashes(schemas, || RunFunctionRequest::decode(bytes))
    }
}

/// [`content_key`], noting the place and hash of each live schema's `Struct` in `schemas`.
fn content_key_noting(key: HashKey, request: &[u8], schemas: &mut Vec<KnownHash>) -> Option<u128> {
    let mut walk = Walk {
        key,
        keys: Vec::new(),
        schemas,
    };
    walk.message(request, REQUEST)
}

/// What a walk keeps as it goes: the key prints of the map runs open, the schemas noted.
struct Walk<'n> {
    key: HashKey,
    keys: Vec<u64>,
    schemas: &'n mut Vec<KnownHash>,
}

impl Walk<'_> {
    /// A message's fields, folded in order.
    fn message(&mut self, bytes: &[u8], fields: &[(u32, Shape)]) -> Option<u128> {
        let mut folded = self.key.hasher();
        let mut reader = Reader(bytes);
        while !reader.0.is_empty() {
            let start = reader.0;
            let key = reader.varint()?;
            let (number, wire_type) = (u32::try_from(key >> 3).ok()?, key & 0x07);
            let shape = (wire_type == WireType::LengthDelimited as u64)
                .then(|| fields.iter().find(|(n, _)| *n == number))
                .flatten();
            match shape {
                None => {
                    let wire_type = WireType::try_from(wire_type).ok()?;
                    skip_field(wire_type, number, &mut reader.0, DecodeContext::default()).ok()?;
                    let field = &start[..start.len() - reader.0.len()];
                    folded.write(&[FIELD_BYTES]);
                    folded.write(&(field.len() as u64).to_le_bytes());
                    folded.write(field);
                }
                Some((_, Shape::Map(value))) => {
                    reader.0 = start;
                    let (count, sum) = self.map_run(&mut reader, key, value)?;
                    folded.write(&[FIELD_MAP]);
                    folded.write(&number.to_le_bytes());
                    folded.write(&count.to_le_bytes());
                    folded.write(&sum.to_le_bytes());
                }
                Some((_, shape)) => {
                    let hash = self.nested(reader.delimited()?, shape)?;
                    folded.write(&[FIELD_NESTED]);
                    folded.write(&number.to_le_bytes());
                    folded.write(&hash.to_le_bytes());
                }
            }
        }
        Some(folded.finish())
    }

    /// The hash of a field's value of `shape`.
    fn nested(&mut self, bytes: &[u8], shape: &Shape) -> Option<u128> {
        match shape {
            Shape::Bytes => Some(self.key.hash(bytes)),
            Shape::Struct => wire_content_hash(self.key, bytes),
            Shape::SchemaStruct => {
                let hash = wire_content_hash(self.key, bytes)?;
                self.schemas.push(KnownHash::of(bytes, hash));
                Some(hash)
            }
            Shape::Message(fields) => self.message(bytes, fields),
            Shape::Map(_) => None,
        }
    }

    /// A run of map entries, all with the field key `key`, where `reader` is: their number and
    /// the sum of their hashes, the run read; `None` if two of them share a key.
    fn map_run(&mut self, reader: &mut Reader, key: u64, value: &Shape) -> Option<(u64, u128)> {
        let first_key = self.keys.len();
        let (mut count, mut sum) = (0u64, 0u128);
        loop {
            let mut next = Reader(reader.0);
            if next.varint() != Some(key) {
                break;
            }
            let entry = next.delimited()?;
            reader.0 = next.0;
            let (name, hash) = self.map_entry(entry, value)?;
            // A print of the key: two keys that share one count as repeated (the request then
            // has no key: slower, never wrong).
            self.keys.push(self.key.hash(name) as u64);
            sum = sum.wrapping_add(hash);
            count += 1;
        }
        let run = &mut self.keys[first_key..];
        run.sort_unstable();
        let repeated = run.windows(2).any(|pair| pair[0] == pair[1]);
        self.keys.truncate(first_key);
        (!repeated).then_some((count, sum))
    }

    /// One map entry: its key field, then its value field or nothing. Its key's bytes and its
    /// hash.
    fn map_entry<'a>(&mut self, entry: &'a [u8], value: &Shape) -> Option<(&'a [u8], u128)> {
        let mut reader = Reader(entry);
        if reader.byte()? != ENTRY_KEY_BYTE {
            return None;
        }
        let name = reader.delimited()?;
        let mut hashed = self.key.hasher();
        hashed.write(&(name.len() as u64).to_le_bytes());
        hashed.write(name);
        if reader.0.is_empty() {
            hashed.write(&[ENTRY_NO_VALUE]);
            return Some((name, hashed.finish()));
        }
        if reader.byte()? != ENTRY_VALUE_BYTE {
            return None;
        }
        let value = self.nested(reader.delimited()?, value)?;
        if !reader.0.is_empty() {
            return None;
        }
        hashed.write(&[ENTRY_VALUE]);
        hashed.write(&value.to_le_bytes());
        Some((name, hashed.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::json::{request_from_json, request_to_json};
    use crate::proto::v1::RunFunctionRequest;
    use prost::Message;
    use serde_json::{json, Value};

    /// A request with something in every field the key reads by its shape, maps of several
    /// entries at every level.
    fn request() -> Vec<u8> {
        let object = |name: &str| {
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": name, "labels":
                {"a": "1", "b": "2", "c": "3"}}, "spec": {"list": [1, "two", {"x": null, "y": true}],
                "n": 2.5}})
        };
        let resource = |name: &str| {
            json!({"resource": object(name), "connectionDetails": {"u": "dQ==", "p": "cA==",
                "h": "aA=="}, "ready": "READY_TRUE"})
        };
        let value = json!({
            "meta": {"tag": "t", "capabilities": ["CAPABILITY_CAPABILITIES",
                "CAPABILITY_REQUIRED_SCHEMAS"]},
            "observed": {"composite": resource("xr"), "resources": {"a": resource("a"),
                "b": resource("b"), "c": resource("c")}},
            "desired": {"composite": resource("xr"), "resources": {"d": resource("d"),
                "e": resource("e")}},
            "input": {"apiVersion": "in/v1", "kind": "Input", "ttl": "60s", "more": {"p": 1, "q": 2}},
            "context": {"k1": "v", "k2": ["x"], "k3": {"deep": {"deeper": 1}}},
            "extraResources": {"x": {"items": [resource("x1"), resource("x2")]}, "y": {}},
            "credentials": {"c1": {"credentialData": {"data": {"user": "dQ==", "token": "dA=="}}},
                "c2": {"credentialData": {"data": {}}}},
            "requiredResources": {"r1": {"items": [resource("r")]}, "r2": {"items": []}},
            "requiredSchemas": {"s1": {"openapiV3": {"type": "object", "properties":
                {"a": {"type": "string"}, "b": {"type": "integer"}}}}, "s2": {}},
        });
        request_from_json(&value).unwrap().encode_to_vec()
    }

    /// The request the bytes decode to, in the JSON mapping, where the order of nothing counts.
    fn decoded(bytes: &[u8]) -> Option<Value> {
        RunFunctionRequest::decode(bytes)
            .ok()
            .map(|request| request_to_json(&request))
    }

    /// What each message holds, written apart from the key's table (which it checks): the kind
    /// of a length-delimited field's value, and whether the field is a map.
    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        Request,
        State,
        Resource,
        Resources,
        Credentials,
        CredentialData,
        Schema,
        Struct,
        Value,
        List,
        Opaque,
    }

    fn field(kind: Kind, number: u32) -> Option<(Kind, bool)> {
        use Kind::*;
        Some(match (kind, number) {
            (Request, 2 | 3) => (State, false),
            (Request, 4 | 5) => (Struct, false),
            (Request, 6 | 8) => (Resources, true),
            (Request, 7) => (Credentials, true),
            (Request, 9) => (Schema, true),
            (State, 1) => (Resource, false),
            (State, 2) => (Resource, true),
            (Resource, 1) => (Struct, false),
            (Resource, 2) => (Opaque, true),
            (Resources, 1) => (Resource, false),
            (Credentials, 1) => (CredentialData, false),
            (CredentialData, 1) => (Opaque, true),
            (Schema, 1) => (Struct, false),
            (Struct, 1) => (Value, true),
            (Value, 5) => (Struct, false),
            (Value, 6) => (List, false),
            (List, 1) => (Value, false),
            _ => return None,
        })
    }

    fn random(seed: &mut u64, n: usize) -> usize {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        (*seed % n.max(1) as u64) as usize
    }

    fn put_delimited(number: u32, bytes: &[u8], out: &mut Vec<u8>) {
        prost::encoding::encode_key(number, WireType::LengthDelimited, out);
        prost::encoding::encode_varint(bytes.len() as u64, out);
        out.extend_from_slice(bytes);
    }

    /// `bytes` as Go might write them: every map's entries, at every level, in a random order.
    fn go_order(bytes: &[u8], kind: Kind, seed: &mut u64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut run: Vec<Vec<u8>> = Vec::new();
        let mut run_number = 0;
        let mut reader = Reader(bytes);
        while !reader.0.is_empty() {
            let start = reader.0;
            let key = reader.varint().unwrap();
            let (number, wire_type) = ((key >> 3) as u32, key & 7);
            let shape = field(kind, number).filter(|_| wire_type == 2);
            if run_number != number || !matches!(shape, Some((_, true))) {
                flush(&mut run, run_number, seed, &mut out);
            }
            match shape {
                None => {
                    let wire_type = WireType::try_from(wire_type).unwrap();
                    skip_field(wire_type, number, &mut reader.0, DecodeContext::default()).unwrap();
                    out.extend_from_slice(&start[..start.len() - reader.0.len()]);
                }
                Some((value, true)) => {
                    let mut entry = Reader(reader.delimited().unwrap());
                    let mut rewritten = Vec::new();
                    while !entry.0.is_empty() {
                        let key = entry.varint().unwrap();
                        let field = entry.delimited().unwrap();
                        let field = match (key >> 3, value) {
                            (2, Kind::Opaque) | (1, _) => field.to_vec(),
                            _ => go_order(field, value, seed),
                        };
                        put_delimited((key >> 3) as u32, &field, &mut rewritten);
                    }
                    run.push(rewritten);
                    run_number = number;
                }
                Some((value, false)) => {
                    let nested = go_order(reader.delimited().unwrap(), value, seed);
                    put_delimited(number, &nested, &mut out);
                }
            }
        }
        flush(&mut run, run_number, seed, &mut out);
        out
    }

    fn flush(run: &mut Vec<Vec<u8>>, number: u32, seed: &mut u64, out: &mut Vec<u8>) {
        for i in (1..run.len()).rev() {
            let j = random(seed, i + 1);
            run.swap(i, j);
        }
        for entry in run.drain(..) {
            put_delimited(number, &entry, out);
        }
    }

    #[test]
    fn a_request_in_any_order_of_its_maps_has_one_key() {
        let bytes = request();
        let key = content_key(&bytes).expect("a request prost wrote has a key");
        let mut seed = 0x5eed_0001;
        let mut reordered = 0;
        for _ in 0..50 {
            let shuffled = go_order(&bytes, Kind::Request, &mut seed);
            assert_eq!(
                decoded(&shuffled),
                decoded(&bytes),
                "the shuffle keeps the request"
            );
            reordered += usize::from(shuffled != bytes);
            assert_eq!(content_key(&shuffled), Some(key));
        }
        assert!(reordered > 40, "{reordered} of 50 shuffles moved an entry");
    }

    /// Every change of the request's content changes its key: each one made in the JSON
    /// mapping, which writes its maps in key order.
    #[test]
    fn every_part_of_a_request_counts() {
        let original = decoded(&request()).unwrap();
        let key = content_key(&request()).unwrap();
        type Change = (&'static str, fn(&mut Value));
        let changes: &[Change] = &[
            ("tag", |r| r["meta"]["tag"] = json!("u")),
            ("capabilities", |r| {
                r["meta"]["capabilities"] = json!(["CAPABILITY_CAPABILITIES"])
            }),
            ("composite", |r| {
                r["observed"]["composite"]["resource"]["spec"]["n"] = json!(3)
            }),
            ("a list's order", |r| {
                r["observed"]["composite"]["resource"]["spec"]["list"] = json!(["two", 1])
            }),
            ("a label", |r| {
                r["observed"]["resources"]["b"]["resource"]["metadata"]["labels"]["c"] = json!("4")
            }),
            ("a resource's name", |r| {
                let map = r["observed"]["resources"].as_object_mut().unwrap();
                let b = map.remove("b").unwrap();
                map.insert("bb".into(), b);
            }),
            ("a connection detail", |r| {
                r["observed"]["resources"]["a"]["connectionDetails"]["p"] = json!("cQ==")
            }),
            ("ready", |r| {
                r["observed"]["resources"]["c"]["ready"] = json!("READY_FALSE")
            }),
            ("desired", |r| {
                r["desired"]["resources"]["e"]["resource"]["kind"] = json!("L")
            }),
            ("observed and desired swapped", |r| {
                let observed = r["observed"].take();
                r["observed"] = r["desired"].take();
                r["desired"] = observed;
            }),
            ("input", |r| r["input"]["ttl"] = json!("61s")),
            ("context", |r| {
                r["context"]["k3"]["deep"]["deeper"] = json!(2)
            }),
            ("input and context swapped", |r| {
                let input = r["input"].take();
                r["input"] = r["context"].take();
                r["context"] = input;
            }),
            ("extra items' order", |r| {
                r["extraResources"]["x"]["items"]
                    .as_array_mut()
                    .unwrap()
                    .reverse()
            }),
            ("extra as required", |r| {
                let extra = r["extraResources"].take();
                r["extraResources"] = r["requiredResources"].take();
                r["requiredResources"] = extra;
            }),
            ("credentials", |r| {
                r["credentials"]["c1"]["credentialData"]["data"]["token"] = json!("dQ==")
            }),
            ("a required resource", |r| {
                r["requiredResources"]["r2"]["items"] =
                    r["requiredResources"]["r1"]["items"].clone()
            }),
            ("a schema", |r| {
                r["requiredSchemas"]["s1"]["openapiV3"]["properties"]["b"]["type"] = json!("number")
            }),
        ];
        for (what, change) in changes {
            let mut changed = original.clone();
            change(&mut changed);
            assert_ne!(changed, original, "{what}: the change changes the request");
            let bytes = request_from_json(&changed).unwrap().encode_to_vec();
            assert_ne!(content_key(&bytes), Some(key), "{what}");
            assert!(content_key(&bytes).is_some(), "{what}");
        }
    }

    /// prost keeps the last of a map's entries with one key, which the sum of a run cannot tell:
    /// such a request has no key, at the top level and in a `Struct`.
    #[test]
    fn a_key_given_twice_leaves_the_request_without_a_key() {
        let schema = |text: &str| {
            let mut entry = Vec::new();
            put_delimited(1, b"s", &mut entry);
            let mut fields = Vec::new();
            let mut object_entry = Vec::new();
            put_delimited(1, b"type", &mut object_entry);
            let mut value = Vec::new();
            put_delimited(3, text.as_bytes(), &mut value);
            put_delimited(2, &value, &mut object_entry);
            put_delimited(1, &object_entry, &mut fields);
            let mut schema = Vec::new();
            put_delimited(1, &fields, &mut schema);
            put_delimited(2, &schema, &mut entry);
            let mut field = Vec::new();
            put_delimited(9, &entry, &mut field);
            (field, object_entry)
        };
        let (string, string_entry) = schema("string");
        let (integer, integer_entry) = schema("integer");
        assert!(content_key(&string).is_some());
        assert!(content_key(&[string.clone(), integer.clone()].concat()).is_none());
        // The two apart, with another field between: merged in order, so folded in order.
        let apart = |first: &[u8], second: &[u8]| {
            let mut bytes = first.to_vec();
            put_delimited(4, &[], &mut bytes);
            bytes.extend_from_slice(second);
            bytes
        };
        let (one, other) = (apart(&string, &integer), apart(&integer, &string));
        assert_ne!(decoded(&one), decoded(&other));
        assert_ne!(content_key(&one), content_key(&other));
        assert!(content_key(&one).is_some());
        // A Struct with `type` twice.
        let mut twice = Vec::new();
        put_delimited(1, &string_entry, &mut twice);
        put_delimited(1, &integer_entry, &mut twice);
        let mut bytes = Vec::new();
        put_delimited(4, &twice, &mut bytes);
        assert!(decoded(&bytes).is_some());
        assert!(content_key(&bytes).is_none());
    }

    /// Decoded after its key, a request is what prost decodes, its live schemas hashed by the
    /// key's walk alone: each schema's hash is the one handed over, which a wrong one shows.
    #[test]
    fn a_keyed_request_decodes_as_prost_does_taking_the_schemas_hashes_handed_over() {
        use crate::proto::structpb::{with_known_hashes, KnownHash};
        use crate::proto::Struct;
        let bytes = Bytes::from(request());
        let keyed = KeyedRequest::read(bytes.clone());
        assert_eq!(keyed.key(), content_key(&bytes));
        assert_eq!(keyed.schemas.len(), 1, "s1's openapiV3; s2 has none");
        let handed = keyed.schemas[0];
        let decoded = keyed.decode().unwrap();
        let plain = RunFunctionRequest::decode(bytes.clone()).unwrap();
        assert_eq!(request_to_json(&decoded), request_to_json(&plain));
        let hash = |r: &RunFunctionRequest| {
            r.required_schemas["s1"]
                .openapi_v3
                .as_ref()
                .unwrap()
                .content_hash()
        };
        assert_eq!(hash(&decoded), hash(&plain));

        // A place handed over is taken as it is, while the decoding it was handed to runs, and
        // forgotten after: a wrong hash shows where it was taken.
        let schema = &plain.required_schemas["s1"];
        let fields = schema.openapi_v3.as_ref().unwrap().encode_to_vec();
        let mut message = Vec::new();
        prost::encoding::encode_varint(fields.len() as u64, &mut message);
        message.extend_from_slice(&fields);
        let message = Bytes::from(message);
        let place = KnownHash::of(&message[message.len() - fields.len()..], 42);
        let taken = with_known_hashes(vec![place], || Struct::from_wire(&mut message.clone()));
        assert_eq!(taken.unwrap().content_hash(), 42);
        let walked = Struct::from_wire(&mut message.clone())
            .unwrap()
            .content_hash();
        assert_eq!(walked, hash(&plain));
        assert_eq!(
            handed.hash(),
            hash(&plain),
            "the key's walk hashed s1 as decoding does"
        );
    }

    /// Damaged requests: any two with one key decode to the same request (or both fail to).
    #[test]
    fn requests_with_one_key_decode_alike() {
        let bytes = request();
        let mut seed = 0x5eed_0002;
        let mut by_key: std::collections::HashMap<u128, Option<Value>> = Default::default();
        let (mut keyed, mut same_as_original) = (0, 0);
        by_key.insert(content_key(&bytes).unwrap(), decoded(&bytes));
        for _ in 0..6000 {
            let mut damaged = go_order(&bytes, Kind::Request, &mut seed);
            for _ in 0..=random(&mut seed, 3) {
                let at = random(&mut seed, damaged.len());
                match random(&mut seed, 4) {
                    0 => damaged[at] ^= 1 << random(&mut seed, 8),
                    1 => damaged[at] = random(&mut seed, 256) as u8,
                    2 => {
                        damaged.remove(at);
                    }
                    _ => damaged.insert(at, random(&mut seed, 256) as u8),
                }
            }
            let Some(key) = content_key(&damaged) else {
                continue;
            };
            keyed += 1;
            let request = decoded(&damaged);
            let seen = by_key.entry(key).or_insert_with(|| request.clone());
            assert_eq!(*seen, request, "two requests with one key");
            same_as_original += usize::from(request == decoded(&bytes));
        }
        assert!(keyed > 200, "{keyed} damaged requests had a key");
        assert!(same_as_original > 0, "a damage prost ignores keeps the key");
    }
}
