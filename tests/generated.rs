//! Generated files must be what the generators produce now: protocol types from
//! `proto/`, and the kind catalog from the provider CRDs (where `../shared` is present).
//! Regenerate with `cargo run --features codegen --bin codegen`.
#![cfg(feature = "codegen")]

use function_artifactory::codegen::{drift, generate_all, shared_dir};
use std::path::Path;

#[test]
fn committed_generated_files_have_not_drifted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = shared_dir(root);
    if shared.is_none() {
        eprintln!("SKIP kind catalog drift: ../shared not found (set FUNCTION_ARTIFACTORY_SHARED)");
    }
    let files = generate_all(root, shared.as_deref()).expect("generators run");
    let expected = if shared.is_some() { 6 } else { 5 };
    assert_eq!(files.len(), expected, "every generator produced its file");
    let drifted = drift(root, &files);
    assert!(
        drifted.is_empty(),
        "generated files drifted; run `cargo run --features codegen --bin codegen`:\n{}",
        drifted.join("\n")
    );
}

#[test]
fn drift_is_detected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = generate_all(root, None).expect("generators run");
    files[0].contents.push_str("// changed\n");
    assert_eq!(drift(root, &files).len(), 1);
}
