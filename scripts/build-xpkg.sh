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
# on an amd64 machine, with the C library headers of libc6-dev-arm64-cross). The
# script installs what it uses (scripts/lib/install.sh): the Rust targets, and as
# root the Debian packages musl-tools, gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross. A binary that is not static is never packaged: the image
# has nothing else, so it could not start.
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
# shellcheck source=lib/install.sh
. "$root/scripts/lib/install.sh"
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

# The Debian packages that build TRIPLE's static binary on this host.
build_packages() { # TRIPLE
  if native "$1"; then
    echo "${DEBIAN_PACKAGE_BUILD_AMD64[*]}"
  elif [ "${1%%-*}" = aarch64 ] && [ "${host%%-*}" = x86_64 ]; then
    echo "${DEBIAN_PACKAGE_BUILD_ARM64[*]}"
  else
    die "cross-compiling for $1 on $host is not set up here: build it on its own architecture"
  fi
}

# The C compiler (and, across architectures, the linker) of a musl target:
# musl-gcc on the host's own architecture, else Debian's cross gcc.
use_c_toolchain() { # TRIPLE
  local target="$1" cpu="${1%%-*}" var cc linker
  var="$(echo "$target" | tr '-' '_')"
  if native "$target"; then
    cc=musl-gcc
  else
    cc="$cpu-linux-gnu-gcc"
  fi
  command -v "$cc" >/dev/null ||
    die "building for $target needs $cc: apt-get install --no-install-recommends $(build_packages "$target")"
  [ -n "$(printenv "CC_$var" || true)" ] || export "CC_$var=$cc"
  native "$target" && return 0
  linker="CARGO_TARGET_$(echo "$var" | tr '[:lower:]' '[:upper:]')_LINKER"
  [ -n "$(printenv "$linker" || true)" ] || export "$linker=$cc"
}

# Why a build of TRIPLE failed, from its log: the Debian packages it lacks, or the C
# header it missed; else the compiler's errors, printed above.
build_failure() { # TRIPLE LOG
  local target="$1" log="$2" missing
  missing="$(debian_missing $(build_packages "$target") | tr '\n' ' ')"
  if [ -n "$missing" ]; then
    echo "the build for $target failed: Debian packages missing: ${missing% } (apt-get install --no-install-recommends ${missing% })"
  elif grep -q 'fatal error: .*: No such file or directory' "$log"; then
    echo "the build for $target failed: a C header is missing: $(grep -m1 'fatal error: ' "$log" | sed 's/^.*fatal error: //')"
  else
    echo "the build for $target failed (the compiler's errors are above)"
  fi
}

# Builds the static binary of TRIPLE; prints its path.
build_binary() { # TRIPLE
  local target="$1" log
  install_rust_target "$target" || die "the Rust target $target could not be added (rustup target add $target)"
  # shellcheck disable=SC2046
  install_debian "the $target binary" $(build_packages "$target") ||
    die "building for $target needs the Debian packages $(build_packages "$target")"
  use_c_toolchain "$target"
  log "building a release binary for $target"
  log="$output/build-$target.log"
  mkdir -p "$output"
  if ! cargo build --manifest-path "$root/Cargo.toml" --release --locked \
    --target "$target" --bin function-artifactory 2>&1 | tee "$log" >&2; then
    die "$(build_failure "$target" "$log")"
  fi
  rm -f "$log"
  echo "${CARGO_TARGET_DIR:-$root/target}/$target/release/function-artifactory"
}

# Fails unless PATH is a static executable: the image has no C library or loader.
require_static() { # PATH ARCH
  if readelf -lW "$1" | grep -q 'Requesting program interpreter' || readelf -dW "$1" | grep -q '(NEEDED)'; then
    die "$1 ($2) is dynamically linked: it cannot run in the image, which has no C library (build it for a -musl target)"
  fi
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
  require_static "$path" "$arch"
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
