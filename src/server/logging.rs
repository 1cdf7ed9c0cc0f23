//! JSON lines on stderr: what log collectors of a Kubernetes pod read.

use std::panic::PanicHookInfo;
use std::sync::Mutex;
use std::time::{Duration, Instant};
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
    let refused = RefusedClients(Mutex::new(RateLimit::new(REFUSED_CLIENTS_PER_SECOND)))
        .with_filter(Targets::new().with_target(TLS_ACCEPT_TARGET, Level::DEBUG));
    // `try_init`: a second initialisation (only possible in tests) keeps the first.
    let _ = tracing_subscriber::registry()
        .with(lines)
        .with(refused)
        .try_init();
    std::panic::set_hook(Box::new(log_panic));
}

/// Lines a second about refused TLS clients: a client that retries, or a flood of handshakes,
/// must not fill the log (or its volume).
const REFUSED_CLIENTS_PER_SECOND: u32 = 5;

/// A client refused at the TLS handshake (no certificate, another CA, expired) is what one
/// needs to see when Crossplane cannot reach the function: tonic says it at debug level only,
/// so each such event becomes one info line of ours, once per connection, at most
/// [`REFUSED_CLIENTS_PER_SECOND`]; the next line logged says how many were not.
struct RefusedClients(Mutex<RateLimit>);

impl<S: Subscriber> Layer<S> for RefusedClients {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.message != "tls accept error" {
            return;
        }
        let allowed = self.0.lock().unwrap_or_else(|e| e.into_inner()).allow();
        if let Some(suppressed) = allowed {
            tracing::info!(
                error = fields.error,
                refused_not_logged = suppressed,
                "refused a client: the TLS handshake failed"
            );
        }
    }
}

/// At most so many log lines a second of one kind; the others are counted, and the next line
/// logged says how many were not.
#[derive(Debug)]
pub(super) struct RateLimit {
    per_second: u32,
    /// When the current second began, and the lines logged in it.
    second: Option<Instant>,
    logged: u32,
    suppressed: u64,
}

impl RateLimit {
    pub(super) const fn new(per_second: u32) -> RateLimit {
        RateLimit {
            per_second,
            second: None,
            logged: 0,
            suppressed: 0,
        }
    }

    /// Whether a line may be logged now: `Some` with how many were not since the last one.
    pub(super) fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .second
            .is_none_or(|start| now.duration_since(start) >= Duration::from_secs(1))
        {
            self.second = Some(now);
            self.logged = 0;
        }
        if self.logged >= self.per_second {
            self.suppressed += 1;
            return None;
        }
        self.logged += 1;
        Some(std::mem::take(&mut self.suppressed))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_limit_lets_so_many_lines_a_second_and_counts_the_others() {
        let mut limit = RateLimit::new(2);
        let allowed: Vec<Option<u64>> = (0..5).map(|_| limit.allow()).collect();
        assert_eq!(allowed, [Some(0), Some(0), None, None, None]);
        limit.second = limit
            .second
            .and_then(|start| start.checked_sub(Duration::from_secs(1)));
        assert_eq!(
            limit.allow(),
            Some(3),
            "the next line says how many were not logged"
        );
        assert_eq!(limit.allow(), Some(0));
    }
}
