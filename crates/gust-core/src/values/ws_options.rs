//! A WebSocket route's options, with Bun's defaults: plain data the route table holds and the `ws` room obeys.

use std::time::Duration;

/// How the sockets of one route behave. Checked by the package, which names a bad option; the engine only clamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsOptions {
    /// The largest message, all its fragments together; a larger one closes the socket with 1009. For a
    /// compressed message, its size once decompressed.
    pub max_payload: usize,
    /// Closed when nothing arrives for this long (a pong counts); `None`: never.
    pub idle_timeout: Option<Duration>,
    /// Bytes queued for a slow client above which sends and publishes are dropped (`send` returns 0).
    pub backpressure_limit: usize,
    /// Close a socket whose queue passes `backpressure_limit`, rather than drop what it is sent.
    pub close_on_backpressure_limit: bool,
    /// Ping a quiet client half-way through `idle_timeout`, so a live one answers and stays open.
    pub send_pings: bool,
    /// permessage-deflate (RFC 7692), agreed with clients that offer it; `None`: offers are ignored.
    pub deflate: Option<DeflateOptions>,
}

/// Bun's defaults (16 MiB messages and queue, 120 s idle, pings on, no compression).
impl Default for WsOptions {
    fn default() -> Self {
        Self {
            max_payload: 16 * 1024 * 1024,
            idle_timeout: Some(Duration::from_secs(120)),
            backpressure_limit: 16 * 1024 * 1024,
            close_on_backpressure_limit: false,
            send_pings: true,
            deflate: None,
        }
    }
}

/// How a route compresses (RFC 7692) once a client has agreed to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateOptions {
    /// What the server's messages are compressed with.
    pub compress: Compressor,
    /// Let clients keep their compression context from message to message, which costs a decompressor per
    /// socket (46 KiB: its 32 KiB window and state); otherwise the server asks for `client_no_context_takeover` and one
    /// decompressor per I/O thread serves every socket.
    pub dedicated_decompressor: bool,
    /// Messages shorter than this are sent plain unless a send asks for compression (deflate's headers and the
    /// client's work outweigh what so few bytes save).
    pub threshold: usize,
}

/// Where the state that compresses a socket's messages lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compressor {
    /// The server sends plain frames (the client still may compress).
    Disabled,
    /// One compressor per thread that sends, reset for every message (`server_no_context_takeover`): no memory per
    /// socket, and a published message is compressed once for all its subscribers.
    Shared,
    /// A compressor per socket that keeps its window between messages (better ratios on similar messages, about
    /// 370 KiB per socket once it has compressed a message); a publish is compressed for each subscriber.
    Dedicated,
}
