//! What function-wasm adds around the component, and the engine it runs it in
//! (`component_host::Host`, configured as the runtime's engine): every answer of the component
//! carries `meta`, so the runtime passes its bytes through as they are; the guest's `err`, a
//! trap and a missed deadline become the runtime's fatal result; the component writes nothing
//! to its standard output or error on any shared vector.

use component_host::{answer_as_the_runtime, repository, Call, Host, Limits, RUNTIME_TTL};
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse, Severity};
use prost::Message;
use serde_json::Value;
use std::time::Duration;

const MODULE: &str = "function-artifactory.wasm";

fn read(name: &str) -> Vec<u8> {
    std::fs::read(repository().join("tests/vectors").join(name)).unwrap()
}

fn vector_names() -> Vec<String> {
    let index: Value = serde_json::from_slice(&read("index.json")).unwrap();
    index
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_owned())
        .collect()
}

fn fatal(response: &[u8]) -> (String, RunFunctionResponse) {
    let response = RunFunctionResponse::decode(response).expect("a response");
    let fatal = response
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .expect("a fatal result");
    (fatal.message.clone(), response)
}

#[test]
fn every_answer_carries_meta_and_passes_through_the_runtime_unchanged() {
    for name in vector_names() {
        let request = read(&format!("{name}.request.bin"));
        let expected = read(&format!("{name}.response.bin"));
        // Under the runtime's own defaults (30 s, 512 MiB), not only the step's limits.
        let served = Host::shared().serve(MODULE, &request, Limits::RUNTIME_DEFAULTS);
        assert_eq!(served, expected, "{name}");
        let call = Host::shared().call(&request).expect("no trap");
        assert!(
            call.stdout.is_empty() && call.stderr.is_empty(),
            "{name}: {call:?}"
        );
    }
}

#[test]
fn the_runtime_fills_meta_only_where_a_guest_left_it_out() {
    let request = read("valid-cluster.request.bin");
    let tag = RunFunctionRequest::decode(request.as_slice())
        .unwrap()
        .meta
        .unwrap()
        .tag;
    let bare = RunFunctionResponse::default().encode_to_vec();
    let call = Call {
        answer: Ok(bare.clone()),
        log: Vec::new(),
        fuel: 0,
        instantiate: Duration::ZERO,
        run: Duration::ZERO,
        peak_memory: 0,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let served = answer_as_the_runtime(MODULE, &request, Limits::STEP, Ok(call));
    assert!(served.starts_with(&bare));
    let meta = RunFunctionResponse::decode(served.as_slice())
        .unwrap()
        .meta
        .expect("meta added");
    assert_eq!(meta.tag, tag);
    assert_eq!(meta.ttl.unwrap().seconds, RUNTIME_TTL.as_secs() as i64);
}

#[test]
fn the_guest_s_err_becomes_the_runtime_s_fatal_result() {
    let over = vec![0u8; function_artifactory::proto::MAX_REQUEST_BYTES + 1];
    let (message, _) = fatal(&Host::shared().serve(MODULE, &over, Limits::STEP));
    assert_eq!(
        message,
        "module function-artifactory.wasm failed: run returned an error: the request is 4194305 bytes, over the limit of 4194304 bytes"
    );
}

#[test]
fn a_missed_deadline_is_a_fatal_result_and_the_desired_state_is_kept() {
    // One tick: the deadline covers instantiation and a call of 5,000 repositories takes longer.
    let request = crate::limits::five_thousand_repositories();
    let limits = Limits {
        timeout: Duration::from_millis(10),
        ..Limits::STEP
    };
    let call = Host::shared().call_with(&request, limits);
    let error = call.as_ref().expect_err("the deadline stops the call");
    assert_eq!(
        error.downcast_ref::<wasmtime::Trap>(),
        Some(&wasmtime::Trap::Interrupt),
        "{error:?}"
    );
    let (message, response) = fatal(&answer_as_the_runtime(MODULE, &request, limits, call));
    assert_eq!(
        message,
        "module function-artifactory.wasm failed: run failed: module exceeded its execution deadline (10ms)"
    );
    let decoded = RunFunctionRequest::decode(request.as_slice()).unwrap();
    assert_eq!(response.desired, decoded.desired);
    assert_eq!(response.meta.unwrap().tag, "test-tag");
}

#[test]
fn a_trap_is_a_fatal_result() {
    // A memory limit the instance reaches with a small claim but not with 5,000 repositories:
    // the allocator's failure aborts the guest, a trap.
    let small = Host::shared()
        .call(&read("valid-cluster.request.bin"))
        .expect("no trap");
    let limits = Limits {
        memory: small.peak_memory,
        ..Limits::STEP
    };
    let request = crate::limits::five_thousand_repositories();
    let call = Host::shared().call_with(&request, limits);
    let error = call.as_ref().expect_err("the memory limit stops the call");
    assert_eq!(
        error.downcast_ref::<wasmtime::Trap>(),
        Some(&wasmtime::Trap::UnreachableCodeReached),
        "{error:?}"
    );
    let (message, _) = fatal(&answer_as_the_runtime(MODULE, &request, limits, call));
    assert!(
        message.starts_with("module function-artifactory.wasm failed: run failed: trap: "),
        "{message}"
    );
}
