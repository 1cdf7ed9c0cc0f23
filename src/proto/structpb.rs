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

use prost::bytes::{Buf, BufMut};
use prost::encoding::{
    encode_key, encode_varint, encoded_len_varint, key_len, skip_field, DecodeContext, WireType,
};
use prost::DecodeError;
use serde_json::{Map, Number, Value};

/// A JSON object as carried by `google.protobuf.Struct`.
///
/// The object is private so that every change goes through [`Struct::fields_mut`]: encoding
/// keeps what it measured inside the value, and a change must forget it.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct Struct {
    fields: Map<String, Value>,
}

impl Struct {
    /// Wraps a JSON value; anything but an object becomes an empty object.
    pub fn from_value(value: Value) -> Struct {
        match value {
            Value::Object(fields) => Struct::from(fields),
            _ => Struct::default(),
        }
    }

    /// The object as a JSON value.
    pub fn into_value(self) -> Value {
        Value::Object(self.fields)
    }

    /// The object.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// The object, to change.
    pub fn fields_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.fields
    }

    /// The object, taken out.
    pub fn into_fields(self) -> Map<String, Value> {
        self.fields
    }
}

impl From<Map<String, Value>> for Struct {
    fn from(fields: Map<String, Value>) -> Self {
        Struct { fields }
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
        encode_object_fields(&self.fields, buf);
    }

    fn merge_field(
        &mut self,
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
        self.fields.insert(entry.key, entry.value.0);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        object_fields_len(&self.fields)
    }

    fn clear(&mut self) {
        self.fields.clear();
    }
}

// ---- encoding -------------------------------------------------------------

/// Encodes the fields of a Struct. Every nested object and list is preceded by
/// its length, so the lengths are measured first, once, in the order the
/// encoder meets them: measuring at each level instead would measure a value
/// once per level above it.
fn encode_object_fields(map: &Map<String, Value>, buf: &mut impl BufMut) {
    let mut lengths = Lengths::default();
    for value in map.values() {
        lengths.measure(value);
    }
    let mut next = 0;
    encode_object_measured(map, &lengths.0, &mut next, buf);
}

/// Encodes the fields of a `google.protobuf.Value` (not its own length prefix).
fn encode_value_fields(value: &Value, buf: &mut impl BufMut) {
    let mut lengths = Lengths::default();
    lengths.measure(value);
    let mut next = 0;
    encode_value_measured(value, &lengths.0, &mut next, buf);
}

/// The fields lengths of the objects and lists inside a value, in pre-order.
#[derive(Default)]
struct Lengths(Vec<usize>);

impl Lengths {
    /// Records the lengths inside `value` and returns the length of its Value fields.
    fn measure(&mut self, value: &Value) -> usize {
        match value {
            Value::Object(map) => {
                let slot = self.reserve();
                let inner = map
                    .iter()
                    .map(|(key, value)| {
                        let entry = delimited_len(ENTRY_KEY, key.len())
                            + delimited_len(ENTRY_VALUE, self.measure(value));
                        delimited_len(STRUCT_FIELDS, entry)
                    })
                    .sum();
                self.0[slot] = inner;
                delimited_len(VALUE_STRUCT, inner)
            }
            Value::Array(items) => {
                let slot = self.reserve();
                let inner = items
                    .iter()
                    .map(|item| delimited_len(LIST_VALUES, self.measure(item)))
                    .sum();
                self.0[slot] = inner;
                delimited_len(VALUE_LIST, inner)
            }
            scalar => value_len(scalar),
        }
    }

    fn reserve(&mut self) -> usize {
        self.0.push(0);
        self.0.len() - 1
    }
}

/// The length of a Value's fields, the next recorded length for an object or list.
fn measured_len(value: &Value, lengths: &[usize], next: usize) -> usize {
    match value {
        Value::Object(_) => delimited_len(VALUE_STRUCT, lengths[next]),
        Value::Array(_) => delimited_len(VALUE_LIST, lengths[next]),
        scalar => value_len(scalar),
    }
}

fn encode_object_measured(
    map: &Map<String, Value>,
    lengths: &[usize],
    next: &mut usize,
    buf: &mut impl BufMut,
) {
    for (key, value) in map {
        let value_length = measured_len(value, lengths, *next);
        let entry = delimited_len(ENTRY_KEY, key.len()) + delimited_len(ENTRY_VALUE, value_length);
        encode_key(STRUCT_FIELDS, WireType::LengthDelimited, buf);
        encode_varint(entry as u64, buf);
        encode_key(ENTRY_KEY, WireType::LengthDelimited, buf);
        encode_varint(key.len() as u64, buf);
        buf.put_slice(key.as_bytes());
        encode_key(ENTRY_VALUE, WireType::LengthDelimited, buf);
        encode_varint(value_length as u64, buf);
        encode_value_measured(value, lengths, next, buf);
    }
}

fn encode_value_measured(
    value: &Value,
    lengths: &[usize],
    next: &mut usize,
    buf: &mut impl BufMut,
) {
    match value {
        Value::Null => {
            encode_key(VALUE_NULL, WireType::Varint, buf);
            encode_varint(0, buf);
        }
        Value::Bool(b) => {
            encode_key(VALUE_BOOL, WireType::Varint, buf);
            encode_varint(u64::from(*b), buf);
        }
        Value::Number(n) => {
            encode_key(VALUE_NUMBER, WireType::SixtyFourBit, buf);
            buf.put_f64_le(n.as_f64().unwrap_or(0.0));
        }
        Value::String(s) => {
            encode_key(VALUE_STRING, WireType::LengthDelimited, buf);
            encode_varint(s.len() as u64, buf);
            buf.put_slice(s.as_bytes());
        }
        Value::Object(map) => {
            let inner = lengths[*next];
            *next += 1;
            encode_key(VALUE_STRUCT, WireType::LengthDelimited, buf);
            encode_varint(inner as u64, buf);
            encode_object_measured(map, lengths, next, buf);
        }
        Value::Array(items) => {
            let inner = lengths[*next];
            *next += 1;
            encode_key(VALUE_LIST, WireType::LengthDelimited, buf);
            encode_varint(inner as u64, buf);
            for item in items {
                encode_key(LIST_VALUES, WireType::LengthDelimited, buf);
                encode_varint(measured_len(item, lengths, *next) as u64, buf);
                encode_value_measured(item, lengths, next, buf);
            }
        }
    }
}

fn object_fields_len(map: &Map<String, Value>) -> usize {
    map.iter()
        .map(|(key, value)| delimited_len(STRUCT_FIELDS, entry_len(key, value)))
        .sum()
}

fn entry_len(key: &str, value: &Value) -> usize {
    delimited_len(ENTRY_KEY, key.len()) + delimited_len(ENTRY_VALUE, value_len(value))
}

fn delimited_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn list_fields_len(items: &[Value]) -> usize {
    items
        .iter()
        .map(|item| delimited_len(LIST_VALUES, value_len(item)))
        .sum()
}

/// Length of the fields of a `google.protobuf.Value`.
fn value_len(value: &Value) -> usize {
    match value {
        Value::Null => key_len(VALUE_NULL) + 1,
        Value::Bool(_) => key_len(VALUE_BOOL) + 1,
        Value::Number(_) => key_len(VALUE_NUMBER) + 8,
        Value::String(s) => delimited_len(VALUE_STRING, s.len()),
        Value::Object(map) => delimited_len(VALUE_STRUCT, object_fields_len(map)),
        Value::Array(items) => delimited_len(VALUE_LIST, list_fields_len(items)),
    }
}

// ---- decoding -------------------------------------------------------------

/// One `map<string, Value>` entry of a Struct while it is decoded.
#[derive(Default, Debug)]
struct Entry {
    key: String,
    value: JsonValue,
}

impl prost::Message for Entry {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        prost::encoding::string::encode(ENTRY_KEY, &self.key, buf);
        encode_key(ENTRY_VALUE, WireType::LengthDelimited, buf);
        encode_varint(value_len(&self.value.0) as u64, buf);
        encode_value_fields(&self.value.0, buf);
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
        entry_len(&self.key, &self.value.0)
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
        encode_value_fields(&self.0, buf);
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
                let mut object = Struct::default();
                prost::encoding::message::merge(wire_type, &mut object, buf, ctx)?;
                self.0 = Value::Object(object.fields);
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
        value_len(&self.0)
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
        for item in &self.0 {
            encode_key(LIST_VALUES, WireType::LengthDelimited, buf);
            encode_varint(value_len(item) as u64, buf);
            encode_value_fields(item, buf);
        }
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
        list_fields_len(&self.0)
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
