//! Schemas and validation: the validator the function checks rendered resources with
//! (`validation::openapi`) against the provider's CRDs, small synthetic CRDs and the validator it
//! replaced; live schemas sent by Crossplane; the schemas this repository publishes. One test
//! binary (docs/development.md, "Tests", indexes every module).

#[path = "../support/mod.rs"]
mod support;

/// The validator against the provider's real CRDs (`crds/`), per API generation.
mod crd_validator;
/// The validator against small CRDs written here, for features the provider's CRDs lack.
mod crd_validator_synthetic;
/// Live schemas: the function asks for, refuses without, and validates against what is served.
mod live_schemas;
/// The Input CRD and the example XRDs: structural, met by the examples, refusing mistakes.
mod published_schemas;
/// Not a test: the validator as it was before it was compiled, the reference
/// `validator_agreement` holds the compiled one to.
#[cfg(feature = "codegen")]
mod reference_validator;
/// CEL rules past the API server's limits, as the schema validator reports them (the limits
/// themselves: crates/cel-rules/tests/cel_limits.rs).
mod rule_limits;
/// The compiled validator agrees with the reference, message for message.
mod validator_agreement;
