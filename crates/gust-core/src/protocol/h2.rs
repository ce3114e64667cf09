//! HTTP/2 on one connection: hyper's http2 (the `h2` crate), chosen by ALPN over TLS or by the client preface on a
//! plain port (h2c, prior knowledge). Each stream is a request to the same service as HTTP/1.1's; streams run
//! concurrently, each a task of the connection's I/O thread.
//!
//! Limits, from the server's `Http2` settings (advertised in SETTINGS where the protocol has one): streams open at
//! once, flow-control windows (what a stream and a whole connection may make the server hold of request bodies not
//! yet read), header lists (`max_header_list_size`, else the server's `max_header_size`), keep-alive pings. The
//! h2 crate refuses what the RFC says a server must (malformed frames, a CONTINUATION flood, too many resets in a
//! row) with the RFC's error codes.
//!
//! Under attack (`tests/http2_abuse.rs`, each a bounded run with a memory bound and a good client answered):
//! rapid reset (CVE-2023-44487) gets GOAWAY `ENHANCE_YOUR_CALM` after about 1.5k resets and none of the reset
//! streams reaches a handler; a CONTINUATION flood, full or empty frames, ends the connection; a header list
//! past the limit gets 431 on its stream (four times past it, GOAWAY); SETTINGS and PING floods from a client
//! that never reads its ACKs stay bounded; a client that opens streams and never reads fills at most hyper's
//! send buffer per stream (400 KiB) until the send timeout closes it; one that grants no window gets no body
//! bytes and holds at most a chunk per stream until the send timeout closes it too (its socket never fills: the
//! bytes its streams are owed, [`owed`](super::owed), are what show the wait).

use std::pin::Pin;

use hyper::server::conn::http2;
use hyper_util::rt::TokioIo;

use crate::rt::{HyperExecutor, HyperTimer};
use tokio::io::{AsyncRead, AsyncWrite};

use super::owed::OwedService;
use super::police::Graceful;
use crate::service::config::Config;
use crate::service::conn_service::ConnService;

/// `io` as an HTTP/2 connection for hyper to serve (the caller pins it and drives it with
/// [`police`](super::police::police), idle timeout only: no stream open); it ends when the client closes, or
/// after a GOAWAY once its open streams are done.
pub(crate) fn connection<I: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    io: I,
    service: ConnService,
    config: &Config,
) -> http2::Connection<TokioIo<I>, OwedService, HyperExecutor> {
    let settings = &config.http2;
    let mut builder = http2::Builder::new(HyperExecutor);
    builder
        .timer(HyperTimer)
        .max_concurrent_streams(settings.max_concurrent_streams)
        .initial_stream_window_size(settings.stream_window)
        .initial_connection_window_size(settings.connection_window)
        .keep_alive_interval(settings.keep_alive_interval)
        .keep_alive_timeout(settings.keep_alive_timeout)
        .max_header_list_size(settings.header_list_size(config.max_header_size))
        // WebSockets over HTTP/2 (RFC 8441): browsers open a socket as a stream of a connection they already
        // hold, instead of a connection of its own, once a server advertises this.
        .enable_connect_protocol();
    builder.serve_connection(TokioIo::new(io), OwedService::new(service))
}

impl<I: AsyncRead + AsyncWrite + Unpin + Send + 'static> Graceful
    for http2::Connection<TokioIo<I>, OwedService, HyperExecutor>
{
    fn graceful(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}
