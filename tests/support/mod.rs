//! Helpers shared by the integration tests: each test file says `mod support;`.
#![allow(dead_code)]

pub mod crd;
pub mod render;
pub mod requests;
pub mod server;
pub mod vectors;
