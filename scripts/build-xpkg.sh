#!/usr/bin/env bash
# Builds the Crossplane Function package (xpkg) of function-artifactory without a
# Docker engine, with plain tools (cargo, tar, gzip, sha256sum), for linux/amd64
# and linux/arm64:
#
#   target/xpkg/oci/   an OCI image layout: tag VERSION (the crate version) is the
#                      image index of both platforms; tags VERSION-amd64 and
#                      VERSION-arm64 are the images
#   target/xpkg/function-artifactory-VERSION-amd64.xpkg
#   target/xpkg/function-artifactory-VERSION-arm64.xpkg
#                      each platform's image as the tarball `crossplane xpkg build`
#                      writes it
#
# Each image is what `crossplane xpkg build --embed-runtime-image` makes of the
# runtime image (Dockerfile): a layer with the static binary at /function, run as
# user 65532 with ENTRYPOINT ["/function"] and port 9443, then a layer with
# package.yaml (package/crossplane.yaml, then the Input CRD of package/input/),
# annotated `io.crossplane.xpkg: base` in the manifest and, as crossplane does it,
# labelled `io.crossplane.xpkg:sha256:<layer digest>: base` in the config (the
# tarball format has no layer annotations; `crossplane xpkg push` turns the label
# back into the annotation). The package layer is one blob shared by the images.
#
# The binaries are static musl builds. The other architecture is cross-compiled:
# the C code of ring and mimalloc is compiled, and the binary linked (against the
# musl that the Rust target carries), by Debian's cross gcc (gcc-aarch64-linux-gnu
# on an amd64 machine).
#
# Options:
#   --target TRIPLE   a Rust target to package, repeatable (default:
#                     x86_64-unknown-linux-musl and aarch64-unknown-linux-musl)
#   --binary PATH     package this binary instead of building one; with at most one
#                     --target, the binary's (default x86_64-unknown-linux-musl)
#   --output DIR      output folder (default target/xpkg)
#
# Prints the paths of the .xpkg files, one a line. Pushing both platforms as one tag:
#   crossplane xpkg push --package-files A.xpkg,B.xpkg REGISTRY/REPO:TAG
# or `skopeo copy --all oci:target/xpkg/oci:VERSION docker://REGISTRY/REPO:TAG`.
#
# Reproducible: the same binaries give the same digests (fixed owners, modes and
# times; SOURCE_DATE_EPOCH, default 0, sets the times and the `created` date).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
targets=()
binary=""
output="$root/target/xpkg"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("$2"); shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-xpkg: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf 'build-xpkg: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

if [ -n "$binary" ]; then
  [ "${#targets[@]}" -le 1 ] || die "--binary packages one binary: give at most one --target (the binary's)"
  [ "${#targets[@]}" -eq 1 ] || targets=(x86_64-unknown-linux-musl)
fi
[ "${#targets[@]}" -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n1)"
epoch="${SOURCE_DATE_EPOCH:-0}"
created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
host="$(rustc -vV | sed -n 's/^host: //p')"

arch_of() { # TRIPLE: its OCI architecture
  case "$1" in
    x86_64-*) echo amd64 ;;
    aarch64-*) echo arm64 ;;
    *) die "unsupported target $1 (x86_64 or aarch64)" ;;
  esac
}

native() { # TRIPLE: whether it is the host's own architecture
  [ "${1%%-*}" = "${host%%-*}" ]
}

# The C compiler (and, across architectures, the linker) of a musl target:
# musl-gcc on the host's own architecture, else Debian's cross gcc.
use_c_toolchain() { # TRIPLE
  local target="$1" cpu="${1%%-*}" var cc linker
  var="$(echo "$target" | tr '-' '_')"
  if native "$target"; then
    if [ -z "$(printenv "CC_$var" || true)" ] && command -v musl-gcc >/dev/null; then
      export "CC_$var=musl-gcc"
    fi
    return 0
  fi
  cc="$cpu-linux-gnu-gcc"
  command -v "$cc" >/dev/null ||
    die "cross-compiling for $target needs $cc (Debian: apt-get install gcc-${cpu//_/-}-linux-gnu), or package one platform with --target"
  [ -n "$(printenv "CC_$var" || true)" ] || export "CC_$var=$cc"
  linker="CARGO_TARGET_$(echo "$var" | tr '[:lower:]' '[:upper:]')_LINKER"
  [ -n "$(printenv "$linker" || true)" ] || export "$linker=$cc"
}

# Builds the binary of TRIPLE; prints its path. Only for the host's architecture
# does it fall back to the host's dynamic binary, with a WARNING.
build_binary() { # TRIPLE
  local target="$1" reason
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    log "adding the Rust target $target"
    rustup target add "$target" >&2 || true
  fi
  if rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    use_c_toolchain "$target"
    log "building a release binary for $target"
    if cargo build --manifest-path "$root/Cargo.toml" --release --locked \
      --target "$target" --bin function-artifactory >&2; then
      echo "${CARGO_TARGET_DIR:-$root/target}/$target/release/function-artifactory"
      return 0
    fi
    reason="the build for $target failed (for musl, install musl-tools)"
  else
    reason="the Rust target $target could not be added"
  fi
  native "$target" || die "$reason"
  log "WARNING: $reason: packaging a binary for the host ($host),"
  log "WARNING: which is dynamically linked and will not run in the distroless/scratch image."
  cargo build --manifest-path "$root/Cargo.toml" --release --locked --bin function-artifactory >&2
  echo "${CARGO_TARGET_DIR:-$root/target}/release/function-artifactory"
}

make_tar() { # DIR OUT FILES...: a tarball with fixed owners and times, sorted
  local dir="$1" out="$2"
  shift 2
  tar --sort=name --format=ustar --owner=0 --group=0 --numeric-owner \
    --mtime="@$epoch" -C "$dir" -cf "$out" "$@"
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

work="$output/work"
layout="$output/oci"
rm -rf "$work" "$layout" "$output"/function-artifactory-*.xpkg
mkdir -p "$work" "$layout/blobs/sha256"

# Stores a file as a blob of the layout; prints its hex digest.
blob() {
  local digest
  digest="$(sha "$1")"
  cp "$1" "$layout/blobs/sha256/$digest"
  echo "$digest"
}

# A layer: a deterministic tarball of FILES in DIR, gzipped, stored as a blob. Sets
# layer_diff (the digest of the tarball), layer_digest and layer_size (of the .tar.gz).
layer() { # NAME DIR FILES...
  local name="$1" dir="$2"
  shift 2
  make_tar "$dir" "$work/$name.tar" "$@"
  gzip -n -9 -c "$work/$name.tar" >"$work/$name.tar.gz"
  layer_diff="$(sha "$work/$name.tar")"
  layer_digest="$(blob "$work/$name.tar.gz")"
  layer_size="$(size "$work/$name.tar.gz")"
}

# The package layer, the same for every platform.
mkdir -p "$work/package"
{
  cat "$root/package/crossplane.yaml"
  for crd in "$root"/package/input/*.yaml; do
    printf -- '---\n'
    cat "$crd"
  done
} >"$work/package/package.yaml"
chmod 0644 "$work/package/package.yaml"
layer package "$work/package" package.yaml
package_diff="$layer_diff"
package_digest="$layer_digest"
package_size="$layer_size"

# The .xpkg of one image: the tarball `crossplane xpkg build` writes
# (go-containerregistry's format: manifest.json, the config named by its digest,
# the gzipped layers).
write_xpkg() { # ARCH CONFIG_DIGEST RUNTIME_DIGEST OUT
  local arch="$1" config="$2" runtime="$3" out="$4" archive="$work/archive-$1"
  mkdir -p "$archive"
  cp "$work/config-$arch.json" "$archive/sha256:$config"
  cp "$work/runtime-$arch.tar.gz" "$archive/$runtime.tar.gz"
  cp "$work/package.tar.gz" "$archive/$package_digest.tar.gz"
  printf '[{"Config":"sha256:%s","RepoTags":["function-artifactory:%s"],"Layers":["%s.tar.gz","%s.tar.gz"]}]\n' \
    "$config" "$version" "$runtime" "$package_digest" >"$archive/manifest.json"
  make_tar "$archive" "$out" manifest.json "sha256:$config" \
    "$runtime.tar.gz" "$package_digest.tar.gz"
}

# One platform's image: its runtime layer, config and manifest as blobs, and its
# .xpkg. Appends the manifest's descriptor to `images` and the .xpkg to `xpkgs`.
images=()
xpkgs=()
image() { # ARCH BINARY
  local arch="$1" binary="$2" runtime_diff runtime_digest runtime_size
  mkdir -p "$work/$arch"
  install -m 0755 "$binary" "$work/$arch/function"
  layer "runtime-$arch" "$work/$arch" function
  runtime_diff="$layer_diff"
  runtime_digest="$layer_digest"
  runtime_size="$layer_size"

  cat >"$work/config-$arch.json" <<EOF
{"architecture":"$arch","config":{"Entrypoint":["/function"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"ExposedPorts":{"9443/tcp":{}},"Labels":{"io.crossplane.xpkg:sha256:$package_digest":"base","org.opencontainers.image.title":"function-artifactory","org.opencontainers.image.version":"$version"},"User":"65532:65532","WorkingDir":"/"},"created":"$created","history":[{"created":"$created","created_by":"scripts/build-xpkg.sh: /function"},{"created":"$created","created_by":"scripts/build-xpkg.sh: package.yaml"}],"os":"linux","rootfs":{"diff_ids":["sha256:$runtime_diff","sha256:$package_diff"],"type":"layers"}}
EOF
  local config_digest config_size
  config_digest="$(blob "$work/config-$arch.json")"
  config_size="$(size "$work/config-$arch.json")"

  cat >"$work/manifest-$arch.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config_digest","size":$config_size},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$runtime_digest","size":$runtime_size},{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$package_digest","size":$package_size,"annotations":{"io.crossplane.xpkg":"base"}}]}
EOF
  local manifest_digest manifest_size
  manifest_digest="$(blob "$work/manifest-$arch.json")"
  manifest_size="$(size "$work/manifest-$arch.json")"
  images+=("$arch sha256:$manifest_digest $manifest_size")
  log "image linux/$arch: manifest sha256:$manifest_digest"

  local xpkg="$output/function-artifactory-$version-$arch.xpkg"
  write_xpkg "$arch" "$config_digest" "$runtime_digest" "$xpkg"
  xpkgs+=("$xpkg")
}

for target in "${targets[@]}"; do
  arch="$(arch_of "$target")"
  path="${binary:-$(build_binary "$target")}"
  [ -x "$path" ] || die "no executable at $path"
  if command -v file >/dev/null && ! file -L "$path" | grep -q 'statically linked\|static-pie linked'; then
    log "WARNING: $path ($arch) is not statically linked"
  fi
  image "$arch" "$path"
done

# A descriptor of an image manifest, with its platform, and optionally a tag.
descriptor() { # ARCH DIGEST SIZE [TAG]
  local tag=""
  [ -z "${4:-}" ] || tag=",\"annotations\":{\"org.opencontainers.image.ref.name\":\"$4\"}"
  printf '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"}%s}' \
    "$2" "$3" "$1" "$tag"
}
joined() { local IFS=,; echo "$*"; }

# The image index of every platform, tagged VERSION; each image is also tagged
# VERSION-ARCH, for tools that take one image (umoci, docker-archive).
members=()
tagged=()
for entry in "${images[@]}"; do
  read -r arch digest bytes <<<"$entry"
  members+=("$(descriptor "$arch" "$digest" "$bytes")")
  tagged+=("$(descriptor "$arch" "$digest" "$bytes" "$version-$arch")")
done
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' \
  "$(joined "${members[@]}")" >"$work/index.json"
index_digest="$(blob "$work/index.json")"
index_size="$(size "$work/index.json")"
printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' \
  "$(joined "{\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"digest\":\"sha256:$index_digest\",\"size\":$index_size,\"annotations\":{\"org.opencontainers.image.ref.name\":\"$version\"}}" "${tagged[@]}")" \
  >"$layout/index.json"
rm -rf "$work"

log "OCI image layout: $layout (tag $version: the index sha256:$index_digest)"
printf '%s\n' "${xpkgs[@]}"
