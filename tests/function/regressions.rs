//! The fuzz corpus (fuzz/corpus/, seeded from the examples and the vectors) and every input a
//! fuzzer ever crashed on (fuzz/regressions/<target>/, none so far) replayed with the fuzz targets'
//! checks, so `cargo test` keeps what fuzzing proved without a nightly toolchain: decoding
//! never panics; a decoded request gets a response with its tag that survives encoding; the
//! same request gives the same bytes.

use function_artifactory::proto::json::request_from_json;
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use function_artifactory::run_function;
use prost::Message;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn check(request: &RunFunctionRequest) {
    let response = run_function(request);
    let tag = request.meta.as_ref().map_or("", |m| m.tag.as_str());
    assert_eq!(response.meta.as_ref().map_or("", |m| m.tag.as_str()), tag);
    let bytes = response.encode_to_vec();
    assert_eq!(
        RunFunctionResponse::decode(bytes.as_slice()).unwrap(),
        response
    );
    assert_eq!(run_function(request).encode_to_vec(), bytes);
}

/// As fuzz/fuzz_targets/run_function_bytes.rs.
fn run_function_bytes(data: &[u8]) {
    if let Ok(request) = RunFunctionRequest::decode(data) {
        check(&request);
    }
}

/// As fuzz/fuzz_targets/composite_spec.rs (with fuzz/src/lib.rs).
fn composite_spec(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let composite = |spec: Value| {
        json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
               "metadata": {"name": "team1-repos-x7k2p", "uid": "4f6c8f0e-0000-4000-8000-000000000001"},
               "spec": spec})
    };
    let input = json!({"apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input",
                       "providerApi": "cluster", "artifactoryUrl": "https://artifactory.example.com"});
    let spec = json!({"projectKey": "team1", "repositories": [
        {"name": "libs-release", "rclass": "local", "packageType": "maven"},
        {"name": "maven-central", "rclass": "remote", "packageType": "maven", "url": "https://repo1.maven.org/maven2"},
        {"name": "maven", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-release", "maven-central"], "defaultDeploymentRepo": "libs-release"}
    ]});
    let request = |composite: Value, input: Value| {
        let mut request = json!({
            "meta": {"tag": "fuzz", "capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_CONDITIONS"]},
            "observed": {"composite": {"resource": composite}},
        });
        if input.is_object() {
            request["input"] = input;
        }
        request_from_json(&request).unwrap()
    };
    check(&request(composite(value.clone()), input.clone()));
    check(&request(composite(spec.clone()), value.clone()));
    let mut with_entry = spec;
    if value.is_object() {
        with_entry["repositories"]
            .as_array_mut()
            .unwrap()
            .push(value);
    } else {
        with_entry = json!({"repositories": value});
    }
    check(&request(composite(with_entry), input));
}

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// Replays a target's committed corpus (at least 30 inputs) and its saved crashes.
fn replay(target: &str, run: fn(&[u8])) {
    let corpus = files(&format!("fuzz/corpus/{target}"));
    assert!(corpus.len() >= 30, "the committed corpus: {}", corpus.len());
    for path in corpus
        .iter()
        .chain(&files(&format!("fuzz/regressions/{target}")))
    {
        let data = std::fs::read(path).unwrap();
        run(&data);
    }
}

#[test]
fn the_run_function_bytes_corpus_and_its_crashes_hold() {
    replay("run_function_bytes", run_function_bytes);
}

#[test]
fn the_composite_spec_corpus_and_its_crashes_hold() {
    replay("composite_spec", composite_spec);
}
