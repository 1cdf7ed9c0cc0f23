#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what the tests
# need, then format, lint, the Rust tests (all features), the wasm32 build of
# the core, and the WebAssembly package (scripts/test-wasm.sh). Tests that need
# ../shared (full CRD validation, the catalog drift check) print SKIP lines
# where it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "toolchain components and targets"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target add wasm32-unknown-unknown

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --all-targets --all-features -- -D warnings

step "the core builds for wasm32-unknown-unknown"
cargo check --lib --no-default-features --target wasm32-unknown-unknown

step "tests"
cargo test --all-features

step "the WebAssembly module, its playground and benchmark"
scripts/test-wasm.sh
