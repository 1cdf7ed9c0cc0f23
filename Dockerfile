# syntax=docker/dockerfile:1
# The runtime image of function-artifactory: a static (musl) binary, run as a
# non-root user, serving gRPC on port 9443. Crossplane starts it with TLS
# (TLS_SERVER_CERTS_DIR); `crossplane render` runs it with --insecure.
#
#   docker build -t function-artifactory-runtime .
#   crossplane xpkg build --package-root=package --embed-runtime-image=function-artifactory-runtime
#
# For arm64 too: `docker buildx build --platform linux/arm64 ...` and one
# `crossplane xpkg build` per platform, then `crossplane xpkg push --package-files a,b`.
#
# Without a Docker engine, scripts/build-xpkg.sh builds the same package.

ARG RUST_VERSION=1.86

# The build stage runs on the target platform (multi-platform builds emulate it),
# so the musl target is the native one and musl-gcc compiles ring's C code.
FROM rust:${RUST_VERSION}-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN target="$(uname -m)-unknown-linux-musl" \
 && rustup target add "${target}" \
 && export "CC_$(echo "${target}" | tr - _)=musl-gcc" \
 && cargo build --release --locked --target "${target}" --bin function-artifactory \
 && cp "target/${target}/release/function-artifactory" /function

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /function /function
USER 65532:65532
EXPOSE 9443
ENTRYPOINT ["/function"]
