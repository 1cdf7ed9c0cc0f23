#!/usr/bin/env bash
# Renders the example claim of the cluster API, as `crossplane render` would,
# without a cluster or Docker.
set -euo pipefail
cd "$(dirname "$0")/../examples/cluster"
cargo run --quiet --release --manifest-path ../../Cargo.toml -- \
  render xr.yaml composition.yaml functions.yaml --observed-resources observed.yaml
