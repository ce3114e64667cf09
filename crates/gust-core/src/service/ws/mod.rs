//! WebSocket (RFC 6455), owned by the engine: the opening handshake ([`handshake`]), frames ([`frame`]: client
//! frames decoded with their payload limit, server frames encoded unmasked so a published message is framed
//! once for every subscriber), messages ([`message`]: fragments reassembled, UTF-8 checked as it arrives),
//! one task per socket on the I/O thread (`task`), each socket's send queue with Bun's backpressure rules
//! (`socket`), the topic table (`topics`), and [`WebSockets`], what the binding calls to send, close,
//! subscribe and publish.
//!
//! permessage-deflate (RFC 7692) is not negotiated: an offer is ignored, which the RFC allows, and the client
//! sends and receives plain frames. The crates that implement it (yawc; tungstenite has it only in forks) own
//! their framing, and using one would give up what this module is for: frames built once and shared by every
//! subscriber, unmasked in place, handed to JavaScript in batches. Deflate here would be this module's own on
//! flate2 (zlib-rs, which the engine already ships for gzip), with `server_no_context_takeover` so a published
//! message is still compressed once; Autobahn's sections 12 and 13 would then join `make test`.
//!
//! The upgrade runs through routing like any request: a route registered with [`WsOptions`] checks the
//! handshake in Rust (426 or 400 without JavaScript), hands the request to its handler (middleware may refuse
//! it), and becomes a socket when the handler answers with the `UPGRADE` flag.

mod events;
pub mod frame;
pub mod handshake;
mod hub;
pub mod message;
pub(crate) mod socket;
pub(crate) mod task;
mod topics;

pub use crate::values::ws_options::WsOptions;
pub use hub::{Payload, WebSockets};
pub use socket::SendStatus;
