//! function-artifactory: a Crossplane composition function for JFrog Artifactory repositories.
//!
//! The layout is the design (docs/design.md):
//! - `core`: the pure render logic, from a RunFunction request to its response, with no I/O,
//!   clock or transport; it builds for wasm32 with no feature. Its surface here:
//!   [`run_function`] and its variants, [`catalog`], [`lifecycle`] (the phase table) and
//!   [`validation`];
//! - [`proto`]: the protocol, the generated message types and the `Struct` codec;
//! - the faces over the core, each only translating:
//!   - [`server`]: the gRPC function (feature `server`);
//!   - [`render`]: the `render` command (feature `server`);
//!   - [`adopt`]: the `adopt` command, claims from a live Artifactory (feature `server`);
//!   - [`wasm`]: the npm module's bindings (feature `wasm`);
//!   - [`component`]: the WebAssembly component function-wasm runs (feature `component`);
//! - [`codegen`] (feature `codegen`): the generators of the checked-in data.
//!
//! `scripts/test-all.sh` checks that the core builds with no feature, so it
//! cannot name the faces.

#![warn(unreachable_pub, missing_docs)]

mod core;
pub mod proto;

pub use crate::core::composite::CROSSPLANE_SPEC_FIELDS;
pub use crate::core::function::{run_function_at, run_function_with_findings};
pub use crate::core::input::SettingsAt;
pub use crate::core::run_function;

/// The kind catalog: which provider kind renders a repository of a class and package type,
/// for each provider release and API, with its schema.
pub mod catalog {
    pub use crate::core::catalog::{catalog, Catalog, ProviderApi, Rclass};
}

/// The phase table (docs/lifecycle.md, "Phases"): each phase `status.repositories[].phase`
/// names, what it renders, whether it can be ready, what the call says of it and what it lets
/// the provider change (`core::lifecycle::phase`).
pub mod lifecycle {
    pub use crate::core::lifecycle::phase::{Change, PhaseName, Rendering};
}

/// Objects checked against an OpenAPI schema as the API server checks a custom resource, CEL
/// rules included, and the live schemas a cluster serves (`core::validation`).
pub mod validation {
    pub use crate::core::validation::live::{cache_size, requirement_name, LiveSchemas};
    pub use crate::core::validation::openapi::{
        apply_defaults, failed_rule, field_path, index_path, json_type, shown_rule, CompiledSchema,
        Instance,
    };
}

#[cfg(feature = "codegen")]
pub mod codegen;

#[cfg(feature = "server")]
pub mod server;

#[cfg(feature = "server")]
pub mod render;

#[cfg(feature = "server")]
pub mod adopt;

#[cfg(feature = "wasm")]
pub mod wasm;

#[cfg(feature = "component")]
pub mod component;
