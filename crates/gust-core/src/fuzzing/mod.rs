//! The doors the fuzz harnesses (`fuzz/` at the repository's root) come in by, built only with the `fuzzing`
//! feature. Each takes arbitrary bytes, runs one of the engine's own decoders on them, and panics when a property
//! the engine relies on fails, not only when the decoder itself panics:
//!
//! | door | decoder | property |
//! |---|---|---|
//! | [`ws_frames`](fn@ws_frames) | WebSocket frames and reassembly | a frame read then written again gives the same bytes; the in-place read agrees with the buffered one; a message is whole, within its limit, UTF-8 when text |
//! | [`ws_deflate`](fn@ws_deflate) | permessage-deflate | what the engine compresses inflates back to it; arbitrary data inflates to at most the limit or is refused |
//! | [`ws_extension`](fn@ws_extension) | `Sec-WebSocket-Extensions` offers | an agreement is one the answer states, with windows of 8–15 bits |
//! | [`answer_batch`](fn@answer_batch) | the JavaScript → engine answer records | a decoded batch encodes back to the same words, text and bytes |
//! | [`range`](fn@range) | `Range` | a satisfiable range lies inside the file |
//! | [`accept_encoding`](fn@accept_encoding) | `Accept-Encoding` and its q-values | the chosen coding is offered, accepted and ranked first |
//! | [`request_path`](fn@request_path) | percent-decoding of paths | the routing form decodes to what the raw path decodes to |
//! | [`static_path`](fn@static_path) | the static files' path guard | a path never resolves outside its root, nor to a dotfile unless allowed |
//! | [`content_coding`](fn@content_coding) | gzip, br and zstd (request bodies and responses) | what the engine compresses decodes back to it; a decoder never writes past its buffer or stalls |
//! | [`connection`](fn@connection) | whole connections, HTTP/1.1 or HTTP/2 (h2c by prior knowledge), through the real server | every connection is answered or closed in time, in the protocol it opened with, and the server goes on serving |
//! | [`connection_one_thread`](fn@connection_one_thread) | the same, through the one-thread engine (`connection`'s corpus) | the same |
//!
//! `cargo test -p gust-core --features fuzzing` replays every committed input through them (`tests/fuzz_corpus.rs`);
//! `make fuzz` searches for new ones.
//!
//! One file per door, named after it and after its fuzz target (`fuzz/fuzz_targets/<door>.rs`), with the helpers
//! only it uses; `selector`, which most of them start with, is here.

mod accept_encoding;
mod answer_batch;
mod connection;
mod content_coding;
mod range;
mod request_path;
mod static_path;
mod ws_deflate;
mod ws_extension;
mod ws_frames;

pub use accept_encoding::accept_encoding;
pub use answer_batch::answer_batch;
pub use connection::{connection, connection_one_thread};
pub use content_coding::content_coding;
pub use range::range;
pub use request_path::request_path;
pub use static_path::static_path;
pub use ws_deflate::ws_deflate;
pub use ws_extension::ws_extension;
pub use ws_frames::ws_frames;

/// Splits off the first byte as a selector (0 when empty).
fn selector(data: &[u8]) -> (u8, &[u8]) {
    data.split_first().map_or((0, data), |(first, rest)| (*first, rest))
}
