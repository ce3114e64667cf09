//! A WebSocket route's options, with Bun's defaults: plain data the route table holds and the `ws` room obeys.

use std::time::Duration;

/// How the sockets of one route behave. Checked by the package, which names a bad option; the engine only clamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsOptions {
    /// The largest message, all its fragments together; a larger one closes the socket with 1009.
    pub max_payload: usize,
    /// Closed when nothing arrives for this long (a pong counts); `None`: never.
    pub idle_timeout: Option<Duration>,
    /// Bytes queued for a slow client above which sends and publishes are dropped (`send` returns 0).
    pub backpressure_limit: usize,
    /// Close a socket whose queue passes `backpressure_limit`, rather than drop what it is sent.
    pub close_on_backpressure_limit: bool,
    /// Ping a quiet client half-way through `idle_timeout`, so a live one answers and stays open.
    pub send_pings: bool,
}

/// Bun's defaults (16 MiB messages and queue, 120 s idle, pings on).
impl Default for WsOptions {
    fn default() -> Self {
        Self {
            max_payload: 16 * 1024 * 1024,
            idle_timeout: Some(Duration::from_secs(120)),
            backpressure_limit: 16 * 1024 * 1024,
            close_on_backpressure_limit: false,
            send_pings: true,
        }
    }
}
