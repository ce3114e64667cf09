//! The HTTP engine of Gust: hyper and tokio serve HTTP/1.1 and HTTP/2 (over TLS with rustls, or plain), matchit
//! routes, and everything that can be decided without JavaScript is (404, 405, HEAD, OPTIONS, limits, timeouts,
//! turbo responses). Dynamic requests are
//! handed to a [`Handler`] in batches and answered through a [`Responder`].
//!
//! There is no napi here: `cargo test -p gust-core` needs no JavaScript runtime.
//!
//! # Layers
//! The rooms of this crate sit in nine layers, and a room imports only rooms of the layers below its own (and,
//! within its layer, rooms that do not import it back): `scripts/check-layers.mjs` fails `make test` otherwise.
//! From the socket down to plain values:
//!
//! | layer | folder | holds |
//! |---|---|---|
//! | 9 transport | `transport/` | listeners, TLS, connections, in-memory connections, the [`Server`] and its two engines |
//! | 8 protocol | `protocol/` | HTTP/1.1 and HTTP/2 on one connection, their timers, the server's phase |
//! | 7 service | `service/` | one request: rules, routing, turbo, files, hand-over, upgrades; WebSocket beside it |
//! | 6 crossing | `crossing/` | the handler contract, completions, batcher, lanes, responder |
//! | 5 wire | `wire/` | the two formats that cross to JavaScript, and an answer typed for its request |
//! | 4 responses | `responses/` | [`Body`], [`FixedResponse`], engine answers, the [`RouteTable`] |
//! | 3 bodies | `bodies/` | streamed, uploaded, compressed and file bodies, each on its own |
//! | 2 rt | `rt/` | the runtime seam: spawning, timers, blocking work; the one-thread engine's executor and poller |
//! | 1 values | `values/` | errors, clock, methods, paths, content types, request ids |
//!
//! Where a lower room must reach up (a stream telling its producer to resume, a timed-out request telling its
//! handler), it defines a trait the room above implements. `README.md` beside this crate says where to start
//! reading and where a new capability goes.

// One function may use `unsafe`: the one-thread engine's socket read, into a buffer's uninitialised room as tokio's
// own reads do (`transport/local_socket.rs`); everything else is safe Rust.
#![deny(unsafe_code)]

mod bodies;
mod crossing;
mod protocol;
mod responses;
mod rt;
mod service;
mod transport;
mod values;
pub mod wire;

/// The fuzz harnesses' doors: each decoder of untrusted bytes with the property it must keep.
#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use bodies::{compress, files, stream};
pub use service::relay::{check as check_pubsub, RelayOptions, RelayStats, RelayTls};
pub use service::ws;
pub use values::method;

pub use bodies::compress::{Compression, Encoding};
pub use bodies::files::dir::{StaticDir, StaticOptions};
pub use crossing::handler::{Closed, Handler, RequestBatch};
pub use crossing::lanes::LaneId;
pub use crossing::responder::{Outcome, Responder};
pub use responses::body::Body;
pub use responses::files::FileRoute;
pub use responses::fixed::FixedResponse;
pub use responses::rate_limit::{LimitKey, RateLimit, RateLimitOptions, RateLimitStats, StoreDown, TrustedProxies};
pub use responses::response::{messages, InvalidResponse, MAX_STATUS, MIN_STATUS};
pub use responses::route_table::{RouteTable, RouteTableBuilder, Target};
pub use rt::local::Turn;
pub use service::config::{
    Config, Http2, ThreadPlan, CORES_PER_IO_THREAD, DEFAULT_BODY_BUFFER, MAX_HEADER_LIST_SIZE, MAX_TIMEOUT, MAX_WINDOW,
    MAX_WORKERS, MIN_HEADER_SIZE, MIN_WINDOW, WORKERS_PER_IO_THREAD,
};
pub use transport::in_memory::{Pipe, PipeEvent};
pub use transport::local_engine::LocalEngine;
pub use transport::local_group::LocalGroup;
pub use transport::server::Server;
pub use values::error::{Error, StreamAborted};
pub use values::ids::{MAX_IO_THREADS, MAX_LANES, MAX_PENDING};
pub use values::sync::Locked;
pub use values::tls_options::{ClientAuth, Identity, TlsOptions, TlsVersion};
pub use wire::answer::{Answer, AnswerBatch, Chunk, Headers, MalformedAnswers, Record, Text};
