//! The socket as the connection's timers see it: a wrapper that notes in the connection's state
//! ([`ConnState`]) when the first bytes of a request arrive, when response bytes leave, and when the socket is
//! full (the client reads nothing). On a socket that sends files itself, it is also where a file's part
//! leaves by `sendfile` (`bodies::files::sendfile`). Cost per read or write: one relaxed load or store, and a
//! coarse clock read when the state changes; on such a socket, an address compare per slice written.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::file_out::FileOut;
use crate::bodies::files::sendfile::{is_marked, FileSink};
use crate::service::conn_state::ConnState;

/// The socket, noting when the first bytes of a new request arrive (so the header timeout can start) and when
/// response bytes leave (a response still being written, to a slow reader say, is progress, not idleness).
pub(super) struct Tracked<S> {
    pub(super) inner: S,
    pub(super) state: Arc<ConnState>,
    /// Bytes of the next request read before hyper was given the socket back (a parked connection's task
    /// reads the first byte while it waits, see `connection`): hyper reads them first.
    pub(super) unread: Option<Bytes>,
}

impl<S> Tracked<S> {
    pub(super) fn new(inner: S, state: Arc<ConnState>) -> Self {
        Self { inner, state, unread: None }
    }

    /// The stream itself, no longer policed (a WebSocket's, once hyper has let go of it).
    pub(super) fn into_inner(self) -> S {
        self.inner
    }

    /// Notes what a write did: bytes left (progress), or the socket was full (the send timeout starts).
    #[inline]
    fn wrote(&self, polled: &Poll<io::Result<usize>>) {
        match polled {
            Poll::Ready(Ok(n)) if *n > 0 => self.state.wrote(),
            Poll::Pending => self.state.write_blocked(),
            _ => {}
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if let Some(mut unread) = self.unread.take() {
            let n = unread.len().min(buf.remaining());
            buf.put_slice(&unread.split_to(n));
            self.unread = Some(unread).filter(|rest| !rest.is_empty());
            self.state.bytes_arrived();
            return Poll::Ready(Ok(()));
        }
        // Parking: hyper, idle, sees the end of the stream and lets go of the connection (nothing is read, so
        // whatever the client sends meanwhile waits in the socket for the task that takes it back).
        if self.state.parking() {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.state.bytes_arrived();
        } else if matches!(polled, Poll::Ready(Ok(()))) && buf.remaining() > 0 {
            // A read with room that came back with nothing: end of stream.
            self.state.peer_finished();
        }
        polled
    }
}

impl<S: AsyncWrite + FileOut + Unpin> AsyncWrite for Tracked<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&polled);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // hyper's write queue, in order: what comes before a file's marked part is written as usual, the part
        // itself is sent from the file.
        if S::SENDS_FILES && self.state.sends_files() {
            if let Some(at) = bufs.iter().position(|b| is_marked(b)) {
                if at == 0 {
                    let this = &*self;
                    let polled = this
                        .state
                        .regions()
                        .send(bufs[0].len(), |file, offset, len| this.inner.poll_send_file(cx, file, offset, len));
                    self.wrote(&polled);
                    return polled;
                }
                bufs = &bufs[..at];
            }
        }
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // hyper letting go of a parked connection: the socket stays open for the task that takes it back.
        if self.state.parking() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
