//! SIGTERM (what Kubernetes sends) and SIGINT (Ctrl-C) end the server gracefully.

use std::io;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The two signals, registered at start-up: a signal that arrives before registration would end
/// the process at once with the default action.
pub(super) struct Signals {
    terminate: Signal,
    interrupt: Signal,
}

impl Signals {
    pub(super) fn register() -> io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Resolves on the first of either signal.
    pub(super) async fn received(mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}
