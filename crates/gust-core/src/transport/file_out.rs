//! Sockets that send parts of files themselves (`sendfile(2)`): a plain TCP socket on Linux. The file side, and
//! how such a part travels beside hyper, are `bodies::files::sendfile`'s.

use std::fs::File;
use std::io;
use std::task::{Context, Poll};

use tokio::io::DuplexStream;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// A socket, as the connection's writer sees it: whether it can send a file's bytes without reading them.
pub(super) trait FileOut {
    /// A constant, so that sockets that cannot pay nothing to be asked.
    const SENDS_FILES: bool = false;

    /// Sends at most `len` bytes of `file` from `offset`; `Ok(0)` when the file ends before (it shrank).
    fn poll_send_file(
        &self,
        _cx: &mut Context<'_>,
        _file: &File,
        _offset: u64,
        _len: usize,
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Err(io::ErrorKind::Unsupported.into()))
    }
}

#[cfg(target_os = "linux")]
impl FileOut for TcpStream {
    const SENDS_FILES: bool = true;

    /// One `sendfile` when the socket has room; the kernel copies from the page cache to the socket buffer.
    fn poll_send_file(&self, cx: &mut Context<'_>, file: &File, offset: u64, len: usize) -> Poll<io::Result<usize>> {
        loop {
            std::task::ready!(self.poll_write_ready(cx))?;
            let mut at = offset;
            match self.try_io(tokio::io::Interest::WRITABLE, || {
                rustix::fs::sendfile(self, file, Some(&mut at), len).map_err(io::Error::from)
            }) {
                // Readiness was stale: cleared by `try_io`, so the next poll waits for the socket.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                other => return Poll::Ready(other),
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl FileOut for TcpStream {}

/// Over TLS the bytes are encrypted in user space (kernel TLS would be needed to send files from the kernel).
impl<S> FileOut for TlsStream<S> {}

/// In memory (`app.request`).
impl FileOut for DuplexStream {}
