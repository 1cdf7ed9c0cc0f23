#!/usr/bin/env bash
# Renders the example claim of the cluster API, as `crossplane render` would,
# without a cluster or Docker.
set -euo pipefail
cd "$(dirname "$0")/../examples/cluster"
# cargo is quiet here, so say what it is doing: a first build takes minutes.
echo "render-example.sh: building function-artifactory (cargo, release profile; the first build takes a few minutes, later ones seconds), then rendering examples/cluster/xr.yaml" >&2
cargo run --quiet --release --manifest-path ../../Cargo.toml -- \
  render xr.yaml composition.yaml functions.yaml --observed-resources observed.yaml
