//! `State` (`run_function.proto`), written by hand so that a composite is kept indexed.
//!
//! Every call carries the observed composite, and the function reads all of its spec, field by
//! field, once: decoding it into a `serde_json` tree (a `String` and a map insert for every key
//! and string) and dropping that tree again cost as much as the rest of a call without live
//! schemas. So the composite's Struct is taken as its bytes, with an index of them made in the
//! one walk that checks them ([`Struct::kept_from_wire`]), and the function reads it through a
//! view of them ([`Struct::view`]). Where the walk refuses the bytes, the Struct is decoded by
//! prost exactly as the generated code did, with the same errors.
//!
//! The composed resources are [`Resource`]s as anywhere else in a request: kept unread.
//!
//! The generator names this type for the message (`extern_path` in `codegen::proto`), and
//! `proto::v1` re-exports it, so the message is used as if it were generated.

use crate::proto::{Resource, Struct};
use prost::bytes::{Buf, BufMut};
use prost::encoding::{btree_map, message, skip_field, string, DecodeContext, WireType};
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
        btree_map::encode(
            string::encode,
            string::encoded_len,
            message::encode,
            message::encoded_len,
            RESOURCES,
            &self.resources,
            buf,
        );
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
            + btree_map::encoded_len(
                string::encoded_len,
                message::encoded_len,
                RESOURCES,
                &self.resources,
            )
    }

    fn clear(&mut self) {
        self.composite = None;
        self.resources.clear();
    }
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
        Struct::merge_kept(resource, wire_type, buf, ctx, Struct::kept_from_wire).map_err(
            |mut error| {
                error.push("Resource", "resource");
                error
            },
        )
    }

    fn encoded_len(&self) -> usize {
        self.0.encoded_len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}
