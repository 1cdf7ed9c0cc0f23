#!/usr/bin/env bash
# Builds the Crossplane Function package (xpkg) of function-artifactory without a
# Docker engine, with plain tools (cargo, tar, gzip, sha256sum):
#
#   target/xpkg/oci/                               an OCI image layout, tag = the crate version
#   target/xpkg/function-artifactory-VERSION.xpkg  the same image as the tarball `crossplane xpkg build` writes
#
# The image is what `crossplane xpkg build --embed-runtime-image` makes of the
# runtime image (Dockerfile): a layer with the static binary at /function, run as
# user 65532 with ENTRYPOINT ["/function"] and port 9443, then a layer with
# package.yaml (package/crossplane.yaml, then the Input CRD of package/input/),
# annotated `io.crossplane.xpkg: base` in the manifest and, as crossplane does it,
# labelled `io.crossplane.xpkg:sha256:<layer digest>: base` in the config (the
# tarball format has no layer annotations; `crossplane xpkg push` turns the label
# back into the annotation).
#
# Options:
#   --target TRIPLE   Rust target (default x86_64-unknown-linux-musl: a static binary)
#   --binary PATH     package this binary instead of building one
#   --output DIR      output folder (default target/xpkg)
#
# Pushing: `crossplane xpkg push -f target/xpkg/function-artifactory-VERSION.xpkg REGISTRY/REPO:TAG`,
# or `skopeo copy oci:target/xpkg/oci:VERSION docker://REGISTRY/REPO:TAG`.
#
# Reproducible: the same binary gives the same digests (fixed owners, modes and
# times; SOURCE_DATE_EPOCH, default 0, sets the times and the `created` date).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="x86_64-unknown-linux-musl"
binary=""
output="$root/target/xpkg"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-xpkg: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf 'build-xpkg: %s\n' "$*" >&2; }

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n1)"
epoch="${SOURCE_DATE_EPOCH:-0}"
created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"

# 1. The binary.
static=true
build_host() {
  target="$(rustc -vV | sed -n 's/^host: //p')"
  static=false
  log "WARNING: $1: packaging a binary for the host ($target),"
  log "WARNING: which is dynamically linked and will not run in the distroless/scratch image."
  cargo build --manifest-path "$root/Cargo.toml" --release --locked --bin function-artifactory >&2
  binary="${CARGO_TARGET_DIR:-$root/target}/release/function-artifactory"
}
if [ -z "$binary" ]; then
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    log "adding the Rust target $target"
    rustup target add "$target" >&2 || true
  fi
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    build_host "the Rust target $target could not be added"
  else
    if [[ "$target" == *-musl ]]; then
      # ring compiles C for the target; Debian's musl-tools provides musl-gcc.
      cc_var="CC_$(echo "$target" | tr '-' '_')"
      if [ -z "${!cc_var:-}" ] && command -v musl-gcc >/dev/null; then
        export "$cc_var=musl-gcc"
      fi
    fi
    log "building a release binary for $target"
    if cargo build --manifest-path "$root/Cargo.toml" --release --locked \
      --target "$target" --bin function-artifactory >&2; then
      binary="${CARGO_TARGET_DIR:-$root/target}/$target/release/function-artifactory"
    else
      build_host "the build for $target failed (for musl, install musl-tools)"
    fi
  fi
fi
[ -x "$binary" ] || { log "no executable at $binary"; exit 1; }
case "$target" in
  x86_64-*) arch=amd64 ;;
  aarch64-*) arch=arm64 ;;
  *) log "unsupported target $target"; exit 1 ;;
esac
if command -v file >/dev/null && ! file -L "$binary" | grep -q 'statically linked\|static-pie linked'; then
  static=false
  log "WARNING: $binary is not statically linked"
fi

# 2. The layers, as deterministic tarballs.
work="$output/work"
layout="$output/oci"
xpkg="$output/function-artifactory-$version.xpkg"
rm -rf "$work" "$layout" "$xpkg"
mkdir -p "$work/runtime" "$work/package" "$work/blobs"
install -m 0755 "$binary" "$work/runtime/function"
{
  cat "$root/package/crossplane.yaml"
  for crd in "$root"/package/input/*.yaml; do
    printf -- '---\n'
    cat "$crd"
  done
} >"$work/package/package.yaml"
chmod 0644 "$work/package/package.yaml"

make_tar() { # DIR OUT FILES...: a tarball with fixed owners and times, sorted
  local dir="$1" out="$2"
  shift 2
  tar --sort=name --format=ustar --owner=0 --group=0 --numeric-owner \
    --mtime="@$epoch" -C "$dir" -cf "$out" "$@"
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# Stores a file as a blob; prints its hex digest.
blob() {
  local digest
  digest="$(sha "$1")"
  cp "$1" "$work/blobs/$digest"
  echo "$digest"
}

make_tar "$work/runtime" "$work/runtime.tar" function
make_tar "$work/package" "$work/package.tar" package.yaml
for layer in runtime package; do
  gzip -n -9 -c "$work/$layer.tar" >"$work/$layer.tar.gz"
done
runtime_diff="$(sha "$work/runtime.tar")"
package_diff="$(sha "$work/package.tar")"
runtime_digest="$(blob "$work/runtime.tar.gz")"
package_digest="$(blob "$work/package.tar.gz")"
runtime_size="$(size "$work/runtime.tar.gz")"
package_size="$(size "$work/package.tar.gz")"

# 3. The image config and manifest.
cat >"$work/config.json" <<EOF
{"architecture":"$arch","config":{"Entrypoint":["/function"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"ExposedPorts":{"9443/tcp":{}},"Labels":{"io.crossplane.xpkg:sha256:$package_digest":"base","org.opencontainers.image.title":"function-artifactory","org.opencontainers.image.version":"$version"},"User":"65532:65532","WorkingDir":"/"},"created":"$created","history":[{"created":"$created","created_by":"scripts/build-xpkg.sh: /function"},{"created":"$created","created_by":"scripts/build-xpkg.sh: package.yaml"}],"os":"linux","rootfs":{"diff_ids":["sha256:$runtime_diff","sha256:$package_diff"],"type":"layers"}}
EOF
config_digest="$(blob "$work/config.json")"
config_size="$(size "$work/config.json")"

cat >"$work/manifest.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config_digest","size":$config_size},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$runtime_digest","size":$runtime_size},{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$package_digest","size":$package_size,"annotations":{"io.crossplane.xpkg":"base"}}]}
EOF
manifest_digest="$(blob "$work/manifest.json")"
manifest_size="$(size "$work/manifest.json")"

# 4. The OCI image layout.
mkdir -p "$layout/blobs/sha256"
cp "$work"/blobs/* "$layout/blobs/sha256/"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
cat >"$layout/index.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:$manifest_digest","size":$manifest_size,"annotations":{"org.opencontainers.image.ref.name":"$version"},"platform":{"architecture":"$arch","os":"linux"}}]}
EOF

# 5. The .xpkg: the image tarball `crossplane xpkg build` writes (go-containerregistry's
# tarball format: manifest.json, the config named by its digest, gzipped layers).
archive="$work/archive"
mkdir -p "$archive"
cp "$work/config.json" "$archive/sha256:$config_digest"
cp "$work/runtime.tar.gz" "$archive/$runtime_digest.tar.gz"
cp "$work/package.tar.gz" "$archive/$package_digest.tar.gz"
cat >"$archive/manifest.json" <<EOF
[{"Config":"sha256:$config_digest","RepoTags":["function-artifactory:$version"],"Layers":["$runtime_digest.tar.gz","$package_digest.tar.gz"]}]
EOF
make_tar "$archive" "$xpkg" manifest.json "sha256:$config_digest" \
  "$runtime_digest.tar.gz" "$package_digest.tar.gz"
rm -rf "$work"

log "static binary: $static ($target)"
log "OCI image layout: $layout (tag $version, manifest sha256:$manifest_digest)"
log "package: $xpkg"
echo "$xpkg"
