//! Layer 1, **values**: plain data and the rules about it, with nothing of HTTP serving: the error type, the
//! coarse clock, debug messages (stderr, off by default), method codes, path syntax and decoding, content types,
//! WebSocket and TLS options as given, the request-id layout with its hasher, and locks that a panic does not
//! poison (`sync`). Imports nothing else of the crate.

pub(crate) mod clock;
pub(crate) mod debug;
pub(crate) mod error;
pub(crate) mod ids;
pub mod method;
pub(crate) mod mime;
pub(crate) mod path;
pub(crate) mod sync;
pub(crate) mod tls_options;
pub(crate) mod ws_options;
