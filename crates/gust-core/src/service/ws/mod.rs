//! WebSocket (RFC 6455), owned by the engine: the opening handshake ([`handshake`]), frames ([`frame`]: client
//! frames decoded with their payload limit, server frames encoded unmasked so a published message is framed
//! once for every subscriber), messages ([`message`]: fragments reassembled, UTF-8 checked as it arrives; what
//! a violation closes the connection with in `violation`), one task per socket on the I/O thread (`task`), each
//! socket's send queue with Bun's backpressure rules (`socket`), the topic table (`topics`), and
//! [`WebSockets`], what the binding calls to send, close, subscribe and publish.
//!
//! permessage-deflate (RFC 7692), where a route enables it: offers negotiated in [`extension`], messages
//! compressed and inflated in `deflate` on flate2's zlib-rs (the zlib the engine already ships for gzip), each
//! outgoing message framed per socket in `outgoing`. The crates that implement the extension (yawc; tungstenite
//! has it only in forks) own their framing, and using one would give up what this module is for: frames built
//! once and shared by every subscriber, unmasked in place, handed to JavaScript in batches. By default neither
//! side keeps a context between messages, so a socket holds no compression state and a published message is
//! compressed once for all its subscribers.
//!
//! The upgrade runs through routing like any request: a route registered with [`WsOptions`] checks the
//! handshake in Rust (426 or 400 without JavaScript), hands the request to its handler (middleware may refuse
//! it), and becomes a socket when the handler answers with the `UPGRADE` flag.

mod beyond;
pub(crate) mod deflate;
mod events;
pub mod extension;
pub mod frame;
pub mod handshake;
mod hub;
pub mod message;
mod outgoing;
pub(crate) mod socket;
pub(crate) mod task;
mod topics;
mod violation;

pub use crate::values::ws_options::{Compressor, DeflateOptions, WsOptions};
pub use beyond::Beyond;
pub use hub::{Peers, WebSockets};
pub use outgoing::Payload;
pub use socket::SendStatus;
