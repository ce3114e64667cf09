//! Every number of the wire formats in one table: record kinds, flags, word indices and record sizes, by the name
//! the JavaScript side uses. The constants themselves live beside the format they belong to ([`super::request`],
//! [`super::event`], [`super::answer`]); this table only names them, so the binding can hand it over and
//! `scripts/gen-wire-layout.mjs` can write `packages/gust/src/native/layout.ts` from it at build time (the
//! package's tests check that the two agree). Nothing here is on a hot path.

use super::{answer, event, request, Kind, VERSION};

/// One named number of the wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The name JavaScript reads it by (`SCREAMING_CASE`).
    pub name: &'static str,
    /// Its value. Flags are given as they sit in the tag's top 16 bits, unshifted.
    pub value: u32,
    /// One line on what it is.
    pub doc: &'static str,
}

const fn entry(name: &'static str, value: u32, doc: &'static str) -> Entry {
    Entry { name, value, doc }
}

const fn kind(name: &'static str, kind: Kind, doc: &'static str) -> Entry {
    entry(name, kind as u32, doc)
}

const fn flag(name: &'static str, flag: u16, doc: &'static str) -> Entry {
    entry(name, flag as u32, doc)
}

const fn index(name: &'static str, at: usize, doc: &'static str) -> Entry {
    entry(name, at as u32, doc)
}

/// The table, grouped as the formats are documented: the version, kinds, request flags and words, event flags
/// and words, answer flags and sizes.
pub const LAYOUT: &[Entry] = &[
    entry("WIRE_VERSION", VERSION as u32, "The format version both sides must agree on (the tag's second byte)."),
    kind("REQUEST", Kind::Request, "Record kind: a request (engine → JavaScript)."),
    kind("ANSWER", Kind::Answer, "Record kind: a response, or the head of a streamed one (JavaScript → engine)."),
    kind("DRAIN", Kind::Drain, "Record kind: a paused response stream may resume (`[tag, 12, id]`)."),
    kind("CANCEL", Kind::Cancel, "Record kind: the request is gone before its response completed (`[tag, 12, id]`)."),
    kind(
        "CHUNK",
        Kind::Chunk,
        "Record kind: more of a streamed response, its end or its failure (JavaScript → engine).",
    ),
    kind(
        "READ",
        Kind::Read,
        "Record kind: the handler wants the next bytes of a streamed request body (JavaScript → engine).",
    ),
    kind(
        "BODY",
        Kind::Body,
        "Record kind: bytes of a streamed request body (`[tag, len, id, n]`, the bytes, padding).",
    ),
    kind("WS_OPEN", Kind::WsOpen, "Record kind: a WebSocket opened for a request (`[tag, 16, socket, request]`)."),
    kind("WS_MESSAGE", Kind::WsMessage, "Record kind: a WebSocket message, in the body layout."),
    kind(
        "WS_CLOSE",
        Kind::WsClose,
        "Record kind: a WebSocket closed, in the body layout: the code as flags, the reason as bytes.",
    ),
    kind(
        "WS_DRAIN",
        Kind::WsDrain,
        "Record kind: a WebSocket's send queue emptied after backpressure (`[tag, 12, socket]`).",
    ),
    flag("HTTP_10", request::HTTP_10, "Request flag: the request came as HTTP/1.0."),
    flag(
        "BODY_STREAM",
        request::BODY_STREAM,
        "Request flag: the body section holds only the body's start; the rest comes in BODY records.",
    ),
    flag(
        "TLS",
        request::TLS,
        "Request flag: the request came over TLS; the record's last word is its TLS section's length.",
    ),
    flag("HTTP_2", request::HTTP_2, "Request flag: the request came as HTTP/2."),
    index(
        "HEADER_WORDS",
        request::HEADER_WORDS,
        "Words in a request record's fixed header; the param lengths follow it.",
    ),
    index("W_TAG", request::word::TAG, "Request word: the tag (kind, version, flags)."),
    index("W_LENGTH", request::word::LENGTH, "Request word: the record's length in bytes."),
    index("W_ID", request::word::ID, "Request word: the request id."),
    index("W_HANDLER", request::word::HANDLER, "Request word: the handler index."),
    index("W_METHOD", request::word::METHOD, "Request word: the method code (255: the name is in the method section)."),
    index("W_METHOD_LEN", request::word::METHOD_LEN, "Request word: the method section's length."),
    index("W_URL_LEN", request::word::URL_LEN, "Request word: the url section's length (raw path and query)."),
    index("W_PATH_LEN", request::word::PATH_LEN, "Request word: the decoded path section's length (0: the raw path)."),
    index(
        "W_PARAM_COUNT",
        request::word::PARAM_COUNT,
        "Request word: the number of params; their lengths follow the header.",
    ),
    index("W_HEADERS_LEN", request::word::HEADERS_LEN, "Request word: the headers section's length."),
    index("W_BODY_LEN", request::word::BODY_LEN, "Request word: the body's length (what came with the record)."),
    index("W_PEER_PORT", request::word::PEER_PORT, "Request word: the client's port."),
    index("W_PEER_LEN", request::word::PEER_LEN, "Request word: the peer section's length."),
    index("EVENT_LEN", event::EVENT_LEN, "Bytes of a drain, cancel or WebSocket drain record."),
    index("E_ID", event::word::ID, "Event word: the request id (the socket id for WebSocket events)."),
    index("E_DATA_LEN", event::word::DATA_LEN, "Event word: the byte length of a body-layout record's data."),
    index("E_WS_REQUEST", event::word::WS_REQUEST, "Event word: the request a WS_OPEN record's socket came from."),
    index("BODY_WORDS", event::BODY_WORDS, "Words before a body-layout record's bytes."),
    flag(
        "CANCEL_COMPLETE",
        event::COMPLETE,
        "Cancel flag: the response is complete and its body unwanted; the signal does not abort.",
    ),
    flag(
        "CANCEL_SIGNAL_ONLY",
        event::SIGNAL_ONLY,
        "Cancel flag: the client stopped sending; the signal aborts, the answer is still sent.",
    ),
    flag("CANCEL_TIMED_OUT", event::TIMED_OUT, "Cancel flag: the handler timeout passed and the client got 503."),
    flag("BODY_END", event::BODY_END, "Body flag: the body's last bytes."),
    flag("BODY_TOO_LARGE", event::BODY_TOO_LARGE, "Body flag: the body passed its route's limit."),
    flag("BODY_TIMEOUT", event::BODY_TIMEOUT, "Body flag: the client sent nothing for the body timeout."),
    flag("BODY_BROKEN", event::BODY_BROKEN, "Body flag: the body was malformed or its connection failed."),
    flag("BODY_CLOSED", event::BODY_CLOSED, "Body flag: no more comes (the response was sent, or the client left)."),
    flag("WS_FAILED", event::WS_FAILED, "WS_OPEN flag: the client left before the socket opened."),
    flag("WS_BINARY", event::WS_BINARY, "WS_MESSAGE flag: a binary message (else text)."),
    index("HEAD_WORDS", answer::HEAD_WORDS, "Words before an answer's header lengths."),
    index("CHUNK_WORDS", answer::CHUNK_WORDS, "Words of a chunk record."),
    index("READ_WORDS", answer::READ_WORDS, "Words of a read record."),
    flag(
        "BINARY_BODY",
        answer::BINARY_BODY,
        "Answer and chunk flag: the bytes are the next entry of `binary`, not text.",
    ),
    flag("STREAM", answer::STREAM, "Answer flag: the body streams in chunk records."),
    flag("FILE", answer::FILE, "Answer flag: the body names a file the engine serves."),
    flag("UPGRADE", answer::UPGRADE, "Answer flag: the answer accepts a WebSocket handshake."),
    flag("END", answer::END, "Chunk flag: the body's last bytes."),
    flag("ABORT", answer::ABORT, "Chunk flag: the body failed; the response is cut off."),
    flag("STOP", answer::STOP, "Read flag: no more of the body is wanted."),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_should_be_unique_and_in_screaming_case() {
        let mut names: Vec<_> = LAYOUT.iter().map(|e| e.name).collect();
        assert!(names.iter().all(|n| n.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')));
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a name appears twice in LAYOUT");
    }

    #[test]
    fn the_request_words_should_cover_the_fixed_header_once_each() {
        let mut words: Vec<u32> = LAYOUT.iter().filter(|e| e.name.starts_with("W_")).map(|e| e.value).collect();
        words.sort_unstable();
        assert_eq!(words, (0..request::HEADER_WORDS as u32).collect::<Vec<_>>());
    }
}
