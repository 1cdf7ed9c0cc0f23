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
//! - [`compose`]: the managed resources; [`status`] and [`drift`]: what the
//!   claim's author sees;
//! - [`function`]: the call, from request to response.

pub mod catalog;
pub mod compose;
pub mod composite;
pub mod credentials;
pub mod drift;
pub mod function;
pub mod input;
pub mod keys;
pub mod lifecycle;
pub mod path;
pub mod plan;
pub mod policy;
pub mod problems;
pub(crate) mod reader;
pub mod status;
pub mod time;
pub mod validation;
pub mod wiring;

pub use function::run_function;
