//! WebSocket (issue #14, begun): the protocol itself, pure and tested on its own, for the connection task,
//! topic table and binding to build on. The opening handshake ([`handshake`]), frames ([`frame`]: client frames
//! decoded with their payload limit, server frames encoded unmasked so a published message is framed once for
//! every subscriber) and messages ([`message`]: fragments reassembled, UTF-8 checked as it arrives, close frames
//! checked). Not yet routed: no request is upgraded until `app.ws()` exists.

pub mod frame;
pub mod handshake;
pub mod message;
