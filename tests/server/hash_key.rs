//! The content hashes keyed per process (`proto::hash_key`): a process keyed as the server keys
//! itself at start (`server::key_content_hashes`, a secret from the operating system's random
//! source) gives a request one content key whatever the order of its maps' entries, another
//! process gives it another, and neither is the key anyone can compute with the fixed secret.
//! Each process is this test binary run again, for this one test alone, with [`CHILD`] set: the
//! other tests of the binary never key the process they run in.

use crate::support;

use function_artifactory::proto::hash_key::HashKey;
use function_artifactory::proto::request_key::{content_key, content_key_under};
use function_artifactory::proto::v1::RunFunctionRequest;
use function_artifactory::proto::State;
use prost::Message;
use std::process::Command;

/// Set in the environment of a process run by the test, which then prints its keys.
const CHILD: &str = "FUNCTION_ARTIFACTORY_HASH_KEY_CHILD";

/// The line a child prints its keys on.
const KEYS_LINE: &str = "content keys:";

/// The test's name, for the harness to run it alone in the child: its path in the test binary
/// (`hash_key::NAME`), which is this module's path without the binary's name in front.
fn test_name() -> String {
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, module)| module);
    format!("{module}::a_request_has_one_key_in_a_process_and_another_in_the_next")
}

/// The colliding pair (`support::requests::colliding_requests`), each with two observed
/// resources.
fn requests() -> [RunFunctionRequest; 2] {
    let observed = |name: &str| {
        serde_json::json!({"apiVersion": "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "kind": "MavenRepository", "metadata": {"name": name}})
    };
    support::requests::colliding_requests().map(|request| {
        let mut request = request;
        let state = request.observed.as_mut().expect("observed state");
        for name in ["a", "b"] {
            let resource = support::requests::resource(observed(name));
            state.resources.insert(name.to_owned(), resource);
        }
        request
    })
}

/// `request` with its observed resources written in the reverse of prost's order, as Go may
/// write them: one `observed` field, the composite, then the entries one by one.
fn reordered(request: &RunFunctionRequest) -> Vec<u8> {
    let state = request.observed.as_ref().expect("observed state");
    let mut observed = State {
        composite: state.composite.clone(),
        ..State::default()
    }
    .encode_to_vec();
    for (name, resource) in state.resources.iter().rev() {
        let mut one = State::default();
        one.resources.insert(name.clone(), resource.clone());
        observed.extend(one.encode_to_vec());
    }
    let mut bytes = RunFunctionRequest {
        meta: request.meta.clone(),
        ..RunFunctionRequest::default()
    }
    .encode_to_vec();
    prost::encoding::bytes::encode(2, &observed, &mut bytes);
    let rest = RunFunctionRequest {
        meta: None,
        observed: None,
        ..request.clone()
    };
    bytes.extend(rest.encode_to_vec());
    bytes
}

/// In a child: keys the process as the server does, and prints the keys of the first request,
/// of the same reordered, and of the second.
fn print_keys() {
    function_artifactory::server::key_content_hashes().expect("a key for the process");
    let [first, second] = requests();
    let reordered = reordered(&first);
    assert_ne!(reordered, first.encode_to_vec(), "the order changed");
    let keys = [&first.encode_to_vec(), &reordered, &second.encode_to_vec()]
        .map(|bytes| content_key(bytes).expect("a content key"));
    println!(
        "{KEYS_LINE} {:032x} {:032x} {:032x}",
        keys[0], keys[1], keys[2]
    );
}

/// Runs this test in a new process and reads the keys it prints.
fn keys_of_a_new_process() -> [u128; 3] {
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args([&test_name(), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        // After the harness's "test NAME ... ", on the same line.
        .find_map(|line| line.split_once(KEYS_LINE).map(|(_, keys)| keys))
        .unwrap_or_else(|| panic!("no keys in {stdout}"));
    let keys: Vec<u128> = line
        .split_whitespace()
        .map(|key| u128::from_str_radix(key, 16).expect("a hexadecimal key"))
        .collect();
    keys.try_into().expect("three keys")
}

#[test]
fn a_request_has_one_key_in_a_process_and_another_in_the_next() {
    if std::env::var_os(CHILD).is_some() {
        print_keys();
        return;
    }
    let [first, second] = requests();
    let fixed = HashKey::fixed();
    let unkeyed = [&first, &second].map(|r| content_key_under(fixed, &r.encode_to_vec()));
    assert_ne!(first, second);
    assert_eq!(
        unkeyed[0], unkeyed[1],
        "the pair collides under the fixed key"
    );
    assert_eq!(
        content_key_under(fixed, &reordered(&first)),
        unkeyed[0],
        "and the fixed key does not count the order either"
    );

    let [one, other] = [keys_of_a_new_process(), keys_of_a_new_process()];
    for [key, reordered_key, second_key] in [one, other] {
        assert_eq!(
            key, reordered_key,
            "one process, one key whatever the order"
        );
        assert_ne!(key, second_key, "the colliding pair keyed apart");
        assert_ne!(Some(key), unkeyed[0], "not the fixed key");
    }
    assert_ne!(one[0], other[0], "two processes, two keys");
}
