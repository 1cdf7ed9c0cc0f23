#!/usr/bin/env bash
# Tests the WebAssembly face on a fresh machine: installs what it needs (the wasm32
# target, the pinned wasm-bindgen CLI, the JS test dependencies from wasm/package-lock.json,
# Debian's chromium without recommended packages when /usr/bin/chromium is missing, as root),
# builds pkg/, then runs the Node tests against the shared vectors, the playground in headless
# Chromium (screenshots in wasm/artifacts/), and the benchmark (figures only, no timing
# assertions). SKIP_BROWSER=1 (or no chromium and not root) skips the browser test, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "build pkg/"
scripts/build-wasm.sh

step "JS test dependencies"
(cd wasm && npm ci --no-audit --no-fund)

browser=${SKIP_BROWSER:+no}
if [ -z "$browser" ] && [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        step "chromium (Debian, without recommended packages)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        echo "chromium is missing and installing it needs root and apt-get: the browser test is SKIPPED"
        browser=no
    fi
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
