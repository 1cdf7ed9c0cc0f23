#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what the tests
# need, then format, lint, the Rust tests (all features), the wasm32 build of
# the core, a short soak of the server (scripts/soak.sh) and the WebAssembly package
# (scripts/test-wasm.sh) and the WebAssembly component in wasmtime (scripts/test-component.sh). The provider CRDs that rendered resources are
# validated against are in the repository (crds/), so CRD validation never
# skips. What it installs is said first; as root it installs Debian packages with
# apt-get (without recommended packages); otherwise the checks that need a missing
# one are skipped, and the summary at the end lists what ran and what was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

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

# Debian packages the tests use, and what for.
declare -A needed=(
  [skopeo]="skopeo:the package tests (OCI image layout)"
  [umoci]="umoci:the package tests (unpacking the image)"
  [musl-gcc]="musl-tools:the static binary of the package"
  [aarch64-linux-gnu-gcc]="gcc-aarch64-linux-gnu:the arm64 binary of the package (cross C compiler and linker)"
  [qemu-aarch64]="qemu-user:the package tests (running the arm64 binary)"
  [h2load]="nghttp2-client:the soak (load over HTTP/2)"
  [/usr/bin/chromium]="chromium:the playground test in a real browser"
  [wasm-opt]="binaryen:wasm-opt, the size of the WebAssembly component"
)
missing=()
for command in "${!needed[@]}"; do
  if ! command -v "$command" >/dev/null && [ ! -x "$command" ]; then
    missing+=("${needed[$command]%%:*}")
  fi
done

step "what this installs"
echo "rustup: rustfmt, clippy, targets wasm32-unknown-unknown, wasm32-wasip2, x86_64-unknown-linux-musl and aarch64-unknown-linux-musl"
echo "cargo: wasm-bindgen-cli at the version in Cargo.lock (scripts/build-wasm.sh)"
echo "npm: the packages of wasm/package-lock.json, in wasm/node_modules"
if [ ${#missing[@]} -gt 0 ]; then
  echo "Debian (apt-get install --no-install-recommends): ${missing[*]}"
else
  echo "Debian: nothing (every package is present)"
fi

step "toolchain components and targets"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target add wasm32-unknown-unknown
# The static binary of the Function package (tests/package.rs).
rustup target add x86_64-unknown-linux-musl || echo "WARNING: no musl target: the package test uses a dynamic binary"
rustup target add aarch64-unknown-linux-musl

if [ ${#missing[@]} -gt 0 ]; then
  step "system packages: ${missing[*]}"
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "not root (or no apt-get): not installing ${missing[*]}; the checks that need them are skipped"
  fi
fi
has() { command -v "$1" >/dev/null || [ -x "$1" ]; }

step "format"
cargo fmt --all -- --check
ran+=("format (cargo fmt --check)")

step "lint"
cargo clippy --all-targets --all-features -- -D warnings
ran+=("lint (cargo clippy -D warnings)")

step "the core builds for wasm32-unknown-unknown"
cargo check --lib --no-default-features --target wasm32-unknown-unknown
ran+=("the core builds for wasm32")

step "tests"
cargo test --all-features
ran+=("cargo test --all-features (CRD validation against crds/ included)")
if has skopeo && has umoci && has aarch64-linux-gnu-gcc && has qemu-aarch64; then
  ran+=("the package tests (amd64 and arm64 images: skopeo, umoci, qemu-user)")
else
  skipped+=("the package tests: skopeo, umoci, gcc-aarch64-linux-gnu or qemu-user missing (they printed SKIP lines)")
fi

step "soak (short): 5,000 calls at 64 in flight over loopback, no failure, RSS growth under 2 MB"
# The full one (200,000 calls, release build) is scripts/soak.sh; see RELIABILITY.md.
if has h2load; then
  PROFILE=debug TIME_LIMIT=300 scripts/soak.sh 5000 64
  ran+=("soak (5,000 calls)")
else
  skipped+=("soak: h2load (nghttp2-client) missing")
fi

step "the WebAssembly module, its playground and benchmark"
if has /usr/bin/chromium; then
  scripts/test-wasm.sh
  ran+=("WebAssembly: Node tests, the playground in Chromium, benchmark")
else
  SKIP_BROWSER=1 scripts/test-wasm.sh
  ran+=("WebAssembly: Node tests, benchmark")
  skipped+=("the playground in a real browser: chromium missing")
fi

step "the WebAssembly component for function-wasm: build twice (one digest), tests in wasmtime"
scripts/test-component.sh
ran+=("WebAssembly component: reproducible build, OCI layout, tests in wasmtime (tests/component-host)")
