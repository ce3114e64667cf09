//! The two formats that cross between the engine and the JavaScript side, defined here and nowhere else:
//! [`request`] records go out in one buffer per batch, [`answer`] records come back in one call per batch.
//!
//! Every record starts with one little-endian `u32` *tag*: its [`Kind`] in the low byte, the format
//! [`VERSION`] in the next, and 16 bits of kind-specific flags on top. A reader refuses a version it does not
//! know, and skips a kind it does not know by the record length that follows the tag. Requests are the only
//! outgoing kind today; body chunks, aborts, upgrades and WebSocket events will be further kinds of the same
//! stream, so a batch may one day interleave them.
//!
//! `packages/gust/src/native/wire.ts` and `answer.ts` mirror this module; `golden/` holds byte-exact samples
//! that the Rust tests here and the TypeScript tests both check, so neither side can drift alone.

pub mod answer;
pub mod request;

/// The format version both sides must agree on.
pub const VERSION: u8 = 2;

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A whole HTTP request with its body (engine → JavaScript).
    Request = 1,
    /// A whole response with its body (JavaScript → engine).
    Answer = 2,
}

/// The tag word that opens every record.
pub(crate) const fn tag(kind: Kind, flags: u16) -> u32 {
    kind as u32 | (VERSION as u32) << 8 | (flags as u32) << 16
}

/// Splits a tag into its kind code, version and flags.
pub(crate) const fn untag(tag: u32) -> (u8, u8, u16) {
    (tag as u8, (tag >> 8) as u8, (tag >> 16) as u16)
}
