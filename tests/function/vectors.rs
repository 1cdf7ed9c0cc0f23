//! The shared test vectors in `tests/vectors/`: for each request built in
//! `tests/support/vectors.rs`, the committed request and expected response,
//! on the wire (`.bin`) and in the protobuf JSON mapping (`.json`). The native
//! core must give exactly the committed bytes; the WebAssembly module is held
//! to the same files by `wasm/test/vectors.test.mjs`.
//!
//! `BLESS=1 cargo test --test function vectors::` rewrites the files after an intended change.

use crate::support;

use function_artifactory::proto::json::{
    base64_decode, base64_encode, request_from_json, request_to_json, response_from_json,
    response_to_json,
};
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse, Severity};
use function_artifactory::run_function;
use prost::Message;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use support::server::Server;
use support::vectors::{undecodable, vectors, Vector};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn blessing() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| v != "0")
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut text = serde_json::to_string_pretty(value).expect("JSON");
    text.push('\n');
    text.into_bytes()
}

/// The committed file, or (with BLESS) the file written anew. Returns a mismatch, if any.
fn check_file(name: &str, expected: &[u8]) -> Option<String> {
    let path = dir().join(name);
    if blessing() {
        std::fs::create_dir_all(dir()).expect("create tests/vectors");
        if std::fs::read(&path).ok().as_deref() != Some(expected) {
            std::fs::write(&path, expected).expect("write vector");
        }
        return None;
    }
    match std::fs::read(&path) {
        Ok(committed) if committed == expected => None,
        Ok(_) => Some(format!("{name} differs from what the core gives")),
        Err(e) => Some(format!("{name}: {e}")),
    }
}

fn fatal_reason(response: &RunFunctionResponse) -> Option<&str> {
    response
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .and_then(|r| r.reason.as_deref())
}

fn index(vectors: &[Vector]) -> Value {
    Value::Array(
        vectors
            .iter()
            .map(|v| json!({"name": v.name, "covers": v.covers, "fatalReason": v.fatal_reason}))
            .collect(),
    )
}

#[test]
fn native_bytes_equal_the_committed_vectors() {
    let vectors = vectors();
    let mut mismatches = Vec::new();
    mismatches.extend(check_file("index.json", &pretty(&index(&vectors))));
    for vector in &vectors {
        let request_bytes = vector.request.encode_to_vec();
        let response = run_function(&vector.request);
        let response_bytes = response.encode_to_vec();
        assert_eq!(
            fatal_reason(&response),
            vector.fatal_reason,
            "{}: the vector no longer covers what it says: {:?}",
            vector.name,
            response.results
        );
        let files = [
            ("request.bin", request_bytes),
            ("response.bin", response_bytes),
            ("request.json", pretty(&request_to_json(&vector.request))),
            ("response.json", pretty(&response_to_json(&response))),
        ];
        for (suffix, bytes) in files {
            mismatches.extend(check_file(&format!("{}.{suffix}", vector.name), &bytes));
        }
    }
    assert!(
        mismatches.is_empty(),
        "the test vectors are out of date (after an intended change: BLESS=1 cargo test --test function vectors::):\n{}",
        mismatches.join("\n")
    );
}

/// `undecodable.json`: bytes that are no request, with the message of the error they give.
fn undecodable_file() -> Value {
    Value::Array(
        undecodable()
            .into_iter()
            .map(|(name, bytes)| {
                let error = RunFunctionRequest::decode(bytes.as_slice())
                    .expect_err("undecodable")
                    .to_string();
                json!({"name": name, "requestBase64": base64_encode(&bytes), "error": error})
            })
            .collect(),
    )
}

#[test]
fn undecodable_requests_give_the_committed_errors() {
    let mismatch = check_file("undecodable.json", &pretty(&undecodable_file()));
    assert!(
        mismatch.is_none(),
        "{mismatch:?}; after an intended change: BLESS=1 cargo test --test function vectors::"
    );
}

/// The gRPC server answers every committed request with the committed bytes, on both
/// package names, and refuses what does not decode as INVALID_ARGUMENT with the committed message.
/// Every committed request has a content key, so the second package's call of each is answered
/// from the server's memo of answers, held to the committed bytes too.
#[tokio::test]
async fn the_server_answers_the_committed_bytes() {
    if blessing() {
        return;
    }
    let server = Server::start(&["--insecure"]);
    for vector in vectors() {
        let request = std::fs::read(dir().join(format!("{}.request.bin", vector.name))).unwrap();
        let expected = std::fs::read(dir().join(format!("{}.response.bin", vector.name))).unwrap();
        for package in ["v1", "v1beta1"] {
            let (status, _, body) = grpc_call(&server, package, &request).await;
            assert_eq!(status, "0", "{}", vector.name);
            assert_eq!(body, expected, "{} over {package}", vector.name);
        }
    }
    let hits = format!(
        "function_artifactory_answer_lookups_total{{outcome=\"hit\"}} {}",
        vectors().len()
    );
    let (_, metrics) = support::server::http_get(&server.metrics_address(), "/metrics").await;
    assert!(metrics.contains(&hits), "{hits}\nnot in\n{metrics}");
    let committed: Value =
        serde_json::from_slice(&std::fs::read(dir().join("undecodable.json")).unwrap()).unwrap();
    for case in committed.as_array().unwrap() {
        let bytes = base64_decode(case["requestBase64"].as_str().unwrap()).unwrap();
        let (status, message, _) = grpc_call(&server, "v1", &bytes).await;
        // The caller's mistake: INVALID_ARGUMENT, the committed decode error after a sentence.
        assert_eq!(status, "3", "{}: INVALID_ARGUMENT", case["name"]);
        assert_eq!(
            message,
            Some(format!(
                "the request is not a valid RunFunctionRequest: {}",
                case["error"].as_str().unwrap()
            )),
            "{}",
            case["name"]
        );
    }
}

/// One unary gRPC call over raw HTTP/2: grpc-status, grpc-message, and the response message bytes.
async fn grpc_call(
    server: &Server,
    package: &str,
    message: &[u8],
) -> (String, Option<String>, Vec<u8>) {
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let uri = format!(
        "{}/apiextensions.fn.proto.{package}.FunctionRunnerService/RunFunction",
        server.http_uri()
    );
    let head = http::Request::post(uri)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut body) = client.send_request(head, false).unwrap();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(message);
    body.send_data(bytes::Bytes::from(frame), true).unwrap();
    let response = response.await.unwrap();
    let headers = response.headers().clone();
    let mut body = response.into_body();
    let data = support::server::read_h2_body(&mut body).await;
    // Trailers, or the headers of a trailers-only answer.
    let trailers = body.trailers().await.unwrap().unwrap_or(headers);
    let text = |name: &str| trailers.get(name).map(|v| v.to_str().unwrap().to_owned());
    let status = text("grpc-status").expect("grpc-status");
    let message = text("grpc-message").map(|m| percent_decode(&m));
    let payload = if data.len() >= 5 {
        data[5..].to_vec()
    } else {
        Vec::new()
    };
    (status, message, payload)
}

/// grpc-message is percent-encoded.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn every_file_belongs_to_a_vector() {
    let vectors = vectors();
    let mut expected: Vec<String> = vec!["index.json".into(), "undecodable.json".into()];
    for v in &vectors {
        for suffix in [
            "request.bin",
            "response.bin",
            "request.json",
            "response.json",
        ] {
            expected.push(format!("{}.{suffix}", v.name));
        }
    }
    expected.sort();
    let Ok(entries) = std::fs::read_dir(dir()) else {
        assert!(
            blessing(),
            "tests/vectors is missing: BLESS=1 cargo test --test function vectors::"
        );
        return;
    };
    let mut found: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    if !blessing() {
        assert_eq!(found, expected, "stray or missing files in tests/vectors");
    }
}

/// The committed files decode to the same messages in both mappings, and
/// running the committed request (not the builder's) gives the committed response.
#[test]
fn committed_requests_run_to_committed_responses_in_both_mappings() {
    if blessing() {
        return;
    }
    for vector in vectors() {
        let read = |suffix: &str| std::fs::read(dir().join(format!("{}.{suffix}", vector.name)));
        let (Ok(request_bin), Ok(response_bin), Ok(request_json), Ok(response_json)) = (
            read("request.bin"),
            read("response.bin"),
            read("request.json"),
            read("response.json"),
        ) else {
            panic!(
                "{}: files missing; BLESS=1 cargo test --test function vectors::",
                vector.name
            );
        };
        let request = RunFunctionRequest::decode(request_bin.as_slice()).unwrap();
        let from_json = request_from_json(&serde_json::from_slice(&request_json).unwrap()).unwrap();
        assert_eq!(from_json, request, "{}: request.json", vector.name);
        assert_eq!(from_json.encode_to_vec(), request_bin, "{}", vector.name);
        let response = run_function(&request);
        assert_eq!(response.encode_to_vec(), response_bin, "{}", vector.name);
        let expected =
            response_from_json(&serde_json::from_slice(&response_json).unwrap()).unwrap();
        assert_eq!(
            expected.encode_to_vec(),
            response_bin,
            "{}: response.json",
            vector.name
        );
    }
}

#[test]
fn every_error_class_and_api_is_covered() {
    let vectors = vectors();
    for reason in [
        "InvalidInput",
        "InvalidComposite",
        "InvalidKey",
        "InvalidWiring",
        "InvalidProviderFields",
        "UnsafeChange",
        "KeyConflict",
    ] {
        assert!(
            vectors.iter().any(|v| v.fatal_reason == Some(reason)),
            "no vector for {reason}"
        );
    }
    for api in ["flat", "cluster", "namespaced"] {
        assert!(vectors.iter().any(|v| v.name == format!("valid-{api}")));
    }
}
