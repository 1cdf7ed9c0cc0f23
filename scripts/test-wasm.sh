#!/usr/bin/env bash
# Tests the WebAssembly face on a fresh machine: installs what it needs (the wasm32
# target, the pinned wasm-bindgen CLI, the JS test dependencies from wasm/package-lock.json,
# Debian's chromium when /usr/bin/chromium is missing), builds pkg/, then runs the Node
# tests against the shared vectors, the playground in headless Chromium (screenshots in
# wasm/artifacts/), and the benchmark (figures only, no timing assertions).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "build pkg/"
scripts/build-wasm.sh

step "JS test dependencies"
(cd wasm && npm ci --no-audit --no-fund)

if [ ! -x /usr/bin/chromium ]; then
    step "chromium (Debian)"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi

step "Node tests: the shared vectors and the JS API"
(cd wasm && node --test --test-reporter=spec test/*.test.mjs)

step "the playground in headless Chromium"
(cd wasm && node --test --test-reporter=spec browser/*.test.mjs)
echo "screenshots: $(ls wasm/artifacts/*.png | tr '\n' ' ')"

step "benchmark"
node wasm/bench.mjs
