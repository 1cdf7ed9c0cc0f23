//! Helpers shared by the integration tests: each binary's `tests/<area>/main.rs` declares it once
//! (`#[path = "../support/mod.rs"] mod support;`) and its modules say `use crate::support;`.
//! Each binary uses part of it.
#![allow(dead_code)]

pub mod crd;
pub mod render;
pub mod requests;
pub mod server;
pub mod vectors;
