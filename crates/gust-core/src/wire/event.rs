//! Event records: what the engine tells JavaScript about a request it already handed over. They travel in the
//! same batches as [`super::request`] records, interleaved in the order they happened.
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Drain`](super::Kind::Drain) or [`Kind::Cancel`](super::Kind::Cancel), [`VERSION`](super::VERSION), flags ([`COMPLETE`], [`SIGNAL_ONLY`]) |
//! | 1 | record length in bytes: [`EVENT_LEN`] |
//! | 2 | the request id |

use super::{tag, Kind};

/// Bytes in an event record.
pub const EVENT_LEN: usize = 12;
/// Cancel flag: the response is complete (a HEAD, a 204 or 304, a declared length reached) and its body is no
/// longer wanted: stop the producer, but the request did not fail (its signal does not abort).
pub const COMPLETE: u16 = 1;
/// Cancel flag: the client stopped sending while its handler works; it may be gone, or only half-closed and still
/// waiting: abort the request's signal, but keep sending what the handler answers.
pub const SIGNAL_ONLY: u16 = 2;

/// Appends one event about request `id`.
pub(crate) fn encode_event(buf: &mut Vec<u8>, kind: Kind, flags: u16, id: u32) {
    for word in [tag(kind, flags), EVENT_LEN as u32, id] {
        buf.extend_from_slice(&word.to_le_bytes());
    }
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
}
