#!/usr/bin/env bash
# Tests the WebAssembly component for function-wasm (docs/wasm-component.md): builds it with
# scripts/build-component.sh (which installs what the build needs), builds it a second time to
# check the artifact's digest does not change, checks the OCI layout with skopeo when present,
# then runs the component host tests (tests/component-host/: wasmtime, its own Cargo.lock).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "build the component"
first=$(scripts/build-component.sh | tee /dev/stderr | awk '/^target\/wasmfn\/oci: / {print $2}')

step "a second build gives the same digest"
second=$(scripts/build-component.sh 2>/dev/null | awk '/^target\/wasmfn\/oci: / {print $2}')
if [ -z "$first" ] || [ "$first" != "$second" ]; then
    echo "the artifact is not reproducible: $first, then $second" >&2
    exit 1
fi
echo "$first, twice"

if command -v skopeo >/dev/null; then
    step "the OCI layout reads as an artifact (skopeo)"
    version=$(awk -F'"' '/^version = / {print $2; exit}' Cargo.toml)
    skopeo inspect --raw "oci:target/wasmfn/oci:$version" | grep -q '"application/vnd.wasmfn.manifest.v1+json"'
    echo "oci:target/wasmfn/oci:$version has the wasm and manifest layers"
fi

step "the component in wasmtime (tests/component-host)"
cargo test --locked --manifest-path tests/component-host/Cargo.toml --target-dir target/component-host
