//! The gRPC face over real loopback connections to the built binary.

use crate::support;

use bytes::Bytes;
use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient as V1Client;
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use function_artifactory::proto::v1beta1::function_runner_service_client::FunctionRunnerServiceClient as V1beta1Client;
use prost::Message;
use std::time::Duration;
use support::server::{
    closed_within, http_get, insecure_channel, request, run_to_exit, tls_channel, Pki, Server,
};
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

const V1: &str = "apiextensions.fn.proto.v1.FunctionRunnerService";
const V1BETA1: &str = "apiextensions.fn.proto.v1beta1.FunctionRunnerService";

#[tokio::test]
async fn insecure_run_function_on_v1_copies_the_tag_and_logs_the_call() {
    let server = Server::start(&["--insecure", "--debug"]);
    let mut client = V1Client::new(insecure_channel(&server).await);

    let response = client
        .run_function(request("tag-v1"))
        .await
        .unwrap()
        .into_inner();

    assert_eq!(response.meta.as_ref().unwrap().tag, "tag-v1");
    let line = server
        .wait_for_log(Duration::from_secs(5), |l| {
            l["message"] == "RunFunction" && l["tag"] == "tag-v1"
        })
        .unwrap_or_else(|| panic!("no call line; log: {:#?}", server.log()));
    assert_eq!(line["level"], "DEBUG");
    assert_eq!(line["package"], "v1");
    assert_eq!(line["desired_resources"], desired_count(&response));
    assert_eq!(line["results"], response.results.len());
    assert!(line["duration_us"].is_u64(), "{line}");
}

#[tokio::test]
async fn insecure_run_function_on_v1beta1_copies_the_tag() {
    let server = Server::start(&["--insecure"]);
    let mut client = V1beta1Client::new(insecure_channel(&server).await);

    let response = client
        .run_function(request("tag-v1beta1"))
        .await
        .unwrap()
        .into_inner();

    assert_eq!(response.meta.unwrap().tag, "tag-v1beta1");
    assert!(
        !server.log().iter().any(|l| l.contains("\"RunFunction\"")),
        "no call lines at info level"
    );
}

/// Small requests are answered on the transport's thread, large ones on a blocking thread
/// (decoded, run and encoded there): both answers are the core's, byte for byte.
#[tokio::test]
async fn small_and_large_calls_answer_what_the_core_answers() {
    let server = Server::start(&["--insecure"]);
    let mut client = V1Client::new(insecure_channel(&server).await);
    for count in [3, 400] {
        let entries: Vec<serde_json::Value> = (0..count)
            .map(|i| {
                serde_json::json!({
                    "name": format!("repository-{i:04}"),
                    "rclass": "local",
                    "packageType": "maven",
                    "description": format!("repository number {i}, with a longer description"),
                })
            })
            .collect();
        let request = support::requests::request(serde_json::json!({
            "apiVersion": "platform.example.org/v1alpha1",
            "kind": "XRepositories",
            "metadata": {"name": "xr"},
            "spec": {"repositories": entries},
        }))
        .build();
        let size = request.encoded_len();
        let answered = client
            .run_function(request.clone())
            .await
            .unwrap()
            .into_inner();
        let expected = function_artifactory::run_function(&request);
        assert_eq!(desired_count(&answered), count, "{size} bytes");
        assert_eq!(
            answered.encode_to_vec(),
            expected.encode_to_vec(),
            "{size} bytes"
        );
    }
}

#[tokio::test]
async fn health_reports_serving_for_the_server_and_both_services() {
    let server = Server::start(&["--insecure"]);
    let mut health = HealthClient::new(insecure_channel(&server).await);

    for service in ["", V1, V1BETA1] {
        let answer = health
            .check(HealthCheckRequest {
                service: service.to_owned(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            answer.status(),
            ServingStatus::Serving,
            "service {service:?}"
        );
    }
}

#[tokio::test]
async fn mtls_client_with_a_certificate_of_the_ca_is_served() {
    let pki = Pki::generate();
    let server = mtls_server(&pki);

    let channel = tls_channel(&server, &pki.ca_pem, Some(&pki.client))
        .await
        .unwrap();
    let response = V1Client::new(channel)
        .run_function(request("mtls"))
        .await
        .unwrap();

    assert_eq!(response.into_inner().meta.unwrap().tag, "mtls");
    let start = server
        .wait_for_log(Duration::ZERO, |l| l["message"] == "serving")
        .unwrap();
    assert_eq!(start["tls"], true);
}

#[tokio::test]
async fn mtls_client_without_a_certificate_is_refused() {
    let pki = Pki::generate();
    let server = mtls_server(&pki);

    let refused = call_over_tls(&server, &pki.ca_pem, None).await;

    assert!(
        refused.is_err(),
        "a client without a certificate was served"
    );
    // Said at info level (the default), with tonic's reason.
    let refusal =
        |l: &serde_json::Value| l["message"] == "refused a client: the TLS handshake failed";
    let line = server
        .wait_for_log(Duration::from_secs(5), refusal)
        .unwrap_or_else(|| panic!("no refusal line; log: {:#?}", server.log()));
    assert_eq!(line["level"], "INFO");
    assert!(
        line["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{line}"
    );
    assert_still_serves(&server, &pki).await;
}

#[tokio::test]
async fn mtls_client_with_a_certificate_of_another_ca_is_refused() {
    let pki = Pki::generate();
    let server = mtls_server(&pki);

    let refused = call_over_tls(&server, &pki.ca_pem, Some(&pki.stranger)).await;

    assert!(refused.is_err(), "a client of another CA was served");
    assert_still_serves(&server, &pki).await;
}

#[tokio::test]
async fn mtls_client_with_an_expired_certificate_of_the_ca_is_refused() {
    let pki = Pki::generate();
    let server = mtls_server(&pki);

    let refused = call_over_tls(&server, &pki.ca_pem, Some(&pki.expired)).await;

    assert!(
        refused.is_err(),
        "a client with an expired certificate was served"
    );
    assert_still_serves(&server, &pki).await;
}

#[test]
fn refuses_to_start_without_insecure_or_certificates() {
    let (status, stderr) = run_to_exit(&[], &[]);

    assert!(!status.success(), "{status}");
    assert!(
        stderr.contains("supply --tls-certs-dir (or TLS_SERVER_CERTS_DIR) or use --insecure"),
        "{stderr}"
    );
}

#[test]
fn refuses_to_start_naming_a_missing_certificate_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tls.crt"), Pki::generate().client.cert).unwrap();
    let dir_arg = dir.path().to_str().unwrap();

    let (status, stderr) = run_to_exit(&["--tls-certs-dir", dir_arg], &[]);

    assert!(!status.success(), "{status}");
    let missing = dir.path().join("tls.key");
    assert!(
        stderr.contains(&format!("cannot read {}", missing.display())),
        "{stderr}"
    );
}

#[tokio::test]
async fn oversize_request_is_resource_exhausted_and_the_server_keeps_serving() {
    let server = Server::start(&["--insecure", "--max-recv-message-size", "1"]);
    let mut client = V1Client::new(insecure_channel(&server).await);

    let oversize = request(&"x".repeat(1536 * 1024));
    let status = client.run_function(oversize).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    let response = client
        .run_function(request("after"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.meta.unwrap().tag, "after");
}

/// The limit set by the environment, as a DeploymentRuntimeConfig sets it
/// (`examples/operations/runtime-config.yaml`); the flag, when both are given, wins.
#[tokio::test]
async fn the_request_limit_may_come_from_the_environment() {
    let env = [(
        "FUNCTION_ARTIFACTORY_MAX_RECV_MESSAGE_SIZE",
        std::ffi::OsStr::new("1"),
    )];
    let server = Server::start_with_env(&["--insecure"], &env);
    let mut client = V1Client::new(insecure_channel(&server).await);
    let oversize = request(&"x".repeat(1536 * 1024));
    let status = client.run_function(oversize.clone()).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    let server = Server::start_with_env(&["--insecure", "--max-recv-message-size", "2"], &env);
    let mut client = V1Client::new(insecure_channel(&server).await);
    let response = client.run_function(oversize).await.unwrap().into_inner();
    assert!(response.meta.is_some());
}

/// The server's advice for a claim too large for one composite, word for word what the npm
/// module and the component give (`tests/function/hostile_claims.rs`, issue 47).
#[tokio::test]
async fn the_server_advises_on_5000_repositories_as_every_face() {
    let server = Server::start(&["--insecure"]);
    let mut client = V1Client::new(insecure_channel(&server).await);
    let response = client
        .run_function(support::requests::five_thousand_repositories())
        .await
        .unwrap()
        .into_inner();
    let message = support::requests::fatal_message(&response).expect("a fatal result");
    assert_eq!(
        message.lines().nth(1),
        Some(support::requests::FIVE_THOUSAND_ADVICE),
        "{message}"
    );
}

/// A message that is not a RunFunctionRequest is the caller's mistake: INVALID_ARGUMENT with
/// what was wrong (tonic alone answers INTERNAL, which Crossplane reports as the function's bug).
#[tokio::test]
async fn malformed_protobuf_is_invalid_argument_and_the_server_keeps_serving() {
    let server = Server::start(&["--insecure"]);
    let cases: [(&str, Bytes, &str); 4] = [
        (
            "bad wire type",
            frame_of(b"\x0f"),
            "the request is not a valid RunFunctionRequest: failed to decode Protobuf message: invalid wire type value: 7",
        ),
        (
            "truncated field",
            frame_of(b"\x0a\x05\x0a\x01"),
            "the request is not a valid RunFunctionRequest: failed to decode Protobuf message: RunFunctionRequest.meta: buffer underflow",
        ),
        (
            "no message",
            Bytes::new(),
            "the request has no message",
        ),
        (
            "a frame cut short",
            Bytes::from_static(b"\x00\x00\x00\x00\x10\x0a"),
            "the request ends inside its message",
        ),
    ];
    for (case, body, message) in cases {
        let (status, text) = raw_call(&server, body).await;
        assert_eq!(
            status, "3",
            "{case}: grpc-status INVALID_ARGUMENT; message {text:?}"
        );
        assert!(text.starts_with(message), "{case}: {text:?}");
    }

    let mut client = V1Client::new(insecure_channel(&server).await);
    let response = client.run_function(request("after")).await.unwrap();
    assert_eq!(response.into_inner().meta.unwrap().tag, "after");
}

/// Idle peers that never send the HTTP/2 preface hold no more than a socket each, do not keep a
/// real client from being answered, and are closed after the preface timeout (10 s).
#[tokio::test]
async fn idle_connections_do_not_starve_a_client_and_are_closed_after_the_preface_timeout() {
    let server = Server::start(&["--insecure"]);
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
    }
    let opened = std::time::Instant::now();

    assert_answers_in_time(&server, "among-idle").await;

    assert_closed_by_preface_deadline(idle, opened, "idle connection").await;
    assert_answers_in_time(&server, "after-idle").await;
}

/// Every connection, opened at `opened`, is closed by the server within the preface deadline.
async fn assert_closed_by_preface_deadline(
    connections: Vec<tokio::net::TcpStream>,
    opened: std::time::Instant,
    what: &str,
) {
    for (index, mut connection) in connections.into_iter().enumerate() {
        let closed = closed_within(
            &mut connection,
            PREFACE_DEADLINE_BOUND.saturating_sub(opened.elapsed()),
        )
        .await;
        assert!(
            closed,
            "{what} {index} still open {:?} after it opened",
            opened.elapsed()
        );
    }
}

/// Slowloris: peers that send part of the preface, or a call's headers and half its body, and
/// then nothing. A real client is still answered in time; the partial prefaces are closed after
/// the preface timeout; the half-sent calls wait for the request timeout without taking a core.
#[tokio::test]
async fn slow_partial_requests_do_not_starve_a_client() {
    use tokio::io::AsyncWriteExt;
    let server = Server::start(&["--insecure"]);
    let mut partial_prefaces = Vec::new();
    for _ in 0..100 {
        let mut connection = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        connection.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
        partial_prefaces.push(connection);
    }
    let opened = std::time::Instant::now();
    let mut half_sent = Vec::new();
    for index in 0..100 {
        half_sent.push(HalfSentCall::open(&server, &request(&format!("slow-{index}"))).await);
    }

    assert_answers_in_time(&server, "among-slow").await;

    assert_closed_by_preface_deadline(partial_prefaces, opened, "partial preface").await;
    // The slow calls were only waiting: finished now, each is answered.
    for mut call in half_sent.drain(..3) {
        let (status, _) = call.finish().await;
        assert_eq!(status, "0");
    }
    assert_answers_in_time(&server, "after-slow").await;
}

/// The Go SDK stops on SIGTERM after the calls in flight; so must this. The call is held open by
/// sending only half of its body before the signal.
#[tokio::test]
async fn sigterm_finishes_the_call_in_flight_refuses_new_connections_and_exits_0() {
    let mut server = Server::start(&["--insecure"]);
    let mut call = HalfSentCall::open(&server, &request("in-flight")).await;
    // Let the server take the stream before the signal: a stream opened after it is refused.
    tokio::time::sleep(Duration::from_millis(300)).await;

    server.signal(libc::SIGTERM);
    let signalled = std::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let refused = tokio::net::TcpStream::connect(server.addr).await;
    assert!(
        refused.is_err(),
        "a new connection was accepted after SIGTERM"
    );
    let (status, response) = call.finish().await;
    assert_eq!(status, "0", "grpc-status");
    assert_eq!(response.meta.unwrap().tag, "in-flight");
    let exit = server
        .wait_exit(Duration::from_secs(5))
        .expect("exits within 5 s of the call's end");
    assert_eq!(exit.code(), Some(0), "{exit}");
    assert!(
        signalled.elapsed() < Duration::from_secs(6),
        "stopped {:?} after SIGTERM",
        signalled.elapsed()
    );
}

/// A call that never finishes (its peer stalls mid-request) cannot keep the process alive: after
/// SIGTERM it exits 0 within the drain timeout (25 s, under Kubernetes' 30 s grace period).
#[tokio::test]
async fn sigterm_with_a_stalled_call_exits_0_within_the_drain_timeout() {
    let mut server = Server::start(&["--insecure"]);
    let _stalled = HalfSentCall::open(&server, &request("stalled")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    server.signal(libc::SIGTERM);
    let signalled = std::time::Instant::now();

    let exit = server
        .wait_exit(Duration::from_secs(29))
        .expect("exits within Kubernetes' grace period");
    assert_eq!(exit.code(), Some(0), "{exit}");
    let took = signalled.elapsed();
    assert!(
        took >= Duration::from_secs(24) && took < Duration::from_secs(28),
        "stopped {took:?} after SIGTERM; the drain timeout is 25 s"
    );
}

#[tokio::test]
async fn sigint_stops_an_idle_server_with_exit_0() {
    let mut server = Server::start(&["--insecure"]);

    server.signal(libc::SIGINT);

    let exit = server.wait_exit(Duration::from_secs(5)).expect("exits");
    assert_eq!(exit.code(), Some(0), "{exit}");
}

fn mtls_server(pki: &Pki) -> Server {
    // Through the environment, as Crossplane configures it.
    Server::start_with_env(&[], &[("TLS_SERVER_CERTS_DIR", pki.dir.path().as_os_str())])
}

async fn call_over_tls(
    server: &Server,
    ca_pem: &str,
    client: Option<&support::server::Pem>,
) -> Result<RunFunctionResponse, String> {
    let channel = tls_channel(server, ca_pem, client)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let response = V1Client::new(channel)
        .run_function(request("refused"))
        .await
        .map_err(|status| format!("call: {status:?}"))?;
    Ok(response.into_inner())
}

/// A refused client must not have harmed the server: a good one is still served.
async fn assert_still_serves(server: &Server, pki: &Pki) {
    let served = call_over_tls(server, &pki.ca_pem, Some(&pki.client)).await;
    assert_eq!(served.unwrap().meta.unwrap().tag, "refused");
}

/// The server's preface timeout (10 s) with a margin for a loaded machine.
const PREFACE_DEADLINE_BOUND: Duration = Duration::from_secs(14);

/// A real client connects and is answered within 2 s.
async fn assert_answers_in_time(server: &Server, tag: &str) {
    let started = std::time::Instant::now();
    let answered = tokio::time::timeout(Duration::from_secs(2), async {
        let mut client = V1Client::new(insecure_channel(server).await);
        client.run_function(request(tag)).await
    })
    .await
    .unwrap_or_else(|_| panic!("{tag}: no answer within 2 s"))
    .unwrap();
    assert_eq!(answered.into_inner().meta.unwrap().tag, tag);
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// One RunFunction call over raw HTTP/2 with `body` as the whole request body; returns
/// grpc-status and grpc-message, from the headers (a trailers-only answer) or the trailers.
async fn raw_call(server: &Server, body: Bytes) -> (String, String) {
    let (status, message, _) = raw_exchange(server, body).await;
    (status, message)
}

/// [`raw_call`], with the response's body as received.
async fn raw_exchange(server: &Server, body: Bytes) -> (String, String, Vec<u8>) {
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let head = http::Request::post(format!("{}/{V1}/RunFunction", server.http_uri()))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(head, body.is_empty()).unwrap();
    if !body.is_empty() {
        send.send_data(body, true).unwrap();
    }
    let response = tokio::time::timeout(Duration::from_secs(5), response)
        .await
        .expect("a response within 5 s")
        .unwrap();
    let text = |map: &http::HeaderMap, name: &str| {
        map.get(name).map(|v| percent_decoded(v.to_str().unwrap()))
    };
    if let Some(status) = text(response.headers(), "grpc-status") {
        let message = text(response.headers(), "grpc-message").unwrap_or_default();
        return (status, message, Vec::new());
    }
    let mut body = response.into_body();
    let received = support::server::read_h2_body(&mut body).await;
    let trailers = body.trailers().await.unwrap().expect("trailers");
    (
        text(&trailers, "grpc-status").expect("grpc-status"),
        text(&trailers, "grpc-message").unwrap_or_default(),
        received,
    )
}

/// grpc-message without its percent-encoding.
fn percent_decoded(text: &str) -> String {
    let mut bytes = Vec::new();
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        match (first, tail) {
            (b'%', [high, low, after @ ..]) => {
                let hex = std::str::from_utf8(&[*high, *low]).unwrap().to_owned();
                bytes.push(u8::from_str_radix(&hex, 16).unwrap());
                rest = after;
            }
            _ => {
                bytes.push(first);
                rest = tail;
            }
        }
    }
    String::from_utf8(bytes).unwrap()
}

/// `message` as one uncompressed gRPC frame.
fn frame_of(message: &[u8]) -> Bytes {
    let mut frame = vec![0u8];
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(message);
    Bytes::from(frame)
}

fn desired_count(response: &RunFunctionResponse) -> usize {
    response.desired.as_ref().map_or(0, |d| d.resources.len())
}

/// A RunFunction call over raw HTTP/2 whose body is sent in two halves.
struct HalfSentCall {
    response: h2::client::ResponseFuture,
    body: h2::SendStream<Bytes>,
    rest: Bytes,
}

impl HalfSentCall {
    async fn open(server: &Server, request: &RunFunctionRequest) -> HalfSentCall {
        let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let (client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(connection);
        let mut client = client.ready().await.unwrap();
        let head = http::Request::post(format!("{}/{V1}/RunFunction", server.http_uri()))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
        let (response, mut body) = client.send_request(head, false).unwrap();
        let mut frame = grpc_frame(request);
        let rest = frame.split_off(frame.len() / 2);
        body.send_data(frame, false).unwrap();
        HalfSentCall {
            response,
            body,
            rest,
        }
    }

    /// Sends the rest of the body; returns grpc-status and the decoded response.
    async fn finish(&mut self) -> (String, RunFunctionResponse) {
        self.body.send_data(self.rest.clone(), true).unwrap();
        let response = tokio::time::timeout(Duration::from_secs(5), &mut self.response)
            .await
            .expect("a response within 5 s")
            .unwrap();
        assert_eq!(response.status(), http::StatusCode::OK);
        let mut body = response.into_body();
        let data = support::server::read_h2_body(&mut body).await;
        let trailers = body.trailers().await.unwrap().expect("trailers");
        let status = trailers["grpc-status"].to_str().unwrap().to_owned();
        (status, RunFunctionResponse::decode(&data[5..]).unwrap())
    }
}

/// The gRPC length-prefixed message: uncompressed flag, big-endian length, message.
fn grpc_frame(message: &RunFunctionRequest) -> Bytes {
    let encoded = message.encode_to_vec();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&u32::try_from(encoded.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&encoded);
    Bytes::from(frame)
}

/// `examples/operations/monitoring.yaml` scrapes the port the runtime config names and alerts on
/// series the server exports: each `function_artifactory_*` name in a rule's expression is on
/// `/metrics` once a call has ended in a fatal result.
#[tokio::test]
async fn the_monitoring_example_alerts_on_series_the_server_exports() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/operations");
    let documents = |name: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        serde_yaml_ng::Deserializer::from_str(&text)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect()
    };
    let monitoring = documents("monitoring.yaml");
    let runtime = documents("runtime-config.yaml");
    let (monitor, rules) = (&monitoring[0], &monitoring[1]);
    assert_eq!(monitor["kind"], "PodMonitor");
    assert_eq!(monitor["spec"]["selector"], runtime[1]["spec"]["selector"]);
    let port = &runtime[0]["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"]
        [0]["ports"][0]["name"];
    assert_eq!(monitor["spec"]["podMetricsEndpoints"][0]["port"], *port);
    assert_eq!(rules["kind"], "PrometheusRule");
    let expressions: Vec<String> = rules["spec"]["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["expr"].as_str().unwrap().to_owned())
        .collect();
    let names: Vec<&str> = expressions
        .iter()
        .flat_map(|e| e.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|word| word.starts_with("function_artifactory_"))
        .collect();
    assert!(
        names.contains(&"function_artifactory_fatal_results_total"),
        "{expressions:?}"
    );

    let server = Server::start(&["--insecure"]);
    let start = server
        .wait_for_log(Duration::from_secs(5), |l| l["message"] == "serving")
        .unwrap();
    let metrics = start["metrics_address"].as_str().unwrap().to_owned();
    let mut client = V1Client::new(insecure_channel(&server).await);
    client.run_function(request("fatal")).await.unwrap();
    let (_, text) = http_get(&metrics, "/metrics").await;
    for name in names {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name}{{"))),
            "{name} not in\n{text}"
        );
    }
}

/// `/metrics` counts the calls as the SDKs' series and this function's own; `/readyz` is ready
/// while serving and not ready once SIGTERM starts the drain; `/healthz` stays live.
#[tokio::test]
async fn metrics_count_the_calls_and_readyz_flips_on_sigterm() {
    let mut server = Server::start(&["--insecure"]);
    let start = server
        .wait_for_log(Duration::from_secs(5), |l| l["message"] == "serving")
        .unwrap();
    let metrics = start["metrics_address"].as_str().unwrap().to_owned();
    assert_eq!(http_get(&metrics, "/readyz").await.0, 200);
    assert_eq!(
        http_get(&metrics, "/healthz").await,
        (200, "ok\n".to_owned())
    );

    let mut client = V1Client::new(insecure_channel(&server).await);
    let spec = serde_json::json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven"},
        {"name": "npm", "rclass": "local", "packageType": "npm"},
    ]});
    let rendering = support::requests::request(support::requests::composite(spec)).build();
    client.run_function(rendering).await.unwrap();
    client.run_function(request("fatal-1")).await.unwrap();
    let mut v1beta1 = V1beta1Client::new(insecure_channel(&server).await);
    v1beta1.run_function(request("fatal-2")).await.unwrap();

    let (status, text) = http_get(&metrics, "/metrics").await;
    assert_eq!(status, 200);
    for expected in [
        format!("grpc_server_started_total{{grpc_type=\"unary\",grpc_service=\"{V1}\",grpc_method=\"RunFunction\"}} 2"),
        format!("grpc_server_handled_total{{grpc_type=\"unary\",grpc_service=\"{V1}\",grpc_method=\"RunFunction\",grpc_code=\"OK\"}} 2"),
        format!("grpc_server_handled_total{{grpc_type=\"unary\",grpc_service=\"{V1BETA1}\",grpc_method=\"RunFunction\",grpc_code=\"OK\"}} 1"),
        format!("grpc_server_handling_seconds_count{{grpc_type=\"unary\",grpc_service=\"{V1}\",grpc_method=\"RunFunction\"}} 2"),
        "function_artifactory_repositories_rendered_total 2".to_owned(),
        "function_artifactory_fatal_results_total{reason=\"InvalidComposite\"} 2".to_owned(),
        "function_artifactory_calls_total{provider_api=\"cluster\"} 1".to_owned(),
        "function_artifactory_calls_total{provider_api=\"none\"} 2".to_owned(),
    ] {
        assert!(text.contains(&expected), "{expected}\nnot in\n{text}");
    }

    // A call held in flight keeps the process draining while /readyz is asked.
    let mut call = HalfSentCall::open(&server, &request("in-flight")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal(libc::SIGTERM);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(http_get(&metrics, "/readyz").await.0, 503);
    assert_eq!(http_get(&metrics, "/healthz").await.0, 200);
    let (status, _) = call.finish().await;
    assert_eq!(status, "0");
    let exit = server.wait_exit(Duration::from_secs(5)).expect("exits");
    assert_eq!(exit.code(), Some(0), "{exit}");
}

/// A request answered before is answered again with the same bytes, whatever the order of its
/// maps' entries, from the memo; a request with other content is rendered. With
/// `--answer-memo-size 0` every call is rendered, to the same bytes.
#[tokio::test]
async fn a_request_answered_before_is_answered_again_byte_for_byte_from_memory() {
    use function_artifactory::proto::v1::RequestMeta;
    use function_artifactory::proto::State;
    let observed = |name: &str| {
        serde_json::json!({"apiVersion": "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "kind": "MavenRepository", "metadata": {"name": name}, "spec": {"forProvider": {}}})
    };
    let build = |first: &str| {
        let spec = serde_json::json!({"repositories": [
            {"name": first, "rclass": "local", "packageType": "maven"},
            {"name": "npm", "rclass": "local", "packageType": "npm"},
        ]});
        support::requests::request(support::requests::composite(spec))
            .observed("a", observed("a"))
            .observed("b", observed("b"))
            .build()
    };
    let request = build("libs");
    // The same request with its observed resources written b before a, as Go may write them:
    // its fields in their numbers' order, the map's entries one by one.
    let mut reordered = RunFunctionRequest {
        meta: request.meta.clone(),
        ..RunFunctionRequest::default()
    }
    .encode_to_vec();
    let state = request.observed.as_ref().unwrap();
    let mut observed_bytes = State {
        composite: state.composite.clone(),
        ..State::default()
    }
    .encode_to_vec();
    for name in ["b", "a"] {
        let mut one = State::default();
        one.resources
            .insert(name.to_owned(), state.resources[name].clone());
        observed_bytes.extend(one.encode_to_vec());
    }
    prost::encoding::bytes::encode(2, &observed_bytes, &mut reordered);
    reordered.extend(
        RunFunctionRequest {
            meta: None::<RequestMeta>,
            observed: None,
            ..request.clone()
        }
        .encode_to_vec(),
    );
    assert_ne!(reordered, request.encode_to_vec());
    assert_eq!(
        RunFunctionRequest::decode(reordered.as_slice()).unwrap(),
        request
    );

    let expected = frame_of(&function_artifactory::run_function(&request).encode_to_vec());
    let changed = build("maven");
    let changed_expected = frame_of(&function_artifactory::run_function(&changed).encode_to_vec());
    for (args, lookups) in [
        (&["--insecure"][..], ["miss\"} 2", "hit\"} 3"]),
        (
            &["--insecure", "--answer-memo-size", "0"][..],
            ["off\"} 5", "off\"} 5"],
        ),
    ] {
        let server = Server::start(args);
        let start = server
            .wait_for_log(Duration::from_secs(5), |l| l["message"] == "serving")
            .unwrap();
        let metrics = start["metrics_address"].as_str().unwrap().to_owned();
        for body in [&request.encode_to_vec(), &reordered, &reordered] {
            let (status, message, answer) = raw_exchange(&server, frame_of(body)).await;
            assert_eq!((status.as_str(), message.as_str()), ("0", ""));
            assert_eq!(answer, expected, "{args:?}");
        }
        for _ in 0..2 {
            let (status, _, answer) =
                raw_exchange(&server, frame_of(&changed.encode_to_vec())).await;
            assert_eq!(status, "0");
            assert_eq!(answer, changed_expected, "{args:?}");
        }
        let (_, text) = http_get(&metrics, "/metrics").await;
        for outcome in lookups {
            let series = format!("function_artifactory_answer_lookups_total{{outcome=\"{outcome}");
            assert!(text.contains(&series), "{series}\nnot in\n{text}");
        }
        // Counted as the calls that rendered them were.
        assert!(
            text.contains("function_artifactory_repositories_rendered_total 10"),
            "{text}"
        );
    }
}

/// Two requests whose content keys are one under the fixed key (a pair the k-tree search found,
/// `support::requests::colliding_requests`) are keyed apart by the server, which keys its
/// hashes with a secret of its own: each is answered with its own answer, the first time and
/// from the memo. Under the fixed key the second would be answered with the first's answer
/// (or, in this debug build, fail the memo's check of every hit).
#[tokio::test]
async fn requests_that_collide_under_the_fixed_key_are_answered_apart() {
    use function_artifactory::proto::hash_key::HashKey;
    use function_artifactory::proto::request_key::content_key_under;
    let requests = support::requests::colliding_requests();
    let [first, second] = requests
        .each_ref()
        .map(|r| content_key_under(HashKey::fixed(), &r.encode_to_vec()));
    assert_eq!(first, second, "the pair collides under the fixed key");
    let expected = requests
        .each_ref()
        .map(|r| frame_of(&function_artifactory::run_function(r).encode_to_vec()));
    assert_ne!(expected[0], expected[1], "the answers differ");

    let server = Server::start(&["--insecure"]);
    for _ in 0..2 {
        for (request, expected) in requests.iter().zip(&expected) {
            let (status, message, answer) =
                raw_exchange(&server, frame_of(&request.encode_to_vec())).await;
            assert_eq!((status.as_str(), message.as_str()), ("0", ""));
            assert_eq!(&answer, expected);
        }
    }
    let (_, text) = http_get(&server.metrics_address(), "/metrics").await;
    for outcome in ["miss\"} 2", "hit\"} 2"] {
        let series = format!("function_artifactory_answer_lookups_total{{outcome=\"{outcome}");
        assert!(text.contains(&series), "{series}\nnot in\n{text}");
    }
}

#[test]
fn an_empty_metrics_address_serves_no_metrics() {
    let server = Server::start(&["--insecure", "--metrics-address", ""]);
    let start = server
        .wait_for_log(Duration::from_secs(5), |l| l["message"] == "serving")
        .unwrap();
    assert_eq!(start["metrics_address"], "");
}

/// A reconcile's two calls through the server, as Crossplane v2.2 makes them: the first lacks
/// the schemas and key resources it asks for, so it answers the requirements alone, rendering
/// nothing (the desired state as it came, no status, no repository counted as rendered); the
/// second carries the answers and is answered in full, byte for byte as the library answers.
#[tokio::test]
async fn a_first_call_answers_only_its_requirements_and_the_second_renders() {
    use function_artifactory::proto::v1::{Capability, Resources, Schema};
    use function_artifactory::proto::Struct;
    use support::requests::{composite, desired_resources};
    let server = Server::start(&["--insecure"]);
    let start = server
        .wait_for_log(Duration::from_secs(5), |l| l["message"] == "serving")
        .unwrap();
    let metrics = start["metrics_address"].as_str().unwrap().to_owned();
    let spec = serde_json::json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven"},
        {"name": "central", "rclass": "remote", "packageType": "maven",
         "url": "https://repo1.maven.org/maven2"},
    ]});
    let mut builder = support::requests::request(composite(spec)).input(support::requests::input(
        serde_json::json!({"providerApi": "cluster"}),
    ));
    for capability in [
        Capability::Capabilities,
        Capability::RequiredResources,
        Capability::Conditions,
        Capability::RequiredSchemas,
    ] {
        builder = builder.capability(capability);
    }
    let first = builder.build();
    let mut client = V1Client::new(insecure_channel(&server).await);

    let answer = client
        .run_function(first.clone())
        .await
        .unwrap()
        .into_inner();
    let requirements = answer.requirements.clone().expect("requirements");
    let schema_names: Vec<&String> = requirements.schemas.keys().collect();
    assert_eq!(
        schema_names,
        [
            "schema/local.artifactory.jfrog.crossplane.io/v1alpha1/MavenRepository",
            // The namespaced kinds of the same repositories: the key lookup asks for them only
            // where they are served (docs/upgrading.md).
            "schema/local.artifactory.jfrog.m.crossplane.io/v1alpha1/MavenRepository",
            "schema/remote.artifactory.jfrog.crossplane.io/v1alpha1/MavenRepository",
            "schema/remote.artifactory.jfrog.m.crossplane.io/v1alpha1/MavenRepository"
        ]
    );
    let resource_names: Vec<&String> = requirements.resources.keys().collect();
    assert_eq!(
        resource_names,
        ["artifactory-key-central", "artifactory-key-libs"]
    );
    assert_eq!(
        answer.desired, first.desired,
        "the desired state as it came"
    );
    assert!(answer.results.is_empty() && answer.conditions.is_empty());
    let (_, text) = http_get(&metrics, "/metrics").await;
    assert!(
        text.contains("function_artifactory_repositories_rendered_total 0"),
        "{text}"
    );

    // The answers: each rendered kind's schema (one that takes any spec), the namespaced kinds
    // not served (a cluster without them), no resource for any key.
    let open = Struct::from_value(serde_json::json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}));
    let mut second = first.clone();
    for name in requirements.schemas.keys() {
        let schema = Schema {
            openapi_v3: (!name.contains(".m.crossplane.io/")).then(|| open.clone()),
        };
        second.required_schemas.insert(name.clone(), schema);
    }
    for name in requirements.resources.keys() {
        second
            .required_resources
            .insert(name.clone(), Resources::default());
    }
    let answer = client
        .run_function(second.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        answer.requirements,
        Some(requirements),
        "stable requirements"
    );
    assert_eq!(desired_resources(&answer).len(), 2);
    assert_eq!(
        answer.encode_to_vec(),
        function_artifactory::run_function(&second).encode_to_vec()
    );
    let (_, text) = http_get(&metrics, "/metrics").await;
    assert!(
        text.contains("function_artifactory_repositories_rendered_total 2"),
        "{text}"
    );
}

/// A live schema whose rules cost the API server's whole budget for each object rendered: the
/// call evaluates for seconds (minutes in a debug build), yet probes, other calls and SIGTERM
/// are answered meanwhile (issue 27: a CEL rule froze the process, /healthz and SIGTERM with it).
fn costly_live_schema_request() -> RunFunctionRequest {
    use function_artifactory::proto::v1::{Capability, Schema};
    use function_artifactory::proto::Struct;
    let spec = serde_json::json!({"repositories": [
        {"name": "a", "rclass": "local", "packageType": "maven"},
        {"name": "b", "rclass": "local", "packageType": "npm"},
    ]});
    let mut built = support::requests::request(support::requests::composite(spec))
        .input(support::requests::input(
            serde_json::json!({"providerApi": "cluster"}),
        ))
        .capability(Capability::RequiredSchemas)
        .build();
    let asked = function_artifactory::run_function(&built)
        .requirements
        .unwrap_or_default()
        .schemas;
    assert!(!asked.is_empty());
    // Eleven rules of about 900,000 units: the object's budget of 10,000,000 runs out.
    let rule = "lists.range(300).all(a, lists.range(500).all(b, b >= 0))";
    let rules: Vec<_> = (0..11)
        .map(|i| serde_json::json!({"rule": format!("{rule} && {i} >= 0")}))
        .collect();
    let schema = serde_json::json!({
        "type": "object", "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": rules,
    });
    for name in asked.into_keys() {
        let answer = Schema {
            openapi_v3: Some(Struct::from_value(schema.clone())),
        };
        built.required_schemas.insert(name, answer);
    }
    assert!(
        built.encoded_len() < 40 * 1024,
        "small enough to run inline before"
    );
    built
}

#[tokio::test]
async fn probes_calls_and_sigterm_are_answered_while_rules_evaluate() {
    let mut server = Server::start(&["--insecure"]);
    let start = server
        .wait_for_log(Duration::from_secs(5), |l| l["message"] == "serving")
        .unwrap();
    let metrics = start["metrics_address"].as_str().unwrap().to_owned();
    let channel = insecure_channel(&server).await;
    let costly = costly_live_schema_request();
    let mut client = V1Client::new(channel.clone());
    let in_flight = tokio::spawn(async move { client.run_function(costly).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !in_flight.is_finished(),
        "the costly call is still evaluating"
    );

    assert_eq!(http_get(&metrics, "/healthz").await.0, 200);
    assert_eq!(http_get(&metrics, "/readyz").await.0, 200);
    assert_answers_in_time(&server, "beside-the-costly-call").await;

    let signalled = std::time::Instant::now();
    server.signal(libc::SIGTERM);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(http_get(&metrics, "/readyz").await.0, 503);
    let exit = server
        .wait_exit(Duration::from_secs(35))
        .expect("exits within the drain timeout");
    assert_eq!(exit.code(), Some(0), "{exit}");
    assert!(signalled.elapsed() < Duration::from_secs(30));
}
