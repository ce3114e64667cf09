//! HTTP/2 over a plain port (h2c) by prior knowledge: a client that knows the server speaks HTTP/2 opens the
//! connection with HTTP/2's preface (RFC 9113 §3.3), and anything else is HTTP/1.1. The upgrade dance of
//! RFC 7540 (`Upgrade: h2c`) is gone from RFC 9113 and is not offered. Over TLS, ALPN decides.

use std::io;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use super::connection::{Protocol, Speaks};
use crate::service::shared::Shared;

/// What an HTTP/2 client sends first.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The protocol a new plain connection speaks, told from its first bytes without taking them from the socket
/// (`MSG_PEEK`), so hyper reads them as if nothing had looked. An HTTP/1.1 request differs from the preface at its
/// first byte: it costs one peek, once per connection. `None`: the client sent nothing for `within`, or left.
async fn sniff<P: Peeks>(stream: &P, within: Duration) -> Option<Protocol> {
    let sniffing = async {
        let mut buf = [0; PREFACE.len()];
        let mut wait = Duration::from_millis(1);
        loop {
            let n = std::future::poll_fn(|cx| stream.poll_peek(cx, &mut buf)).await.ok()?;
            if n == 0 {
                return None;
            }
            if buf[..n] != PREFACE[..n] {
                return Some(Protocol::Http1);
            }
            if n == PREFACE.len() {
                return Some(Protocol::Http2);
            }
            // Part of the preface so far: a peek would return the same bytes at once, so wait for the rest, a
            // little longer each time (real clients send it in one packet; one that trickles it, or stops after
            // `P`, costs a wake-up a quarter second at most, not a busy loop).
            crate::rt::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(250));
        }
    };
    crate::rt::timeout(within, sniffing).await.ok().flatten()
}

/// A plain socket whose first bytes can be looked at without taking them.
pub(super) trait Peeks {
    fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
}

impl Peeks for TcpStream {
    fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        TcpStream::poll_peek(self, cx, &mut ReadBuf::new(buf))
    }
}

/// Whether a plain socket speaks HTTP/2 (by the preface) or HTTP/1.1; the `Speaks` of both engines' sockets.
pub(super) async fn plain_protocol<P: Peeks>(stream: &P, shared: &Shared) -> Option<Protocol> {
    if shared.config.http2.enabled {
        sniff(stream, shared.config.idle_timeout).await
    } else {
        Some(Protocol::Http1)
    }
}

/// A plain socket: HTTP/2 when it opens with the preface and `http2` is on; a client that sends nothing within
/// the idle timeout is closed, as an idle HTTP/1.1 connection would be.
impl Speaks for TcpStream {
    async fn protocol(&self, shared: &Shared) -> Option<Protocol> {
        plain_protocol(self, shared).await
    }
}

/// TLS: what ALPN settled on (`h2` is offered only with `http2` on); a client that offered nothing speaks
/// HTTP/1.1.
impl<S: AsyncRead + AsyncWrite + Unpin + Sync> Speaks for TlsStream<S> {
    async fn protocol(&self, _: &Shared) -> Option<Protocol> {
        Some(if self.get_ref().1.alpn_protocol() == Some(b"h2") { Protocol::Http2 } else { Protocol::Http1 })
    }
}

/// In memory (`app.request`): HTTP/1.1.
impl Speaks for DuplexStream {
    async fn protocol(&self, _: &Shared) -> Option<Protocol> {
        Some(Protocol::Http1)
    }
}
