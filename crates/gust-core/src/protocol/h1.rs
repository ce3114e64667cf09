//! HTTP/1.1 on one connection: hyper's http1 state machine with upgrades (a WebSocket handshake hands the
//! connection over), strict framing (the vendored hyper's), and half-closing clients still answered.

use std::pin::Pin;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use super::police::Graceful;
use crate::service::config::Config;
use crate::service::conn_service::ConnService;

/// `io` as an HTTP/1.1 connection for hyper to serve (the caller pins it and drives it with
/// [`police`](super::police::police), header timeout on); it ends when the client closes, or hands over for an
/// upgrade (then the connection's state holds what it becomes). Built here, awaited by the caller, so that one
/// future (the connection's task) holds it: an idle keep-alive costs little more than hyper's state machine.
pub(crate) fn connection<I: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    io: I,
    service: ConnService,
    config: &Config,
) -> http1::UpgradeableConnection<TokioIo<I>, ConnService> {
    let mut builder = http1::Builder::new();
    // hyper's own header timer restarts while a keep-alive connection waits for its next request, which would
    // make it an idle timeout too; both are policed instead, each with its own setting.
    builder.max_buf_size(config.max_header_size).header_read_timeout(None).keep_alive(true);
    // A client may send its request and shut down its write side (`nc -N`, some proxies) while it waits for the
    // answer: that read EOF must not drop the request. A client that is really gone is noticed when the answer
    // is written, and the handler timeout bounds the wait.
    builder.half_close(true);
    // Bodies' bytes go to the socket as they are, never copied into hyper's buffer: a file's marked frames
    // (`bodies::files::sendfile`) depend on it. hyper would choose this for a TCP socket anyway.
    if service.state().sends_files() {
        builder.writev(true);
    }
    builder.serve_connection(TokioIo::new(io), service).with_upgrades()
}

impl<I: AsyncRead + AsyncWrite + Unpin + Send + 'static> Graceful
    for http1::UpgradeableConnection<TokioIo<I>, ConnService>
{
    fn graceful(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}
