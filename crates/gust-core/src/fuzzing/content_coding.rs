//! The door for content codings (gzip, br, zstd): the engine's encoders and its request-body decoder.

use super::selector;
use crate::bodies::compress::decode::{Decoder, OUT_CHUNK};
use crate::bodies::compress::{encoder, Encoding};

/// A content coding: the data compressed by the engine decodes back to it, and the data taken as a coded body
/// decodes with bounded output per call and always progresses.
///
/// The selector's bits: 0–1, the coding (gzip, br, zstd); 2–3, the level (1–4: the levels a response is
/// compressed at on the fly; higher ones only cost the fuzzer time); 5–7, the decoder's input piece size.
pub fn content_coding(data: &[u8]) {
    let (sel, payload) = selector(data);
    let encoding = [Encoding::Gzip, Encoding::Br, Encoding::Zstd][usize::from(sel & 3) % 3];
    let level = i32::from(sel >> 2 & 3) + 1;
    let piece = 1 + usize::from(sel >> 5) * 97;

    let coded = encoder::compress(encoding, level, payload).expect("compression");
    let (decoded, ended) = decode_all(encoding, &coded, piece).expect("the engine's own output decodes");
    assert!(ended, "the engine's output ends its coded body");
    assert_eq!(decoded, payload, "round trip");

    // The same through the streaming encoder, flushed after every piece, as a streamed response is.
    let mut streaming = encoder::Encoder::new(encoding, level).expect("an encoder");
    let mut coded = Vec::new();
    for part in payload.chunks(piece) {
        coded.extend_from_slice(&streaming.push(part, true).expect("a flush"));
    }
    coded.extend_from_slice(&streaming.finish().expect("the end"));
    let (decoded, ended) = decode_all(encoding, &coded, piece).expect("the streaming output decodes");
    assert!(ended);
    assert_eq!(decoded, payload, "streaming round trip");

    // Arbitrary bytes as a coded body: refused, or decoded a bounded chunk at a time, capped like a body limit.
    let _ = decode_all(encoding, payload, piece);
}

/// Decodes `coded` fed in pieces of `piece` bytes, with [`OUT_CHUNK`]-sized output buffers, up to 4 MiB out.
fn decode_all(encoding: Encoding, coded: &[u8], piece: usize) -> Option<(Vec<u8>, bool)> {
    let mut decoder = Decoder::new(encoding);
    let mut out = Vec::new();
    let mut chunk = vec![0u8; OUT_CHUNK];
    let mut at = 0;
    loop {
        let input = &coded[at..(at + piece).min(coded.len())];
        let (used, made, ended) = decoder.run(input, &mut chunk).ok()?;
        assert!(used <= input.len() && made <= chunk.len(), "a decoder went past its buffers");
        out.extend_from_slice(&chunk[..made]);
        at += used;
        if ended {
            return Some((out, true));
        }
        if out.len() > 4 << 20 {
            return Some((out, false));
        }
        if used == 0 && made == 0 {
            // Truncated: the body's end is the caller's to judge. Otherwise, no progress with input left and room
            // to write is a stall the request would hang on.
            assert!(at == coded.len(), "a decoder made no progress at byte {at} of {}", coded.len());
            return Some((out, false));
        }
    }
}
