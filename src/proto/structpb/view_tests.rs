//! The index of a Struct's bytes (`direct::index`) and the views of it (`proto::View`): a
//! resource's Struct kept as its bytes (`proto::Resource`) is viewed as the object prost decodes
//! from them, in every order of their entries, and is kept only where that decoding succeeds.

use super::hash_tests::{damage, damaged, generator, go_encoded, json_tree, object};
use super::tests::sample;
use super::*;
use crate::proto::v1::{Resource, RunFunctionRequest, State};
use proptest::prelude::*;
use prost::bytes::Buf;
use prost::Message;
use serde_json::json;

/// `bytes` as the first field of a message.
fn first_field(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(1, WireType::LengthDelimited, &mut out);
    encode_varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

/// The composite's Struct of a State whose composite's Struct is `fields`, decoded as the
/// server decodes a request: from a `Bytes` buffer.
fn composite_struct(fields: &[u8]) -> Result<Struct, prost::DecodeError> {
    let bytes = prost::bytes::Bytes::from(first_field(&first_field(fields)));
    State::decode(bytes).map(|state| {
        state
            .composite
            .and_then(|composite| composite.resource)
            .unwrap_or_default()
    })
}

fn is_indexed(object: ObjectView) -> bool {
    matches!(object, ObjectView::Indexed(..))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Entries in Go's random order are viewed sorted, and the view is the decoded object.
    #[test]
    fn a_kept_struct_is_viewed_as_the_object_prost_decodes(tree in json_tree(), seed in 1u64..) {
        let fields = object(tree);
        let bytes = go_encoded(&fields, &mut generator(seed));
        let kept = composite_struct(&bytes).unwrap();
        let view = kept.view();
        prop_assert!(is_indexed(view));
        prop_assert_eq!(view.to_map(), fields.clone());
        let names: Vec<&str> = view.keys().collect();
        prop_assert!(names.windows(2).all(|pair| pair[0] < pair[1]), "{:?}", names);
        for (name, value) in &fields {
            prop_assert_eq!(view.get(name).map(View::to_value), Some(value.clone()));
        }
        // The same object held as JSON is viewed the same, and the kept Struct is the object.
        prop_assert!(view == Struct::from(fields.clone()).view());
        prop_assert_eq!(kept.fields(), &fields);
        // A kept Struct is written back as the bytes it came as.
        prop_assert_eq!(kept.encode_to_vec(), bytes);
    }

    /// Whatever bytes the index takes, prost decodes, to the object the view shows; what it
    /// refuses is decoded by prost, as before.
    #[test]
    fn only_bytes_that_decode_are_kept(
        tree in json_tree(),
        seed in 1u64..,
        damage in damage(),
    ) {
        let bytes = damaged(go_encoded(&object(tree), &mut generator(seed)), damage);
        let prost = Struct::decode(bytes.as_slice()).map(Struct::into_fields);
        match composite_struct(&bytes) {
            Ok(kept) => {
                prop_assert_eq!(kept.view().to_map(), prost.clone().unwrap());
                prop_assert_eq!(kept.fields(), &prost.unwrap());
            }
            Err(error) => prop_assert!(prost.is_err(), "{}", error),
        }
    }
}

/// Unknown fields of every wire type, a key given twice (the last wins), an entry whose value
/// field comes twice: kept, and viewed as prost decodes them.
#[test]
fn the_odd_but_valid_encodings_are_kept_and_viewed_as_prost_decodes_them() {
    let bytes = sample();
    let kept = composite_struct(&bytes).unwrap();
    assert!(is_indexed(kept.view()));
    let decoded = Struct::decode(bytes.as_slice()).unwrap().into_fields();
    assert_eq!(kept.view().to_map(), decoded);
    // Each name once, the last given.
    assert_eq!(kept.view().len(), decoded.len());
    let names: Vec<&str> = kept.view().keys().collect();
    assert!(names.windows(2).all(|pair| pair[0] < pair[1]), "{names:?}");
    assert_eq!(kept.view().get("c").map(View::to_value), Some(json!(true)));
}

/// The composite of a request decoded from a `Bytes` buffer is kept indexed and viewed from
/// the request's bytes; its numbers are JSON numbers as `json_number` makes them. (The other
/// resources are kept unread: `lazy_tests`.)
#[test]
fn a_requests_composite_is_viewed_from_its_bytes() {
    let composite = json!({
        "apiVersion": "x.example.org/v1", "kind": "X",
        "spec": {"n": 3.0, "half": 0.5, "list": [1, "two", {"three": null}], "empty": {}}
    });
    let request = RunFunctionRequest {
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite.clone())),
                ..Resource::default()
            }),
            resources: [(
                "r".to_owned(),
                Resource {
                    resource: Some(Struct::from_value(json!({"kind": "Y"}))),
                    ..Resource::default()
                },
            )]
            .into(),
        }),
        ..RunFunctionRequest::default()
    };
    let bytes = prost::bytes::Bytes::from(request.encode_to_vec());
    let decoded = RunFunctionRequest::decode(bytes.clone()).unwrap();
    let kept = decoded
        .observed
        .as_ref()
        .unwrap()
        .composite
        .as_ref()
        .unwrap();
    let view = kept.resource.as_ref().unwrap().view();
    assert!(is_indexed(view));
    // 3.0 comes back as the JSON integer 3, as decoding gives it.
    let mut expected = composite.clone();
    expected["spec"]["n"] = json!(3);
    assert_eq!(Value::Object(view.to_map()), expected);
    let spec = view.get("spec").unwrap();
    assert_eq!(spec.get("n").map(View::to_value), Some(json!(3)));
    assert_eq!(
        spec.get("list").and_then(View::as_list).map(|l| l.len()),
        Some(3)
    );
    assert!(spec
        .get("list")
        .unwrap()
        .as_list()
        .unwrap()
        .iter()
        .nth(2)
        .unwrap()
        .get("three")
        .unwrap()
        .is_null());
    assert_eq!(
        spec.get("empty").and_then(View::as_object).map(|o| o.len()),
        Some(0)
    );
    // Passed through, the request is the bytes it came as.
    assert_eq!(decoded.encode_to_vec(), bytes);
}

/// A request whose buffer comes in two pieces, split at every byte: a composite whole in one
/// piece is indexed, one split between them is decoded as prost decodes it, and either way the
/// composite reads the same. A composite with a string that is not UTF-8 fails to decode
/// wherever the split falls.
#[test]
fn a_composite_split_across_a_buffers_pieces_reads_the_same() {
    let composite = json!({"kind": "X", "spec": {"name": "é-unicode", "list": ["a", {"b": true}]}});
    let request = |composite: Struct| RunFunctionRequest {
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(composite),
                ..Resource::default()
            }),
            ..State::default()
        }),
        ..RunFunctionRequest::default()
    };
    let bytes = request(Struct::from_value(composite.clone())).encode_to_vec();
    let fields = Struct::from_value(composite.clone()).encode_to_vec();
    let at = bytes.len() - fields.len();
    let mut indexed = 0;
    for split in 0..=bytes.len() {
        let mut buf = (&bytes[..split]).chain(&bytes[split..]);
        let decoded = RunFunctionRequest::decode(&mut buf).unwrap();
        let kept = decoded
            .observed
            .unwrap()
            .composite
            .unwrap()
            .resource
            .unwrap();
        assert_eq!(
            Value::Object(kept.view().to_map()),
            composite,
            "split at {split}"
        );
        // The Struct's length is at `at - 1`: from there to the end in one piece, it is kept.
        let whole = split < at || split == bytes.len();
        assert_eq!(is_indexed(kept.view()), whole, "split at {split}");
        indexed += usize::from(whole);
    }
    assert!(indexed > 0);
    // "é" (0xc3 0xa9) made 0xc3 0x28: not UTF-8.
    let at = bytes
        .windows(2)
        .position(|pair| pair == [0xc3, 0xa9])
        .unwrap();
    let mut damaged = bytes.clone();
    damaged[at + 1] = 0x28;
    for split in 0..=damaged.len() {
        let mut buf = (&damaged[..split]).chain(&damaged[split..]);
        assert!(
            RunFunctionRequest::decode(&mut buf).is_err(),
            "split at {split}"
        );
    }
}

/// `Resource` as prost generates it from `run_function.proto`: the hand-written one must
/// encode as it does and decode what it decodes, to the same resource (and fail as it does,
/// naming the same message and field).
mod generated {
    use crate::proto::Struct;

    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct Resource {
        #[prost(message, optional, tag = "1")]
        pub(super) resource: Option<Struct>,
        #[prost(btree_map = "string, bytes", tag = "2")]
        pub(super) connection_details: std::collections::BTreeMap<String, Vec<u8>>,
        #[prost(enumeration = "crate::proto::v1::Ready", tag = "3")]
        pub(super) ready: i32,
    }
}

fn same_resource(hand: &Resource, generated: &generated::Resource) -> bool {
    hand.resource == generated.resource
        && hand.connection_details == generated.connection_details
        && hand.ready == generated.ready
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The hand-written `Resource` encodes as the generated one, and decodes its bytes, whole
    /// or damaged, as it does: but for damage inside the object, which it keeps unread.
    #[test]
    fn a_resource_reads_and_writes_as_the_generated_one(
        tree in json_tree(),
        details in proptest::collection::btree_map("[a-z]{0,6}", proptest::collection::vec(any::<u8>(), 0..8), 0..3),
        ready in -1i32..4,
        has_object in any::<bool>(),
        damage in damage(),
    ) {
        let object = has_object.then(|| Struct::from(object(tree)));
        let hand = Resource { resource: object.clone(), connection_details: details.clone(), ready };
        let generated = generated::Resource { resource: object, connection_details: details, ready };
        let bytes = generated.encode_to_vec();
        prop_assert_eq!(hand.encode_to_vec(), bytes.clone());
        prop_assert_eq!(hand.encoded_len(), bytes.len());
        let decoded = Resource::decode(prost::bytes::Bytes::from(bytes.clone())).unwrap();
        prop_assert!(same_resource(&decoded, &generated));
        prop_assert_eq!(decoded.encode_to_vec(), bytes.clone());
        let damaged = damaged(bytes, damage);
        match (
            Resource::decode(prost::bytes::Bytes::from(damaged.clone())),
            generated::Resource::decode(&damaged[..]),
        ) {
            (Ok(hand), Ok(generated)) => prop_assert!(same_resource(&hand, &generated)),
            // Damage inside the object is not seen by a Resource that keeps it unread.
            (_, Err(generated)) if generated.to_string().contains("Resource.resource") => {}
            (Err(hand), Err(generated)) => prop_assert_eq!(hand.to_string(), generated.to_string()),
            (hand, generated) => prop_assert!(false, "{:?} against {:?}", hand, generated),
        }
    }
}

/// A resource whose object is given twice merges the two, as a generated message does; unknown
/// fields are skipped.
#[test]
fn a_resource_given_twice_merges() {
    let resource = |object: Value| Resource {
        resource: Some(Struct::from_value(object)),
        ..Resource::default()
    };
    let first = resource(json!({"a": 1, "b": {"c": 2}}));
    let second = resource(json!({"b": {"d": 3}, "e": 4}));
    let mut bytes = first.encode_to_vec();
    bytes.extend(second.encode_to_vec());
    prost::encoding::int32::encode(9, &7, &mut bytes);
    let hand = Resource::decode(prost::bytes::Bytes::from(bytes.clone())).unwrap();
    let generated = generated::Resource::decode(&bytes[..]).unwrap();
    assert!(same_resource(&hand, &generated));
    assert_eq!(
        hand.resource.unwrap().into_value(),
        json!({"a": 1, "b": {"d": 3}, "e": 4})
    );
}
