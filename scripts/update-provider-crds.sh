#!/usr/bin/env bash
# Rebuilds crds/provider-crds.tar.zst, the provider CRDs that the kind catalog and the tests are
# built from, from a git clone of the provider (github.com/hmlkao/provider-jfrog-artifactory):
# the repository CRDs (local, remote, virtual, federated; and the flat generation's
# Local/Remote/Virtual kinds) under package/crds at every release tag v*.
#
#   scripts/update-provider-crds.sh PATH-TO-PROVIDER-CLONE
#
# Then regenerate the catalog: cargo run --features codegen --bin codegen
#
# The archive holds <tag>/<file>.yaml, byte for byte. Consecutive releases share most files, so
# zstd with a long window stores the 19 releases (about 120 MB of YAML) in about 100 kB.
set -euo pipefail
provider=${1:?usage: $0 PATH-TO-PROVIDER-CLONE}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tag in $(git -C "$provider" tag --list 'v*' --sort=v:refname); do
    mkdir -p "$work/$tag"
    git -C "$provider" ls-tree --name-only "$tag" package/crds/ |
        grep -E '/((local|remote|virtual|federated)\.artifactory\.jfrog(\.m)?\.crossplane\.io_[a-z0-9]+repositories|artifactory\.jfrog\.crossplane\.io_(local|remote|virtual)[a-z0-9]+repositories)\.yaml$' |
        while read -r path; do
            git -C "$provider" show "$tag:$path" >"$work/$tag/$(basename "$path")"
        done
done
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -cf "$work/crds.tar" $(cd "$work" && ls)
zstd -q -f --ultra -22 --long=24 "$work/crds.tar" -o "$root/crds/provider-crds.tar.zst"
echo "wrote crds/provider-crds.tar.zst ($(wc -c <"$root/crds/provider-crds.tar.zst") bytes)"
