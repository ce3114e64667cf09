//! Event records: what the engine tells JavaScript about a request it already handed over. They travel in the
//! same batches as [`super::request`] records, interleaved in the order they happened.
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Drain`](super::Kind::Drain) or [`Kind::Cancel`](super::Kind::Cancel), [`VERSION`](super::VERSION), no flags |
//! | 1 | record length in bytes: [`EVENT_LEN`] |
//! | 2 | the request id |

use super::{tag, Kind};

/// Bytes in an event record.
pub const EVENT_LEN: usize = 12;

/// Appends one event about request `id`.
pub(crate) fn encode_event(buf: &mut Vec<u8>, kind: Kind, id: u32) {
    for word in [tag(kind, 0), EVENT_LEN as u32, id] {
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
        encode_event(&mut buf, Kind::Cancel, 42);
        assert_eq!(buf.len(), EVENT_LEN);
        let word = |i: usize| u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(untag(word(0)), (Kind::Cancel as u8, crate::wire::VERSION, 0));
        assert_eq!((word(1), word(2)), (EVENT_LEN as u32, 42));
    }
}
