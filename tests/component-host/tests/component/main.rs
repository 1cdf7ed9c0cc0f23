//! The component in a component host (`component_host::Host`, wasmtime as function-wasm runs
//! it), held to the native core. One test binary, so the component is compiled once.

mod answers;
mod config;
mod examples;
mod limits;
mod rules;
mod runtime;
