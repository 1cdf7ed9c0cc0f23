//! A deadline for a new connection's first bytes. hyper waits for the HTTP/2 preface without a
//! time limit, and with `--insecure` no TLS handshake timeout stands in front of it: a peer that
//! opens TCP and sends nothing (or a few bytes) would hold its socket and task until the kernel's
//! TCP keepalive gives up on a peer that is gone, and forever on one that is there. The deadline
//! ends with the first [`PREFACE_BYTES`] bytes; after them the HTTP/2 keepalive pings, the idle
//! limit (`connections`) and the request timeout bound the connection. Under TLS the ClientHello
//! lifts it and the handshake timeout takes over.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpIncoming};

use super::coalesce::Coalesced;
use super::connections::{AcceptBackoff, Slots, Tracked};

/// A client sends the preface right after connecting; a real one on a cluster network takes
/// milliseconds. The same bound as the TLS handshake's.
pub(super) const PREFACE_TIMEOUT: Duration = Duration::from_secs(10);

/// The length of the HTTP/2 client preface, `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
pub(super) const PREFACE_BYTES: usize = 24;

/// A connection as the server serves it: the deadline for its preface, its slot and idle limit
/// ([`Tracked`]), its writes gathered ([`Coalesced`]).
pub(super) type Connection = Deadlined<Tracked<Coalesced<TcpStream>>>;

/// The accepted connections, each admitted to a slot of the listener (see `connections`), with
/// the deadline for its preface. Accept errors never reach tonic, which retried at once and
/// logged each: the listener waits instead ([`AcceptBackoff`]).
pub(super) struct Incoming {
    tcp: TcpIncoming,
    timeout: Duration,
    slots: Slots,
    idle: Duration,
    backoff: AcceptBackoff,
    /// Until the next accept, after an error.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl Incoming {
    /// `slots`: how many connections at once; `idle`: how long one may go without a request.
    pub(super) fn new(tcp: TcpIncoming, timeout: Duration, slots: Slots, idle: Duration) -> Self {
        Self {
            tcp,
            timeout,
            slots,
            idle,
            backoff: AcceptBackoff::new("grpc"),
            waiting: None,
        }
    }

    pub(super) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

impl Stream for Incoming {
    type Item = io::Result<Connection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(waiting) = this.waiting.as_mut() {
                ready!(waiting.as_mut().poll(cx));
                this.waiting = None;
            }
            let stream = match ready!(Pin::new(&mut this.tcp).poll_next(cx)) {
                None => return Poll::Ready(None),
                Some(Ok(stream)) => stream,
                Some(Err(error)) => {
                    if let Some(delay) = this.backoff.failed(&error) {
                        this.waiting = Some(Box::pin(tokio::time::sleep(delay)));
                    }
                    continue;
                }
            };
            this.backoff.accepted();
            // A connection refused for want of a slot is closed here, as it is dropped.
            let Some(slot) = this.slots.admit() else {
                continue;
            };
            let tracked = Tracked::new(Coalesced::new(stream), slot, Some(this.idle));
            return Poll::Ready(Some(Ok(Deadlined::new(tracked, this.timeout))));
        }
    }
}

/// A connection whose reads fail with `TimedOut` if its first [`PREFACE_BYTES`] bytes do not
/// arrive within the deadline; the server then closes it.
pub(super) struct Deadlined<IO> {
    io: IO,
    /// Until the first bytes have arrived.
    deadline: Option<Pin<Box<Sleep>>>,
    awaited: usize,
}

impl<IO> Deadlined<IO> {
    pub(super) fn new(io: IO, timeout: Duration) -> Self {
        Self {
            io,
            deadline: Some(Box::pin(tokio::time::sleep(timeout))),
            awaited: PREFACE_BYTES,
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Deadlined<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = buf.filled().len() - before;
                this.awaited = this.awaited.saturating_sub(read);
                if this.awaited == 0 {
                    this.deadline = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                // Polling the timer registers this task to be woken at the deadline.
                let expired = this
                    .deadline
                    .as_mut()
                    .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
                if expired {
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no HTTP/2 preface before the deadline",
                    )))
                } else {
                    Poll::Pending
                }
            }
            failed => failed,
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Deadlined<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<IO: Connected> Connected for Deadlined<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::test_runtime as runtime;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const SHORT: Duration = Duration::from_millis(100);

    #[test]
    fn a_silent_peer_times_out() {
        runtime().block_on(async {
            let (_peer, io) = tokio::io::duplex(64);
            let mut io = Deadlined::new(io, SHORT);
            let error = io.read(&mut [0; 8]).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        });
    }

    #[test]
    fn a_peer_that_sends_part_of_the_preface_times_out() {
        runtime().block_on(async {
            let (mut peer, io) = tokio::io::duplex(64);
            let mut io = Deadlined::new(io, SHORT);
            peer.write_all(b"PRI * HTTP/2.0").await.unwrap();
            let mut buf = [0; 64];
            assert_eq!(io.read(&mut buf).await.unwrap(), 14);
            let error = io.read(&mut buf).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        });
    }

    #[test]
    fn after_the_preface_a_quiet_connection_is_kept() {
        runtime().block_on(async {
            let (mut peer, io) = tokio::io::duplex(64);
            let mut io = Deadlined::new(io, SHORT);
            peer.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
                .await
                .unwrap();
            let mut buf = [0; 64];
            assert_eq!(io.read(&mut buf).await.unwrap(), PREFACE_BYTES);
            let quiet = tokio::time::timeout(SHORT * 5, io.read(&mut buf)).await;
            assert!(quiet.is_err(), "still waiting: {quiet:?}");
        });
    }
}
