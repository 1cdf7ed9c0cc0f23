#!/usr/bin/env bash
# Tests the WebAssembly face on a fresh machine: installs what it needs (the wasm32
# target, the pinned wasm-bindgen CLI, the JS test dependencies from wasm/package-lock.json,
# Debian's chromium without recommended packages when it is missing, as root: scripts/lib/install.sh),
# builds pkg/, then runs the Node tests against the shared vectors, the playground in headless
# Chromium (screenshots in wasm/artifacts/), and the benchmark (figures only, no timing
# assertions). SKIP_BROWSER=1 (or no chromium and not root) skips the browser test, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/install.sh
. scripts/lib/install.sh

step() { printf '\n== %s\n' "$*"; }

step "build pkg/"
scripts/build-wasm.sh

step "JS test dependencies"
(cd wasm && npm ci --no-audit --no-fund)

browser=${SKIP_BROWSER:+no}
if [ -z "$browser" ] && ! install_debian "the playground test" "${DEBIAN_BROWSER[@]}"; then
    echo "chromium is missing and cannot be installed here: the browser test is SKIPPED"
    browser=no
fi

step "Node tests: the shared vectors and the JS API"
(cd wasm && node --test --test-reporter=spec test/*.test.mjs)

if [ "$browser" = no ]; then
    step "the playground in headless Chromium: SKIPPED (no chromium)"
else
    step "the playground in headless Chromium"
    (cd wasm && node --test --test-reporter=spec browser/*.test.mjs)
    echo "screenshots: $(ls wasm/artifacts/*.png | tr '\n' ' ')"
fi

step "benchmark"
node wasm/bench.mjs
