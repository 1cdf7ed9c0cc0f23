//! Checking objects against schemas. Two checkers, for two questions:
//!
//! - [`built_in`]: is each field this call renders one that the provider release's schema, as
//!   the built-in catalog holds it (`catalog.json`), accepts? It runs on every call, field by
//!   field while `compose` renders, and speaks the claim's language: a problem names the entry,
//!   the claim's field and a suggestion. The catalog keeps only what it needs of each CRD
//!   (structural keywords; the CEL rules only as the fields they require while managed, which
//!   `compose` applies), so the check costs little and needs no CEL.
//! - [`openapi`], with [`live`]: is a whole object valid as the API server validates a custom
//!   resource with a structural schema, defaults, list types and `x-kubernetes-validations` CEL
//!   rules included (with the API server's cost limits)? It runs where a schema arrives whole:
//!   the schemas the cluster serves, which Crossplane v2.2 and later send when asked ([`live`]:
//!   each rendered resource is checked whole against the installed release, after the built-in
//!   check), the XRD schema `render --xrd` defaults a composite with, and the tests, which hold
//!   every rendered resource to the provider CRDs with it.
//!
//! The built-in checker answers first and in the claim's words; the live one answers for the
//! release the cluster actually runs, which the catalog may not know (a newer provider), and
//! for the CRD's CEL rules in full. Both report into the same problem list.

pub(crate) mod built_in;
pub(crate) mod live;
pub(crate) mod openapi;

pub(crate) use built_in::{check, check_object, check_text, check_view};
