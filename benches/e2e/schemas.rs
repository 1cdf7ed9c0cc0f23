//! Writes the live schemas of the end-to-end benchmark (run by `scripts/bench-e2e.sh` before the
//! release build): `OUT/live-schemas.bin`, a RunFunctionRequest holding only `required_schemas`,
//! each schema the function asks for about the benchmark's repositories answered as Crossplane
//! answers it:
//!
//! - a cluster kind with its `openAPIV3Schema` of the provider's v0.14.0 CRD (from `crds/`),
//!   whose `metadata` is an object of ObjectMeta's shape and size inlined, as the API server's
//!   OpenAPI document has it once Crossplane resolves its references (the Kubernetes text is
//!   not copied here: the descriptions are filler of about the same lengths);
//! - a flat kind, which `providerApi: auto` asks for too, as not served (an empty Schema);
//! - every Struct's entries in an order as Go's protobuf writes a map: a map of up to eight
//!   entries, which Go keeps in one group, from a random one of its entries and around (Go's
//!   iteration starts at a random slot and wraps), a larger map in any order.
//!
//! It also writes `OUT/live-N-order-K.bin` (N = 10 and 100 repositories, K = 0 to 7): the live
//! call (`requests::live_request`), gRPC-framed, with the schemas in eight such orders, for
//! `profile-call` to measure calls whose schemas come in an order not seen before.
//!
//! cargo run --features codegen --example bench-schemas -- OUT

#[path = "../requests.rs"]
mod requests;

use function_artifactory::codegen::crds;
use function_artifactory::proto::v1::{Capability, RunFunctionRequest, Schema};
use prost::encoding::{encode_key, encode_varint, WireType};
use prost::Message;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or("target/bench-e2e".into()));
    std::fs::create_dir_all(&out).expect("the output folder");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let release = crds::release(root, "v0.14.0").expect("the v0.14.0 CRDs");
    let asking =
        requests::with_capabilities(requests::our_request(10), &[Capability::RequiredSchemas]);
    let asked = function_artifactory::run_function(&asking)
        .requirements
        .unwrap_or_default()
        .schemas;
    let mut served_by_name = Vec::new();
    for (name, selector) in asked {
        let served = release.crds.iter().find_map(|(_, crd)| {
            let spec = &crd["spec"];
            let version = &spec["versions"][0];
            let api_version = format!("{}/{}", spec["group"].as_str()?, version["name"].as_str()?);
            (api_version == selector.api_version && spec["names"]["kind"] == selector.kind.as_str())
                .then(|| version["schema"]["openAPIV3Schema"].clone())
        });
        let schema = served.map(|mut schema| {
            schema["properties"]["metadata"] = object_meta();
            schema
        });
        served_by_name.push((name, schema));
    }
    let mut shuffle = Shuffle(0x5eed_cafe_f00d_0001);
    let orders: Vec<RunFunctionRequest> = (0..8)
        .map(|_| answers(&served_by_name, &mut shuffle))
        .collect();
    for (k, order) in orders.iter().enumerate() {
        for n in [10, 100] {
            let live = requests::live_request(n, &order.required_schemas).encode_to_vec();
            let body = requests::framed(&live);
            std::fs::write(out.join(format!("live-{n}-order-{k}.bin")), body).expect("written");
        }
    }
    let request = &orders[0];
    let bytes = request.encode_to_vec();
    let served = request
        .required_schemas
        .values()
        .filter(|s| s.openapi_v3.is_some())
        .count();
    std::fs::write(out.join("live-schemas.bin"), &bytes).expect("written");
    eprintln!(
        "live schemas: {} kinds asked, {served} served, {} bytes",
        request.required_schemas.len(),
        bytes.len()
    );
}

/// A request holding only `required_schemas`: each schema, where served, in an order `shuffle`
/// picks.
fn answers(served: &[(String, Option<Value>)], shuffle: &mut Shuffle) -> RunFunctionRequest {
    let mut request = RunFunctionRequest::default();
    for (name, schema) in served {
        let mut message = Vec::new();
        if let Some(schema) = schema {
            let fields = schema.as_object().expect("a schema object");
            delimited(1, &shuffle.encode(fields), &mut message);
        }
        let schema = Schema::decode(message.as_slice()).expect("a Schema");
        request.required_schemas.insert(name.clone(), schema);
    }
    request
}

/// An object of ObjectMeta's shape (its fields, types, lists and maps) with descriptions of
/// about its lengths.
fn object_meta() -> Value {
    let text = |words: usize| {
        let filler = "this field is described here at about the length the API server gives";
        let mut text = String::new();
        while text.len() < words * 6 {
            text.push_str(filler);
            text.push_str(". ");
        }
        Value::String(text)
    };
    let string = |words| json!({"type": "string", "description": text(words)});
    let time = |words| json!({"type": "string", "format": "date-time", "description": text(words)});
    let map = |words| json!({"type": "object", "additionalProperties": {"type": "string", "default": ""}, "description": text(words)});
    json!({
        "type": "object",
        "description": text(40),
        "properties": {
            "annotations": map(40),
            "creationTimestamp": time(60),
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description": text(30)},
            "deletionTimestamp": time(180),
            "finalizers": {"type": "array", "items": {"type": "string", "default": ""},
                           "x-kubernetes-list-type": "set", "description": text(110)},
            "generateName": string(110),
            "generation": {"type": "integer", "format": "int64", "description": text(20)},
            "labels": map(40),
            "managedFields": {"type": "array", "description": text(60), "items": {
                "type": "object", "description": text(25), "properties": {
                    "apiVersion": string(30), "fieldsType": string(25),
                    "fieldsV1": {"type": "object", "description": text(15)},
                    "manager": string(10), "operation": string(25), "subresource": string(60),
                    "time": time(30)}}},
            "name": string(60),
            "namespace": string(60),
            "ownerReferences": {"type": "array", "description": text(60),
                "x-kubernetes-list-map-keys": ["uid"], "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge",
                "items": {"type": "object", "description": text(20),
                    "required": ["apiVersion", "kind", "name", "uid"],
                    "x-kubernetes-map-type": "atomic", "properties": {
                        "apiVersion": string(5), "blockOwnerDeletion": {"type": "boolean", "description": text(50)},
                        "controller": {"type": "boolean", "description": text(8)},
                        "kind": string(20), "name": string(20), "uid": string(20)}}},
            "resourceVersion": string(90),
            "selfLink": string(20),
            "uid": string(50),
        }
    })
}

/// The entries of a Go map's group, which a small map has one of.
const GO_GROUP: usize = 8;

/// xorshift, for the order of map entries.
struct Shuffle(u64);

impl Shuffle {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// A Struct's fields as Go's protobuf writes them, entries in an order Go may write: up to
    /// eight, from a random entry and around; more, in any order.
    fn encode(&mut self, fields: &Map<String, Value>) -> Vec<u8> {
        let mut entries: Vec<(&String, &Value)> = fields.iter().collect();
        if entries.len() <= GO_GROUP {
            let start = self.below(entries.len().max(1));
            entries.rotate_left(start);
        } else {
            for i in (1..entries.len()).rev() {
                entries.swap(i, self.below(i + 1));
            }
        }
        let mut out = Vec::new();
        for (name, value) in entries {
            let mut entry = Vec::new();
            prost::encoding::string::encode(1, name, &mut entry);
            delimited(2, &self.value(value), &mut entry);
            delimited(1, &entry, &mut out);
        }
        out
    }

    fn value(&mut self, value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        match value {
            Value::Null => prost::encoding::int32::encode(1, &0, &mut out),
            Value::Number(n) => prost::encoding::double::encode(2, &n.as_f64().unwrap(), &mut out),
            Value::String(text) => prost::encoding::string::encode(3, text, &mut out),
            Value::Bool(b) => prost::encoding::bool::encode(4, b, &mut out),
            Value::Object(fields) => delimited(5, &self.encode(fields), &mut out),
            Value::Array(items) => {
                let mut list = Vec::new();
                for item in items {
                    delimited(1, &self.value(item), &mut list);
                }
                delimited(6, &list, &mut out);
            }
        }
        out
    }
}

fn delimited(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}
