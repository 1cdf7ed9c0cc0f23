//! The pure core: from a RunFunction request to its response, with no I/O,
//! clock or transport. The server, `render` and the WebAssembly module are
//! faces over [`run_function`].
//!
//! The modules follow the concepts of docs/design.md, in the order a call uses them:
//!
//! - [`path`]: field paths, as problems name them;
//! - [`problems`]: a call's problems and warnings, each with its field path, value, rule and fix;
//! - [`reader`]: a JSON object read field by field, unknown fields reported;
//! - [`sorted`]: maps and sets built by inserting (one sort in the WebAssembly builds);
//! - [`time`]: RFC 3339 times and Go durations, parsed;
//! - [`catalog`]: the provider's kinds and schemas, for every release and API;
//! - [`policy`]: management and deletion policies, and the deletion they give;
//! - [`input`]: the step's input;
//! - [`composite`]: what the function reads of the composite and its entries;
//! - [`keys`]: the key of every repository;
//! - [`validation`]: rendered resources checked against the catalog's and the cluster's schemas;
//! - [`plan`]: kind, key and settings of every entry;
//! - [`wiring`]: virtual members and federated URLs, resolved to keys;
//! - [`compose`]: the managed resources;
//! - [`size`]: the response kept within what Crossplane reads;
//! - [`lifecycle`]: what happens to live repositories, one entry per repository through the
//!   call (its `mod.rs` says which file keeps each rule);
//! - [`credentials`]: remote passwords from Secrets;
//! - [`status`]: readiness, the composite's status and the `RepositoriesReady` condition;
//! - [`drift`]: settings the provider accepts but then reports drift on;
//! - [`function`]: the call, from request to response.

pub(crate) mod catalog;
pub(crate) mod compose;
pub(crate) mod composite;
pub(crate) mod credentials;
pub(crate) mod drift;
pub(crate) mod function;
pub(crate) mod input;
pub(crate) mod keys;
pub(crate) mod lifecycle;
pub(crate) mod path;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod problems;
pub(crate) mod reader;
pub(crate) mod size;
pub(crate) mod sorted;
pub(crate) mod status;
pub(crate) mod time;
pub(crate) mod validation;
pub(crate) mod wiring;

pub use function::run_function;
