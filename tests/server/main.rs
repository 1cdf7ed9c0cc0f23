//! The gRPC server: the built binary run as a child process on loopback, its transport, TLS,
//! limits, probes and shutdown, hostile peers, what it logs, and the content hashes it keys per
//! process. One test binary (docs/development.md, "Tests", indexes every module).
//!
//! No test here keys this process's content hashes: `hash_key` does it only in a child process
//! it runs for its one test (this binary again, filtered to that test), so every other test of
//! the binary keeps the fixed key, as it did in a binary of its own.

#[path = "../support/mod.rs"]
mod support;

/// The gRPC face over loopback: insecure, mTLS, v1/v1beta1, health, limits, SIGTERM.
mod grpc;
/// Content hashes keyed per process: one key in a process, another in the next.
mod hash_key;
/// Hostile connections: slow, idle, flooding and failing peers are bounded.
mod hostile_connections;
/// `--debug` logs no credential or Secret value.
mod secrets_in_logs;
