//! The gRPC face over real loopback connections to the built binary.

mod support;

use bytes::Bytes;
use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient as V1Client;
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use function_artifactory::proto::v1beta1::function_runner_service_client::FunctionRunnerServiceClient as V1beta1Client;
use prost::Message;
use std::time::Duration;
use support::server::{insecure_channel, request, run_to_exit, tls_channel, Pki, Server};
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

/// The Go SDK stops on SIGTERM after the calls in flight; so must this. The call is held open by
/// sending only half of its body before the signal.
#[tokio::test]
async fn sigterm_finishes_the_call_in_flight_refuses_new_connections_and_exits_0() {
    let mut server = Server::start(&["--insecure"]);
    let mut call = HalfSentCall::open(&server, &request("in-flight")).await;
    // Let the server take the stream before the signal: a stream opened after it is refused.
    tokio::time::sleep(Duration::from_millis(300)).await;

    server.signal(libc::SIGTERM);
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
        .expect("exits after the call");
    assert_eq!(exit.code(), Some(0), "{exit}");
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
        let mut data = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            let _ = body.flow_control().release_capacity(chunk.len());
            data.extend_from_slice(&chunk);
        }
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
