//! render reads and prints the function's documents byte for byte as Go's sigs.k8s.io/yaml does
//! under `crossplane render`: every YAML file under examples/ (inputs and golden outputs), and
//! numbers as a function's reply carries them (doubles, through the function's own
//! `google.protobuf.Struct` conversion) go through render's reader and writer
//! (`render::reprint_yaml`) and through the Go program of the go-yaml crate
//! (crates/go-yaml/tests/go-yaml), and every document must print the same bytes, or fail on
//! both sides.
//!
//! The YAML engine's own corpus and generated cases are compared by
//! crates/go-yaml/tests/go_yaml.rs; the Go reference, its requirements and `REQUIRE_GO_YAML=1`
//! (which makes a missing Go a failure): crates/go-yaml/tests/support/mod.rs, shared here.
#![cfg(feature = "server")]

#[path = "../../crates/go-yaml/tests/support/mod.rs"]
mod go_yaml;

use function_artifactory::render::reprint_yaml;
use go_yaml::{compare, corpus_files, number_cases, split, yaml_files, Cases};
use std::path::Path;

#[test]
fn every_example_reads_and_prints_as_go() {
    let mut files = Vec::new();
    yaml_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        &mut files,
    );
    assert!(files.len() > 20, "examples found: {}", files.len());
    let documents: Vec<String> = files
        .iter()
        .flat_map(|f| split(&std::fs::read_to_string(f).expect("readable example")))
        .collect();
    compare(&documents, "read", reprint_yaml);
}

/// Numbers as a function's reply carries them (doubles) print as Crossplane prints them.
#[test]
fn numbers_from_function_replies_print_as_go() {
    let mut cases = Cases(0x00d0_b1e5);
    let mut documents = number_cases(&mut cases);
    documents.extend(corpus_files());
    compare(&documents, "float", reprint_yaml);
}
