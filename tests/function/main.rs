//! The function's rules, through the core (`run_function`) and, where the wire matters, the
//! server on loopback: what it renders, the keys and wiring it checks, the lifecycle and
//! adoption guards, drift warnings, upgrades between provider releases, the protocol's rules,
//! its words, and the inputs that try to break it (property tests, the fuzz corpus, hostile
//! claims). One test binary, so the library and the helpers are linked once for all of them
//! (docs/development.md, "Tests", indexes every module).

#[path = "../support/mod.rs"]
mod support;

/// Adopt only by intent, over gRPC for the three provider APIs: the create guard, held keys.
mod adoption;
/// Remote credentials: secret references per API, write-only passwords, no Secret value shown.
mod credentials;
/// Drift warnings: a status warning and a Warning result, never a failed call.
mod drift;
/// Hostile claims: what could freeze a call or balloon its memory, bounded.
mod hostile_claims;
/// Every key rule and every wiring error, with its exact message.
mod keys_and_wiring;
/// Lifecycle safety: immutable keys and kinds, import, deletion, two-phase protection.
mod lifecycle;
/// Property tests: generated composites, inputs and observed resources keep the guarantees.
mod properties;
/// Protocol rules: tag, TTL, pass-through, determinism, odd requests.
mod protocol;
/// The fuzz corpus and every crash input replayed with the fuzz targets' checks.
mod regressions;
/// Provider releases: `providerVersion` picks kinds and schemas, valid against that release.
mod releases;
/// What the function renders for every kind of the three APIs, valid against the CRDs.
mod rendering;
/// The lifecycle simulator: Crossplane, the provider and Artifactory, random sequences, issue 55's
/// invariants after every step.
mod simulator;
/// Upgrading without a dead end: renamed kinds, the group move, v1 claims to v2 composites.
mod upgrading;
/// The shared request/response vectors in `tests/vectors/`, natively and over gRPC.
mod vectors;
/// Issue 47's wording: articles, suggestions, the project key prefix, defaults.
mod words;
