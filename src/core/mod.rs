//! The pure core: from a RunFunction request to its response, with no I/O,
//! clock or transport. The server, `render` and the WebAssembly module are
//! faces over [`run_function`].
//!
//! The modules follow the concepts of docs/design.md, in the order a call
//! uses them (each names only modules above it):
//!
//! - what is read: [`path`], [`problems`], [`reader`], [`catalog`] (the
//!   provider's kinds and schemas), [`policy`], [`input`], [`composite`];
//! - [`keys`]: the key of every repository;
//! - [`plan`]: kind, key and settings of every entry, then [`wiring`]
//!   (virtual members, federated URLs);
//! - [`lifecycle`]: what is live must not be renamed, replaced or lost;
//!   [`credentials`]: remote passwords from Secrets;
//! - [`compose`]: the managed resources, as long as the response stays within
//!   what Crossplane reads ([`size`]); [`status`] and [`drift`]: what the
//!   claim's author sees;
//! - [`function`]: the call, from request to response.

pub(crate) mod adoption;
pub(crate) mod catalog;
pub(crate) mod compose;
pub(crate) mod composite;
pub(crate) mod consequences;
pub(crate) mod credentials;
pub(crate) mod drift;
pub(crate) mod function;
pub(crate) mod input;
pub(crate) mod keys;
pub(crate) mod lifecycle;
pub(crate) mod observed;
pub(crate) mod path;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod problems;
pub(crate) mod reader;
pub(crate) mod size;
pub(crate) mod sorted;
pub(crate) mod status;
pub(crate) mod takeover;
pub(crate) mod time;
pub(crate) mod validation;
pub(crate) mod wiring;

pub use function::run_function;
