# shellcheck shell=bash
# What the project's scripts install on a new machine, each thing named, in one place.
# Sourced by scripts/test-all.sh, build-xpkg.sh, build-wasm.sh, test-wasm.sh and soak.sh.
#
# A new machine of the kind CI and developers use has a Rust toolchain (rustup), gcc, git,
# curl, Node.js with npm and Python; everything else the scripts use is installed here:
# Debian packages with apt-get (as root, or through passwordless sudo; never their
# recommended packages, so every package needed is named), Rust targets and components with
# rustup, and cargo tools at pinned versions.

# Debian packages, by what needs them.
# The static binaries of the Function package: musl's C compiler wrapper for amd64, and for
# arm64 Debian's cross gcc with the C library headers it compiles ring's and mimalloc's C
# against (libc6-dev-arm64-cross is only a Recommends of gcc-aarch64-linux-gnu).
DEBIAN_PACKAGE_BUILD_AMD64=(musl-tools)
DEBIAN_PACKAGE_BUILD_ARM64=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# The package tests: reading the OCI layout, unpacking the images, running the arm64 binary.
DEBIAN_PACKAGE_TESTS=(skopeo umoci qemu-user)
# The soak: load over HTTP/2.
DEBIAN_SOAK=(nghttp2-client)
# Instruction counts: the guard of the test command (scripts/instructions.sh) and the
# benchmark report (scripts/bench-report.sh).
DEBIAN_PROFILE=(valgrind)
# The playground test in a real browser.
DEBIAN_BROWSER=(chromium)
# render's YAML compared byte for byte with Go's sigs.k8s.io/yaml (crates/go-yaml/tests/go_yaml.rs
# and tests/cli/go_yaml_render.rs).
DEBIAN_GO_YAML=(golang-go golang-k8s-sigs-yaml-dev)

install_say() { printf 'install: %s\n' "$*" >&2; }

# Runs a command as root: directly, or through passwordless sudo. Fails when neither works.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

can_install_debian() {
  command -v apt-get >/dev/null && { [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }; }
}

# Prints the packages among the arguments that are not installed.
debian_missing() {
  local package
  for package in "$@"; do
    dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q '^install ok installed$' ||
      printf '%s\n' "$package"
  done
}

# install_debian PURPOSE PACKAGE...: installs the packages that are missing. Returns 1, saying
# which are missing and for what, when they cannot be installed (not root, no sudo, no apt-get).
install_debian() {
  local purpose="$1" missing
  shift
  mapfile -t missing < <(debian_missing "$@")
  [ ${#missing[@]} -gt 0 ] || return 0
  if ! can_install_debian; then
    install_say "missing Debian packages for $purpose: ${missing[*]} (install them as root: apt-get install --no-install-recommends ${missing[*]})"
    return 1
  fi
  install_say "Debian packages for $purpose: ${missing[*]}"
  # apt-get's progress goes to a log, shown only when it fails.
  local log
  log="$(mktemp)"
  if [ -z "${INSTALL_APT_UPDATED:-}" ]; then
    as_root apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; return 1; }
    INSTALL_APT_UPDATED=1
  fi
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    install_say "apt-get could not install ${missing[*]}"
    return 1
  fi
  rm -f "$log"
  mapfile -t missing < <(debian_missing "$@")
  if [ ${#missing[@]} -gt 0 ]; then
    install_say "apt-get did not install ${missing[*]}"
    return 1
  fi
}

# install_rust_target TRIPLE...: adds the rustup targets that are missing.
install_rust_target() {
  local installed target
  installed="$(rustup target list --installed 2>/dev/null)"
  for target in "$@"; do
    grep -qx "$target" <<<"$installed" && continue
    install_say "Rust target $target"
    rustup target add "$target" >&2
  done
}

# install_rust_component NAME...: adds the rustup components that are missing (rustfmt, clippy).
install_rust_component() {
  local installed component
  installed="$(rustup component list --installed 2>/dev/null)"
  for component in "$@"; do
    grep -q "^$component" <<<"$installed" && continue
    install_say "Rust component $component"
    rustup component add "$component" >&2
  done
}

# install_wasm_opt: binaryen's wasm-opt for both WebAssembly builds, the version pinned in
# tools/binaryen/package-lock.json (npm ci), and sets WASM_OPT to it. binaryen's own build for
# Node, not Debian's binaryen 108: that one mistypes wasm-bindgen's externref table (Node then
# refuses the npm module) and optimises less.
# The WebAssembly features wasm-opt may use: those Rust's wasm32 targets enable by default.
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-sign-ext --enable-mutable-globals
  --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue)
install_wasm_opt() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tools/binaryen"
  WASM_OPT="$dir/node_modules/.bin/wasm-opt"
  local wanted
  wanted="$(node -e 'console.log(require(process.argv[1]).packages["node_modules/binaryen"].version)' "$dir/package-lock.json")"
  if [ -x "$WASM_OPT" ] &&
    [ "$(node -e 'console.log(require(process.argv[1]).version)' "$dir/node_modules/binaryen/package.json" 2>/dev/null)" = "$wanted" ]; then
    return 0
  fi
  install_say "npm: binaryen $wanted (tools/binaryen)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
}

# install_cargo_tool CRATE VERSION BINARY: `cargo install --locked` of exactly VERSION unless
# BINARY --version already prints it.
install_cargo_tool() {
  local crate="$1" version="$2" binary="$3"
  if "$binary" --version 2>/dev/null | grep -qw -- "$version"; then
    return 0
  fi
  install_say "cargo tool $crate $version"
  cargo install --quiet --locked "$crate" --version "$version" >&2
}
