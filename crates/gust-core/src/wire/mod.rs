//! The two formats that cross between the engine and the JavaScript side, defined here and nowhere else:
//! [`request`] records go out in one buffer per batch, [`answer`] records come back in one call per batch.
//!
//! Every record starts with one little-endian `u32` *tag*: its [`Kind`] in the low byte, the format
//! [`VERSION`] in the next, and 16 bits of kind-specific flags on top. A reader refuses a version it does not
//! know, and skips a kind it does not know by the record length that follows the tag. A batch going out
//! interleaves [`request`] records with [`event`] records (drain, cancel, request body bytes); answers coming back
//! interleave whole answers, streamed heads, body chunks and reads of request bodies. WebSocket events travel
//! out the same way; an answer accepting a WebSocket is an answer with the `UPGRADE` flag.
//!
//! The package reads and writes these formats in `packages/gust/src/native/` (`wire.ts`, `request-record.ts`,
//! `answer.ts`) by the numbers of [`layout`], which `scripts/gen-wire-layout.mjs` writes into its `layout.ts` at
//! build time; `golden/` holds byte-exact samples (requests, events, answers) that the Rust tests here and the
//! TypeScript tests both check, so neither side can drift alone.
//!
//! Layer 5, **wire**: formats only, no I/O and no decisions. May import: `values`, `bodies` (how an upload's body
//! event ends), `responses` (an answer typed for its request, `answer::Reply`, holds a response). The crossing
//! above fills and reads these records.

pub mod answer;
pub mod event;
pub mod layout;
pub mod request;
pub mod tls;

/// The format version both sides must agree on.
pub const VERSION: u8 = 2;

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A whole HTTP request with its body (engine → JavaScript).
    Request = 1,
    /// A response: its head and whole body, or its head and first bytes when [`answer::STREAM`] is set
    /// (JavaScript → engine).
    Answer = 2,
    /// A streamed response's queue is down to its low-water mark again: its producer may resume
    /// (engine → JavaScript, see [`event`]).
    Drain = 3,
    /// The request is gone before its response was complete (the client left, or the server is closing): its
    /// handler may stop, and a streamed body is cancelled (engine → JavaScript, see [`event`]).
    Cancel = 4,
    /// More bytes of a streamed response, its end, or its failure (JavaScript → engine, see [`answer`]).
    Chunk = 5,
    /// The handler wants the next bytes of a streamed request body, or none any more (JavaScript → engine, see
    /// [`answer`]).
    Read = 6,
    /// Bytes of a streamed request body, its end, or why it ended early (engine → JavaScript, see [`event`]).
    Body = 7,
    /// A WebSocket opened, or failed to (engine → JavaScript, see [`event`]).
    WsOpen = 8,
    /// A WebSocket message, text or binary (engine → JavaScript, see [`event`]).
    WsMessage = 9,
    /// A WebSocket closed, with its code and reason (engine → JavaScript, see [`event`]).
    WsClose = 10,
    /// A WebSocket's send queue emptied after backpressure (engine → JavaScript, see [`event`]).
    WsDrain = 11,
}

/// The tag word that opens every record.
pub(crate) const fn tag(kind: Kind, flags: u16) -> u32 {
    kind as u32 | (VERSION as u32) << 8 | (flags as u32) << 16
}

/// The records of a batch going out, in order: each one's kind code, flags, id (the request's or socket's) and
/// bytes. Stops at a record that does not fit (none does not, in a batch the engine wrote).
pub(crate) fn records(batch: &[u8]) -> impl Iterator<Item = (u8, u16, u32, &[u8])> {
    let word = |at: usize| batch.get(at..at + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    let mut at = 0;
    std::iter::from_fn(move || {
        let (tag, len, id) = (word(at)?, word(at + 4)? as usize, word(at + 8)?);
        let record = batch.get(at..at + len).filter(|_| len >= 12)?;
        at += len;
        let (kind, _, flags) = untag(tag);
        Some((kind, flags, id, record))
    })
}

/// Splits a tag into its kind code, version and flags.
pub(crate) const fn untag(tag: u32) -> (u8, u8, u16) {
    (tag as u8, (tag >> 8) as u8, (tag >> 16) as u16)
}
