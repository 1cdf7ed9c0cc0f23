//! JSON lines on stderr: what log collectors of a Kubernetes pod read.

use std::panic::PanicHookInfo;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Where tonic reports a failed TLS handshake, at debug level.
const TLS_ACCEPT_TARGET: &str = "tonic::transport::server::io_stream";

/// Info by default. With `--debug`, this crate's debug lines (one per call) and tonic's server
/// transport lines (a refused TLS handshake, a failed connection: what one needs when Crossplane
/// cannot reach the function); other libraries' debug output (HTTP/2 frames) would drown them.
pub(super) fn init(debug: bool) {
    let filter = if debug {
        "info,function_artifactory=debug,tonic::transport::server=debug"
    } else {
        "info"
    };
    let lines = tracing_subscriber::fmt::layer()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .with_writer(std::io::stderr)
        .with_filter(EnvFilter::new(filter));
    let refused =
        RefusedClients.with_filter(Targets::new().with_target(TLS_ACCEPT_TARGET, Level::DEBUG));
    // `try_init`: a second initialisation (only possible in tests) keeps the first.
    let _ = tracing_subscriber::registry()
        .with(lines)
        .with(refused)
        .try_init();
    std::panic::set_hook(Box::new(log_panic));
}

/// A client refused at the TLS handshake (no certificate, another CA, expired) is what one
/// needs to see when Crossplane cannot reach the function: tonic says it at debug level only,
/// so each such event becomes one info line of ours, once per connection.
struct RefusedClients;

impl<S: Subscriber> Layer<S> for RefusedClients {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.message == "tls accept error" {
            tracing::info!(
                error = fields.error,
                "refused a client: the TLS handshake failed"
            );
        }
    }
}

/// The message and error of an event.
#[derive(Default)]
struct Fields {
    message: String,
    error: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = format!("{value:?}"),
            _ => {}
        }
    }
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
