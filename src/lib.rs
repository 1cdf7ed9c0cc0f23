//! function-artifactory: a Crossplane composition function for JFrog Artifactory repositories.

pub mod api;
pub mod catalog;
pub mod compose;
pub mod contract;
pub mod credentials;
pub mod drift;
pub mod function;
pub mod input;
pub mod keys;
pub mod lifecycle;
pub mod path;
pub mod plain;
pub mod plan;
pub mod policy;
pub mod problems;
pub mod proto;
mod reader;
pub mod schema;
pub mod status;
pub mod time;
pub mod wiring;

#[cfg(feature = "codegen")]
pub mod codegen;

#[cfg(feature = "server")]
pub mod server;

#[cfg(feature = "server")]
pub mod render;

#[cfg(feature = "wasm")]
pub mod wasm;

pub use function::run_function;
