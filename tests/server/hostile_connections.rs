//! Hostile connections (issue 27, items 5, 6 and 7): peers of the gRPC listener and of the
//! metrics and probes listener that hold connections, trickle bytes, exhaust file descriptors
//! or fail TLS handshakes in a flood; each is bounded, and gRPC keeps answering. The server runs
//! as a child process on loopback. RELIABILITY.md ("Hostile input") has the table.
#![cfg(feature = "server")]

use crate::support;

use bytes::Bytes;
use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use prost::Message;
use std::time::{Duration, Instant};
use support::server::{closed_within, insecure_channel, request, tls_channel, Pki, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const V1: &str = "apiextensions.fn.proto.v1.FunctionRunnerService";

/// A call over a fresh channel, answered within 2 s.
async fn assert_answers(server: &Server, tag: &str) {
    let answered = tokio::time::timeout(Duration::from_secs(2), async {
        let mut client = FunctionRunnerServiceClient::new(insecure_channel(server).await);
        client.run_function(request(tag)).await
    })
    .await
    .unwrap_or_else(|_| panic!("{tag}: no answer within 2 s"))
    .unwrap_or_else(|status| panic!("{tag}: {status}"));
    assert_eq!(answered.into_inner().meta.unwrap().tag, tag);
}

/// GET `path` on a connection of its own: the status code, the answer required within 2 s.
async fn http_status(address: &str, path: &str) -> u16 {
    support::server::http_get_within(address, path, Duration::from_secs(2))
        .await
        .0
}

/// An HTTP/1.1 connection that made one request and is kept alive.
async fn kept_alive(address: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 512];
    let read = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut answer))
        .await
        .expect("an answer within 2 s")
        .unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200"));
    stream
}

/// A connection that sends a request line and headers one byte at a time, never finishing.
async fn slowloris(address: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\n")
        .await
        .unwrap();
    stream
}

/// Sends one more byte of a header on each slow connection still open.
async fn trickle(connections: &mut [TcpStream]) {
    for connection in connections {
        let _ = connection.write_all(b"X").await;
    }
}

#[tokio::test]
async fn metrics_slowloris_connections_are_closed_within_the_header_timeout() {
    let server = Server::start(&["--insecure"]);
    let metrics = server.metrics_address();
    let opened = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..40 {
        slow.push(slowloris(&metrics).await);
    }
    // A byte every 300 ms from each: no timeout per byte would ever fire.
    let trickling = async {
        loop {
            trickle(&mut slow).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            if opened.elapsed() > Duration::from_secs(4) {
                break;
            }
        }
    };
    let probes = async {
        // Among them (more than the 16 slots): probes and gRPC answered.
        for _ in 0..3 {
            assert_eq!(http_status(&metrics, "/healthz").await, 200);
            assert_answers(&server, "among-slowloris").await;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    };
    tokio::join!(trickling, probes);
    // The header timeout is 5 s; each is closed by 8 s after it opened.
    for (index, connection) in slow.iter_mut().enumerate() {
        let left = Duration::from_secs(8).saturating_sub(opened.elapsed());
        assert!(
            closed_within(connection, left).await,
            "slow connection {index} still open after {:?}",
            opened.elapsed()
        );
    }
}

#[tokio::test]
async fn a_full_metrics_listener_closes_new_connections_while_grpc_answers() {
    let server = Server::start(&["--insecure", "--max-metrics-connections", "4"]);
    let metrics = server.metrics_address();
    // Four connections that made a request and are kept alive: every slot is in use.
    let mut used = Vec::new();
    for _ in 0..4 {
        used.push(kept_alive(&metrics).await);
    }
    let mut refused = TcpStream::connect(&metrics).await.unwrap();
    let _ = refused
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n")
        .await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(1), refused.read_to_end(&mut answer)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "closed at once, unanswered: {read:?} {:?}",
        String::from_utf8_lossy(&answer)
    );
    assert_answers(&server, "metrics-full").await;
    assert!(
        server
            .wait_for_log(Duration::from_secs(2), |l| {
                l["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("refused a connection"))
                    && l["listener"] == "metrics"
            })
            .is_some(),
        "{:#?}",
        server.log()
    );
    // Slots are given back as connections close.
    drop(used);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(http_status(&metrics, "/healthz").await, 200);
}

#[tokio::test]
async fn at_the_file_descriptor_limit_both_accept_loops_back_off_and_service_resumes() {
    // 40 descriptors: a dozen for the process itself, the rest for connections.
    let server = Server::start_with_fd_limit(&["--insecure", "--debug"], 40);
    let metrics = server.metrics_address();
    let mut held = Vec::new();
    for _ in 0..60 {
        let mut connection = TcpStream::connect(server.addr).await.unwrap();
        // The HTTP/2 preface, so that the server keeps the connections it accepted.
        connection
            .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        held.push(connection);
    }
    for _ in 0..10 {
        held.push(TcpStream::connect(&metrics).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (cpu_before, lines_before) = (server.cpu_time(), server.log().len());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cpu = server.cpu_time() - cpu_before;
    let new_lines: Vec<String> = server.log()[lines_before..].to_vec();
    println!(
        "at EMFILE for 3 s: {cpu:?} of CPU time, {} log lines",
        new_lines.len()
    );
    // Retrying at once spun a core (3 s of CPU time) and logged 48 MB a second.
    assert!(
        cpu < Duration::from_millis(600),
        "{cpu:?} of CPU time in 3 s"
    );
    assert!(
        new_lines.len() <= 12,
        "at most a line a second for each listener: {new_lines:#?}"
    );
    let waits = server
        .log()
        .iter()
        .filter(|l| l.contains("cannot accept a connection; waiting before the next try"))
        .count();
    assert!(waits >= 2, "{:#?}", server.log());

    drop(held);
    // The listeners try again within a second, and serve.
    let resumed = Instant::now();
    loop {
        let answered = tokio::time::timeout(Duration::from_secs(2), async {
            let mut client = FunctionRunnerServiceClient::new(insecure_channel(&server).await);
            client.run_function(request("resumed")).await
        })
        .await;
        if matches!(answered, Ok(Ok(_))) {
            break;
        }
        assert!(
            resumed.elapsed() < Duration::from_secs(10),
            "no answer after the descriptors were freed: {answered:?}"
        );
    }
    assert_eq!(http_status(&metrics, "/healthz").await, 200);
}

/// An HTTP/2 connection to the server: its handle, and the task that drives it (and answers
/// the server's PINGs), which ends when the connection closes.
async fn h2_connection(
    server: &Server,
) -> (
    h2::client::SendRequest<Bytes>,
    tokio::task::JoinHandle<Result<(), h2::Error>>,
) {
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    (client, tokio::spawn(connection))
}

/// One RunFunction call on an open HTTP/2 connection; its grpc-status.
async fn h2_call(
    client: &mut h2::client::SendRequest<Bytes>,
    server: &Server,
    tag: &str,
) -> String {
    let head = http::Request::post(format!("{}/{V1}/RunFunction", server.http_uri()))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    let mut ready = client
        .clone()
        .ready()
        .await
        .expect("the connection is open");
    let (response, mut send) = ready.send_request(head, false).expect("sent");
    let message = request(tag).encode_to_vec();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&message);
    send.send_data(Bytes::from(frame), true).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(5), response)
        .await
        .expect("a response within 5 s")
        .expect("a response");
    let mut body = response.into_body();
    support::server::read_h2_body(&mut body).await;
    let trailers = body.trailers().await.unwrap().expect("trailers");
    trailers["grpc-status"].to_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_http2_connection_that_answers_pings_but_never_calls_is_closed_after_the_idle_limit() {
    let server = Server::start(&["--insecure", "--max-connection-idle", "2s"]);
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (client, mut connection) = h2::client::handshake(tcp).await.unwrap();
    let mut ping_pong = connection
        .ping_pong()
        .expect("the connection's PING handle");
    let opened = Instant::now();
    let connection = tokio::spawn(connection);
    // A PING every 300 ms, each answered: busy at the HTTP/2 level, never with a call.
    let pinger = tokio::spawn(async move {
        let mut answered = 0;
        while ping_pong.ping(h2::Ping::opaque()).await.is_ok() {
            answered += 1;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        answered
    });
    let closed = tokio::time::timeout(Duration::from_secs(6), connection).await;
    let took = opened.elapsed();
    assert!(closed.is_ok(), "still open after {took:?}");
    assert!(
        took >= Duration::from_millis(1900),
        "closed too early: {took:?}"
    );
    let answered = pinger.await.unwrap();
    assert!(answered >= 5, "{answered} PINGs answered before the close");
    println!("closed after {took:?}, {answered} PINGs answered");
    drop(client);
}

#[tokio::test]
async fn a_client_that_calls_every_second_keeps_its_one_connection_under_a_2_s_idle_limit() {
    // Crossplane reuses one connection between reconciles; the default idle limit (1 h) is
    // longer than its reuse interval (see the server's unit test
    // `the_default_idle_limit_outlasts_crossplane_s_connection_reuse`), so this scales it down.
    let server = Server::start(&["--insecure", "--max-connection-idle", "2s"]);
    let (mut client, connection) = h2_connection(&server).await;
    for call in 0..6 {
        assert_eq!(
            h2_call(&mut client, &server, &format!("call-{call}")).await,
            "0"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert!(
        !connection.is_finished(),
        "the connection was cut between calls"
    );
    // Idle now: closed after the limit.
    let closed = tokio::time::timeout(Duration::from_secs(4), connection).await;
    assert!(closed.is_ok(), "still open when idle");
}

#[tokio::test]
async fn beyond_the_connection_cap_unused_connections_make_room_and_used_ones_stay() {
    let server = Server::start(&["--insecure", "--max-connections", "4"]);
    let (mut first, first_connection) = h2_connection(&server).await;
    assert_eq!(h2_call(&mut first, &server, "first").await, "0");
    // Idle TCP connections that never speak: the first three fill the slots, each later one
    // makes room by closing the oldest.
    let mut idle = Vec::new();
    for _ in 0..6 {
        idle.push(TcpStream::connect(server.addr).await.unwrap());
    }
    for (index, connection) in idle.iter_mut().take(3).enumerate() {
        assert!(
            closed_within(connection, Duration::from_secs(1)).await,
            "idle connection {index} still open"
        );
    }
    // Clients that call get in among them, each closing the oldest idle one.
    let mut used = Vec::new();
    for index in 0..3 {
        let (mut client, connection) = h2_connection(&server).await;
        assert_eq!(
            h2_call(&mut client, &server, &format!("used-{index}")).await,
            "0"
        );
        used.push((client, connection));
    }
    for (index, connection) in idle.iter_mut().enumerate().skip(3) {
        assert!(
            closed_within(connection, Duration::from_secs(1)).await,
            "idle connection {index} still open"
        );
    }
    // Every slot held by a connection that made calls: a new one is closed, unanswered.
    let mut refused = TcpStream::connect(server.addr).await.unwrap();
    assert!(closed_within(&mut refused, Duration::from_secs(1)).await);
    assert!(server
        .wait_for_log(Duration::from_secs(2), |l| {
            l["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("refused a connection"))
                && l["listener"] == "grpc"
        })
        .is_some());
    assert!(!first_connection.is_finished());
    assert_eq!(h2_call(&mut first, &server, "first-again").await, "0");
    for (index, (client, connection)) in used.iter_mut().enumerate() {
        assert!(!connection.is_finished(), "used connection {index} closed");
        assert_eq!(
            h2_call(client, &server, &format!("again-{index}")).await,
            "0"
        );
    }
}

#[tokio::test]
async fn a_flood_of_failed_tls_handshakes_is_logged_at_most_five_lines_a_second() {
    let pki = Pki::generate();
    let dir = pki.dir.path().to_str().unwrap().to_owned();
    let server = Server::start(&["--tls-certs-dir", &dir]);
    // 200 handshakes that fail at once: HTTP/1 where TLS is expected.
    let started = Instant::now();
    for _ in 0..200 {
        let mut connection = TcpStream::connect(server.addr).await.unwrap();
        let _ = connection
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await;
        let _ = closed_within(&mut connection, Duration::from_secs(2)).await;
    }
    let took = started.elapsed();
    // One more after a second has passed: it says how many lines were left out.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let mut last = TcpStream::connect(server.addr).await.unwrap();
    let _ = last.write_all(b"GET / HTTP/1.1\r\n\r\n").await;
    let _ = closed_within(&mut last, Duration::from_secs(2)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused: Vec<serde_json::Value> = server
        .log()
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["message"] == "refused a client: the TLS handshake failed")
        .collect();
    let seconds = took.as_secs() + 2;
    println!("{} lines for 201 refusals in {took:?}", refused.len());
    assert!(
        refused.len() as u64 <= 5 * seconds,
        "{} lines in about {seconds} s",
        refused.len()
    );
    let counted: u64 = refused
        .iter()
        .map(|l| l["refused_not_logged"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        counted + refused.len() as u64,
        201,
        "every refusal logged or counted"
    );
    // A client with the CA's certificate is still served.
    let channel = tls_channel(&server, &pki.ca_pem, Some(&pki.client))
        .await
        .expect("a TLS channel");
    let mut client = FunctionRunnerServiceClient::new(channel);
    let response = client.run_function(request("after-flood")).await.unwrap();
    assert_eq!(response.into_inner().meta.unwrap().tag, "after-flood");
}
