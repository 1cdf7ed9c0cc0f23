//! The listening socket and the limits that keep slow, idle or greedy peers from exhausting the
//! server.

use super::connections::{Slots, TrackRequestsLayer};
use super::preface::{Incoming, PREFACE_TIMEOUT};
use super::StartError;
use std::time::Duration;
use tonic::body::Body;
use tonic::codegen::http::{HeaderValue, Response};
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Server, ServerTlsConfig};
use tower::layer::util::{Identity, Stack};
use tower::util::MapResponseLayer;

/// A whole call, body upload included. The core answers in milliseconds; this only bounds a
/// peer that trickles its request (or a call stuck behind others for a minute).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Calls one connection runs at once; further ones wait. With the default 4 MiB limit this
/// bounds a connection's decoded requests to 128 MiB. Crossplane multiplexes its calls over
/// one connection, at its reconcile rate (10 composites at once by default).
const CONCURRENT_CALLS_PER_CONNECTION: usize = 32;

/// HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS: streams beyond the running calls only hold their
/// flow-control window (1 MiB per connection by default), not a whole request.
const MAX_CONCURRENT_STREAMS: u32 = 100;

/// HTTP/2 PING every minute on an otherwise quiet connection; a peer that does not answer within
/// 20 s is gone and its connection is closed. Crossplane keeps its connection open between calls;
/// one that answers but never calls is closed by the idle limit (`--max-connection-idle`).
const HTTP2_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);
const HTTP2_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// TCP keepalive for peers that vanish before HTTP/2 (and its pings) starts.
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// A response may be this many times the largest accepted request (the protocol's ratio).
pub(super) const RESPONSE_TO_REQUEST_RATIO: usize = crate::proto::RESPONSE_TO_REQUEST_RATIO;

/// Binds the address; `:PORT` (the Go SDK's spelling) listens on all IPv4 interfaces. Each
/// accepted connection must send its first bytes within [`PREFACE_TIMEOUT`]; at most
/// `max_connections` are held, each closed after `max_idle` without a request.
pub(super) fn bind(
    address: &str,
    max_connections: usize,
    max_idle: Duration,
) -> Result<Incoming, StartError> {
    let listener = listen(address)?;
    let tcp = TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(TCP_KEEPALIVE));
    let slots = Slots::new("grpc", "--max-connections", max_connections);
    Ok(Incoming::new(tcp, PREFACE_TIMEOUT, slots, max_idle))
}

/// A TCP listener on `HOST:PORT`, or on every interface for `:PORT`.
pub(super) fn listen(address: &str) -> Result<tokio::net::TcpListener, StartError> {
    let listener = listen_std(address)?;
    tokio::net::TcpListener::from_std(listener).map_err(|source| StartError::Bind {
        address: address.to_owned(),
        source,
    })
}

/// [`listen`], not yet registered with a runtime (for a runtime on another thread).
pub(super) fn listen_std(address: &str) -> Result<std::net::TcpListener, StartError> {
    let listen = match address.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => address.to_owned(),
    };
    let bind_error = |source| StartError::Bind {
        address: address.to_owned(),
        source,
    };
    let listener = std::net::TcpListener::bind(listen).map_err(bind_error)?;
    listener.set_nonblocking(true).map_err(bind_error)?;
    Ok(listener)
}

/// The server with its limits, TLS when given, and the over-size status of gRPC.
pub(super) fn server(tls: Option<ServerTlsConfig>) -> Result<Limited, tonic::transport::Error> {
    let server = Server::builder()
        .timeout(REQUEST_TIMEOUT)
        .concurrency_limit_per_connection(CONCURRENT_CALLS_PER_CONNECTION)
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .http2_keepalive_interval(Some(HTTP2_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(HTTP2_KEEPALIVE_TIMEOUT))
        .layer(TrackRequestsLayer)
        .layer(MapResponseLayer::new(client_error_statuses as StatusFn));
    match tls {
        Some(tls) => server.tls_config(tls),
        None => Ok(server),
    }
}

type StatusFn = fn(Response<Body>) -> Response<Body>;

/// The server builder with the limits above, the requests counted on their connections
/// (for the idle limit) and the status mappings.
pub(super) type Limited =
    Server<Stack<MapResponseLayer<StatusFn>, Stack<TrackRequestsLayer, Identity>>>;

/// The statuses tonic gives a request it cannot read, as gRPC's other implementations give them.
fn client_error_statuses(response: Response<Body>) -> Response<Body> {
    malformed_is_invalid_argument(oversize_is_resource_exhausted(response))
}

/// tonic answers a request over the size limit with OUT_OF_RANGE; gRPC's other implementations,
/// the Crossplane SDKs among them, answer RESOURCE_EXHAUSTED. Only tonic's request decoding gives
/// OUT_OF_RANGE in the response headers (a trailers-only answer): the handlers here never return
/// it, and an over-size response fails later, in the trailers.
fn oversize_is_resource_exhausted(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    if headers.get(tonic::Status::GRPC_STATUS) == Some(&status_value(tonic::Code::OutOfRange)) {
        headers.insert(
            tonic::Status::GRPC_STATUS,
            status_value(tonic::Code::ResourceExhausted),
        );
    }
    response
}

/// What tonic answers INTERNAL for a request body it cannot decode (its decoder's messages), and
/// the clearer message of the INVALID_ARGUMENT answered instead. A peer that sends a malformed
/// message made the mistake, not the server: Crossplane reports INVALID_ARGUMENT as the caller's
/// error and INTERNAL as a bug of the function. The compressed-flag errors stay INTERNAL, as
/// gRPC's specification requires.
const MALFORMED: [(&str, &str); 3] = [
    (
        "failed to decode Protobuf message",
        crate::proto::NOT_A_REQUEST,
    ),
    (
        "Missing request message.",
        "the request has no message: a RunFunction call carries exactly one RunFunctionRequest; ",
    ),
    (
        "Unexpected EOF decoding stream.",
        "the request ends inside its message (a truncated gRPC frame); ",
    ),
];

/// tonic decodes the request before the handler runs and answers a decoding error INTERNAL in
/// the response headers (a trailers-only answer); the handlers' own INTERNAL never carries these
/// messages. Rewritten to INVALID_ARGUMENT, tonic's message kept after a sentence that says what
/// was wrong.
fn malformed_is_invalid_argument(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    if headers.get(tonic::Status::GRPC_STATUS) != Some(&status_value(tonic::Code::Internal)) {
        return response;
    }
    let Some(message) = headers.get(tonic::Status::GRPC_MESSAGE) else {
        return response;
    };
    let Some((_, explanation)) = MALFORMED.iter().find(|(tonic_message, _)| {
        message
            .as_bytes()
            .starts_with(percent_encoded(tonic_message).as_bytes())
    }) else {
        return response;
    };
    let mut clear = percent_encoded(explanation).into_bytes();
    clear.extend_from_slice(message.as_bytes());
    if let Ok(clear) = HeaderValue::from_bytes(&clear) {
        headers.insert(tonic::Status::GRPC_MESSAGE, clear);
        headers.insert(
            tonic::Status::GRPC_STATUS,
            status_value(tonic::Code::InvalidArgument),
        );
    }
    response
}

/// `grpc-message` is percent-encoded; of the characters in [`MALFORMED`] tonic encodes only the
/// space.
fn percent_encoded(text: &str) -> String {
    text.replace(' ', "%20")
}

fn status_value(code: tonic::Code) -> HeaderValue {
    HeaderValue::from(code as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: tonic::Code) -> Response<Body> {
        let mut response = Response::new(Body::empty());
        response
            .headers_mut()
            .insert(tonic::Status::GRPC_STATUS, status_value(code));
        response
    }

    #[test]
    fn out_of_range_in_the_headers_becomes_resource_exhausted() {
        let response = oversize_is_resource_exhausted(answer(tonic::Code::OutOfRange));
        assert_eq!(
            response.headers()[tonic::Status::GRPC_STATUS],
            status_value(tonic::Code::ResourceExhausted)
        );
    }

    #[test]
    fn other_answers_are_untouched() {
        let response = oversize_is_resource_exhausted(answer(tonic::Code::Internal));
        assert_eq!(
            response.headers()[tonic::Status::GRPC_STATUS],
            status_value(tonic::Code::Internal)
        );
    }

    fn answer_with(code: tonic::Code, message: &'static str) -> Response<Body> {
        let mut response = answer(code);
        response.headers_mut().insert(
            tonic::Status::GRPC_MESSAGE,
            HeaderValue::from_static(message),
        );
        response
    }

    #[test]
    fn a_request_that_does_not_decode_is_invalid_argument_with_tonic_s_reason() {
        let response = malformed_is_invalid_argument(answer_with(
            tonic::Code::Internal,
            "failed%20to%20decode%20Protobuf%20message:%20invalid%20wire%20type%20value:%207",
        ));
        assert_eq!(
            response.headers()[tonic::Status::GRPC_STATUS],
            status_value(tonic::Code::InvalidArgument)
        );
        assert_eq!(
            response.headers()[tonic::Status::GRPC_MESSAGE],
            "the%20request%20is%20not%20a%20valid%20RunFunctionRequest:%20failed%20to%20decode%20Protobuf%20message:%20invalid%20wire%20type%20value:%207"
        );
    }

    #[test]
    fn the_function_s_own_internal_errors_stay_internal() {
        for message in [
            "function-artifactory%20failed%20unexpectedly%20(a%20bug);%20its%20log%20has%20the%20details",
            "protocol%20error:%20received%20message%20with%20compressed-flag%20but%20no%20grpc-encoding%20was%20specified",
        ] {
            let response = client_error_statuses(answer_with(tonic::Code::Internal, message));
            assert_eq!(
                response.headers()[tonic::Status::GRPC_STATUS],
                status_value(tonic::Code::Internal),
                "{message}"
            );
        }
    }

    #[test]
    fn colon_port_listens_on_all_interfaces() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let incoming = bind(":0", 1, Duration::from_secs(1)).unwrap();
        assert!(incoming.local_addr().unwrap().ip().is_unspecified());
    }
}
