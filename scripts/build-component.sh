#!/usr/bin/env bash
# Builds the function as a WebAssembly component for function-wasm (docs/wasm-component.md):
#   target/wasmfn/function-artifactory.wasm  the component, world wasmfn:function@2.0.0 (wit/world.wit)
#   target/wasmfn/wasmfn.yaml                the module manifest (generated: wasmfn.yaml)
#   target/wasmfn/oci/                       the artifact as an OCI image layout (CNCF Wasm OCI format)
# and prints the artifact's digest, which a Composition pins. Two builds give one digest.
#
# How: the core is linked for wasm32-wasip2 as a core module (`--skip-wit-component`, so that
# wasm-opt, which cannot read components, can optimise it), pre-initialised by
# tools/wasmfn-preinit (its `wizer-initialize` export run once and the memory it leaves written
# into the module: every instance starts with the catalog and CEL's environment built),
# optimised with wasm-opt -Oz, then made a component by tools/wasmfn-pack (wit-component, the
# encoder rustc's wasm32-wasip2 linker runs). It installs what it needs
# (scripts/lib/install.sh): the wasm32-wasip2 target, binaryen's wasm-opt pinned in
# tools/binaryen (npm ci), and builds tools/wasmfn-preinit and tools/wasmfn-pack from their own
# Cargo.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/install.sh
. scripts/lib/install.sh
# shellcheck source=lib/remap.sh
. scripts/lib/remap.sh

step() { printf '\n== %s\n' "$*"; }

out=target/wasmfn
mkdir -p "$out"

step "target wasm32-wasip2 and wasm-opt"
install_rust_target wasm32-wasip2
install_wasm_opt
"$WASM_OPT" --version

step "the core module for wasm32-wasip2 (profile wasm)"
# Paths are remapped so the module holds no path of this machine (scripts/lib/remap.sh).
export RUSTFLAGS="$(remap_rustflags) -Clink-arg=--skip-wit-component"
cargo rustc --locked --profile wasm --lib --no-default-features --features component \
    --target wasm32-wasip2 --crate-type cdylib
unset RUSTFLAGS
core=target/wasm32-wasip2/wasm/function_artifactory.wasm

step "pre-initialisation (tools/wasmfn-preinit)"
# Before wasm-opt: it then drops the initialisation's code, no longer exported, and packs the
# snapshot's data.
cargo build --locked --release --manifest-path tools/wasmfn-preinit/Cargo.toml --target-dir target/tools
target/tools/release/wasmfn-preinit "$core" "$out/prepared.wasm"

step "wasm-opt -Oz"
"$WASM_OPT" -Oz "${WASM_OPT_FEATURES[@]}" "$out/prepared.wasm" -o "$out/core.wasm"
rm "$out/prepared.wasm"

step "the component (tools/wasmfn-pack)"
cargo build --locked --release --manifest-path tools/wasmfn-pack/Cargo.toml --target-dir target/tools
pack=target/tools/release/wasmfn-pack
"$pack" componentize "$out/core.wasm" "$out/function-artifactory.wasm"
rm "$out/core.wasm"
"$pack" wit "$out/function-artifactory.wasm"

step "the module manifest and the OCI image layout"
cp wasmfn.yaml "$out/wasmfn.yaml"
digest=$("$pack" oci "$out/function-artifactory.wasm" "$out/wasmfn.yaml" "$out/oci")

size=$(wc -c <"$out/function-artifactory.wasm")
gzipped=$(gzip -9 -c "$out/function-artifactory.wasm" | wc -c)
echo "$out/function-artifactory.wasm: $size bytes, $gzipped gzipped"
echo "$out/oci: $digest"
# The component's size budget (BENCHMARKS.md, Method, "Goals"): said on every build; it fails
# the build with SIZE_BUDGET=enforce (not the default while issue 53 is open).
budget=1500000
if [ "$size" -ge "$budget" ]; then
    echo "the component is $size bytes: at or over its budget of $budget bytes (BENCHMARKS.md)" >&2
    if [ "${SIZE_BUDGET:-warn}" = enforce ]; then exit 1; fi
fi
