//! WebSocket (RFC 6455), owned by the engine: the opening handshake ([`handshake`]), frames ([`frame`]: client
//! frames decoded with their payload limit, server frames encoded unmasked so a published message is framed
//! once for every subscriber), messages ([`message`]: fragments reassembled, UTF-8 checked as it arrives),
//! one task per socket on the I/O thread (`task`), each socket's send queue with Bun's backpressure rules
//! (`socket`), the topic table (`topics`), and [`WebSockets`], what the binding calls to send, close,
//! subscribe and publish.
//!
//! The upgrade runs through routing like any request: a route registered with [`WsOptions`] checks the
//! handshake in Rust (426 or 400 without JavaScript), hands the request to its handler (middleware may refuse
//! it), and becomes a socket when the handler answers with the `UPGRADE` flag.

pub mod frame;
pub mod handshake;
mod hub;
pub mod message;
mod options;
pub(crate) mod socket;
pub(crate) mod task;
mod topics;

pub use hub::{Payload, WebSockets};
pub use options::WsOptions;
pub use socket::SendStatus;

/// Marks a handler's answer that accepts a WebSocket handshake (the answer's `UPGRADE` flag): the engine
/// writes the 101 with the answer's headers, and the connection becomes a socket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AcceptUpgrade;
