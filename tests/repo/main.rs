//! The repository's own checks: its layout, its documentation's links and test index, generated
//! files that must not drift, the Function package, and the static build's copies. One test
//! binary (docs/development.md, "Tests", indexes every module).

#[path = "../support/mod.rs"]
mod support;

/// BENCHMARKS.md's top screen is the one `scripts/bench-report.sh` wrote, every row in it.
mod benchmarks;
/// The README and docs: length, relative links and anchors, paths that exist, the index of test
/// modules.
mod docs;
/// Generated files are what the generators produce now.
mod generated;
/// The layout: the core names no face, no circle between the core's modules.
mod layout;
/// The copies of the static musl build against the standard library's.
mod musl_mem;
/// The Function package built by `scripts/build-xpkg.sh`, checked with skopeo and umoci.
mod package;
