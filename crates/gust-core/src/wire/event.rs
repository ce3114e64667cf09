//! Event records: what the engine tells JavaScript about a request it already handed over. They travel in the
//! same batches as [`super::request`] records, interleaved in the order they happened.
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Drain`](super::Kind::Drain) or [`Kind::Cancel`](super::Kind::Cancel), [`VERSION`](super::VERSION), flags ([`COMPLETE`], [`SIGNAL_ONLY`], [`TIMED_OUT`]) |
//! | 1 | record length in bytes: [`EVENT_LEN`] |
//! | 2 | the request id |
//!
//! A [`Kind::Body`](super::Kind::Body) event carries the next bytes of a streamed request body, sent once per
//! read the handler side asked for; its flags say whether they are the last ([`BODY_END`]) or why the body ended
//! early ([`BODY_TOO_LARGE`], [`BODY_TIMEOUT`], [`BODY_BROKEN`], [`BODY_CLOSED`]):
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Body`](super::Kind::Body), [`VERSION`](super::VERSION), flags |
//! | 1 | record length in bytes, padding included |
//! | 2 | the request id |
//! | 3 | byte length `n` |
//!
//! then the `n` bytes, and zero to three bytes of padding.
//!
//! WebSocket events name a socket id instead of a request id. [`Kind::WsOpen`](super::Kind::WsOpen) is four
//! words, `[tag, 16, socket, request]`: the socket the request became (flag [`WS_FAILED`]: the client left
//! before it opened). [`Kind::WsMessage`](super::Kind::WsMessage) has the body layout, its flags
//! [`WS_BINARY`] for a binary message; [`Kind::WsClose`](super::Kind::WsClose) has it too, with the close code
//! as its flags and the reason as its bytes. [`Kind::WsDrain`](super::Kind::WsDrain) is three words.

use super::{tag, Kind};
use crate::bodies::upload::BodyState;

/// Bytes in an event record.
pub const EVENT_LEN: usize = 12;
/// Cancel flag: the response is complete (a HEAD, a 204 or 304, a declared length reached) and its body is no
/// longer wanted: stop the producer, but the request did not fail (its signal does not abort).
pub const COMPLETE: u16 = 1;
/// Cancel flag: the client stopped sending while its handler works; it may be gone, or only half-closed and still
/// waiting: abort the request's signal, but keep sending what the handler answers.
pub const SIGNAL_ONLY: u16 = 2;
/// Cancel flag: the handler ran past the handler timeout and the engine answered 503 for it: abort the request's
/// signal (a timeout, not a departed client), and what the handler answers later is not sent.
pub const TIMED_OUT: u16 = 4;

/// Body flag: these are the body's last bytes.
pub const BODY_END: u16 = 1;
/// Body flag: the body passed its route's limit; the rest was not read.
pub const BODY_TOO_LARGE: u16 = 2;
/// Body flag: the client sent nothing for `body_timeout` after a read was asked for.
pub const BODY_TIMEOUT: u16 = 4;
/// Body flag: the body was malformed, or its connection failed; with [`BODY_CLOSED`] too, the client left before
/// sending all of it.
pub const BODY_BROKEN: u16 = 8;
/// Body flag: the response was sent (or its client left) before the body was read to its end; no more comes.
pub const BODY_CLOSED: u16 = 16;
/// Words before a body event's bytes.
pub const BODY_WORDS: usize = 4;

/// Where the fields of an event record are, as word indices from its first word (the tables above).
pub mod word {
    /// The request id (the socket id for WebSocket events).
    pub const ID: usize = 2;
    /// The byte length of a body-layout record's data (body, WebSocket message or close reason).
    pub const DATA_LEN: usize = 3;
    /// The request a [`Kind::WsOpen`](crate::wire::Kind::WsOpen) record's socket came from.
    pub const WS_REQUEST: usize = 3;
}

/// WsOpen flag: the client left before the socket opened.
pub const WS_FAILED: u16 = 1;
/// WsMessage flag: a binary message (else text, valid UTF-8).
pub const WS_BINARY: u16 = 1;
/// Bytes in a WsOpen record.
pub const WS_OPEN_LEN: usize = 16;

/// The flags of a body event for where the body stands.
pub(crate) fn body_flags(state: BodyState) -> u16 {
    match state {
        BodyState::More => 0,
        BodyState::End => BODY_END,
        BodyState::TooLarge => BODY_TOO_LARGE,
        BodyState::Timeout => BODY_TIMEOUT,
        BodyState::Broken { client_left: false } => BODY_BROKEN,
        BodyState::Broken { client_left: true } => BODY_BROKEN | BODY_CLOSED,
        BodyState::Closed => BODY_CLOSED,
    }
}

/// Appends one event about request `id`.
pub(crate) fn encode_event(buf: &mut Vec<u8>, kind: Kind, flags: u16, id: u32) {
    for word in [tag(kind, flags), EVENT_LEN as u32, id] {
        buf.extend_from_slice(&word.to_le_bytes());
    }
}

/// Appends a socket's opening (or its failure to open) for the request that asked for it.
pub(crate) fn encode_ws_open(buf: &mut Vec<u8>, flags: u16, socket: u32, request: u32) {
    for word in [tag(Kind::WsOpen, flags), WS_OPEN_LEN as u32, socket, request] {
        buf.extend_from_slice(&word.to_le_bytes());
    }
}

/// Appends a record in the body layout: a WebSocket message, or a close with its reason. Cost: one copy.
pub(crate) fn encode_data(buf: &mut Vec<u8>, kind: Kind, flags: u16, id: u32, data: &[u8]) {
    let unpadded = BODY_WORDS * 4 + data.len();
    let len = unpadded.next_multiple_of(4);
    buf.reserve(len);
    for word in [tag(kind, flags), len as u32, id, data.len() as u32] {
        buf.extend_from_slice(&word.to_le_bytes());
    }
    buf.extend_from_slice(data);
    buf.resize(buf.len() + len - unpadded, 0);
}

/// Appends bytes of request `id`'s body, given as the frames they came in. Cost: one copy of them.
pub(crate) fn encode_body(buf: &mut Vec<u8>, flags: u16, id: u32, data: &[bytes::Bytes]) {
    let size: usize = data.iter().map(bytes::Bytes::len).sum();
    let unpadded = BODY_WORDS * 4 + size;
    let len = unpadded.next_multiple_of(4);
    buf.reserve(len);
    for word in [tag(Kind::Body, flags), len as u32, id, size as u32] {
        buf.extend_from_slice(&word.to_le_bytes());
    }
    for piece in data {
        buf.extend_from_slice(piece);
    }
    buf.resize(buf.len() + len - unpadded, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::untag;

    #[test]
    fn an_event_should_be_three_words_a_reader_can_skip() {
        let mut buf = Vec::new();
        encode_event(&mut buf, Kind::Cancel, COMPLETE, 42);
        assert_eq!(buf.len(), EVENT_LEN);
        let word = |i: usize| u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(untag(word(0)), (Kind::Cancel as u8, crate::wire::VERSION, COMPLETE));
        assert_eq!((word(1), word(2)), (EVENT_LEN as u32, 42));
    }

    #[test]
    fn websocket_events_should_have_the_documented_layouts() {
        let mut buf = Vec::new();
        encode_ws_open(&mut buf, WS_FAILED, 5, 77);
        encode_data(&mut buf, Kind::WsClose, 1000, 5, b"bye");
        let word = |i: usize| u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(untag(word(0)), (Kind::WsOpen as u8, crate::wire::VERSION, WS_FAILED));
        assert_eq!((word(1), word(2), word(3)), (16, 5, 77));
        assert_eq!(untag(word(4)), (Kind::WsClose as u8, crate::wire::VERSION, 1000));
        assert_eq!((word(5), word(6), word(7)), (20, 5, 3));
        assert_eq!(&buf[32..], b"bye\0");
    }

    #[test]
    fn a_body_event_should_carry_its_bytes_padded_to_a_word() {
        let mut buf = Vec::new();
        encode_body(&mut buf, BODY_END, 9, &[bytes::Bytes::from_static(b"hel"), bytes::Bytes::from_static(b"lo")]);
        let word = |i: usize| u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(untag(word(0)), (Kind::Body as u8, crate::wire::VERSION, BODY_END));
        assert_eq!((word(1), word(2), word(3)), (24, 9, 5));
        assert_eq!(&buf[16..], b"hello\0\0\0");
    }

    /// The events of `golden/events.bin`, one of each kind and flag family, with what `golden/events.json` says
    /// each decodes to: `(kind, flags, id, data or the socket's request)`.
    /// An event of the sample: kind, flags, id, and its bytes or (`Err`) the socket's request.
    type GoldenEvent = (Kind, u16, u32, Result<&'static [u8], u32>);

    fn golden() -> Vec<GoldenEvent> {
        vec![
            (Kind::Drain, 0, 7, Err(0)),
            (Kind::Cancel, COMPLETE, 8, Err(0)),
            (Kind::Cancel, SIGNAL_ONLY, 9, Err(0)),
            (Kind::Cancel, TIMED_OUT, 10, Err(0)),
            (Kind::Body, 0, 11, Ok(b"hel")),
            (Kind::Body, BODY_END, 11, Ok(b"lo\xff")),
            (Kind::Body, BODY_BROKEN | BODY_CLOSED, 12, Ok(b"")),
            (Kind::Body, BODY_TOO_LARGE, 13, Ok(b"")),
            (Kind::Body, BODY_TIMEOUT, 14, Ok(b"")),
            (Kind::WsOpen, 0, 1, Err(15)),
            (Kind::WsOpen, WS_FAILED, 2, Err(16)),
            (Kind::WsMessage, 0, 1, Ok("caf\u{e9}".as_bytes())),
            (Kind::WsMessage, WS_BINARY, 1, Ok(&[0, 1, 2, 3])),
            (Kind::WsDrain, 0, 1, Err(0)),
            (Kind::WsClose, 1001, 1, Ok(b"going away")),
        ]
    }

    fn golden_batch() -> Vec<u8> {
        let mut buf = Vec::new();
        for (kind, flags, id, data) in golden() {
            match (kind, data) {
                (Kind::Body, Ok(bytes)) => encode_body(&mut buf, flags, id, &[bytes::Bytes::from_static(bytes)]),
                (Kind::WsOpen, Err(request)) => encode_ws_open(&mut buf, flags, id, request),
                (_, Ok(bytes)) => encode_data(&mut buf, kind, flags, id, bytes),
                (_, Err(_)) => encode_event(&mut buf, kind, flags, id),
            }
        }
        buf
    }

    fn golden_json() -> String {
        let names = |kind: Kind| match kind {
            Kind::Drain => "DRAIN",
            Kind::Cancel => "CANCEL",
            Kind::Body => "BODY",
            Kind::WsOpen => "WS_OPEN",
            Kind::WsMessage => "WS_MESSAGE",
            Kind::WsClose => "WS_CLOSE",
            Kind::WsDrain => "WS_DRAIN",
            _ => unreachable!("not an event kind"),
        };
        let lines: Vec<String> = golden()
            .into_iter()
            .map(|(kind, flags, id, data)| {
                let rest = match data {
                    Ok(bytes) => format!("\"data\": {bytes:?}"),
                    Err(request) if kind == Kind::WsOpen => format!("\"request\": {request}"),
                    Err(_) => String::from("\"data\": null"),
                };
                format!("  {{ \"kind\": \"{}\", \"flags\": {flags}, \"id\": {id}, {rest} }}", names(kind))
            })
            .collect();
        format!("[\n{}\n]\n", lines.join(",\n"))
    }

    #[test]
    fn the_golden_event_batch_should_match_the_shared_fixture() {
        let bin = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/golden/events.bin");
        let json = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/golden/events.json");
        if std::env::var_os("GUST_BLESS").is_some() {
            std::fs::write(bin, golden_batch()).unwrap();
            std::fs::write(json, golden_json()).unwrap();
        }
        let fixture = std::fs::read(bin).expect("golden/events.bin (GUST_BLESS=1 cargo test writes it)");
        assert_eq!(
            fixture,
            golden_batch(),
            "the event format changed: update the package's readers and the fixture together"
        );
        let described = std::fs::read_to_string(json).expect("golden/events.json (GUST_BLESS=1 cargo test writes it)");
        assert_eq!(described, golden_json());
    }

    #[test]
    fn every_golden_event_should_read_back_by_the_named_words() {
        let buf = golden_batch();
        let word = |i: usize| u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap());
        let mut at = 0;
        for (kind, flags, id, data) in golden() {
            let w = at / 4;
            assert_eq!(untag(word(w)), (kind as u8, crate::wire::VERSION, flags));
            assert_eq!(word(w + word::ID), id);
            match data {
                Ok(bytes) => {
                    let len = word(w + word::DATA_LEN) as usize;
                    assert_eq!(&buf[at + BODY_WORDS * 4..at + BODY_WORDS * 4 + len], bytes);
                }
                Err(request) if kind == Kind::WsOpen => assert_eq!(word(w + word::WS_REQUEST), request),
                Err(_) => assert_eq!(word(w + 1) as usize, EVENT_LEN),
            }
            at += word(w + 1) as usize;
        }
        assert_eq!(at, buf.len());
    }
}
