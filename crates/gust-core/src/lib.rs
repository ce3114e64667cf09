//! The HTTP engine of Gust: hyper and tokio serve HTTP/1.1, matchit routes, and everything that can be decided
//! without JavaScript is (404, 405, HEAD, OPTIONS, limits, timeouts, turbo responses). Dynamic requests are
//! handed to a [`Handler`] in batches and answered through a [`Responder`].
//!
//! There is no napi here: `cargo test -p gust-core` needs no JavaScript runtime.

#![forbid(unsafe_code)]

mod clock;
mod completions;
pub mod compress;
mod config;
mod error;
pub mod files;
mod handler;
pub mod method;
mod path;
mod response;
mod route_table;
mod server;
pub mod stream;
mod upload;
pub mod wire;
pub mod ws;

pub use completions::{Outcome, Responder};
pub use compress::{Compression, Encoding};
pub use config::{Config, DEFAULT_BODY_BUFFER, MAX_TIMEOUT, MIN_HEADER_SIZE};
pub use error::Error;
pub use handler::{Closed, Handler, RequestBatch};
pub use response::{Body, FixedResponse, InvalidResponse};
pub use route_table::{RouteTable, RouteTableBuilder, Target};
pub use server::{LaneId, Pipe, PipeEvent, Server, MAX_IO_THREADS, MAX_LANES, MAX_PENDING};
pub use wire::answer::{Answer, AnswerBatch, Chunk, Headers, MalformedAnswers, Record, Text};
