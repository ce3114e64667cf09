//! The door for the answer records JavaScript sends the engine: decoded, then encoded back.

use bytes::Bytes;

use super::selector;
use crate::wire::answer::{
    AnswerBatch, Record, Text, ABORT, BINARY_BODY, CHUNK_WORDS, END, FILE, HEAD_WORDS, READ_WORDS, STOP, STREAM,
    UPGRADE,
};
use crate::wire::{tag, Kind};

/// An answer batch from a meta array, a text and byte bodies; one that decodes must encode back to them.
///
/// Layout: the selector's low two bits count byte bodies (each a length byte then its bytes); bit 2 reads the
/// text as UTF-16 (pairs of bytes) instead of ASCII; then a meta word count (one byte) and that many words
/// (little-endian); the rest is the text.
pub fn answer_batch(data: &[u8]) {
    let (sel, mut rest) = selector(data);
    let mut binary = Vec::new();
    for _ in 0..sel & 3 {
        let Some((&len, tail)) = rest.split_first() else { return };
        let len = usize::from(len).min(tail.len());
        binary.push(Bytes::copy_from_slice(&tail[..len]));
        rest = &tail[len..];
    }
    let Some((&words, tail)) = rest.split_first() else { return };
    let words = usize::from(words).min(tail.len() / 4);
    let meta: Vec<u32> =
        tail[..words * 4].chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    let raw_text = &tail[words * 4..];
    let utf16 = sel & 4 != 0;
    let text = if utf16 {
        Text::Utf16(raw_text.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect())
    } else {
        if !raw_text.is_ascii() {
            return; // the binding reads a string as ASCII only when it is
        }
        Text::Ascii(Bytes::copy_from_slice(raw_text))
    };
    let Ok(batch) = AnswerBatch::decode(&meta, text, binary.clone()) else { return };
    let (known, flags) = known_bits(&meta);
    let (meta2, text2, binary2) = encode_answers(&batch, &flags);
    if !utf16 {
        assert_eq!(meta2, known, "meta re-encoded");
        assert_eq!(text2, raw_text, "text re-encoded");
    }
    assert_eq!(binary2, binary, "byte bodies re-encoded");
    // The re-encoded batch (its text now UTF-8, so ASCII only where it was) decodes to the same records.
    if text2.is_ascii() {
        let again =
            AnswerBatch::decode(&meta2, Text::Ascii(Bytes::from(text2.clone())), binary2).expect("re-encoded batch");
        assert_eq!(encode_answers(&again, &flags), (meta2, text2, binary), "a second round trip");
    }
}

/// `meta` with the flag bits no record kind defines, and read records' reserved word, cleared (what an encoder
/// writes), and whether each record's bytes are a byte body (which a record does not say once decoded).
fn known_bits(meta: &[u32]) -> (Vec<u32>, Vec<bool>) {
    let mut out = meta.to_vec();
    let mut binary = Vec::new();
    let mut at = 0;
    while at < out.len() {
        let (kind, flags) = ((out[at] & 0xFF) as u8, (out[at] >> 16) as u16);
        let (known, words) = if kind == Kind::Answer as u8 {
            (BINARY_BODY | STREAM | FILE | UPGRADE, HEAD_WORDS + 2 * out[at + 3] as usize)
        } else if kind == Kind::Chunk as u8 {
            (BINARY_BODY | END | ABORT, CHUNK_WORDS)
        } else {
            out[at + 2] = 0;
            (STOP, READ_WORDS)
        };
        out[at] = (out[at] & 0xFFFF) | u32::from(flags & known) << 16;
        binary.push(flags & known & BINARY_BODY != 0);
        at += words;
    }
    (out, binary)
}

/// A batch's records written back in the format: meta, text (UTF-8) and byte bodies; `binary` says which
/// records' bytes are byte bodies.
fn encode_answers(batch: &AnswerBatch, binary_bodies: &[bool]) -> (Vec<u32>, Vec<u8>, Vec<Bytes>) {
    let (mut meta, mut text, mut binary) = (Vec::new(), Vec::new(), Vec::new());
    // Lengths count UTF-16 units; for the ASCII text compared byte for byte, units and bytes coincide.
    let units = |bytes: &[u8]| String::from_utf8_lossy(bytes).encode_utf16().count() as u32;
    for (record, &is_binary) in batch.records().zip(binary_bodies) {
        let body_flag = if is_binary { BINARY_BODY } else { 0 };
        let mut body = |bytes: Bytes, text: &mut Vec<u8>| {
            let len = if is_binary { bytes.len() as u32 } else { units(&bytes) };
            if is_binary {
                binary.push(bytes);
            } else {
                text.extend_from_slice(&bytes);
            }
            len
        };
        match record {
            Record::Answer(a) => {
                let flags = body_flag
                    | if a.stream { STREAM } else { 0 }
                    | if a.file { FILE } else { 0 }
                    | if a.upgrade { UPGRADE } else { 0 };
                let at = meta.len();
                meta.extend([tag(Kind::Answer, flags), a.id, a.status, a.headers.len() as u32, 0]);
                for (name, value) in a.headers {
                    meta.extend([units(name), units(&value)]);
                    text.extend_from_slice(name);
                    text.extend_from_slice(&value);
                }
                meta[at + 4] = body(a.body, &mut text);
            }
            Record::Chunk(c) => {
                let flags = body_flag | if c.end { END } else { 0 } | if c.abort { ABORT } else { 0 };
                let len = body(c.data, &mut text);
                meta.extend([tag(Kind::Chunk, flags), c.id, len]);
            }
            Record::Read { id, stop } => meta.extend([tag(Kind::Read, if stop { STOP } else { 0 }), id, 0]),
        }
    }
    (meta, text, binary)
}
