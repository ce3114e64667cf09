//! The one-thread engine's sockets: `mio` sockets registered with the engine's poller ([`crate::rt::local::reactor`]),
//! read and written on the JavaScript thread when the poller says they may be ready. They speak tokio's I/O
//! traits, so hyper, rustls and every room above serve them as they serve tokio's sockets.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::connection::{Protocol, Speaks};
use super::file_out::FileOut;
use super::listener::Accept;
use super::preface::{plain_protocol, Peeks};
use crate::rt::local::reactor::{Registered, Registrations, READ, WRITE};
use crate::service::shared::Shared;

/// A listening socket of the one-thread engine.
pub(super) struct LocalListener(Registered<mio::net::TcpListener>);

impl LocalListener {
    pub(super) fn new(listener: std::net::TcpListener, registrations: &Arc<Registrations>) -> io::Result<Self> {
        Registered::new(mio::net::TcpListener::from_std(listener), registrations).map(Self)
    }
}

impl Accept for LocalListener {
    type Stream = LocalStream;

    fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(LocalStream, SocketAddr)>> {
        let (stream, peer) = std::task::ready!(self.0.poll_io(cx, READ, mio::net::TcpListener::accept))?;
        let _ = stream.set_nodelay(true);
        Poll::Ready(Registered::new(stream, self.0.registrations()).map(|s| (LocalStream(s), peer)))
    }
}

/// A connection of the one-thread engine.
pub(crate) struct LocalStream(Registered<mio::net::TcpStream>);

impl AsyncRead for LocalStream {
    /// Reads into the buffer's room as it is, uninitialised, as tokio's sockets do: hyper offers fresh room (8 KiB
    /// and more) on every read, and zeroing it first cost a `memset` of all of it per read.
    #[allow(unsafe_code)]
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let wanted = buf.remaining();
        // SAFETY: `read(2)` only writes into the slice, never reads it, and says how many bytes it wrote; exactly
        // those are marked initialised and filled, as `tokio::net::TcpStream::poll_read` does.
        let n = std::task::ready!(self.0.poll_io(cx, READ, |mut s| unsafe {
            let room = &mut *(std::ptr::from_mut(buf.unfilled_mut()) as *mut [u8]);
            s.read(room)
        }))?;
        // A short read emptied the socket (its readiness is edge-triggered): the next read waits for the next
        // edge rather than costing a `recv` that says EAGAIN, one syscall per request saved (tokio does the same).
        if n > 0 && n < wanted {
            self.0.clear(READ);
        }
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for LocalStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let n = std::task::ready!(self.0.poll_io(cx, WRITE, |mut s| s.write(buf)))?;
        self.short_write(n, buf.len());
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let n = std::task::ready!(self.0.poll_io(cx, WRITE, |mut s| s.write_vectored(bufs)))?;
        self.short_write(n, bufs.iter().map(|b| b.len()).sum());
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(match self.0.io().shutdown(std::net::Shutdown::Write) {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            other => other,
        })
    }
}

impl LocalStream {
    /// A write the socket took only part of filled its buffer: the next one waits for room.
    fn short_write(&self, n: usize, wanted: usize) {
        if n > 0 && n < wanted {
            self.0.clear(WRITE);
        }
    }
}

impl Peeks for LocalStream {
    fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.0.poll_io(cx, READ, |s| s.peek(buf))
    }
}

impl Speaks for LocalStream {
    async fn protocol(&self, shared: &Shared) -> Option<Protocol> {
        plain_protocol(self, shared).await
    }
}

#[cfg(target_os = "linux")]
impl FileOut for LocalStream {
    const SENDS_FILES: bool = true;

    /// One `sendfile` when the socket has room, as on the threaded engine.
    fn poll_send_file(
        &self,
        cx: &mut Context<'_>,
        file: &std::fs::File,
        offset: u64,
        len: usize,
    ) -> Poll<io::Result<usize>> {
        self.0.poll_io(cx, WRITE, |s| {
            let mut at = offset;
            rustix::fs::sendfile(s, file, Some(&mut at), len).map_err(io::Error::from)
        })
    }
}

#[cfg(not(target_os = "linux"))]
impl FileOut for LocalStream {}
