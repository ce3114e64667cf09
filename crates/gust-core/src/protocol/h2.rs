//! HTTP/2 on one connection: hyper's http2 (the `h2` crate), chosen by ALPN over TLS or by the client preface on a
//! plain port (h2c, prior knowledge). Each stream is a request to the same service as HTTP/1.1's; streams run
//! concurrently, each a task of the connection's I/O thread.
//!
//! Limits: at most [`MAX_CONCURRENT_STREAMS`] streams at once (RFC 9113 recommends no fewer than 100), header
//! lists up to the server's `max_header_size`, and h2's defaults otherwise (flow-control windows of 64 KiB per
//! stream and connection, growing as the client reads). The h2 crate refuses what the RFC says a server must
//! (malformed frames, a CONTINUATION flood, too many resets in a row) with the RFC's error codes.

use std::pin::Pin;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};

use super::police::Graceful;
use crate::service::config::Config;
use crate::service::conn_service::ConnService;

/// Streams one HTTP/2 connection may have open at once.
pub(crate) const MAX_CONCURRENT_STREAMS: u32 = 128;

/// `io` as an HTTP/2 connection for hyper to serve (the caller pins it and drives it with
/// [`police`](super::police::police), idle timeout only: no stream open); it ends when the client closes, or
/// after a GOAWAY once its open streams are done.
pub(crate) fn connection<I: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    io: I,
    service: ConnService,
    config: &Config,
) -> http2::Connection<TokioIo<I>, ConnService, TokioExecutor> {
    let mut builder = http2::Builder::new(TokioExecutor::new());
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .max_header_list_size(u32::try_from(config.max_header_size).unwrap_or(u32::MAX));
    builder.serve_connection(TokioIo::new(io), service)
}

impl<I: AsyncRead + AsyncWrite + Unpin + Send + 'static> Graceful
    for http2::Connection<TokioIo<I>, ConnService, TokioExecutor>
{
    fn graceful(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}
