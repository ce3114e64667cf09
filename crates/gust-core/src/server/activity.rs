//! What a connection is doing and since when: the state its timers police. Written by the socket wrapper and
//! the service, read by the connection task; shared by both without a lock.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::clock;

pub(super) const IDLE: u8 = 0;
pub(super) const READING_HEAD: u8 = 1;
const BUSY: u8 = 2;

/// What a connection is doing and since when; written by the I/O wrapper and the service, read by the timers.
/// Cost per request: four relaxed stores and three coarse clock reads (head starts, request done, response
/// written).
pub(super) struct ConnState {
    activity: AtomicU8,
    /// [`clock::now_ms`] at the last change.
    since_ms: AtomicU64,
    /// The client stopped sending (it closed the connection, or shut down its sending side).
    peer_done: AtomicBool,
    /// A WebSocket handshake the handler accepted: once hyper has written the 101 and let go of the
    /// connection, the connection's task runs the socket.
    pub(super) upgrade: std::sync::Mutex<Option<crate::ws::task::Accepted>>,
}

impl ConnState {
    pub(super) fn new() -> Self {
        Self {
            activity: AtomicU8::new(IDLE),
            since_ms: AtomicU64::new(clock::now_ms()),
            peer_done: AtomicBool::new(false),
            upgrade: std::sync::Mutex::new(None),
        }
    }

    /// Whether the client has stopped sending: read as gone by a request still waiting for its handler (whose
    /// answer is still sent, should a half-closing client be waiting for it).
    pub(super) fn peer_done(&self) -> bool {
        self.peer_done.load(Ordering::Relaxed)
    }

    pub(super) fn get(&self) -> (u8, u64) {
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
pub(super) struct Tracked<S> {
    pub(super) inner: S,
    pub(super) state: Arc<ConnState>,
}

impl<S> Tracked<S> {
    /// The stream itself, no longer policed (a WebSocket's, once hyper has let go of it).
    pub(super) fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            if self.state.activity.load(Ordering::Relaxed) == IDLE {
                self.state.set(READING_HEAD);
            }
        } else if matches!(polled, Poll::Ready(Ok(()))) && buf.remaining() > 0 {
            // A read with room that came back with nothing: end of stream.
            self.state.peer_done.store(true, Ordering::Relaxed);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tracked<S> {
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
