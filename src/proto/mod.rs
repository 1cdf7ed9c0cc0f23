//! Crossplane's function protocol (`proto/`), generated with prost.
//!
//! `v1` holds the messages; `v1beta1` holds only the service of the older
//! package name, over the same messages.

#[cfg(feature = "server")]
pub mod codec;
pub mod json;
mod schema;
mod structpb;

pub use schema::Schema;
pub use structpb::{json_number, ListWriter, ObjectWriter, Struct};

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1 {
    include!("generated/v1.rs");
    pub use super::Schema;
}

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod v1beta1 {
    include!("generated/v1beta1.rs");
}
