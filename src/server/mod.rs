//! The gRPC face: flags, start-up and shutdown around [`crate::run_function`]. It only
//! translates; every decision about a request is the core's.

mod coalesce;
mod connections;
mod control;
mod error;
mod logging;
mod memo;
pub mod metrics;
mod preface;
mod runner;
mod service;
mod shutdown;
mod tls;
mod transport;

pub use error::{PemProblem, StartError};

use crate::proto::hash_key::HashKey;
use runner::Runner;
use service::{Package, RunFunctionServer, V1beta1, V1};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tonic::transport::ServerTlsConfig;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

type V1Service = RunFunctionServer<V1>;
type V1beta1Service = RunFunctionServer<V1beta1>;

/// A runtime on the test's thread, with timers and I/O, for the unit tests of the connection
/// adapters (`preface.rs`, `coalesce.rs`).
#[cfg(test)]
fn test_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

/// After SIGTERM, calls in flight get this long to finish. Kubernetes kills a pod 30 s after
/// SIGTERM by default; stopping before that ends the pod cleanly.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(25);

const MIB: usize = 1024 * 1024;

/// Command-line flags of the server, as the Crossplane function SDKs spell them.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on, HOST:PORT (`:PORT` listens on all interfaces).
    #[arg(long, default_value = "0.0.0.0:9443", value_name = "HOST:PORT")]
    pub address: String,

    /// Serve plain-text gRPC, without TLS. For local development: Crossplane dials with mTLS.
    #[arg(long)]
    pub insecure: bool,

    /// Directory holding tls.crt, tls.key and ca.crt (Crossplane mounts it at /tls/server).
    #[arg(long, env = "TLS_SERVER_CERTS_DIR", value_name = "DIR")]
    pub tls_certs_dir: Option<PathBuf>,

    /// Log at debug level: one line per call.
    #[arg(short, long)]
    pub debug: bool,

    /// Address of the plain-HTTP listener for /metrics (Prometheus), /healthz and /readyz,
    /// HOST:PORT or :PORT; empty disables it.
    #[arg(
        long,
        env = "METRICS_ADDRESS",
        default_value = ":8080",
        value_name = "HOST:PORT"
    )]
    pub metrics_address: String,

    /// Largest request accepted, in MiB; larger ones are answered RESOURCE_EXHAUSTED.
    #[arg(long, env = "FUNCTION_ARTIFACTORY_MAX_RECV_MESSAGE_SIZE", default_value_t = (crate::proto::MAX_REQUEST_BYTES / MIB) as u16, value_name = "MIB",
          value_parser = clap::value_parser!(u16).range(1..=2047))]
    pub max_recv_message_size: u16,

    /// gRPC connections held at once. When all are taken, the oldest that has made no call is
    /// closed for a new one; when every one has made calls, the new one is closed. Crossplane
    /// keeps one connection to a function.
    #[arg(long, default_value_t = 128, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_connections: u32,

    /// A gRPC connection with no call in flight for this long is closed (a Go duration, such
    /// as 1h or 90m). Longer than the 30 minutes after which Crossplane's gRPC client closes an
    /// unused connection itself, so it never cuts Crossplane's.
    #[arg(long, default_value = "1h", value_name = "DURATION", value_parser = positive_duration)]
    pub max_connection_idle: Duration,

    /// Connections the metrics and probes listener holds at once, counted apart from gRPC's so
    /// that neither takes the other's; beyond, as for gRPC.
    #[arg(long, default_value_t = 16, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_metrics_connections: u32,

    /// Answers remembered by their request's content, in MiB: a request the function has
    /// answered before (every reconcile of an unchanged claim) is answered again without being
    /// decoded or rendered. The oldest answers go first; 0 remembers none.
    #[arg(long, env = "ANSWER_MEMO_SIZE", default_value_t = 16, value_name = "MIB",
          value_parser = clap::value_parser!(u16).range(0..=4096))]
    pub answer_memo_size: u16,
}

/// A Go duration greater than zero, for the flags.
fn positive_duration(text: &str) -> Result<Duration, String> {
    match crate::core::time::parse_go_duration(text) {
        Ok(duration) if !duration.is_zero() => Ok(duration),
        Ok(_) => Err("must be more than 0s".to_owned()),
        Err(error) => Err(format!(
            "{error}: write it as Go does, such as 1h, 90m or 45s"
        )),
    }
}

/// Serves until SIGTERM or SIGINT, then finishes the calls in flight and exits 0.
pub fn serve(args: ServeArgs) -> ExitCode {
    logging::init(args.debug);
    match start(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// Keys the content hashes of this process (`proto::hash_key`) with a secret drawn from the
/// operating system's random source: a request's content key, by which the memo finds answers,
/// and a live schema's content hash, by which compiled schemas are found, can then be computed by
/// nobody outside the process, so nobody can make two requests that share one. Called when the
/// server starts, before it hashes anything.
pub fn key_content_hashes() -> Result<(), StartError> {
    let mut seed = 0;
    // 0 is the fixed key's seed, which anyone knows.
    while seed == 0 {
        let mut bytes = [0u8; 8];
        getrandom::getrandom(&mut bytes).map_err(StartError::Random)?;
        seed = u64::from_le_bytes(bytes);
    }
    HashKey::key_process(seed)?;
    Ok(())
}

fn start(args: &ServeArgs) -> Result<(), StartError> {
    // Credentials first: the likeliest mistake, reported before anything else happens.
    let tls = credentials(args)?;
    key_content_hashes()?;
    // One thread for the transport: the core runs on blocking threads (runner.rs), so the async
    // side is only HTTP/2 and protobuf framing, which a multi-thread runtime's work stealing made
    // dearer per call (BENCHMARKS.md).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(blocking_threads())
        .build()
        .map_err(StartError::Runtime)?;
    let result = runtime.block_on(run(args, tls));
    // A call cut off by the drain timeout may still hold a blocking thread: do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Threads of tokio's blocking pool, where the core runs (at most one call per core at once, see
/// `runner`). tokio's default, 512, let the pool creep up under steady load (a call that starts
/// just before a thread that finished its call is idle again starts a new thread): the soak saw
/// 17 threads grow to 31 and RSS by 4 MB over 200,000 calls, each new thread touching its stack
/// and a malloc arena. Nothing else runs there, so one thread a core: each thread that has run
/// a large call keeps a few MB of allocator pages: with the two spare threads the pool had
/// before, calls with live schemas at 100 repositories peaked at 27-30 MB, with one a core at
/// 20-29 MB (BENCHMARKS.md).
/// Calls beyond wait in the queue, as they already waited for a core.
fn blocking_threads() -> usize {
    cores()
}

/// The cores the process may use: the calls the core runs at once (`runner`), and the threads
/// they run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `--insecure` wins over a certificates directory, as in the Go SDK.
fn credentials(args: &ServeArgs) -> Result<Option<ServerTlsConfig>, StartError> {
    if args.insecure {
        return Ok(None);
    }
    let dir = args
        .tls_certs_dir
        .as_deref()
        .ok_or(StartError::NoCredentials)?;
    tls::load(dir).map(Some)
}

async fn run(args: &ServeArgs, tls: Option<ServerTlsConfig>) -> Result<(), StartError> {
    let secure = tls.is_some();
    let mut server = transport::server(tls).map_err(|source| StartError::Tls {
        dir: args.tls_certs_dir.clone().unwrap_or_default(),
        source,
    })?;
    let incoming = transport::bind(
        &args.address,
        args.max_connections as usize,
        args.max_connection_idle,
    )?;
    let address = incoming.local_addr().map_err(|source| StartError::Bind {
        address: args.address.clone(),
        source,
    })?;
    let limit = usize::from(args.max_recv_message_size) * MIB;
    let (v1, v1beta1) = services(limit, usize::from(args.answer_memo_size) * MIB);
    let (health, health_service) = tonic_health::server::health_reporter();
    set_health(&health, ServingStatus::Serving).await;
    // Probes, metrics and signals are served on a thread that never runs the core.
    let control = control::start(
        &args.metrics_address,
        args.max_metrics_connections as usize,
        health,
    )?;
    let metrics_address = control.metrics_address;
    let router = server
        .add_service(health_service)
        .add_service(v1)
        .add_service(v1beta1);

    warn_if_panics_abort();
    metrics::metrics().set_ready(true);
    tracing::info!(
        %address,
        metrics_address = metrics_address.map(|a| a.to_string()).unwrap_or_default(),
        tls = secure,
        max_recv_message_size_bytes = limit,
        max_connections = args.max_connections,
        max_connection_idle_s = args.max_connection_idle.as_secs(),
        answer_memo_size_mib = args.answer_memo_size,
        version = env!("CARGO_PKG_VERSION"),
        "serving"
    );
    let draining = Arc::new(Notify::new());
    let stop = stop_on_signal(control.stopping, Arc::clone(&draining));
    tokio::select! {
        served = router.serve_with_incoming_shutdown(incoming, stop) => {
            served.map_err(StartError::Serve)?;
        }
        () = drain_deadline(&draining) => {
            tracing::warn!(after_s = DRAIN_TIMEOUT.as_secs(), "calls still in flight; stopping anyway");
        }
    }
    tracing::info!("stopped");
    Ok(())
}

/// Both package names over one runner, with the message size limits and the memo's.
fn services(max_request_bytes: usize, memo_bytes: usize) -> (V1Service, V1beta1Service) {
    let runner = Runner::new(cores(), memo_bytes);
    let max_response_bytes = max_request_bytes.saturating_mul(transport::RESPONSE_TO_REQUEST_RATIO);
    let v1 = V1Service::new(runner.clone(), max_request_bytes, max_response_bytes);
    let v1beta1 = V1beta1Service::new(runner, max_request_bytes, max_response_bytes);
    (v1, v1beta1)
}

/// The server as a whole ("") and both services, as Kubernetes' gRPC probes and grpc_health_probe
/// ask for them.
async fn set_health(health: &HealthReporter, status: ServingStatus) {
    health.set_service_status("", status).await;
    health.set_service_status(V1::SERVICE, status).await;
    health.set_service_status(V1beta1::SERVICE, status).await;
}

/// Resolves when the control thread received SIGTERM or SIGINT (health is NOT_SERVING by
/// then), after which tonic closes the listener and drains the connections.
async fn stop_on_signal(stopping: Arc<Notify>, draining: Arc<Notify>) {
    stopping.notified().await;
    draining.notify_one();
}

/// Never resolves before a signal; then resolves after [`DRAIN_TIMEOUT`], so a call that never
/// ends (or a health Watch stream) cannot keep the process alive until it is killed.
async fn drain_deadline(draining: &Notify) {
    draining.notified().await;
    tokio::time::sleep(DRAIN_TIMEOUT).await;
}

/// Our profiles unwind, so a panic in a call becomes an error for that call (`catch_unwind`).
/// A build with `panic = "abort"` would end the process instead: say so once at start.
fn warn_if_panics_abort() {
    if cfg!(panic = "abort") {
        tracing::warn!("built with panic=abort: a panic in the function ends the process instead of failing one call");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    /// Crossplane's function runner keeps one connection per function and calls on it at least
    /// every poll interval (`--poll-interval`, 1 minute by default: cmd/crossplane/core/core.go,
    /// v2.3.4) while composites exist; its gRPC client (grpc-go v1.82.1, what Crossplane v2.3.4
    /// builds with) closes a connection itself after 30 minutes without a call
    /// (`idleTimeout` in dialoptions.go). The idle limit outlasts both, so it never cuts
    /// Crossplane's connection.
    #[test]
    fn the_default_idle_limit_outlasts_crossplane_s_connection_reuse() {
        let defaults = Cli::parse_from(["function-artifactory"]).serve;
        let crossplane_poll_interval = Duration::from_secs(60);
        let grpc_go_client_idle_timeout = Duration::from_secs(30 * 60);
        assert_eq!(defaults.max_connection_idle, Duration::from_secs(3600));
        assert!(defaults.max_connection_idle > grpc_go_client_idle_timeout);
        assert!(grpc_go_client_idle_timeout > crossplane_poll_interval);
        assert_eq!(defaults.max_connections, 128);
        assert_eq!(defaults.max_metrics_connections, 16);
    }

    #[test]
    fn the_idle_limit_is_a_go_duration_above_zero() {
        let parsed = Cli::parse_from(["f", "--max-connection-idle", "90m"]).serve;
        assert_eq!(parsed.max_connection_idle, Duration::from_secs(5400));
        for wrong in ["0s", "soon", "10"] {
            assert!(
                Cli::try_parse_from(["f", "--max-connection-idle", wrong]).is_err(),
                "{wrong}"
            );
        }
    }
}
