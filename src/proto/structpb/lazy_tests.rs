//! The view of a Struct's unread bytes (`structpb::lazy`, `ObjectView::Wire`): it reads what
//! prost decodes from bytes prost takes, in every order of their entries; it reads damaged
//! bytes without a panic, and what it reads of bytes prost takes is what prost decodes; and no
//! nesting, however deep, overflows the stack.

use super::hash_tests::{damage, damaged, generator, go_encoded, json_tree, object};
use super::tests::sample;
use super::*;
use crate::proto::v1::{Resources, RunFunctionRequest, State};
use crate::proto::Resource;
use proptest::prelude::*;
use prost::bytes::Bytes;
use prost::Message;
use serde_json::json;

/// Every member of `view` read one by one, as the core reads them, with the members of the
/// objects and the items of the lists in it, to `depth` levels.
fn read_member_by_member(view: View<'_>, depth: u32) -> Value {
    match view.kind() {
        Kind::Object(object) if depth > 0 => Value::Object(
            object
                .keys()
                .map(|name| {
                    let member = object.get(name).expect("a member listed is found");
                    (name.to_owned(), read_member_by_member(member, depth - 1))
                })
                .collect(),
        ),
        Kind::List(list) if depth > 0 => Value::Array(
            list.iter()
                .map(|item| read_member_by_member(item, depth - 1))
                .collect(),
        ),
        _ => view.to_value(),
    }
}

fn wire_view(bytes: &Bytes) -> ObjectView<'_> {
    ObjectView::Wire(bytes, lazy::ROOT)
}

/// `read_member_by_member` of a whole object.
fn read_object_member_by_member(object: ObjectView<'_>) -> Value {
    Value::Object(
        object
            .keys()
            .map(|name| {
                (
                    name.to_owned(),
                    read_member_by_member(object.get(name).unwrap(), 64),
                )
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Entries in Go's random order are read sorted, each member where it is, and the object
    /// read is the one prost decodes.
    #[test]
    fn unread_bytes_are_read_as_prost_decodes_them(tree in json_tree(), seed in 1u64..) {
        let fields = object(tree);
        let bytes = Bytes::from(go_encoded(&fields, &mut generator(seed)));
        let view = wire_view(&bytes);
        prop_assert_eq!(view.to_map(), fields.clone());
        prop_assert_eq!(view.len(), fields.len());
        let names: Vec<&str> = view.keys().collect();
        prop_assert!(names.windows(2).all(|pair| pair[0] < pair[1]), "{:?}", names);
        for (name, value) in &fields {
            prop_assert_eq!(view.get(name).map(View::to_value), Some(value.clone()));
        }
        let whole = Value::Object(fields.clone());
        prop_assert_eq!(read_object_member_by_member(view), whole);
        prop_assert!(view == Struct::from(fields).view());
    }

    /// Damaged bytes are read without a panic; where prost takes them, they read as the
    /// object it decodes.
    #[test]
    fn damaged_unread_bytes_read_as_prost_decodes_them_or_without_a_panic(
        tree in json_tree(),
        seed in 1u64..,
        damage in damage(),
    ) {
        let bytes = Bytes::from(damaged(go_encoded(&object(tree), &mut generator(seed)), damage));
        let view = wire_view(&bytes);
        let read = view.to_map();
        let by_member = read_object_member_by_member(view);
        if let Ok(decoded) = Struct::decode(&bytes[..]) {
            let decoded = decoded.into_fields();
            prop_assert_eq!(&read, &decoded);
            prop_assert_eq!(by_member, Value::Object(decoded));
        }
    }
}

/// Unknown fields of every wire type, a key given twice (the last wins), an entry whose value
/// field comes twice: read as prost decodes them.
#[test]
fn the_odd_but_valid_encodings_are_read_as_prost_decodes_them() {
    let bytes = Bytes::from(sample());
    let decoded = Struct::decode(&bytes[..]).unwrap().into_fields();
    let view = wire_view(&bytes);
    assert_eq!(view.to_map(), decoded);
    assert_eq!(view.len(), decoded.len());
    for (name, value) in &decoded {
        assert_eq!(view.get(name).map(View::to_value).as_ref(), Some(value));
    }
    assert_eq!(view.get("c").map(View::to_value), Some(json!(true)));
}

/// What prost would refuse reads as absent: a string or a name that is not UTF-8, a field cut
/// short. The rest of the object still reads.
#[test]
fn what_prost_refuses_reads_as_absent() {
    let entry = |name: &[u8], value: &[u8]| {
        let mut entry = Vec::new();
        prost::encoding::bytes::encode(ENTRY_KEY, &name.to_vec(), &mut entry);
        prost::encoding::bytes::encode(ENTRY_VALUE, &value.to_vec(), &mut entry);
        let mut field = Vec::new();
        prost::encoding::bytes::encode(STRUCT_FIELDS, &entry, &mut field);
        field
    };
    let text = |bytes: &[u8]| {
        let mut value = Vec::new();
        prost::encoding::bytes::encode(VALUE_STRING, &bytes.to_vec(), &mut value);
        value
    };
    let mut bytes = entry(b"good", &text(b"yes"));
    bytes.extend(entry(b"bad", &text(b"\xff\xfe")));
    bytes.extend(entry(b"\xff", &text(b"unnamed")));
    assert!(Struct::decode(bytes.as_slice()).is_err());
    let whole = Bytes::from(bytes.clone());
    let view = wire_view(&whole);
    assert_eq!(view.get("good").and_then(View::as_str), Some("yes"));
    assert!(view.get("bad").is_some_and(View::is_null));
    assert_eq!(
        Value::Object(view.to_map()),
        json!({"good": "yes", "bad": null})
    );
    // Cut inside the last entry: the entries before it still read.
    bytes.extend(entry(b"cut", &text(b"short")));
    bytes.truncate(bytes.len() - 3);
    let cut = Bytes::from(bytes);
    let view = wire_view(&cut);
    assert_eq!(view.get("good").and_then(View::as_str), Some("yes"));
    assert!(view.get("cut").is_none());
}

/// A Struct nested far deeper than prost takes is read to the depth decoding goes, with what
/// is deeper null: no recursion follows the bytes down.
#[test]
fn no_nesting_overflows_the_stack() {
    let mut fields = Vec::new();
    for _ in 0..100_000 {
        let mut value = Vec::new();
        prost::encoding::bytes::encode(VALUE_STRUCT, &fields, &mut value);
        let mut entry = Vec::new();
        prost::encoding::string::encode(ENTRY_KEY, &"a".to_owned(), &mut entry);
        prost::encoding::bytes::encode(ENTRY_VALUE, &value, &mut entry);
        fields.clear();
        prost::encoding::bytes::encode(STRUCT_FIELDS, &entry, &mut fields);
    }
    let fields = Bytes::from(fields);
    let view = wire_view(&fields);
    let mut value = Value::Object(view.to_map());
    let mut depth = 0;
    while let Some(inner) = value.get_mut("a") {
        value = inner.take();
        depth += 1;
    }
    assert!(value.is_null());
    assert!((90..=100).contains(&depth), "{depth}");
    // A path is read as deep as it goes.
    let mut at = view.get("a");
    for _ in 0..1_000 {
        at = at.and_then(|v| v.get("a"));
    }
    assert!(at.is_some_and(|v| v.as_object().is_some()));
}

fn view(resource: &Resource) -> ObjectView<'_> {
    resource.resource.as_ref().unwrap().view()
}

/// A request's composites are indexed; every other resource (observed and desired composed
/// resources, the resources found for a requirement) is kept unread, read where it is, and
/// written back as the bytes it came as.
#[test]
fn a_requests_resources_other_than_composites_are_kept_unread() {
    let resource = |object: Value| Resource {
        resource: Some(Struct::from_value(object)),
        ..Resource::default()
    };
    let state = |kind: &str| State {
        composite: Some(resource(json!({"kind": "X", "spec": {"n": 1}}))),
        resources: [("r".to_owned(), resource(json!({"kind": kind, "n": 2.5})))].into(),
    };
    let request = RunFunctionRequest {
        observed: Some(state("Observed")),
        desired: Some(state("Desired")),
        required_resources: [(
            "found".to_owned(),
            Resources {
                items: vec![resource(json!({"kind": "Found"}))],
            },
        )]
        .into(),
        ..RunFunctionRequest::default()
    };
    let bytes = prost::bytes::Bytes::from(request.encode_to_vec());
    let decoded = RunFunctionRequest::decode(bytes.clone()).unwrap();
    for state in [&decoded.observed, &decoded.desired] {
        let state = state.as_ref().unwrap();
        assert!(matches!(
            view(state.composite.as_ref().unwrap()),
            ObjectView::Indexed(..)
        ));
        let composed = view(&state.resources["r"]);
        assert!(matches!(composed, ObjectView::Wire(..)));
        assert_eq!(composed.get("n").map(View::to_value), Some(json!(2.5)));
    }
    let found = view(&decoded.required_resources["found"].items[0]);
    assert!(matches!(found, ObjectView::Wire(..)));
    assert_eq!(found.get("kind").and_then(View::as_str), Some("Found"));
    assert_eq!(decoded, request);
    assert_eq!(decoded.encode_to_vec(), bytes);
}

/// A view of a value is two words whatever it views (and one of an object or a list three, as
/// an indexed one's span makes it), so that it is passed in registers: a value in unread bytes
/// is named by its place, not by a slice.
#[test]
#[cfg(target_pointer_width = "64")]
fn a_view_is_as_small_as_before_views_of_unread_bytes() {
    assert_eq!(std::mem::size_of::<View>(), 16);
    assert_eq!(std::mem::size_of::<ObjectView>(), 24);
    assert_eq!(std::mem::size_of::<crate::proto::ListView>(), 24);
}
