//! Generated files must be what the generators produce now: protocol types from
//! `proto/`, the input schemas, and the kind catalog from the provider CRDs in `crds/`.
//! Regenerate with `cargo run --features codegen --bin codegen`.
#![cfg(feature = "codegen")]

use function_artifactory::codegen::{drift, generate_all};
use std::path::Path;

#[test]
fn committed_generated_files_have_not_drifted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = generate_all(root).expect("generators run");
    assert_eq!(files.len(), 7, "every generator produced its file");
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
    let mut files = generate_all(root).expect("generators run");
    files[0].contents.push_str("// changed\n");
    assert_eq!(drift(root, &files).len(), 1);
}
