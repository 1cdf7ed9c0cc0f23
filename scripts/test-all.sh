#!/usr/bin/env bash
# Runs every test of the project on a new machine: installs what the tests need (said
# first, each thing named: scripts/lib/install.sh), then format, lint, the wasm32 build of the
# core, the Rust tests (all features, the Function package for amd64 and arm64 included), the
# instructions per call against their committed baseline (scripts/instructions.sh), a short
# soak of the server (scripts/soak.sh), the WebAssembly package (scripts/test-wasm.sh) and the
# WebAssembly component in wasmtime (scripts/test-component.sh).
# The provider CRDs that rendered resources are validated against are in the repository (crds/),
# so CRD validation never skips. Debian packages are installed as root (or with passwordless
# sudo); without either, the checks that need a missing package are skipped, and the summary at
# the end lists what ran and what was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/install.sh
. scripts/lib/install.sh

step() { printf '\n== %s\n' "$*"; }

ran=()
skipped=()
summary() {
  local status=$?
  printf '\n== summary\n'
  for check in "${ran[@]}"; do printf '  ran      %s\n' "$check"; done
  for check in "${skipped[@]}"; do printf '  SKIPPED  %s\n' "$check"; done
  if [ "$status" -ne 0 ]; then printf '  FAILED   (exit %s) at the step above the summary\n' "$status"; fi
}
trap summary EXIT

step "what this installs (where missing)"
cat <<LIST
rustup: components rustfmt, clippy; targets wasm32-unknown-unknown, wasm32-wasip2, x86_64-unknown-linux-musl, aarch64-unknown-linux-musl
Debian (apt-get install --no-install-recommends):
  the Function package's binaries: ${DEBIAN_PACKAGE_BUILD_AMD64[*]} ${DEBIAN_PACKAGE_BUILD_ARM64[*]}
  the package tests: ${DEBIAN_PACKAGE_TESTS[*]}
  the soak: ${DEBIAN_SOAK[*]}
  the playground test: ${DEBIAN_BROWSER[*]}
  render's YAML compared with Go's sigs.k8s.io/yaml: ${DEBIAN_GO_YAML[*]}
  the instruction-count guard: ${DEBIAN_PROFILE[*]}
cargo: wasm-bindgen-cli at the version in Cargo.lock (scripts/build-wasm.sh)
npm: the packages of wasm/package-lock.json, in wasm/node_modules (npm ci)
npm: binaryen's wasm-opt for both WebAssembly builds, tools/binaryen/package-lock.json (npm ci)
LIST

step "toolchain components and targets"
install_rust_component rustfmt clippy
install_rust_target wasm32-unknown-unknown wasm32-wasip2 x86_64-unknown-linux-musl aarch64-unknown-linux-musl

step "Debian packages"
package_tools=yes
install_debian "the Function package" "${DEBIAN_PACKAGE_BUILD_AMD64[@]}" "${DEBIAN_PACKAGE_BUILD_ARM64[@]}" "${DEBIAN_PACKAGE_TESTS[@]}" || package_tools=no
soak_tools=yes
install_debian "the soak" "${DEBIAN_SOAK[@]}" || soak_tools=no
browser=yes
install_debian "the playground test" "${DEBIAN_BROWSER[@]}" || browser=no
go_yaml=yes
install_debian "render's YAML compared with Go's" "${DEBIAN_GO_YAML[@]}" || go_yaml=no
instruction_tools=yes
install_debian "the instruction-count guard" "${DEBIAN_PROFILE[@]}" || instruction_tools=no

step "format"
cargo fmt --all -- --check
ran+=("format (cargo fmt --check)")

step "lint"
cargo clippy --workspace --all-targets --all-features -- -D warnings
ran+=("lint (cargo clippy -D warnings)")

step "the core builds for wasm32-unknown-unknown"
cargo check --lib --no-default-features --target wasm32-unknown-unknown
ran+=("the core builds for wasm32")

step "tests"
# crates/go-yaml/tests/go_yaml.rs and tests/cli/go_yaml_render.rs compare render's YAML with Go's
# (the workspace's tests run both): where Go is installed they must not skip.
if [ "$go_yaml" = yes ]; then export REQUIRE_GO_YAML=1; fi
cargo test --workspace --all-features
ran+=("cargo test --workspace --all-features (CRD validation against crds/ included)")
if [ "$go_yaml" = yes ]; then
  ran+=("render's YAML against Go's sigs.k8s.io/yaml (crates/go-yaml/tests/go_yaml.rs, tests/cli/go_yaml_render.rs)")
else
  skipped+=("render's YAML against Go: ${DEBIAN_GO_YAML[*]} missing (crates/go-yaml/tests/go_yaml.rs and tests/cli/go_yaml_render.rs printed SKIP)")
fi
if [ "$package_tools" = yes ]; then
  ran+=("the package tests (amd64 and arm64 images: skopeo, umoci, qemu-user)")
else
  skipped+=("the package tests: Debian packages missing (they printed SKIP lines)")
fi

step "instructions per call against the committed baseline (at most ${TOLERANCE:-5}% over)"
# callgrind on profile-call for the benchmark's claims, a settled claim and each lifecycle phase's
# test vector (scripts/instructions.sh; --bless rewrites benches/instructions-baseline.tsv).
if [ "$instruction_tools" = yes ]; then
  scripts/instructions.sh
  ran+=("instructions per call within ${TOLERANCE:-5}% of benches/instructions-baseline.tsv (callgrind)")
else
  skipped+=("the instruction-count guard: ${DEBIAN_PROFILE[*]} missing")
fi

step "soak (short): 5,000 calls at 64 in flight over loopback, no failure, RSS growth under 2 MB"
# The full one (200,000 calls, release build) is scripts/soak.sh; see RELIABILITY.md.
if [ "$soak_tools" = yes ]; then
  PROFILE=debug TIME_LIMIT=300 scripts/soak.sh 5000 64
  ran+=("soak (5,000 calls)")
else
  skipped+=("soak: ${DEBIAN_SOAK[*]} missing")
fi

step "the WebAssembly module, its playground and benchmark"
if [ "$browser" = yes ]; then
  scripts/test-wasm.sh
  ran+=("WebAssembly: Node tests, the playground in Chromium, benchmark")
else
  SKIP_BROWSER=1 scripts/test-wasm.sh
  ran+=("WebAssembly: Node tests, benchmark")
  skipped+=("the playground in a real browser: ${DEBIAN_BROWSER[*]} missing")
fi

step "the WebAssembly component for function-wasm: build twice (one digest), tests in wasmtime"
scripts/test-component.sh
ran+=("WebAssembly component: reproducible build, OCI layout, tests in wasmtime (tests/component-host)")
