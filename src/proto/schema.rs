//! `Schema` (`run_function.proto`), written by hand so that a live schema is read lazily.
//!
//! Crossplane sends the OpenAPI schema of every kind a function asked for on every call, 30 to
//! 70 kB each, and the function has compiled each before: decoding the tree only to find it in
//! the cache cost more than the rest of the call. So the schema's Struct is taken as bytes and
//! its content hash computed in one walk ([`Struct::from_wire`]); it is decoded only if it is
//! read, which the function does only for a schema it has not compiled yet. Where the walk
//! cannot vouch for the bytes, the Struct is decoded by prost exactly as the generated code
//! did, with the same errors (`tests.rs` decodes damaged messages with both).
//!
//! The generator names this type for the message (`extern_path` in `codegen::proto`), and
//! `proto::v1` re-exports it, so the message is used as if it were generated.

use crate::proto::Struct;
use prost::bytes::{Buf, BufMut};
use prost::encoding::{message, skip_field, DecodeContext, WireType};
use prost::DecodeError;

/// What Crossplane answered for one schema requirement: the kind's OpenAPI v3 schema, or none
/// when no CRD serves the kind.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct Schema {
    /// The schema, as the API server's OpenAPI document has it with references inlined.
    pub openapi_v3: Option<Struct>,
}

const OPENAPI_V3: u32 = 1;

impl prost::Message for Schema {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(schema) = &self.openapi_v3 {
            message::encode(OPENAPI_V3, schema, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != OPENAPI_V3 {
            return skip_field(wire_type, tag, buf, ctx);
        }
        Struct::merge_kept(&mut self.openapi_v3, wire_type, buf, ctx, Struct::from_wire).map_err(
            |mut error| {
                error.push("Schema", "openapi_v3");
                error
            },
        )
    }

    fn encoded_len(&self) -> usize {
        self.openapi_v3
            .as_ref()
            .map_or(0, |schema| message::encoded_len(OPENAPI_V3, schema))
    }

    fn clear(&mut self) {
        self.openapi_v3 = None;
    }
}
