//! Probes, metrics and signals on a thread of their own, which never runs the core: a call
//! that evaluates CEL rules for a second an object (the API server's budget allows that), or
//! one the transport's thread runs inline, cannot delay `/healthz`, `/readyz`, `/metrics` or
//! SIGTERM. After a signal this thread also ends the process once the drain timeout has
//! passed, should the transport's thread be too busy to do it.

use super::{metrics, set_health, shutdown::Signals, transport, StartError, DRAIN_TIMEOUT};
use std::net::SocketAddr;
use std::sync::{mpsc, Arc};
use std::time::Duration;
use tokio::sync::Notify;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

/// What the transport's side gets from the control thread.
pub(super) struct Control {
    /// Where the metrics listener listens, unless it is disabled.
    pub(super) metrics_address: Option<SocketAddr>,
    /// Notified once, on SIGTERM or SIGINT: stop accepting and drain.
    pub(super) stopping: Arc<Notify>,
}

/// How long after the drain timeout the control thread ends the process itself: the
/// transport's thread normally stops it at the drain timeout.
const BACKSTOP: Duration = Duration::from_secs(2);

/// Starts the thread: registers the signals and binds the metrics listener (errors are
/// returned here, before the server says it serves), then serves them until the process ends.
pub(super) fn start(
    metrics_address: &str,
    max_metrics_connections: usize,
    health: HealthReporter,
) -> Result<Control, StartError> {
    let listener = if metrics_address.is_empty() {
        None
    } else {
        Some(transport::listen_std(metrics_address)?)
    };
    let local = match &listener {
        Some(listener) => Some(listener.local_addr().map_err(|source| StartError::Bind {
            address: metrics_address.to_owned(),
            source,
        })?),
        None => None,
    };
    let stopping = Arc::new(Notify::new());
    let notify = Arc::clone(&stopping);
    let (ready, registered) = mpsc::channel();
    std::thread::Builder::new()
        .name("control".to_owned())
        .spawn(move || run(listener, max_metrics_connections, health, notify, ready))
        .map_err(StartError::Runtime)?;
    // Signals are registered before the server says it serves: one that comes earlier would
    // end the process with the default action.
    match registered.recv() {
        Ok(Ok(())) => Ok(Control {
            metrics_address: local,
            stopping,
        }),
        Ok(Err(error)) => Err(StartError::Runtime(error)),
        Err(_) => Err(StartError::Runtime(std::io::Error::other(
            "the control thread stopped at start",
        ))),
    }
}

fn run(
    listener: Option<std::net::TcpListener>,
    max_metrics_connections: usize,
    health: HealthReporter,
    stopping: Arc<Notify>,
    ready: mpsc::Sender<std::io::Result<()>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = ready.send(Err(error));
            return;
        }
    };
    runtime.block_on(async move {
        let signals = match Signals::register() {
            Ok(signals) => signals,
            Err(error) => {
                let _ = ready.send(Err(error));
                return;
            }
        };
        if let Some(listener) = listener {
            match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => {
                    tokio::spawn(metrics::serve(listener, max_metrics_connections));
                }
                Err(error) => {
                    let _ = ready.send(Err(error));
                    return;
                }
            }
        }
        let _ = ready.send(Ok(()));
        let signal = signals.received().await;
        tracing::info!(
            signal,
            "stopping: no new connections, finishing calls in flight"
        );
        set_health(&health, ServingStatus::NotServing).await;
        metrics::metrics().set_ready(false);
        stopping.notify_one();
        // Probes stay answered while the calls drain; past the drain timeout and a margin the
        // transport's thread has not stopped the process, so this one does.
        tokio::time::sleep(DRAIN_TIMEOUT + BACKSTOP).await;
        tracing::warn!(
            after_s = DRAIN_TIMEOUT.as_secs(),
            "calls still in flight; stopping anyway"
        );
        std::process::exit(0);
    });
}
