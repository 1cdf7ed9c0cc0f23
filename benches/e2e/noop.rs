//! The floors of the transport for `scripts/bench-e2e.sh`: a RunFunction server on the same
//! stack as function-artifactory (tonic, prost, the same tokio runtime and server limits) that
//! does no work of its own. Whatever it costs per call, our server cannot cost less.
//!
//! - `noop-function --address 127.0.0.1:PORT` (the echo floor) keeps the request's sub-messages
//!   as raw bytes and answers with the request's desired state and context untouched;
//! - `noop-function --replies DIR --address ...` (the reply floor) answers each request with
//!   function-artifactory's own reply to it, read at start from DIR (`reply-N.request.bin` and
//!   `reply-N.response.bin`, written by the driver): it moves the same bytes in and out as our
//!   server, so the difference is the work of the function.

use prost::bytes::{Buf, BufMut, Bytes};
use prost::encoding::{skip_field, DecodeContext, WireType};
use prost::{DecodeError, Message};
use std::collections::HashMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tonic::body::Body;
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::{NamedService, UnaryService};

// In the static musl build, the server's allocator and copies (src/main.rs) in place of musl's:
// with musl's malloc and memcpy the floor cost as much as our whole server (docs/benchmarks-log.md, "The
// packaged build measured"). glibc's malloc is kept where there is one: it cost the floor less
// than mimalloc, and the floor is the least a server on this transport can cost.
#[cfg(all(target_arch = "x86_64", target_env = "musl"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(all(target_arch = "x86_64", target_env = "musl"))]
use musl_x86_mem as _;

/// RunFunctionRequest with every sub-message left undecoded: the maps (required resources and
/// schemas among them) as their entries' bytes.
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
    #[prost(bytes = "bytes", repeated, tag = "6")]
    extra_resources: Vec<Bytes>,
    #[prost(bytes = "bytes", repeated, tag = "7")]
    credentials: Vec<Bytes>,
    #[prost(bytes = "bytes", repeated, tag = "8")]
    required_resources: Vec<Bytes>,
    #[prost(bytes = "bytes", repeated, tag = "9")]
    required_schemas: Vec<Bytes>,
}

/// RunFunctionResponse: desired (2) and context (4), as bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct RawResponse {
    #[prost(bytes = "bytes", optional, tag = "2")]
    desired: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "4")]
    context: Option<Bytes>,
}

/// A message whose encoding is given bytes: the reply floor's answer, written as it is.
#[derive(Clone, Default, Debug)]
struct Encoded(Bytes);

impl Message for Encoded {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0 = Bytes::new();
    }
}

/// Our replies by the size of the request they answer (its fields, as the floor decodes them).
type Replies = Arc<HashMap<usize, Bytes>>;

/// Reads DIR/reply-N.request.bin and DIR/reply-N.response.bin for every N there.
fn read_replies(dir: &Path) -> Replies {
    let mut replies = HashMap::new();
    for entry in std::fs::read_dir(dir).expect("--replies DIR") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".request.bin") else {
            continue;
        };
        let request = std::fs::read(&path).expect("a request file");
        let response = std::fs::read(dir.join(format!("{stem}.response.bin")))
            .expect("the response beside the request");
        let request = RawRequest::decode(request.as_slice()).expect("a RunFunctionRequest");
        replies.insert(request.encoded_len(), Bytes::from(response));
    }
    Arc::new(replies)
}

#[derive(Clone)]
struct Noop {
    /// None: the echo floor.
    replies: Option<Replies>,
}

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

struct Replay(Replies);

impl UnaryService<RawRequest> for Replay {
    type Response = Encoded;
    type Future = BoxFuture<tonic::Response<Encoded>, tonic::Status>;
    fn call(&mut self, request: tonic::Request<RawRequest>) -> Self::Future {
        let reply = self.0.get(&request.into_inner().encoded_len()).cloned();
        Box::pin(async move {
            match reply {
                Some(bytes) => Ok(tonic::Response::new(Encoded(bytes))),
                None => Err(tonic::Status::not_found(
                    "no reply for a request of this size",
                )),
            }
        })
    }
}

/// One call's gRPC handling, with the message limits of function-artifactory's server.
fn grpc<T, U>() -> tonic::server::Grpc<tonic_prost::ProstCodec<T, U>>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    tonic::server::Grpc::new(tonic_prost::ProstCodec::default())
        .apply_max_message_size_config(Some(4 << 20), Some(64 << 20))
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
        let replies = self.replies.clone();
        Box::pin(async move {
            Ok(match replies {
                None => grpc().unary(Echo, request).await,
                Some(replies) => grpc().unary(Replay(replies), request).await,
            })
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
    let replies = args
        .iter()
        .position(|a| a == "--replies")
        .and_then(|i| args.get(i + 1))
        .map(|dir| read_replies(Path::new(dir)));
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
            .add_service(Noop { replies })
            .serve(address)
            .await
            .expect("serve");
    });
}
