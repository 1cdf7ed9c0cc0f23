//! Bounds on the connections of a listener, each listener its own (gRPC, and metrics and
//! probes): how many it holds at once, how long one may go without a request, and an accept
//! loop that waits when the process is out of file descriptors instead of retrying at once.
//!
//! - Slots: a listener holds at most so many connections. When all are taken, the oldest
//!   connection that has not made a request yet (an idle TCP connection, a TLS handshake or an
//!   HTTP/2 preface that never finishes, a slow request line) is closed to make room, so a
//!   flood of such connections cannot keep a real client out; when every connection has made
//!   requests, the new one is closed. The gRPC listener's and the metrics listener's slots are
//!   separate, and together far below any container's file descriptor limit: the metrics
//!   listener cannot take the descriptors gRPC needs.
//! - Idle: a gRPC connection is closed once it has had no request in flight for
//!   `--max-connection-idle` (answering the server's PINGs does not count).
//! - Accept errors: at the descriptor limit (EMFILE) `accept` fails at once, every time, while
//!   the connection waits in the kernel's queue; tonic and the metrics loop retried at once,
//!   spinning a core and, with `--debug`, writing 48 MB of log a second. Now the listener waits
//!   5 ms, doubling up to 1 s, as Go's net/http server does, and says so at most once a second.

use super::logging::RateLimit;
use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;
use tonic::body::Body;
use tonic::codegen::http;
use tonic::transport::server::Connected;

/// The first wait after an accept error; each further error doubles it, up to
/// [`ACCEPT_BACKOFF_MAX`] (Go's net/http: 5 ms to 1 s).
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// What an accept loop does after an error.
pub(super) struct AcceptBackoff {
    listener: &'static str,
    delay: Duration,
    log: RateLimit,
}

impl AcceptBackoff {
    pub(super) fn new(listener: &'static str) -> AcceptBackoff {
        AcceptBackoff {
            listener,
            delay: Duration::ZERO,
            log: RateLimit::new(1),
        }
    }

    /// A connection was accepted: the next error waits the shortest time again.
    pub(super) fn accepted(&mut self) {
        self.delay = Duration::ZERO;
    }

    /// How long to wait after `error` before accepting again; `None` to go on at once, when
    /// the error was about one connection that went away before it was accepted.
    pub(super) fn failed(&mut self, error: &io::Error) -> Option<Duration> {
        use io::ErrorKind::*;
        if matches!(
            error.kind(),
            ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
        ) {
            return None;
        }
        self.delay = (self.delay * 2).clamp(ACCEPT_BACKOFF_MIN, ACCEPT_BACKOFF_MAX);
        if let Some(suppressed) = self.log.allow() {
            tracing::warn!(
                listener = self.listener,
                %error,
                retry_in_ms = self.delay.as_millis() as u64,
                errors_not_logged = suppressed,
                "cannot accept a connection; waiting before the next try"
            );
        }
        Some(self.delay)
    }
}

/// The connection slots of one listener.
#[derive(Clone)]
pub(super) struct Slots(Arc<Mutex<Admission>>);

struct Admission {
    listener: &'static str,
    /// The flag that sets `limit`, for the log line of a refused connection.
    flag: &'static str,
    limit: usize,
    open: usize,
    /// Connections that had made no request when they were admitted, oldest first; those that
    /// have made one since, or closed, are skipped (and pruned now and then).
    unused: VecDeque<Weak<Activity>>,
    refused_log: RateLimit,
}

impl Slots {
    pub(super) fn new(listener: &'static str, flag: &'static str, limit: usize) -> Slots {
        Slots(Arc::new(Mutex::new(Admission {
            listener,
            flag,
            limit: limit.max(1),
            open: 0,
            unused: VecDeque::new(),
            refused_log: RateLimit::new(1),
        })))
    }

    /// A slot for a new connection: when every slot is taken, the oldest connection that has
    /// made no request is closed to make room; when all have made requests, `None` (the new
    /// connection is closed).
    pub(super) fn admit(&self) -> Option<Slot> {
        let mut admission = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if admission.open >= admission.limit && !admission.evict_one() {
            let (listener, flag, open) = (admission.listener, admission.flag, admission.open);
            if let Some(suppressed) = admission.refused_log.allow() {
                tracing::warn!(
                    listener,
                    open,
                    refused_not_logged = suppressed,
                    "refused a connection: every slot is held by a connection that made requests (raise {flag})"
                );
            }
            return None;
        }
        admission.open += 1;
        let activity = Arc::new(Activity::new());
        admission.unused.push_back(Arc::downgrade(&activity));
        // Entries of connections gone or used are skipped when evicting; prune them before
        // they outnumber the slots, so the queue stays as long as the limit allows.
        if admission.unused.len() > 2 * admission.limit {
            admission.unused.retain(|weak| {
                weak.upgrade()
                    .is_some_and(|a| !a.used.load(Ordering::Relaxed))
            });
        }
        Some(Slot {
            activity,
            slots: Arc::clone(&self.0),
        })
    }
}

impl Admission {
    /// Closes the oldest connection that has made no request; whether there was one. Its slot
    /// is given back when it is dropped, a moment later: until then the listener holds one
    /// connection more than its limit.
    fn evict_one(&mut self) -> bool {
        while let Some(weak) = self.unused.pop_front() {
            let Some(activity) = weak.upgrade() else {
                continue;
            };
            if activity.used.load(Ordering::Relaxed)
                || activity.evicted.swap(true, Ordering::AcqRel)
            {
                continue;
            }
            if let Some(reader) = activity.lock_reader().take() {
                reader.wake();
            }
            return true;
        }
        false
    }
}

/// A connection's slot, given back when the connection is dropped.
pub(super) struct Slot {
    activity: Arc<Activity>,
    slots: Arc<Mutex<Admission>>,
}

impl Slot {
    /// What the connection does, for its requests to record.
    pub(super) fn info(&self) -> ConnectionInfo {
        ConnectionInfo(Arc::clone(&self.activity))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut admission = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        admission.open = admission.open.saturating_sub(1);
    }
}

/// What a connection did: whether it made a request, how many are in flight, when the last
/// ended; and whether it was closed to make room.
struct Activity {
    evicted: AtomicBool,
    used: AtomicBool,
    in_flight: AtomicUsize,
    /// When the last request ended (or the connection was accepted), as [`now_ms`].
    last_ms: AtomicU64,
    /// The task reading the connection while it has made no request: woken when it is evicted.
    reader: Mutex<Option<Waker>>,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            evicted: AtomicBool::new(false),
            used: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(now_ms()),
            reader: Mutex::new(None),
        }
    }

    fn lock_reader(&self) -> std::sync::MutexGuard<'_, Option<Waker>> {
        self.reader.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Milliseconds since the first time anything asked, the clock of [`Activity::last_ms`].
fn now_ms() -> u64 {
    u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A connection's record of its requests: what tonic puts in each request's extensions as the
/// connection's information ([`Connected`]), for [`ConnectionInfo::request`] to update.
#[derive(Clone)]
pub(super) struct ConnectionInfo(Arc<Activity>);

impl ConnectionInfo {
    /// A request began; it ends when the guard is dropped.
    pub(super) fn request(&self) -> RequestGuard {
        self.0.used.store(true, Ordering::Relaxed);
        self.0.in_flight.fetch_add(1, Ordering::AcqRel);
        RequestGuard(Arc::clone(&self.0))
    }

    /// The connection made a request (for a listener that does not count requests in flight).
    pub(super) fn mark_used(&self) {
        self.0.used.store(true, Ordering::Relaxed);
    }
}

/// A request in flight on a connection.
pub(super) struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        // The time first, so that a reader that sees no request in flight sees when it ended.
        self.0.last_ms.store(now_ms(), Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection with its slot: reads fail once it is evicted, or once it has had no request
/// in flight for the idle limit, and the server then closes it.
pub(super) struct Tracked<IO> {
    io: IO,
    slot: Slot,
    idle: Option<Idle>,
}

/// The idle limit of a connection and its timer.
struct Idle {
    limit: Duration,
    timer: Pin<Box<Sleep>>,
    /// The `last_ms` the timer is set from.
    armed_from: u64,
}

impl<IO> Tracked<IO> {
    /// `idle`: close the connection after this long without a request in flight; `None` where
    /// the protocol bounds idle connections itself (hyper's HTTP/1 header timeout).
    pub(super) fn new(io: IO, slot: Slot, idle: Option<Duration>) -> Tracked<IO> {
        let idle = idle.map(|limit| {
            let armed_from = slot.activity.last_ms.load(Ordering::Acquire);
            Idle {
                limit,
                timer: Box::pin(tokio::time::sleep_until(deadline(armed_from, limit))),
                armed_from,
            }
        });
        Tracked { io, slot, idle }
    }

    /// Whether the connection is done: evicted, or idle past its limit. Polled when a read
    /// would wait, so that the timer wakes the connection's task.
    fn poll_closing(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        let activity = &self.slot.activity;
        if !activity.used.load(Ordering::Relaxed) {
            let mut reader = activity.lock_reader();
            if !reader.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *reader = Some(cx.waker().clone());
            }
        }
        if activity.evicted.load(Ordering::Acquire) {
            return Some(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room for a new connection: it made no request",
            ));
        }
        let idle = self.idle.as_mut()?;
        if activity.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let last = activity.last_ms.load(Ordering::Acquire);
        if last != idle.armed_from {
            idle.armed_from = last;
            idle.timer.as_mut().reset(deadline(last, idle.limit));
        }
        idle.timer.as_mut().poll(cx).is_ready().then(|| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                "no request within the connection idle limit",
            )
        })
    }
}

fn deadline(last_ms: u64, limit: Duration) -> tokio::time::Instant {
    tokio::time::Instant::from_std(epoch() + Duration::from_millis(last_ms) + limit)
}

impl<IO: AsyncRead + Unpin> AsyncRead for Tracked<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.slot.activity.evicted.load(Ordering::Acquire) {
            return Poll::Ready(Err(io::ErrorKind::ConnectionAborted.into()));
        }
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Pending => match this.poll_closing(cx) {
                Some(error) => Poll::Ready(Err(error)),
                None => Poll::Pending,
            },
            done => done,
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Tracked<IO> {
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

impl<IO> Connected for Tracked<IO> {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        self.slot.info()
    }
}

/// Records each request on its connection ([`ConnectionInfo::request`]) until its response's
/// body ends: a connection is idle only when no call, unary or streaming, is in flight.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TrackRequestsLayer;

impl<S> tower::Layer<S> for TrackRequestsLayer {
    type Service = TrackRequests<S>;

    fn layer(&self, inner: S) -> TrackRequests<S> {
        TrackRequests(inner)
    }
}

/// The service of [`TrackRequestsLayer`].
#[derive(Debug, Clone)]
pub(super) struct TrackRequests<S>(S);

type Response = http::Response<Body>;

impl<S, B> tower::Service<http::Request<B>> for TrackRequests<S>
where
    S: tower::Service<http::Request<B>, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let guard = request
            .extensions()
            .get::<ConnectionInfo>()
            .map(ConnectionInfo::request);
        let response = self.0.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(match guard {
                Some(guard) => response.map(|body| {
                    Body::new(Guarded {
                        body,
                        _guard: guard,
                    })
                }),
                None => response,
            })
        })
    }
}

/// A response body that holds its request's guard until it is dropped.
struct Guarded {
    body: Body,
    _guard: RequestGuard,
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::test_runtime as runtime;
    use tokio::io::AsyncReadExt;

    #[test]
    fn accept_errors_wait_5_ms_doubling_to_1_s_and_a_lost_peer_none() {
        let mut backoff = AcceptBackoff::new("test");
        let emfile = io::Error::from_raw_os_error(24);
        let waits: Vec<u128> = (0..10)
            .map(|_| backoff.failed(&emfile).unwrap().as_millis())
            .collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.accepted();
        assert_eq!(backoff.failed(&emfile), Some(ACCEPT_BACKOFF_MIN));
        let reset = io::Error::from(io::ErrorKind::ConnectionAborted);
        assert_eq!(backoff.failed(&reset), None);
    }

    #[test]
    fn a_full_listener_evicts_the_oldest_unused_connection_then_refuses() {
        let slots = Slots::new("test", "--test", 2);
        let first = slots.admit().unwrap();
        let second = slots.admit().unwrap();
        let _guard = second.info().request();
        let third = slots.admit().expect("the first, unused, made room");
        assert!(first.activity.evicted.load(Ordering::Acquire));
        assert!(!second.activity.evicted.load(Ordering::Acquire));
        // The second made a request, the third none: the third goes for a fourth...
        let fourth = slots.admit().expect("the third made room");
        assert!(third.activity.evicted.load(Ordering::Acquire));
        fourth.info().mark_used();
        // ...and with every connection used, a fifth is refused.
        drop((first, third));
        assert!(slots.admit().is_none());
        drop(fourth);
        assert!(slots.admit().is_some());
    }

    #[test]
    fn an_evicted_connection_s_read_fails_and_an_idle_one_times_out() {
        runtime().block_on(async {
            let slots = Slots::new("test", "--test", 1);
            let (_peer, io) = tokio::io::duplex(64);
            let mut evicted = Tracked::new(io, slots.admit().unwrap(), None);
            let read = tokio::spawn(async move { evicted.read(&mut [0; 8]).await });
            tokio::task::yield_now().await;
            let _newcomer = slots.admit().unwrap();
            let error = read.await.unwrap().unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::ConnectionAborted);

            let (_peer, io) = tokio::io::duplex(64);
            let idle = Slots::new("test", "--test", 1);
            let mut tracked =
                Tracked::new(io, idle.admit().unwrap(), Some(Duration::from_millis(50)));
            let error = tracked.read(&mut [0; 8]).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        });
    }

    #[test]
    fn a_request_in_flight_keeps_a_connection_past_its_idle_limit() {
        runtime().block_on(async {
            let slots = Slots::new("test", "--test", 1);
            let (_peer, io) = tokio::io::duplex(64);
            let limit = Duration::from_millis(50);
            let mut tracked = Tracked::new(io, slots.admit().unwrap(), Some(limit));
            let guard = tracked.slot.info().request();
            let waited = tokio::time::timeout(limit * 4, tracked.read(&mut [0; 8])).await;
            assert!(waited.is_err(), "still open while the request runs");
            drop(guard);
            let error = tracked.read(&mut [0; 8]).await.unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        });
    }
}
