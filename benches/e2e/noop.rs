//! The floor of the transport for `scripts/bench-e2e.sh`: a RunFunction server on the same stack
//! as function-artifactory (tonic, prost, the same tokio runtime and server limits) that keeps
//! the request's sub-messages as raw bytes and answers with the request's desired state and
//! context untouched. Whatever it costs per call, our server cannot cost less.
//!
//! `noop-function --insecure --address 127.0.0.1:PORT`

use prost::bytes::Bytes;
use std::convert::Infallible;
use std::task::{Context, Poll};
use std::time::Duration;
use tonic::body::Body;
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::{NamedService, UnaryService};

/// RunFunctionRequest with every sub-message left undecoded.
#[derive(Clone, PartialEq, prost::Message)]
struct RawRequest {
    #[prost(bytes = "bytes", tag = "1")]
    meta: Bytes,
    #[prost(bytes = "bytes", tag = "2")]
    observed: Bytes,
    #[prost(bytes = "bytes", optional, tag = "3")]
    desired: Option<Bytes>,
    #[prost(bytes = "bytes", tag = "4")]
    input: Bytes,
    #[prost(bytes = "bytes", optional, tag = "5")]
    context: Option<Bytes>,
}

/// RunFunctionResponse: desired (2) and context (4), as bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct RawResponse {
    #[prost(bytes = "bytes", optional, tag = "2")]
    desired: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "4")]
    context: Option<Bytes>,
}

#[derive(Clone)]
struct Noop;

impl NamedService for Noop {
    const NAME: &'static str = "apiextensions.fn.proto.v1.FunctionRunnerService";
}

struct Echo;

impl UnaryService<RawRequest> for Echo {
    type Response = RawResponse;
    type Future = BoxFuture<tonic::Response<RawResponse>, tonic::Status>;
    fn call(&mut self, request: tonic::Request<RawRequest>) -> Self::Future {
        let request = request.into_inner();
        Box::pin(async move {
            Ok(tonic::Response::new(RawResponse {
                desired: Some(request.desired.unwrap_or_default()),
                context: request.context,
            }))
        })
    }
}

impl<B> Service<http::Request<B>> for Noop
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(tonic_prost::ProstCodec::default())
                .apply_max_message_size_config(Some(4 << 20), Some(64 << 20));
            Ok(grpc.unary(Echo, request).await)
        })
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let address = args
        .iter()
        .position(|a| a == "--address")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:9443".into());
    let address: std::net::SocketAddr = address.parse().expect("--address HOST:PORT");
    // The runtime function-artifactory's server uses (src/server/mod.rs).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        tonic::transport::Server::builder()
            .timeout(Duration::from_secs(60))
            .concurrency_limit_per_connection(32)
            .max_concurrent_streams(100)
            .http2_keepalive_interval(Some(Duration::from_secs(60)))
            .http2_keepalive_timeout(Some(Duration::from_secs(20)))
            .add_service(Noop)
            .serve(address)
            .await
            .expect("serve");
    });
}
