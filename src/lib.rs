//! function-artifactory: a Crossplane composition function for JFrog Artifactory repositories.

pub mod function;
pub mod proto;

#[cfg(feature = "codegen")]
pub mod codegen;

#[cfg(feature = "server")]
pub mod server;

#[cfg(feature = "server")]
pub mod render;

pub use function::run_function;
