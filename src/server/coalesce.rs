//! A connection's writes gathered into one system call per turn of its task, and its reads
//! taken in large pieces.
//!
//! h2 writes every DATA frame of more than a few hundred bytes with a `writev` of its own, and
//! flushes after each: a 9 kB response (10 repositories) cost a system call, a 90 kB one (100)
//! six, and eight answers finished together cost eight or more where one would do. On loopback
//! those calls were a third of the server's CPU time per call (BENCHMARKS.md). So writes are
//! copied into a buffer, and the bytes go out in one write when the task that owns the
//! connection has nothing more to add:
//!
//! - A flush right after new bytes only schedules the task to run once more (it wakes itself)
//!   and reports success: h2 flushes after each large frame and again when it has written
//!   everything it had, and on the next turn the bytes of all of them go out together.
//! - A flush with nothing new since the last one writes everything out.
//! - A read writes everything out first, so nothing gathered waits while the task waits for
//!   the peer (the TLS handshake writes, flushes, then reads the peer's answer).
//! - Past [`GATHER_LIMIT`] bytes a write waits for the socket to take them: a slow peer holds
//!   back the writer, as it did without the buffer.
//! - Shutting down writes everything out first.
//!
//! Reads: h2 reads into what is left of its buffer, 8 to 16 kB at a time, so a 27 kB request
//! (100 repositories) took three or four `recvfrom`s. A read here asks the socket for up to
//! [`READ_AHEAD`] bytes, often several requests when calls arrive together, and hands them
//! to h2 from memory.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// The most bytes gathered before a write waits for the socket. The eight answers of 100
/// repositories that finish together (0.7 MB) go out in three writes, and each connection
/// keeps a buffer of at most this size (a few hundred kB) beyond what h2 holds.
pub(super) const GATHER_LIMIT: usize = 256 * 1024;

/// The most bytes one read takes from the socket; each connection keeps a buffer this large
/// once it has read.
pub(super) const READ_AHEAD: usize = 64 * 1024;

/// A connection whose writes are gathered and reads taken ahead (see the module's
/// documentation).
pub(super) struct Coalesced<IO> {
    io: IO,
    /// Bytes read from the socket; those in `unread` are not handed on yet.
    ahead: Vec<u8>,
    unread: std::ops::Range<usize>,
    /// Bytes gathered; those before `sent` are already written.
    gathered: Vec<u8>,
    sent: usize,
    /// Bytes were gathered since the last flush.
    fresh: bool,
}

impl<IO> Coalesced<IO> {
    pub(super) fn new(io: IO) -> Self {
        Self {
            io,
            ahead: Vec::new(),
            unread: 0..0,
            gathered: Vec::new(),
            sent: 0,
            fresh: false,
        }
    }

    fn unsent(&self) -> usize {
        self.gathered.len() - self.sent
    }

    /// Gathers what fits of `bytes` below the limit; how many were taken.
    fn gather(&mut self, bytes: &[u8]) -> usize {
        if self.sent > 0 {
            // Left over from a write the socket took in part: keep only what is unsent.
            self.gathered.drain(..self.sent);
            self.sent = 0;
        }
        let taken = bytes.len().min(GATHER_LIMIT - self.gathered.len());
        self.gathered.extend_from_slice(&bytes[..taken]);
        self.fresh |= taken > 0;
        taken
    }
}

impl<IO: AsyncWrite + Unpin> Coalesced<IO> {
    /// Writes out everything gathered, or registers for the socket's readiness.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.gathered.len() {
            let written =
                ready!(Pin::new(&mut self.io).poll_write(cx, &self.gathered[self.sent..]))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += written;
        }
        // The buffer is kept for the next batch: giving it back and taking it again cost a
        // page fault now and then; it holds at most `GATHER_LIMIT` bytes.
        self.sent = 0;
        self.gathered.clear();
        Poll::Ready(Ok(()))
    }

    /// Makes room below the limit, waiting for the socket if need be.
    fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.unsent() >= GATHER_LIMIT {
            ready!(self.poll_send(cx))?;
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for Coalesced<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Whatever was gathered goes out before waiting for the peer's next bytes. A socket
        // that cannot take it now has registered this task; the read goes on meanwhile.
        if this.unsent() > 0 {
            if let Poll::Ready(Err(error)) = this.poll_send(cx) {
                return Poll::Ready(Err(error));
            }
        }
        if this.unread.is_empty() {
            if buf.remaining() >= READ_AHEAD {
                // As large as a read here would be: straight into the caller's buffer.
                return Pin::new(&mut this.io).poll_read(cx, buf);
            }
            if this.ahead.is_empty() {
                this.ahead = vec![0; READ_AHEAD];
            }
            let mut ahead = ReadBuf::new(&mut this.ahead);
            ready!(Pin::new(&mut this.io).poll_read(cx, &mut ahead))?;
            // Nothing read is the end of the stream, passed on as nothing read.
            this.unread = 0..ahead.filled().len();
        }
        let handed = this.unread.len().min(buf.remaining());
        let start = this.unread.start;
        buf.put_slice(&this.ahead[start..start + handed]);
        this.unread.start += handed;
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Coalesced<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_room(cx))?;
        Poll::Ready(Ok(this.gather(buf)))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_room(cx))?;
        let mut taken = 0;
        for buf in bufs {
            let part = this.gather(buf);
            taken += part;
            if part < buf.len() {
                break;
            }
        }
        Poll::Ready(Ok(taken))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.unsent() > 0 {
            if this.fresh {
                // More may come on this turn of the task; the next turn writes it all.
                this.fresh = false;
                cx.waker().wake_by_ref();
                return Poll::Ready(Ok(()));
            }
            ready!(this.poll_send(cx))?;
        }
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

impl<IO: Connected> Connected for Coalesced<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::test_runtime as runtime;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    /// Long enough for any exchange here; a stuck one fails instead of hanging the suite.
    const WAIT: std::time::Duration = std::time::Duration::from_secs(5);

    /// A duplex stream that counts the reads and writes that reach it.
    struct Counted {
        io: DuplexStream,
        counts: Arc<Counts>,
    }

    #[derive(Default)]
    struct Counts {
        reads: AtomicUsize,
        writes: AtomicUsize,
    }

    impl AsyncRead for Counted {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            self.counts.reads.fetch_add(1, Ordering::Relaxed);
            Pin::new(&mut self.io).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for Counted {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.counts.writes.fetch_add(1, Ordering::Relaxed);
            Pin::new(&mut self.io).poll_write(cx, buf)
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.io).poll_flush(cx)
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.io).poll_shutdown(cx)
        }
    }

    fn counted(capacity: usize) -> (DuplexStream, Coalesced<Counted>, Arc<Counts>) {
        let (peer, io) = tokio::io::duplex(capacity);
        let counts = Arc::new(Counts::default());
        let io = Coalesced::new(Counted {
            io,
            counts: counts.clone(),
        });
        (peer, io, counts)
    }

    #[test]
    fn frames_flushed_one_by_one_go_out_in_one_write() {
        runtime().block_on(async {
            let (mut peer, mut io, counts) = counted(1 << 20);
            let writes = &counts.writes;
            // As h2 writes a response: each frame, then a flush.
            for frame in 0..6u8 {
                io.write_all(&[frame; 1000]).await.unwrap();
                io.flush().await.unwrap();
            }
            assert_eq!(writes.load(Ordering::Relaxed), 0, "nothing written yet");
            // The next turn's flush, with nothing new, writes everything.
            io.flush().await.unwrap();
            assert_eq!(writes.load(Ordering::Relaxed), 1);
            let mut received = vec![0; 6000];
            peer.read_exact(&mut received).await.unwrap();
            let expected: Vec<u8> = (0..6u8).flat_map(|f| [f; 1000]).collect();
            assert_eq!(received, expected);
        });
    }

    #[test]
    fn a_deferred_flush_wakes_its_task() {
        runtime().block_on(async {
            let (_peer, mut io, _) = counted(1024);
            io.write_all(b"frame").await.unwrap();
            let waker = counting_waker();
            let mut cx = Context::from_waker(&waker.0);
            let flushed = Pin::new(&mut io).poll_flush(&mut cx);
            assert!(matches!(flushed, Poll::Ready(Ok(()))));
            assert_eq!(
                waker.1.load(Ordering::Relaxed),
                1,
                "the task runs once more"
            );
        });
    }

    #[test]
    fn a_read_sends_what_was_gathered_first() {
        runtime().block_on(async {
            let (mut peer, mut io, _) = counted(1024);
            // A handshake: write, flush (deferred), then wait for the peer's answer.
            io.write_all(b"hello").await.unwrap();
            io.flush().await.unwrap();
            let server = async {
                let mut answer = [0; 6];
                io.read_exact(&mut answer).await.unwrap();
                answer
            };
            let client = async {
                let mut hello = [0; 5];
                peer.read_exact(&mut hello).await.unwrap();
                assert_eq!(&hello, b"hello");
                peer.write_all(b"hello!").await.unwrap();
            };
            // Were the gathered bytes kept back, both would wait for each other.
            let exchange = tokio::time::timeout(WAIT, async { tokio::join!(server, client) });
            let (answer, ()) = exchange.await.expect("the peer got the bytes");
            assert_eq!(&answer, b"hello!");
        });
    }

    #[test]
    fn a_peer_that_does_not_read_holds_the_writer_back() {
        runtime().block_on(async {
            let (_peer, mut io, _) = counted(1024);
            let chunk = vec![7u8; 64 * 1024];
            let mut written = 0;
            let blocked = loop {
                let write = tokio::time::timeout(
                    std::time::Duration::from_millis(50),
                    io.write_all(&chunk),
                );
                match write.await {
                    Ok(result) => {
                        result.unwrap();
                        written += chunk.len();
                    }
                    Err(_) => break true,
                }
                if written > 4 * GATHER_LIMIT {
                    break false;
                }
            };
            assert!(blocked, "wrote {written} bytes to a peer that reads none");
            assert!(io.unsent() <= GATHER_LIMIT);
        });
    }

    #[test]
    fn reads_take_what_the_socket_has_and_hand_it_on_in_the_callers_pieces() {
        runtime().block_on(async {
            let (mut peer, mut io, counts) = counted(1 << 20);
            let sent: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
            peer.write_all(&sent).await.unwrap();
            drop(peer);
            let mut received = Vec::new();
            let mut piece = [0; 8 * 1024];
            loop {
                let n = io.read(&mut piece).await.unwrap();
                if n == 0 {
                    break;
                }
                received.extend_from_slice(&piece[..n]);
            }
            assert_eq!(received, sent);
            // The 40 kB in one read, not in the caller's five; then the end of the stream.
            assert_eq!(counts.reads.load(Ordering::Relaxed), 2);
        });
    }

    #[test]
    fn a_large_read_goes_straight_to_the_callers_buffer() {
        runtime().block_on(async {
            let (mut peer, mut io, _) = counted(1 << 20);
            peer.write_all(b"request").await.unwrap();
            let mut large = vec![0; READ_AHEAD];
            let n = io.read(&mut large).await.unwrap();
            assert_eq!(&large[..n], b"request");
            assert!(io.ahead.is_empty(), "no buffer of its own");
        });
    }

    #[test]
    fn shutdown_sends_everything_then_closes() {
        runtime().block_on(async {
            let (mut peer, mut io, _) = counted(1 << 20);
            let body = vec![3u8; 300 * 1024];
            let server = async {
                io.write_all(&body).await.unwrap();
                io.shutdown().await.unwrap();
            };
            let client = async {
                let mut received = Vec::new();
                peer.read_to_end(&mut received).await.unwrap();
                received
            };
            let exchange = tokio::time::timeout(WAIT, async { tokio::join!(server, client) });
            let ((), received) = exchange.await.expect("the peer got everything and the end");
            assert_eq!(received.len(), body.len());
            assert!(received.iter().all(|&b| b == 3));
        });
    }

    /// A waker that counts its wakes.
    fn counting_waker() -> (std::task::Waker, Arc<AtomicUsize>) {
        struct Count(Arc<AtomicUsize>);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
            fn wake_by_ref(self: &Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let count = Arc::new(AtomicUsize::new(0));
        let waker = std::task::Waker::from(Arc::new(Count(count.clone())));
        (waker, count)
    }
}
