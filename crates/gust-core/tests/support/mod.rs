//! What the integration tests share: a test handler that answers from its own thread (as JavaScript does), with
//! the standard routes it serves (`server`); reading the engine's batches (`records`) and writing answers back
//! (`answers`) in the wire format; a raw HTTP/1.1 client (`http`); and, for the WebSocket tests, a server with a
//! WebSocket route and a raw WebSocket client (`ws`, not re-exported: its `start` is its own).
// Every test file compiles all of it and uses a part: what one leaves unused (re-exports included) is no warning.
#![allow(dead_code, unreachable_pub, unused_imports)]

mod answers;
mod engine;
mod http;
mod records;
mod server;
pub mod ws;

pub use answers::*;
pub use engine::*;
pub use http::*;
pub use records::*;
pub use server::*;

use gust_core::Config;

/// A default config changed by `f` (`Config` is non-exhaustive: no struct literal outside the crate).
pub fn config(f: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config::default();
    f(&mut c);
    c
}
