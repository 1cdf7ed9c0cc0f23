//! Metrics and probes on plain HTTP (`--metrics-address`, default `:8080`).
//!
//! - `/metrics`: Prometheus text. The `grpc_server_*` series that the Go and Rust function SDKs
//!   serve (calls started, handled by code, handling time), and this function's own: repositories
//!   rendered, fatal results by reason, calls by provider API.
//! - `/healthz`: live while the process serves HTTP.
//! - `/readyz`: ready once the gRPC server listens; not ready while it drains after SIGTERM.
//!
//! A kubelet cannot probe the mTLS gRPC health service, and the image has no shell for an exec
//! probe: these are what a Deployment's probes use.
//!
//! Anyone who reaches the port can connect, so the listener is bounded on its own: a request's
//! headers (and a kept-alive connection's next request) must come within [`HEADER_TIMEOUT`],
//! at most `--max-metrics-connections` connections are held (a probe gets in among slow clients:
//! see `connections`), and accept errors wait instead of spinning.

use super::connections::{AcceptBackoff, Slots, Tracked};
use crate::core::problems::Findings;
use crate::proto::v1::{RunFunctionResponse, Severity};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::net::TcpListener;

/// The labels of the `grpc_server_*` series, as go-grpc-prometheus names them.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Method {
    grpc_type: &'static str,
    grpc_service: &'static str,
    grpc_method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Handled {
    grpc_type: &'static str,
    grpc_service: &'static str,
    grpc_method: &'static str,
    grpc_code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Api {
    provider_api: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

/// What one call rendered, as the metrics count it. A remembered answer keeps it, so that a
/// call answered from the memo counts as the call that computed the answer did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    fatal_reason: Option<String>,
    provider_api: &'static str,
    repositories: u64,
}

impl Rendered {
    /// What `response` rendered, with the core's `findings`.
    pub fn of(findings: &Findings, response: &RunFunctionResponse) -> Rendered {
        let fatal_reason = response
            .results
            .iter()
            .find(|r| r.severity == Severity::Fatal as i32)
            .map(|fatal| fatal.reason.clone().unwrap_or_default());
        let (provider_api, repositories) = match findings.rendered {
            Some((api, repositories)) => (api.as_str(), repositories as u64),
            None => ("none", 0),
        };
        Rendered {
            fatal_reason,
            provider_api,
            repositories,
        }
    }
}

/// Every series, registered once per process.
pub struct Metrics {
    registry: Registry,
    started: Family<Method, Counter>,
    handled: Family<Handled, Counter>,
    handling: Family<Method, Histogram>,
    repositories: Counter,
    fatal: Family<Reason, Counter>,
    calls: Family<Api, Counter>,
    memo: Family<Outcome, Counter>,
    /// Ready for `/readyz`: set once gRPC listens, cleared when draining.
    ready: AtomicBool,
}

/// The process's metrics: every call counts in them, served or not.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// The buckets of go-grpc-prometheus's handling-time histogram, in seconds.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::default();
        let started = Family::<Method, Counter>::default();
        let handled = Family::<Handled, Counter>::default();
        let handling = Family::<Method, Histogram>::new_with_constructor(
            (|| Histogram::new(BUCKETS)) as fn() -> Histogram,
        );
        let repositories = Counter::default();
        let fatal = Family::<Reason, Counter>::default();
        let calls = Family::<Api, Counter>::default();
        let memo = Family::<Outcome, Counter>::default();
        registry.register(
            "grpc_server_started",
            "RPCs started on the server",
            started.clone(),
        );
        registry.register(
            "grpc_server_handled",
            "RPCs completed on the server, by code",
            handled.clone(),
        );
        registry.register(
            "grpc_server_handling_seconds",
            "Time the server took to answer an RPC",
            handling.clone(),
        );
        registry.register(
            "function_artifactory_repositories_rendered",
            "Repositories rendered into the desired state",
            repositories.clone(),
        );
        registry.register(
            "function_artifactory_fatal_results",
            "Calls answered with a fatal result, by reason",
            fatal.clone(),
        );
        registry.register(
            "function_artifactory_calls",
            "Calls by the provider API rendered for (none: nothing rendered)",
            calls.clone(),
        );
        registry.register(
            "function_artifactory_answer_lookups",
            "Calls by how their request was looked up among the remembered answers: hit, miss, \
             unkeyed (no content key) or off (--answer-memo-size 0)",
            memo.clone(),
        );
        Metrics {
            registry,
            started,
            handled,
            handling,
            repositories,
            fatal,
            calls,
            memo,
            ready: AtomicBool::new(false),
        }
    }

    /// A call of `service` began.
    pub fn started(&self, service: &'static str) {
        self.started.get_or_create(&method(service)).inc();
    }

    /// A call of `service` ended with `code` after `took`.
    pub fn handled(&self, service: &'static str, code: tonic::Code, took: Duration) {
        let labels = method(service);
        self.handling
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        let handled = Handled {
            grpc_type: labels.grpc_type,
            grpc_service: labels.grpc_service,
            grpc_method: labels.grpc_method,
            grpc_code: code_name(code),
        };
        self.handled.get_or_create(&handled).inc();
    }

    /// What a call rendered: its repositories, its fatal result, the provider API.
    pub fn rendered(&self, rendered: &Rendered) {
        if let Some(reason) = &rendered.fatal_reason {
            let reason = reason.clone();
            self.fatal.get_or_create(&Reason { reason }).inc();
        }
        self.repositories.inc_by(rendered.repositories);
        let api = Api {
            provider_api: rendered.provider_api,
        };
        self.calls.get_or_create(&api).inc();
    }

    /// How a call's request was looked up among the remembered answers (`memo`).
    pub fn looked_up(&self, outcome: &'static str) {
        self.memo.get_or_create(&Outcome { outcome }).inc();
    }

    /// Whether `/readyz` answers 200 (serving) or 503 (starting or draining).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    fn ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

fn method(service: &'static str) -> Method {
    Method {
        grpc_type: "unary",
        grpc_service: service,
        grpc_method: "RunFunction",
    }
}

/// gRPC codes as go-grpc-prometheus spells them.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "Canceled",
        Unknown => "Unknown",
        InvalidArgument => "InvalidArgument",
        DeadlineExceeded => "DeadlineExceeded",
        NotFound => "NotFound",
        AlreadyExists => "AlreadyExists",
        PermissionDenied => "PermissionDenied",
        ResourceExhausted => "ResourceExhausted",
        FailedPrecondition => "FailedPrecondition",
        Aborted => "Aborted",
        OutOfRange => "OutOfRange",
        Unimplemented => "Unimplemented",
        Internal => "Internal",
        Unavailable => "Unavailable",
        DataLoss => "DataLoss",
        Unauthenticated => "Unauthenticated",
    }
}

/// How long a client has to send a request's headers, and how long a kept-alive connection may
/// wait for its next request (hyper starts the same timer for both). A kubelet probe or a
/// Prometheus scrape sends its request at once; a peer that sends headers byte by byte, or
/// never, is closed after this.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `/metrics`, `/healthz` and `/readyz` on `listener` until the process ends, holding at
/// most `max_connections` connections (see `connections`: when all are taken, the oldest that
/// has made no request is closed for the new one, so a probe gets in among slow clients).
pub async fn serve(listener: TcpListener, max_connections: usize) {
    let slots = Slots::new("metrics", "--max-metrics-connections", max_connections);
    let mut backoff = AcceptBackoff::new("metrics");
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                if let Some(delay) = backoff.failed(&error) {
                    tokio::time::sleep(delay).await;
                }
                continue;
            }
        };
        backoff.accepted();
        // Refused for want of a slot: closed as it is dropped.
        let Some(slot) = slots.admit() else {
            continue;
        };
        let info = slot.info();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(Tracked::new(stream, slot, None));
            let service = hyper::service::service_fn(move |request| {
                info.mark_used();
                answer(request)
            });
            // A client that goes away mid-request, or is too slow, is no concern of ours.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(io, service)
                .await;
        });
    }
}

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let metrics = metrics();
    let (status, content_type, body) = match request.uri().path() {
        "/metrics" => (
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.encode(),
        ),
        "/healthz" => (StatusCode::OK, "text/plain", "ok\n".to_owned()),
        "/readyz" if metrics.ready() => (StatusCode::OK, "text/plain", "ready\n".to_owned()),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "not ready: starting or draining\n".to_owned(),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found\n".to_owned(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_named_as_the_sdks_name_them() {
        let metrics = Metrics::new();
        metrics.started("apiextensions.fn.proto.v1.FunctionRunnerService");
        metrics.handled(
            "apiextensions.fn.proto.v1.FunctionRunnerService",
            tonic::Code::Ok,
            Duration::from_millis(3),
        );
        let text = metrics.encode();
        for expected in [
            "grpc_server_started_total{grpc_type=\"unary\",grpc_service=\"apiextensions.fn.proto.v1.FunctionRunnerService\",grpc_method=\"RunFunction\"} 1",
            "grpc_server_handled_total{grpc_type=\"unary\",grpc_service=\"apiextensions.fn.proto.v1.FunctionRunnerService\",grpc_method=\"RunFunction\",grpc_code=\"OK\"} 1",
            "grpc_server_handling_seconds_bucket{le=\"0.005\",grpc_type=\"unary\"",
            "function_artifactory_repositories_rendered_total 0",
        ] {
            assert!(text.contains(expected), "{expected} not in:\n{text}");
        }
    }
}
