//! The answer record: how a batch of handler responses comes back from JavaScript in one call.
//!
//! A batch is three values: `meta`, a `u32` array; `text`, one string holding every header name and value and
//! every text body of the batch back to back, in answer order; and `binary`, the byte bodies in answer order.
//! Per answer, `meta` holds:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Answer`](super::Kind::Answer), [`VERSION`](super::VERSION), flags ([`BINARY_BODY`]) |
//! | 1 | the request id |
//! | 2 | status |
//! | 3 | header count `n` |
//! | 4 | body length: UTF-16 code units of text following the headers, or bytes of the next binary body |
//! | 5 … 4 + 2n | per header, the name's then the value's length in UTF-16 code units |
//!
//! With [`STREAM`] set, the answer is a head and the first bytes of its body; the rest follows in chunk records
//! (in this batch or later ones), each three words in `meta` with its bytes taken from `text` or `binary` the
//! same way:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Chunk`](super::Kind::Chunk), [`VERSION`](super::VERSION), flags ([`BINARY_BODY`], [`END`], [`ABORT`]) |
//! | 1 | the request id |
//! | 2 | length: UTF-16 code units of text, or bytes of the next binary body |
//!
//! A handler reading a streamed request body asks for its next bytes with a read record, three words in `meta`
//! and nothing in `text` or `binary`:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Read`](super::Kind::Read), [`VERSION`](super::VERSION), flags ([`STOP`]) |
//! | 1 | the request id |
//! | 2 | 0 (reserved) |
//!
//! Lengths count UTF-16 units, so no character, however exotic, can shift a boundary; what is not valid HTTP is
//! refused per answer by the engine (a 500 for that request alone).
//!
//! Cost: the binding reads `text` once, as UTF-8 straight into one buffer when it is all ASCII (the common
//! case, where units and bytes coincide); every header value and text body is then a slice of that buffer, so a
//! batch costs one allocation for its text however many answers it holds. The buffer is freed when the last
//! answer of its batch has been sent.

mod batch;
mod record;
mod reply;

#[cfg(test)]
pub(crate) use batch::tests;
pub use batch::AnswerBatch;
pub use record::{Answer, Chunk, Headers, MalformedAnswers, Record, Text};
pub(crate) use reply::{FileTarget, Reply};

/// Words before an answer's header lengths.
pub const HEAD_WORDS: usize = 5;
/// Words of a chunk record.
pub const CHUNK_WORDS: usize = 3;
/// Answer and chunk flag: the bytes are the next entry of `binary`, not text.
pub const BINARY_BODY: u16 = 1;
/// Answer flag: the body streams; chunk records with the same id carry the rest of it.
pub const STREAM: u16 = 2;
/// Answer flag: the body is not sent; it names a file the engine serves, with the request's conditional and
/// range headers applied and the answer's headers added: `path:<absolute path>`, or `mount:<index>:<path below
/// the mount>` for a directory the route table holds. Read into a `FileTarget`; a body in neither form makes
/// the answer invalid (a 500 for that request).
pub const FILE: u16 = 4;
/// Answer flag: the handler accepts a WebSocket handshake: the engine answers 101 with these headers (a chosen
/// `Sec-WebSocket-Protocol`, cookies) and the connection becomes a socket. Status and body are ignored.
pub const UPGRADE: u16 = 8;
/// Chunk flag: these are the body's last bytes.
pub const END: u16 = 2;
/// Chunk flag: the body failed after its head was sent; the response is cut off (its connection closes).
pub const ABORT: u16 = 4;

/// Read flag: the handler wants no more of the body; the engine stops reading it.
pub const STOP: u16 = 1;
/// Words of a read record.
pub const READ_WORDS: usize = 3;
