//! A published message as it travels through Redis: a marker, the publishing relay's id (so a process drops
//! its own messages when Redis echoes them back), the kind and the sender's word on compression, then the
//! payload as given. Eighteen bytes of overhead; the payload is not re-encoded.

use crate::service::ws::Payload;

/// First byte of every envelope: a message that does not start with it was not published by Gust.
const MARK: u8 = 0xC7;
const BINARY: u8 = 1;
/// The sender said whether to compress (`COMPRESS_ON` says which).
const COMPRESS_SAID: u8 = 2;
const COMPRESS_ON: u8 = 4;
/// Marker, flags, origin.
pub(crate) const HEADER: usize = 2 + 16;

/// Encodes a publish from relay `origin`.
pub(crate) fn encode(origin: &[u8; 16], payload: Payload<'_>, compress: Option<bool>) -> Vec<u8> {
    let (kind, bytes) = match payload {
        Payload::Text(t) => (0, t.as_bytes()),
        Payload::Binary(b) => (BINARY, b),
    };
    let said = match compress {
        None => 0,
        Some(false) => COMPRESS_SAID,
        Some(true) => COMPRESS_SAID | COMPRESS_ON,
    };
    let mut out = Vec::with_capacity(HEADER + bytes.len());
    out.push(MARK);
    out.push(kind | said);
    out.extend_from_slice(origin);
    out.extend_from_slice(bytes);
    out
}

/// A message read from Redis.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Received<'a> {
    pub(crate) origin: &'a [u8],
    pub(crate) payload: Payload<'a>,
    pub(crate) compress: Option<bool>,
}

/// Decodes `bytes`; `None` for anything Gust did not publish (another client's message on the channel, a text
/// message that is not UTF-8): such messages are dropped, never delivered as something else.
pub(crate) fn decode(bytes: &[u8]) -> Option<Received<'_>> {
    if bytes.len() < HEADER || bytes[0] != MARK {
        return None;
    }
    let flags = bytes[1];
    if flags & !(BINARY | COMPRESS_SAID | COMPRESS_ON) != 0 {
        return None;
    }
    let body = &bytes[HEADER..];
    let payload =
        if flags & BINARY != 0 { Payload::Binary(body) } else { Payload::Text(std::str::from_utf8(body).ok()?) };
    let compress = (flags & COMPRESS_SAID != 0).then_some(flags & COMPRESS_ON != 0);
    Some(Received { origin: &bytes[2..HEADER], payload, compress })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_encoded_decodes_the_same_and_anything_else_is_refused() {
        let origin = [7u8; 16];
        for (payload, compress) in [
            (Payload::Text("héllo"), None),
            (Payload::Binary(&[0, 255, 1][..]), Some(true)),
            (Payload::Text(""), Some(false)),
        ] {
            let bytes = encode(&origin, payload, compress);
            assert_eq!(decode(&bytes), Some(Received { origin: &origin, payload, compress }));
        }
        assert_eq!(decode(b"plain text someone published"), None);
        let mut bad_utf8 = encode(&origin, Payload::Binary(&[0xff, 0xfe]), None);
        bad_utf8[1] = 0;
        assert_eq!(decode(&bad_utf8), None, "text that is not UTF-8");
        let mut unknown = encode(&origin, Payload::Text("x"), None);
        unknown[1] = 0x80;
        assert_eq!(decode(&unknown), None, "flags from a later version");
        assert_eq!(decode(&[MARK, 0]), None, "short");
    }
}
