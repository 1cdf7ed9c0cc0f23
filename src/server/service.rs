//! `RunFunction` served from the request's bytes, for both package names.
//!
//! tonic's generated server decodes a request on the transport's thread and encodes the
//! response there too, so a call the runner hands to a blocking thread was split three ways:
//! its tree decoded on one thread, read and replaced on another, encoded and dropped back on
//! the first. At 1,000 repositories that split cost more CPU than the work it moved
//! (BENCHMARKS.md). This service takes the request as bytes ([`RequestBytesCodec`]), so the
//! runner decodes, runs and drops it on one thread, whichever that is. A response the runner
//! does not remember (`memo.rs`) is encoded by the transport straight into its buffer: its
//! resources are bytes already, so that is one copy, where encoding it on the runner's thread
//! made two. One it remembers is encoded once, into the memo, and copied from there on every
//! call that it answers. Decoding errors are what tonic's
//! prost codec answers: INTERNAL with prost's message.
//!
//! The generated servers stay (the codegen drift test keeps them), unused by `serve`; the
//! generated clients and their codec (`codec.rs`) serve the tests and benchmarks.

use super::runner::{Answer, Runner};
use prost::bytes::{Buf, BufMut, Bytes};
use prost::Message;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::{http, Body as HttpBody, Service, StdError};
use tonic::server::{Grpc, NamedService, UnaryService};
use tonic::{Request, Response, Status};

type BoxFuture<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'static>>;

/// A package's service name and its one method's path.
pub(super) trait Package: Send + Sync + 'static {
    /// The gRPC service name, as routed and as health checks ask for it.
    const SERVICE: &'static str;
    /// The path of `RunFunction`.
    const PATH: &'static str;
    /// The package's last part, for logs.
    const LABEL: &'static str;
}

pub(super) struct V1;

impl Package for V1 {
    const SERVICE: &'static str = "apiextensions.fn.proto.v1.FunctionRunnerService";
    const PATH: &'static str = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction";
    const LABEL: &'static str = "v1";
}

/// Crossplane 1.14 to 1.16 sends only this one; later releases fall back to it on
/// UNIMPLEMENTED. It carries the v1 messages.
pub(super) struct V1beta1;

impl Package for V1beta1 {
    const SERVICE: &'static str = "apiextensions.fn.proto.v1beta1.FunctionRunnerService";
    const PATH: &'static str = "/apiextensions.fn.proto.v1beta1.FunctionRunnerService/RunFunction";
    const LABEL: &'static str = "v1beta1";
}

/// The `FunctionRunnerService` of package `P`.
pub(super) struct RunFunctionServer<P> {
    runner: Runner,
    max_request_bytes: usize,
    max_response_bytes: usize,
    package: PhantomData<P>,
}

impl<P> RunFunctionServer<P> {
    pub(super) fn new(runner: Runner, max_request_bytes: usize, max_response_bytes: usize) -> Self {
        RunFunctionServer {
            runner,
            max_request_bytes,
            max_response_bytes,
            package: PhantomData,
        }
    }
}

impl<P> Clone for RunFunctionServer<P> {
    fn clone(&self) -> Self {
        RunFunctionServer::new(
            self.runner.clone(),
            self.max_request_bytes,
            self.max_response_bytes,
        )
    }
}

impl<P: Package> NamedService for RunFunctionServer<P> {
    const NAME: &'static str = P::SERVICE;
}

impl<P, B> Service<http::Request<B>> for RunFunctionServer<P>
where
    P: Package,
    B: HttpBody + Send + 'static,
    B::Error: Into<StdError> + Send,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if request.uri().path() != P::PATH {
            return Box::pin(async { Ok(Status::unimplemented("").into_http()) });
        }
        let call = RunFunction {
            runner: self.runner.clone(),
            package: P::LABEL,
            service: P::SERVICE,
        };
        let (max_request, max_response) =
            (Some(self.max_request_bytes), Some(self.max_response_bytes));
        Box::pin(async move {
            let mut grpc = Grpc::new(RequestBytesCodec)
                .apply_max_message_size_config(max_request, max_response);
            Ok(grpc.unary(call, request).await)
        })
    }
}

/// One call: the runner answers the request's bytes with the response's.
struct RunFunction {
    runner: Runner,
    package: &'static str,
    service: &'static str,
}

impl UnaryService<Bytes> for RunFunction {
    type Response = Answer;
    type Future = BoxFuture<Response<Answer>, Status>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        let runner = self.runner.clone();
        let (package, service) = (self.package, self.service);
        Box::pin(async move {
            let metrics = super::metrics::metrics();
            let started = std::time::Instant::now();
            metrics.started(service);
            let answer = runner.run(package, request.into_inner()).await;
            let code = answer
                .as_ref()
                .map_or_else(Status::code, |_| tonic::Code::Ok);
            metrics.handled(service, code, started.elapsed());
            answer.map(Response::new)
        })
    }
}

/// The request as bytes, as received, for the runner to decode; the response as a message, or
/// as the bytes the memo keeps.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RequestBytesCodec;

impl Codec for RequestBytesCodec {
    type Encode = Answer;
    type Decode = Bytes;
    type Encoder = RequestBytesCodec;
    type Decoder = RequestBytesCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RequestBytesCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RequestBytesCodec
    }
}

impl Encoder for RequestBytesCodec {
    type Item = Answer;
    type Error = Status;

    /// Straight into the transport's buffer: the composed resources are bytes already
    /// (`Struct::write`), so encoding is mostly copying them, once.
    fn encode(&mut self, item: Self::Item, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            Answer::Computed(response) => {
                buf.reserve(response.encoded_len());
                response.encode_raw(buf);
            }
            Answer::Encoded(bytes) => buf.put_slice(&bytes),
        }
        Ok(())
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

impl Decoder for RequestBytesCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(buf.copy_to_bytes(buf.remaining())))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{v1, v1beta1};

    /// The names the generated servers route by, so the hand-written routes cannot drift from
    /// the protocol.
    #[test]
    fn routes_are_the_protocols() {
        assert_eq!(
            V1::SERVICE,
            v1::function_runner_service_server::SERVICE_NAME
        );
        assert_eq!(
            V1beta1::SERVICE,
            v1beta1::function_runner_service_server::SERVICE_NAME
        );
        assert_eq!(V1::PATH, format!("/{}/RunFunction", V1::SERVICE));
        assert_eq!(V1beta1::PATH, format!("/{}/RunFunction", V1beta1::SERVICE));
    }
}
