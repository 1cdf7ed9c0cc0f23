//! Helpers shared by the integration tests: each binary's `tests/<area>/main.rs` declares it once
//! (`#[path = "../support/mod.rs"] mod support;`) and its modules say `use crate::support;`.
//! Each binary uses part of it.
#![allow(dead_code)]

pub mod crd;
pub mod render;
pub mod requests;
pub mod server;
pub mod vectors;

/// Where proptest keeps the seeds of a test file's past failures and replays them from: beside
/// the file, `<file>.proptest-regressions`, as when each test file was a binary of its own. Its
/// default (`SourceParallel`) walks up to the nearest folder with a `main.rs`, now
/// `tests/<area>/`, and would use `tests/proptest-regressions/<file>.txt` instead, leaving the
/// committed seeds unread; a lone `tests/<file>.rs` has no such folder, and proptest fell back
/// to this.
pub fn seeds_beside_the_file() -> Option<Box<dyn proptest::test_runner::FailurePersistence>> {
    Some(Box::new(
        proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
    ))
}
