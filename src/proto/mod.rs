//! Crossplane's function protocol (`proto/`), generated with prost.
//!
//! `v1` holds the messages; `v1beta1` holds only the service of the older
//! package name, over the same messages.

#[cfg(feature = "server")]
pub mod codec;
pub mod hash_key;
pub mod json;
pub mod request_key;
mod resource;
mod schema;
mod state;
mod structpb;

pub use resource::Resource;
pub use schema::Schema;
pub use state::State;
pub use structpb::view::{Index, Items, Kind, ListView, Members, ObjectView, View};
pub use structpb::{json_number, EncodedMembers, ListWriter, ObjectWriter, Struct};

/// The largest request the function takes: the gRPC server's default `--max-recv-message-size`
/// (gRPC's usual 4 MiB) and the WebAssembly component's limit.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// A response may be this many times the largest request. A response is the request's desired
/// state plus this function's resources, so a larger one is a bug, refused rather than grown
/// without bound.
pub const RESPONSE_TO_REQUEST_RATIO: usize = 4;

/// The largest response to a request of at most [`MAX_REQUEST_BYTES`].
pub const MAX_RESPONSE_BYTES: usize = MAX_REQUEST_BYTES * RESPONSE_TO_REQUEST_RATIO;

/// What every face says before the decoder's message when bytes are not a request.
pub const NOT_A_REQUEST: &str = "the request is not a valid RunFunctionRequest: ";

/// The message for bytes that do not decode as a `RunFunctionRequest`: the gRPC server's
/// `INVALID_ARGUMENT` message, word for word.
pub fn not_a_request(error: prost::DecodeError) -> String {
    format!("{NOT_A_REQUEST}{error}")
}

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1 {
    include!("generated/v1.rs");
    pub use super::{Resource, Schema, State};
}

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1beta1 {
    include!("generated/v1beta1.rs");
}
