#!/usr/bin/env bash
# End-to-end benchmark on loopback, in one run (BENCHMARKS.md):
#   builds the release binary, the transport floors (benches/e2e/noop.rs: echo, and our own
#   reply replayed) and the driver
#   (benches/e2e/driver.rs); sets up the peers of ../shared/bench (Python and TypeScript SDK
#   functions) under target/bench-peers when ../shared/bench exists; then the driver starts each
#   server, measures cold start, checks an answer, loads it with h2load and prints the figures.
#
#   scripts/bench-e2e.sh [--build packaged|host] [--sizes 10,100,1000] [--requests 2000]
#                        [--concurrency 8] [--rounds 1] [--scenarios plain,live,reconcile,steady]
#                        [--before BIN [--before-name NAME]]
#
# `--build packaged` (the default on x86-64): ours is the binary the Function package runs, the
# static musl build of scripts/build-xpkg.sh, and the floors are built the same way; `--build
# host`: both are the host's glibc builds, the only choice on other machines.
#
# Environment: SHARED_BENCH (default ../shared/bench relative to the repository).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
# shellcheck source=lib/install.sh
. scripts/lib/install.sh
shared=${SHARED_BENCH:-$repo/../shared/bench}
work=$repo/target/bench-peers
mkdir -p "$work"

build=host
[ "$(uname -m)" = x86_64 ] && build=packaged
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]}"

install_debian "h2load" "${DEBIAN_SOAK[@]}" || { echo "bench-e2e needs h2load" >&2; exit 1; }

echo "== writing the live schemas (the provider's v0.14.0 CRDs, crds/)" >&2
cargo run --quiet --features codegen --example bench-schemas -- target/bench-e2e >&2

echo "== building (release): the driver, and the servers ($build build)" >&2
cargo build --release --example bench-e2e >&2
case "$build" in
  packaged)
    [ "$(uname -m)" = x86_64 ] || { echo "--build packaged: on x86-64 only" >&2; exit 1; }
    target=x86_64-unknown-linux-musl
    install_rust_target "$target"
    install_debian "the static build" "${DEBIAN_PACKAGE_BUILD_AMD64[@]}" || exit 1
    export CC_x86_64_unknown_linux_musl=${CC_x86_64_unknown_linux_musl:-musl-gcc}
    cargo build --release --target "$target" --bin function-artifactory --example noop-function >&2
    servers=target/$target/release ;;
  host)
    cargo build --release --bin function-artifactory --example noop-function >&2
    servers=target/release ;;
  *) echo "--build packaged or host, not $build" >&2; exit 1 ;;
esac

peer_args=()
if [ -d "$shared/peers" ]; then
  py=$work/venv/bin/python
  if [ ! -x "$py" ] || ! "$py" -c 'import crossplane.function' 2>/dev/null; then
    echo "== setting up the Python peer (venv, crossplane-function-sdk-python==0.15.1)" >&2
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q crossplane-function-sdk-python==0.15.1 >&2
  fi
  if [ ! -d "$work/ts/node_modules" ]; then
    echo "== setting up the TypeScript peer (npm install in a copy)" >&2
    rm -rf "$work/ts" && cp -r "$shared/peers/ts" "$work/ts"
    (cd "$work/ts" && npm install --no-audit --no-fund >&2)
  else
    cp "$shared/peers/ts/fn_repos.mjs" "$work/ts/"
  fi
  sizes=$(echo " $* " | sed -n 's/.* --sizes \([0-9,]*\) .*/\1/p'); sizes=${sizes:-10,100,1000}
  for n in ${sizes//,/ }; do
    "$py" "$shared/make_request.py" --repos "$n" --bin "$work/peer-$n.bin" >/dev/null 2>&1
  done
  peer_args=(--peer-requests "$work" --python "$py $shared/peers/python/fn_repos.py"
             --ts "node $work/ts/fn_repos.mjs")
else
  echo "!! $shared not found: the Python and TypeScript peers are SKIPPED" >&2
fi

echo "== machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p')" >&2
echo "== measuring the $build build ($servers)" >&2
exec target/release/examples/bench-e2e \
  --ours "$servers/function-artifactory" \
  --noop "$servers/examples/noop-function" \
  --out target/bench-e2e "${peer_args[@]}" "$@"
