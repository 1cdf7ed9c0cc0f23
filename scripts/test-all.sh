#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what the tests
# need, then format, lint, the Rust tests (all features), the wasm32 build of
# the core, a short soak of the server (scripts/soak.sh) and the WebAssembly package
# (scripts/test-wasm.sh). The provider CRDs that rendered resources are
# validated against are in the repository (crds/), so CRD validation never
# skips; the package tests print SKIP lines where skopeo and umoci could not be
# installed.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "toolchain components and targets"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target add wasm32-unknown-unknown
# The static binary of the Function package (tests/package.rs).
rustup target add x86_64-unknown-linux-musl || echo "WARNING: no musl target: the package test uses a dynamic binary"

step "system packages: skopeo and umoci (OCI tools), musl-gcc (the static build's C code), h2load (the soak)"
missing=()
command -v skopeo >/dev/null || missing+=(skopeo)
command -v umoci >/dev/null || missing+=(umoci)
command -v musl-gcc >/dev/null || missing+=(musl-tools)
command -v h2load >/dev/null || missing+=(nghttp2-client)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "WARNING: cannot install ${missing[*]} (needs apt-get as root): the package tests will SKIP"
  fi
fi

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --all-targets --all-features -- -D warnings

step "the core builds for wasm32-unknown-unknown"
cargo check --lib --no-default-features --target wasm32-unknown-unknown

step "tests"
cargo test --all-features

step "soak (short): 5,000 calls at 64 in flight over loopback, no failure, RSS growth under 2 MB"
# The full one (200,000 calls, release build) is scripts/soak.sh; see RELIABILITY.md.
PROFILE=debug TIME_LIMIT=300 scripts/soak.sh 5000 64

step "the WebAssembly module, its playground and benchmark"
scripts/test-wasm.sh
