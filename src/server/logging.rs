//! JSON lines on stderr: what log collectors of a Kubernetes pod read.

use std::panic::PanicHookInfo;
use tracing_subscriber::EnvFilter;

/// Info by default. With `--debug`, this crate's debug lines (one per call) and tonic's server
/// transport lines (a refused TLS handshake, a failed connection: what one needs when Crossplane
/// cannot reach the function); other libraries' debug output (HTTP/2 frames) would drown them.
pub fn init(debug: bool) {
    let filter = if debug {
        "info,function_artifactory=debug,tonic::transport::server=debug"
    } else {
        "info"
    };
    // `try_init`: a second initialisation (only possible in tests) keeps the first.
    let _ = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .with_writer(std::io::stderr)
        .with_env_filter(EnvFilter::new(filter))
        .try_init();
    std::panic::set_hook(Box::new(log_panic));
}

/// A panic becomes one JSON line like every other, instead of the default free text.
fn log_panic(info: &PanicHookInfo<'_>) {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    let location = info.location().map(ToString::to_string).unwrap_or_default();
    tracing::error!(panic = message, location, "panic");
}
