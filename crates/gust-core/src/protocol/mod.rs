//! Layer 8, **protocol**: the HTTP versions a connection may speak, between the transport (bytes in and out,
//! TLS) and the service (what one request gets). HTTP/1.1 ([`h1`]) and HTTP/2 ([`h2`]) each drive hyper's state
//! machine for one connection and hand every request to the same `ConnService` (HTTP/2's response bodies counted
//! as [`owed`] to the client until flow control lets them out); [`police`] holds the timers and the server's
//! [`phase`] around either.
//!
//! May import: every layer below. The transport chooses the protocol (ALPN over TLS, the client preface on a
//! plain port) and calls in here.

pub(crate) mod h1;
pub(crate) mod h2;
pub(crate) mod owed;
pub(crate) mod phase;
pub(crate) mod police;
