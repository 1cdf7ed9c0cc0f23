//! The listening socket and the limits that keep slow, idle or greedy peers from exhausting the
//! server.

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
/// 20 s is gone and its connection is closed. Crossplane keeps its connection open between calls.
const HTTP2_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);
const HTTP2_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// TCP keepalive for peers that vanish before HTTP/2 (and its pings) starts.
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// A response may be this many times the largest accepted request. A response is the request's
/// desired state plus this function's resources, so a larger one is a bug, answered with an
/// error instead of an unbounded allocation.
pub const RESPONSE_TO_REQUEST_RATIO: usize = 4;

/// Binds the address; `:PORT` (the Go SDK's spelling) listens on all IPv4 interfaces.
pub fn bind(address: &str) -> Result<TcpIncoming, StartError> {
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
    let listener = tokio::net::TcpListener::from_std(listener).map_err(bind_error)?;
    Ok(TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(TCP_KEEPALIVE)))
}

/// The server with its limits, TLS when given, and the over-size status of gRPC.
pub fn server(tls: Option<ServerTlsConfig>) -> Result<Limited, tonic::transport::Error> {
    let server = Server::builder()
        .timeout(REQUEST_TIMEOUT)
        .concurrency_limit_per_connection(CONCURRENT_CALLS_PER_CONNECTION)
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .http2_keepalive_interval(Some(HTTP2_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(HTTP2_KEEPALIVE_TIMEOUT))
        .layer(MapResponseLayer::new(
            oversize_is_resource_exhausted as OversizeFn,
        ));
    match tls {
        Some(tls) => server.tls_config(tls),
        None => Ok(server),
    }
}

type OversizeFn = fn(Response<Body>) -> Response<Body>;

/// The server builder with the limits above and the over-size mapping.
pub type Limited = Server<Stack<MapResponseLayer<OversizeFn>, Identity>>;

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

    #[test]
    fn colon_port_listens_on_all_interfaces() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let incoming = bind(":0").unwrap();
        assert!(incoming.local_addr().unwrap().ip().is_unspecified());
    }
}
