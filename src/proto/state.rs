//! `State` (`run_function.proto`), written by hand so that a composite is kept indexed.
//!
//! Every call carries the observed composite, and the function reads all of its spec, field by
//! field, once: decoding it into a `serde_json` tree (a `String` and a map insert for every key
//! and string) and dropping that tree again cost as much as the rest of a call without live
//! schemas. So the composite's Struct is taken as its bytes, with an index of them made in the
//! one walk that checks them ([`Struct::merge_indexed`]), and the function reads it through a
//! view of them ([`Struct::view`]). Where the walk refuses the bytes, the Struct is decoded by
//! prost exactly as the generated code did, with the same errors.
//!
//! The composed resources are [`Resource`]s as anywhere else in a request: kept unread.
//!
//! The generator names this type for the message (`extern_path` in `codegen::proto`), and
//! `proto::v1` re-exports it, so the message is used as if it were generated.

use crate::proto::{Resource, Struct};
use prost::bytes::{Buf, BufMut};
use prost::encoding::{
    btree_map, encode_key, encode_varint, encoded_len_varint, key_len, message, skip_field, string,
    DecodeContext, WireType,
};
use prost::DecodeError;
use std::collections::BTreeMap;

/// A composite and its composed resources.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct State {
    /// The composite resource.
    pub composite: Option<Resource>,
    /// Composed resources by composition resource name.
    pub resources: BTreeMap<String, Resource>,
}

const COMPOSITE: u32 = 1;
const RESOURCES: u32 = 2;
/// `Resource.resource`.
const RESOURCE: u32 = 1;

impl prost::Message for State {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(composite) = &self.composite {
            message::encode(COMPOSITE, composite, buf);
        }
        // As `btree_map::encode` writes the map, measuring each resource once rather than
        // twice (for its entry's length, then for its own).
        for (name, resource) in &self.resources {
            let value_len = value_len(resource);
            let entry_len = key_field_len(name) + value_field_len(value_len);
            encode_key(RESOURCES, WireType::LengthDelimited, buf);
            encode_varint(entry_len as u64, buf);
            if !name.is_empty() {
                string::encode(MAP_KEY, name, buf);
            }
            if let Some(len) = value_len {
                encode_key(MAP_VALUE, WireType::LengthDelimited, buf);
                encode_varint(len as u64, buf);
                resource.encode_raw(buf);
            }
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let (field, result) = match tag {
            COMPOSITE => {
                let composite = self.composite.get_or_insert_with(Resource::default);
                let mut kept = KeptResource(composite);
                ("composite", message::merge(wire_type, &mut kept, buf, ctx))
            }
            RESOURCES => (
                "resources",
                btree_map::merge(string::merge, message::merge, &mut self.resources, buf, ctx),
            ),
            _ => return skip_field(wire_type, tag, buf, ctx),
        };
        result.map_err(|mut error| {
            error.push("State", field);
            error
        })
    }

    fn encoded_len(&self) -> usize {
        self.composite
            .as_ref()
            .map_or(0, |composite| message::encoded_len(COMPOSITE, composite))
            + self
                .resources
                .iter()
                .map(|(name, resource)| {
                    let entry = key_field_len(name) + value_field_len(value_len(resource));
                    key_len(RESOURCES) + encoded_len_varint(entry as u64) + entry
                })
                .sum::<usize>()
    }

    fn clear(&mut self) {
        self.composite = None;
        self.resources.clear();
    }
}

/// The fields of a map entry (`map<string, Resource>`): its key, then its value.
const MAP_KEY: u32 = 1;
const MAP_VALUE: u32 = 2;

/// The bytes of a map entry's key field, left out for the empty key as prost leaves it out.
fn key_field_len(name: &str) -> usize {
    if name.is_empty() {
        0
    } else {
        key_len(MAP_KEY) + encoded_len_varint(name.len() as u64) + name.len()
    }
}

/// The length of a map entry's value, a resource; `None` for the default resource, which
/// prost leaves out of the entry. Its fields are compared one by one: `== Resource::default()`
/// builds and drops a resource per call, 1.5% of a call at 100 repositories.
fn value_len(resource: &Resource) -> Option<usize> {
    let default = resource.resource.is_none()
        && resource.connection_details.is_empty()
        && resource.ready == 0;
    (!default).then(|| prost::Message::encoded_len(resource))
}

/// The bytes of a map entry's value field of `len` bytes.
fn value_field_len(len: Option<usize>) -> usize {
    len.map_or(0, |len| {
        key_len(MAP_VALUE) + encoded_len_varint(len as u64) + len
    })
}

/// A composite's `Resource` while it is decoded: its Struct kept as bytes with their index
/// where the walk takes them, every other field (and a Struct it refuses) merged as
/// [`Resource`] merges it.
#[derive(Debug)]
struct KeptResource<'r>(&'r mut Resource);

impl prost::Message for KeptResource<'_> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.0.encode_raw(buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != RESOURCE {
            return self.0.merge_field(tag, wire_type, buf, ctx);
        }
        let resource = &mut self.0.resource;
        Struct::merge_indexed(resource, wire_type, buf, ctx).map_err(|mut error| {
            error.push("Resource", "resource");
            error
        })
    }

    fn encoded_len(&self) -> usize {
        self.0.encoded_len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use serde_json::json;

    /// The map as prost's generic encoder writes it, measuring each value twice.
    fn prost_resources(resources: &BTreeMap<String, Resource>) -> Vec<u8> {
        let mut buf = Vec::new();
        btree_map::encode(
            string::encode,
            string::encoded_len,
            message::encode,
            message::encoded_len,
            RESOURCES,
            resources,
            &mut buf,
        );
        buf
    }

    #[test]
    fn resources_are_written_as_prosts_map_encoding_writes_them() {
        let object = |name: &str| Some(Struct::from_value(json!({"metadata": {"name": name}})));
        let long = "x".repeat(200);
        let resources: BTreeMap<String, Resource> = [
            // prost leaves out an empty key and a default value: each on its own and both.
            (String::new(), Resource::default()),
            ("default".to_owned(), Resource::default()),
            (
                "ready".to_owned(),
                Resource {
                    ready: 1,
                    ..Resource::default()
                },
            ),
            (
                "details".to_owned(),
                Resource {
                    resource: object("details"),
                    connection_details: [("password".to_owned(), b"secret".to_vec())].into(),
                    ready: 2,
                },
            ),
            // A resource and a name of more than 127 bytes: two-byte lengths.
            (
                long.clone(),
                Resource {
                    resource: object(&long),
                    ..Resource::default()
                },
            ),
        ]
        .into();
        let state = State {
            composite: None,
            resources,
        };
        let ours = state.encode_to_vec();
        assert_eq!(ours, prost_resources(&state.resources));
        assert_eq!(state.encoded_len(), ours.len());
        assert_eq!(State::decode(ours.as_slice()).unwrap(), state);
    }
}
