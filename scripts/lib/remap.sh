# shellcheck shell=bash
# The RUSTFLAGS of the WebAssembly builds (scripts/build-wasm.sh, scripts/build-component.sh)
# that take this machine's paths out of the module. Panic locations name their source files,
# and a module keeps those names as text: the project's own as `./src/...`, a registry crate's
# as `dep/NAME-VERSION/src/...`. The same sources then give the same bytes wherever they are
# built, and every byte of a prefix is a byte of the module (85 registry paths in the npm
# module: `/root/.cargo/registry/src/index.crates.io-<hash>/` cost 59 bytes each, `dep/` 4).
# A registry directory matches both flags; rustc takes the last that matches.
remap_rustflags() {
  local registry=${CARGO_HOME:-$HOME/.cargo}/registry/src index
  local flags="--remap-path-prefix=$PWD=. --remap-path-prefix=$registry=dep"
  for index in "$registry"/*/; do
    [ -d "$index" ] && flags+=" --remap-path-prefix=${index%/}=dep"
  done
  printf '%s' "$flags"
}
