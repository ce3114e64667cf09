//! Accepting connections and policing them: header-read and idle timeouts, graceful and forced shutdown.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::service::ConnService;
use super::{Phase, Shared};
use crate::clock;

/// The accept loop; returns once every connection is closed after a stop.
pub(super) async fn serve(listener: TcpListener, shared: Arc<Shared>, mut phase: watch::Receiver<Phase>) {
    let batcher = shared.clone();
    tokio::spawn(async move { batcher.batcher.run().await });
    let completions = shared.completions.clone();
    let handler_timeout = shared.config.handler_timeout;
    tokio::spawn(async move { completions.deliver(handler_timeout).await });

    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    conns.spawn(connection(stream, shared.clone(), phase.clone()));
                }
                // Out of file descriptors and the like: back off instead of spinning, keep serving the others.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            changed = phase.changed() => {
                if changed.is_err() || *phase.borrow() != Phase::Serving {
                    break;
                }
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);

    loop {
        let closing = *phase.borrow() == Phase::Closing;
        if closing {
            conns.abort_all();
            while conns.join_next().await.is_some() {}
            return;
        }
        tokio::select! {
            next = conns.join_next() => if next.is_none() { return },
            changed = phase.changed() => if changed.is_err() {
                conns.abort_all();
                while conns.join_next().await.is_some() {}
                return;
            },
        }
    }
}

/// Serves one connection until it closes, is timed out, or the server stops.
///
/// Hot path: every wake of this task for connection progress costs one poll of hyper's connection, an atomic
/// load (has the phase changed?) and a timer waker check. The clock is read and the timer re-armed only when the
/// timer fires, at most once per `min(idle, header)` timeout, never per request.
async fn connection(stream: TcpStream, shared: Arc<Shared>, phase: watch::Receiver<Phase>) {
    let state = Arc::new(ConnState::new());
    let header_timeout = shared.config.header_timeout;
    let idle_timeout = shared.config.idle_timeout;
    let io = TokioIo::new(Tracked { inner: stream, state: state.clone() });
    let service = ConnService::new(shared.clone(), state.clone());
    let mut builder = http1::Builder::new();
    // hyper's own header timer restarts while a keep-alive connection waits for its next request, which would
    // make it an idle timeout too; both are policed below instead, each with its own setting.
    builder.max_buf_size(shared.config.max_header_size).header_read_timeout(None).keep_alive(true);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);

    let mut draining = false;
    if *phase.borrow() != Phase::Serving {
        conn.as_mut().graceful_shutdown();
        draining = true;
    }
    // Activity only ever pushes deadlines later, so the timer need not follow it: when it fires, the deadline is
    // recomputed from the connection's state. It never sleeps longer than the shorter timeout, so a switch from
    // idle to reading a head (which nothing signals) is still caught on time.
    let period = idle_timeout.min(header_timeout);
    let sleep = tokio::time::sleep(period);
    tokio::pin!(sleep);
    // Polling `changed()` takes the phase channel's waiter-list lock every time. It is polled once to register
    // its waker; after that, a clone of the receiver tells with one atomic load whether polling again is worth it.
    let mut watcher = phase.clone();
    let mut phase_change = Box::pin(next_phase(phase));
    let mut registered = false;
    loop {
        let event = std::future::poll_fn(|cx| {
            if conn.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Closed);
            }
            if !registered || !matches!(watcher.has_changed(), Ok(false)) {
                registered = true;
                if let Poll::Ready(next) = phase_change.as_mut().poll(cx) {
                    return Poll::Ready(Event::Phase(next));
                }
            }
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Tick);
            }
            Poll::Pending
        })
        .await;
        match event {
            Event::Closed => return,
            Event::Phase((rx, next)) => {
                match next {
                    Some(Phase::Serving) => {}
                    Some(Phase::Draining) => {
                        if !draining {
                            conn.as_mut().graceful_shutdown();
                            draining = true;
                        }
                    }
                    Some(Phase::Closing) | None => return,
                }
                watcher.borrow_and_update();
                phase_change = Box::pin(next_phase(rx));
                registered = false;
            }
            Event::Tick => {
                // Timeouts are measured on the coarse clock the connection is stamped with (see `clock`).
                let now = clock::now_ms();
                let (activity, since) = state.get();
                let deadline = match activity {
                    IDLE => since.saturating_add(ms(idle_timeout)),
                    READING_HEAD => since.saturating_add(ms(header_timeout)),
                    _ => now + ms(period),
                };
                if now >= deadline {
                    match activity {
                        // Closing an idle keep-alive connection is what a graceful shutdown does to it at once.
                        IDLE if !draining => {
                            conn.as_mut().graceful_shutdown();
                            draining = true;
                        }
                        IDLE | READING_HEAD => return,
                        _ => {}
                    }
                }
                let wait = Duration::from_millis(deadline.saturating_sub(now)).min(period);
                sleep.as_mut().reset((Instant::now() + wait).into());
            }
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What woke a connection's task with something to do.
enum Event {
    Closed,
    Phase((watch::Receiver<Phase>, Option<Phase>)),
    Tick,
}

/// The next phase the server enters (`None` once it is gone), handing the receiver back for the one after.
async fn next_phase(mut rx: watch::Receiver<Phase>) -> (watch::Receiver<Phase>, Option<Phase>) {
    let next = match rx.changed().await {
        Ok(()) => Some(*rx.borrow_and_update()),
        Err(_) => None,
    };
    (rx, next)
}

const IDLE: u8 = 0;
const READING_HEAD: u8 = 1;
const BUSY: u8 = 2;

/// What a connection is doing and since when; written by the I/O wrapper and the service, read by the timers.
/// Cost per request: four relaxed stores and three coarse clock reads (head starts, request done, response
/// written).
pub(super) struct ConnState {
    activity: AtomicU8,
    /// [`clock::now_ms`] at the last change.
    since_ms: AtomicU64,
}

impl ConnState {
    fn new() -> Self {
        Self { activity: AtomicU8::new(IDLE), since_ms: AtomicU64::new(clock::now_ms()) }
    }

    fn get(&self) -> (u8, u64) {
        (self.activity.load(Ordering::Relaxed), self.since_ms.load(Ordering::Relaxed))
    }

    fn set(&self, activity: u8) {
        self.touch();
        self.activity.store(activity, Ordering::Relaxed);
    }

    /// Restarts the current timer: the connection made progress.
    fn touch(&self) {
        self.since_ms.store(clock::now_ms(), Ordering::Relaxed);
    }

    /// Marks a request as being served until the returned guard is dropped. No clock read: nothing times a busy
    /// connection (the handler and body timeouts do that).
    pub(super) fn busy(self: &Arc<Self>) -> BusyGuard {
        self.activity.store(BUSY, Ordering::Relaxed);
        BusyGuard(self.clone())
    }
}

/// Returns the connection to idle when its request has been answered (or abandoned).
pub(super) struct BusyGuard(Arc<ConnState>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.set(IDLE);
    }
}

/// The socket, noting when the first bytes of a new request arrive (so the header timeout can start) and when
/// response bytes leave (a response still being written, to a slow reader say, is progress, not idleness).
struct Tracked {
    inner: TcpStream,
    state: Arc<ConnState>,
}

impl AsyncRead for Tracked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before && self.state.activity.load(Ordering::Relaxed) == IDLE {
            self.state.set(READING_HEAD);
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.state.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.state.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
