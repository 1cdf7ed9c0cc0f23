//! The component answers every request as the native core does, byte for byte: the shared
//! test vectors (`tests/vectors/`), given straight and inside function-wasm's Input; requests
//! that are not requests get `err` with the server's words; the log import gets one line.

use component_host::{repository, Host, LogLevel};
use function_artifactory::proto::json::base64_decode;
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use function_artifactory::proto::Struct;
use prost::Message;
use serde_json::{json, Value};

fn vectors_dir() -> std::path::PathBuf {
    repository().join("tests/vectors")
}

/// The names of the shared vectors.
fn vectors() -> Vec<String> {
    let index: Value =
        serde_json::from_slice(&std::fs::read(vectors_dir().join("index.json")).unwrap()).unwrap();
    let names: Vec<String> = index
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.len() > 15, "{names:?}");
    names
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(vectors_dir().join(name)).unwrap()
}

/// What the gRPC server answers: the core on the decoded request, encoded.
fn native(request: &[u8]) -> Vec<u8> {
    let request = RunFunctionRequest::decode(request).unwrap();
    function_artifactory::run_function(&request).encode_to_vec()
}

fn answer(request: &[u8]) -> Vec<u8> {
    let call = Host::shared().call(request).expect("no trap");
    call.answer.expect("a response, not err")
}

/// The request with its input moved into a function-wasm Input's `config`, as the runtime
/// hands it to the module.
fn under_function_wasm(request: &[u8], keep_type_meta: bool) -> Vec<u8> {
    let mut request = RunFunctionRequest::decode(request).unwrap();
    let mut config = request
        .input
        .take()
        .map(Struct::into_fields)
        .unwrap_or_default();
    if !keep_type_meta {
        config.remove("apiVersion");
        config.remove("kind");
    }
    let input = json!({
        "apiVersion": "wasm.fn.crossplane.io/v1",
        "kind": "Input",
        "module": {"type": "OCI", "oci": {"ref": "ghcr.io/example/function-artifactory@sha256:0000000000000000000000000000000000000000000000000000000000000000"}},
        "limits": {"memory": "128Mi", "timeout": "5s"},
        "config": config,
    });
    request.input = Some(Struct::from_value(input));
    request.encode_to_vec()
}

#[test]
fn every_vector_answers_the_committed_bytes() {
    for name in vectors() {
        let request = read(&format!("{name}.request.bin"));
        let expected = read(&format!("{name}.response.bin"));
        assert_eq!(native(&request), expected, "{name}: the native core");
        assert_eq!(answer(&request), expected, "{name}: the component");
    }
}

/// Inside function-wasm's Input the answer is the native core's with the settings read from
/// `config`; it is the committed answer itself unless a problem names a setting (then its path
/// starts `input.config.` rather than `input.`).
#[test]
fn every_vector_answers_the_same_inside_function_wasms_input() {
    let mut same_as_committed = 0;
    for name in vectors() {
        let request = read(&format!("{name}.request.bin"));
        let committed = read(&format!("{name}.response.bin"));
        for keep_type_meta in [true, false] {
            let wrapped = under_function_wasm(&request, keep_type_meta);
            let native = function_artifactory::run_function_at(
                &RunFunctionRequest::decode(wrapped.as_slice()).unwrap(),
                function_artifactory::SettingsAt::Config,
            )
            .encode_to_vec();
            let answer = answer(&wrapped);
            assert_eq!(
                answer, native,
                "{name} (apiVersion and kind in config: {keep_type_meta})"
            );
            let names_a_setting = committed
                .windows(6)
                .any(|w| w == b"input." || w == b"input:");
            if !names_a_setting {
                assert_eq!(answer, committed, "{name}");
                same_as_committed += 1;
            }
        }
    }
    assert!(same_as_committed > 20, "{same_as_committed}");
}

/// The component is pre-initialised when it is built: an instance starts as one that prepared
/// itself, which is sound only if what a call leaves behind changes no later answer. Every
/// vector, one after the other on one instance, answers the committed bytes.
#[test]
fn one_instance_answers_every_vector_as_fresh_ones_do() {
    let names = vectors();
    let requests: Vec<Vec<u8>> = names
        .iter()
        .map(|name| read(&format!("{name}.request.bin")))
        .collect();
    let requests: Vec<&[u8]> = requests.iter().map(Vec::as_slice).collect();
    let calls = Host::shared()
        .calls_on_one_instance(&requests)
        .expect("no trap");
    for (name, call) in names.iter().zip(calls) {
        let expected = read(&format!("{name}.response.bin"));
        assert_eq!(call.answer.as_ref(), Ok(&expected), "{name}");
    }
}

/// Pre-initialisation removes its own export: the component exports `run` alone, as the
/// contract's world has it.
#[test]
fn the_component_exports_run_alone() {
    assert_eq!(Host::shared().export_names(), ["run"]);
}

#[test]
fn bytes_that_are_not_a_request_get_err_with_the_servers_words() {
    let cases: Value = serde_json::from_slice(&read("undecodable.json")).expect("undecodable.json");
    let cases = cases.as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let bytes = base64_decode(case["requestBase64"].as_str().unwrap()).unwrap();
        let call = Host::shared().call(&bytes).expect("no trap");
        assert_eq!(
            call.answer,
            Err(format!(
                "the request is not a valid RunFunctionRequest: {}",
                case["error"].as_str().unwrap()
            )),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn a_request_over_the_limit_gets_err() {
    let over = vec![0u8; function_artifactory::proto::MAX_REQUEST_BYTES + 1];
    let call = Host::shared().call(&over).expect("no trap");
    let message = call.answer.unwrap_err();
    assert!(
        message.contains("over the limit of 4194304 bytes"),
        "{message}"
    );
}

#[test]
fn the_log_import_gets_one_debug_line_with_the_tag_and_counts() {
    let request = read("valid-cluster.request.bin");
    let tag = RunFunctionRequest::decode(request.as_slice())
        .unwrap()
        .meta
        .map(|m| m.tag)
        .unwrap_or_default();
    let response = RunFunctionResponse::decode(answer(&request).as_slice()).unwrap();
    let call = Host::shared().call(&request).unwrap();
    assert_eq!(call.log.len(), 1, "{:?}", call.log);
    let line = &call.log[0];
    assert_eq!(line.level, LogLevel::Debug);
    assert_eq!(line.message, "RunFunction");
    let desired = response.desired.map_or(0, |d| d.resources.len());
    assert_eq!(
        line.kv,
        [
            ("tag".to_owned(), tag),
            ("desired_resources".to_owned(), desired.to_string()),
            ("results".to_owned(), response.results.len().to_string()),
        ]
    );
}
