//! Compression (issue #13): responses are compressed in Rust, never in JavaScript, with gzip, brotli or zstd as
//! the client accepts ([`encoding`]), under the rules of [`policy`]; streamed bodies are flushed per chunk
//! ([`body`]); turbo responses are compressed once, when their route table is installed. Request bodies may be
//! decoded as they arrive ([`decode`]).

pub(crate) mod body;
pub(crate) mod decode;
pub(crate) mod encoder;
pub(crate) mod encoding;
mod policy;

pub(crate) use encoding::Accepted;
pub use encoding::Encoding;
pub use policy::Compression;
pub(crate) use policy::{add_vary, weaken_etag, TypeHint};
