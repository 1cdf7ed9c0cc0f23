//! `Resource` (`run_function.proto`), written by hand so that a resource's object is kept
//! unread.
//!
//! A reconcile after a claim's first carries every composed resource, observed (and again, in
//! the second call, as the resources found for the `artifactory-key-*` requirements): with the
//! provider's status and the API server's `managedFields`, a few kB each. The function reads a
//! few fields of each; the desired ones of earlier steps it hands on as they came. Decoding them
//! into `serde_json` trees, or even walking them to index them, cost more than all the rest of
//! such a call. So a resource's Struct is taken as its bytes with nothing read of them
//! ([`Struct::unread_from_wire`]), the function reads the fields it needs through a view of
//! them ([`Struct::view`]), and a resource handed on is written back as those bytes. The
//! composites, which the function reads whole, are indexed instead (`proto::State`).
//!
//! The generator names this type for the message (`extern_path` in `codegen::proto`), and
//! `proto::v1` re-exports it, so the message is used as if it were generated.

use crate::proto::Struct;
use prost::bytes::{Buf, BufMut};
use prost::encoding::{
    btree_map, bytes, int32, message, skip_field, string, DecodeContext, WireType,
};
use prost::DecodeError;
use std::collections::BTreeMap;

/// A composite or composed resource (`run_function.proto`): the object, its connection details
/// and whether it is ready, with the generated code's fields and encoding.
///
/// Written by hand for one difference: the object's Struct is kept as its bytes, unread
/// ([`Struct::unread_from_wire`]), wherever in a request the resource comes but as a composite
/// (which `proto::State` keeps indexed). Every other field, and a second object field, is merged
/// as the generated code merges it.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct Resource {
    /// The whole object as JSON.
    pub resource: Option<Struct>,
    /// Connection details, key to bytes.
    pub connection_details: BTreeMap<String, Vec<u8>>,
    /// Whether the resource is ready (`Ready`); unspecified lets Crossplane decide.
    pub ready: i32,
}

const RESOURCE: u32 = 1;
const CONNECTION_DETAILS: u32 = 2;
const READY: u32 = 3;

impl prost::Message for Resource {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(resource) = &self.resource {
            message::encode(RESOURCE, resource, buf);
        }
        btree_map::encode(
            string::encode,
            string::encoded_len,
            bytes::encode,
            bytes::encoded_len,
            CONNECTION_DETAILS,
            &self.connection_details,
            buf,
        );
        if self.ready != 0 {
            int32::encode(READY, &self.ready, buf);
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
            RESOURCE => (
                "resource",
                Struct::merge_kept(
                    &mut self.resource,
                    wire_type,
                    buf,
                    ctx,
                    Struct::unread_from_wire,
                ),
            ),
            CONNECTION_DETAILS => (
                "connection_details",
                btree_map::merge(
                    string::merge,
                    bytes::merge,
                    &mut self.connection_details,
                    buf,
                    ctx,
                ),
            ),
            READY => ("ready", int32::merge(wire_type, &mut self.ready, buf, ctx)),
            _ => return skip_field(wire_type, tag, buf, ctx),
        };
        result.map_err(|mut error| {
            error.push("Resource", field);
            error
        })
    }

    fn encoded_len(&self) -> usize {
        self.resource
            .as_ref()
            .map_or(0, |resource| message::encoded_len(RESOURCE, resource))
            + btree_map::encoded_len(
                string::encoded_len,
                bytes::encoded_len,
                CONNECTION_DETAILS,
                &self.connection_details,
            )
            + if self.ready != 0 {
                int32::encoded_len(READY, &self.ready)
            } else {
                0
            }
    }

    fn clear(&mut self) {
        *self = Resource::default();
    }
}
