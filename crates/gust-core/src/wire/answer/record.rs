//! The records of an answer batch as the engine reads them: whole answers, chunks of streamed bodies, reads
//! of request bodies; and the batch's text as the binding could read it.

use bytes::Bytes;

/// The batch could not be read: a bug on the JavaScript side, never something a client can cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedAnswers(pub(crate) String);

impl std::fmt::Display for MalformedAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed answer batch: {}", self.0)
    }
}

impl std::error::Error for MalformedAnswers {}

/// A batch's text, as the binding could read it.
#[derive(Debug)]
pub enum Text {
    /// Every code unit was ASCII, read as one byte each: unit offsets are byte offsets.
    Ascii(Bytes),
    /// Anything else, as UTF-16 code units; each piece is re-encoded as UTF-8 on its own.
    Utf16(Vec<u16>),
}

/// One record of a batch, in the order the JavaScript side wrote them.
#[derive(Debug)]
pub enum Record<'a> {
    /// A response's head, with its whole body or the first bytes of a stream.
    Answer(Answer<'a>),
    /// More of a streamed body.
    Chunk(Chunk),
    /// The handler wants the next bytes of a streamed request body, or none any more.
    Read {
        /// The id the request carried.
        id: u32,
        /// No more is wanted: the engine stops reading the body.
        stop: bool,
    },
}

/// One handler answer, as decoded from a batch.
#[derive(Debug)]
pub struct Answer<'a> {
    /// The id the request carried.
    pub id: u32,
    /// HTTP status code as sent; the engine refuses one outside [`crate::MIN_STATUS`] to [`crate::MAX_STATUS`].
    pub status: u32,
    /// Header names and values, repeated names allowed.
    pub headers: Headers<'a>,
    /// The whole body, or the first bytes of a streamed one.
    pub body: Bytes,
    /// Whether the body streams: [`Chunk`] records with this id carry the rest.
    pub stream: bool,
    /// Whether the body names a file to serve ([`FILE`](super::FILE)).
    pub file: bool,
    /// Whether the answer accepts a WebSocket handshake ([`UPGRADE`](super::UPGRADE)).
    pub upgrade: bool,
}

/// Bytes of a streamed body.
#[derive(Debug)]
pub struct Chunk {
    /// The id the request carried.
    pub id: u32,
    /// The bytes; may be empty (with `end` or `abort`).
    pub data: Bytes,
    /// These are the last bytes.
    pub end: bool,
    /// The body failed: cut the response off.
    pub abort: bool,
}

/// One answer's headers: `(name, value)` pairs, the values slices of the batch's text.
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    pub(super) text: &'a Bytes,
    /// The byte end of each name and value in `text`.
    pub(super) ends: &'a [usize],
    pub(super) start: usize,
}

impl<'a> Iterator for Headers<'a> {
    type Item = (&'a [u8], Bytes);

    fn next(&mut self) -> Option<Self::Item> {
        let [name_end, value_end, rest @ ..] = self.ends else { return None };
        let name = &self.text[self.start..*name_end];
        let value = self.text.slice(*name_end..*value_end);
        self.start = *value_end;
        self.ends = rest;
        Some((name, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.ends.len() / 2, Some(self.ends.len() / 2))
    }
}

impl ExactSizeIterator for Headers<'_> {}
