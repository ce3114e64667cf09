//! The doors the fuzz harnesses (`fuzz/` at the repository's root) come in by, built only with the `fuzzing`
//! feature. Each takes arbitrary bytes, runs one of the engine's own decoders on them, and panics when a property
//! the engine relies on fails, not only when the decoder itself panics:
//!
//! | door | decoder | property |
//! |---|---|---|
//! | [`ws_frames`] | WebSocket frames and reassembly | a frame read then written again gives the same bytes; the in-place read agrees with the buffered one; a message is whole, within its limit, UTF-8 when text |
//! | [`ws_deflate`] | permessage-deflate | what the engine compresses inflates back to it; arbitrary data inflates to at most the limit or is refused |
//! | [`ws_extension`] | `Sec-WebSocket-Extensions` offers | an agreement is one the answer states, with windows of 8–15 bits |
//! | [`answer_batch`] | the JavaScript → engine answer records | a decoded batch encodes back to the same words, text and bytes |
//! | [`range`] | `Range` | a satisfiable range lies inside the file |
//! | [`accept_encoding`] | `Accept-Encoding` and its q-values | the chosen coding is offered, accepted and ranked first |
//! | [`request_path`] | percent-decoding of paths | the routing form decodes to what the raw path decodes to |
//! | [`static_path`] | the static files' path guard | a path never resolves outside its root, nor to a dotfile unless allowed |
//! | [`content_coding`] | gzip, br and zstd (request bodies and responses) | what the engine compresses decodes back to it; a decoder never writes past its buffer or stalls |
//! | [`connection`] | whole connections, HTTP/1.1 or HTTP/2 (h2c by prior knowledge), through the real server | every connection is answered or closed in time, in the protocol it opened with, and the server goes on serving |
//!
//! `cargo test -p gust-core --features fuzzing` replays every committed input through them (`tests/fuzz_corpus.rs`);
//! `make fuzz` searches for new ones.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT_ENCODING, SEC_WEBSOCKET_EXTENSIONS};
use http::{HeaderMap, HeaderValue};

use crate::bodies::compress::decode::{Decoder, OUT_CHUNK};
use crate::bodies::compress::encoder;
use crate::bodies::compress::Encoding;
use crate::bodies::files::range::{self as ranges, Ranged};
use crate::bodies::files::resolve::{Found, Root};
use crate::values::path::{percent_decode, routing_path};
use crate::values::ws_options::{Compressor, DeflateOptions};
use crate::wire::answer::{
    AnswerBatch, Record, Text, ABORT, BINARY_BODY, CHUNK_WORDS, END, FILE, HEAD_WORDS, READ_WORDS, STOP, STREAM,
    UPGRADE,
};
use crate::wire::{tag, Kind};
use crate::ws::extension::{negotiate, Outbound};
use crate::ws::frame::{FrameDecoder, OpCode};
use crate::ws::message::{Assembler, Inflation, Message};

/// Splits off the first byte as a selector (0 when empty).
fn selector(data: &[u8]) -> (u8, &[u8]) {
    data.split_first().map_or((0, data), |(first, rest)| (*first, rest))
}

/// WebSocket frames read from a stream that arrives in pieces, then reassembled into messages.
///
/// The selector's bits: 0, permessage-deflate agreed; 1, the client keeps its context; 2–3, the message limit
/// (64 B, 1 KiB, 64 KiB, 1 MiB); 4–7, the size of the pieces the stream arrives in.
pub fn ws_frames(data: &[u8]) {
    let (sel, stream) = selector(data);
    let deflate = sel & 1 != 0;
    let inflation = match (deflate, sel & 2 != 0) {
        (false, _) => Inflation::Off,
        (true, false) => Inflation::Shared,
        (true, true) => Inflation::Own,
    };
    let max = [64usize, 1024, 64 * 1024, 1 << 20][usize::from(sel >> 2 & 3)];
    let piece = 1 + usize::from(sel >> 4) * 7;
    let decoder = FrameDecoder::new(max as u64, deflate);
    let mut assembler = Assembler::new(max, inflation);
    let mut buf = BytesMut::new();
    let mut at = 0;
    while at < stream.len() {
        let next = (at + piece).min(stream.len());
        buf.extend_from_slice(&stream[at..next]);
        at = next;
        loop {
            // The in-place reader (a single-frame message read where it lies) must see what the buffered one sees.
            let head = decoder.head(&buf);
            let before = buf.clone();
            let frame = match decoder.decode(&mut buf) {
                Ok(Some(frame)) => frame,
                Ok(None) => {
                    assert!(matches!(head, Ok(None) | Ok(Some(_))), "head refused what decode waits on");
                    assert_eq!(buf, before, "an incomplete frame consumed bytes");
                    break;
                }
                Err(e) => {
                    assert_eq!(head.err(), Some(e), "head and decode disagree");
                    return;
                }
            };
            let head = head.expect("decode accepted").expect("decode found a whole frame");
            let total = head.header + head.len;
            let mut raw = before[..total].to_vec();
            assert_eq!(head.payload(&mut raw), &frame.payload[..], "in-place and buffered payloads differ");
            assert_eq!((head.fin, head.compressed, head.opcode), (frame.fin, frame.compressed, frame.opcode));
            assert_eq!(
                reencode(&before[..head.header], &frame.payload, head.mask),
                &before[..total],
                "frame re-encoded"
            );
            assert!(frame.payload.len() <= max, "a payload over the limit was read");
            let compressed = frame.compressed;
            match assembler.push(frame) {
                Ok(Some(message)) => check_message(&message, max),
                Ok(None) => assert!(assembler.in_message(), "a fragment left no message in progress"),
                Err(violation) => {
                    assert!(matches!(violation.code, 1002 | 1007 | 1009), "close code {}", violation.code);
                    assert!(deflate || !compressed, "a compressed frame passed the decoder without deflate");
                    return;
                }
            }
        }
    }
}

/// The frame again from its header's first bytes (flags, length form, mask) and its unmasked payload.
fn reencode(header: &[u8], payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut out = header.to_vec();
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

fn check_message(message: &Message, max: usize) {
    match message {
        Message::Text(bytes) => {
            assert!(std::str::from_utf8(bytes).is_ok(), "a text message that is not UTF-8");
            assert!(bytes.len() <= max, "a message over the limit");
        }
        Message::Binary(bytes) => assert!(bytes.len() <= max, "a message over the limit"),
        Message::Ping(bytes) | Message::Pong(bytes) => assert!(bytes.len() <= 125, "a control payload over 125"),
        Message::Close(Some((code, reason))) => {
            assert!(matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999), "close code {code}");
            assert!(reason.len() <= 123);
        }
        Message::Close(None) => {}
    }
}

/// permessage-deflate: the data compressed by the shared and the dedicated compressors (each message of a
/// dedicated one keeping its context) must inflate back; the data taken as a compressed message must inflate to
/// at most the limit, or be refused with 1007 or 1009.
///
/// The selector's bits: 0–2, the window (8 + n, 15 at most); 3, text; 4–5, the limit for arbitrary data.
pub fn ws_deflate(data: &[u8]) {
    let (sel, payload) = selector(data);
    let bits = (8 + (sel & 7)).min(15);
    let text = sel & 8 != 0;
    let opcode = if text { OpCode::Text } else { OpCode::Binary };
    let max = [16usize, 1024, 64 * 1024, 1 << 20][usize::from(sel >> 4 & 3)];

    // Arbitrary bytes as a compressed message.
    let mut shared = Assembler::new(max, Inflation::Shared);
    match shared.inflate(text, payload, |out| out.len()) {
        Ok(len) => assert!(len <= max, "inflated past the limit"),
        Err(v) => assert!(matches!(v.code, 1007 | 1009), "close code {}", v.code),
    }

    // Round trips, the payload split into messages at its zero bytes (a dedicated compressor keeps its context
    // from one to the next, and so must the inflater).
    if bits == 8 {
        return; // agreed, never compressed to (zlib cannot keep to a 256-byte window)
    }
    let messages: Vec<&[u8]> = payload.split(|&b| b == 0).take(8).collect();
    let mut own = Assembler::new(usize::MAX, Inflation::Own);
    let mut dedicated = crate::service::ws::deflate::Dedicated::new(bits);
    for message in &messages {
        // A text message is checked as UTF-8 once inflated; bytes that are not UTF-8 go as binary.
        let (text, opcode) =
            if text && std::str::from_utf8(message).is_ok() { (true, opcode) } else { (false, OpCode::Binary) };
        let frame = crate::service::ws::deflate::shared_frame(opcode, message, bits);
        let back = inflate_frame(&mut Assembler::new(usize::MAX, Inflation::Shared), &frame, text);
        assert_eq!(back.as_deref(), Some(*message), "shared compressor round trip");
        let frame = dedicated.frame(opcode, message);
        let back = inflate_frame(&mut own, &frame, text);
        assert_eq!(back.as_deref(), Some(*message), "dedicated compressor round trip");
    }
}

/// The message one unmasked server frame holds: inflated when RSV1 says it is compressed (the compressor may
/// fall back to a plain frame), `None` when it does not inflate.
fn inflate_frame(assembler: &mut Assembler, frame: &[u8], text: bool) -> Option<Vec<u8>> {
    assert!(frame[0] & 0x80 != 0, "a whole message in one frame");
    let header = match frame[1] & 0x7F {
        126 => 4,
        127 => 10,
        _ => 2,
    };
    if frame[0] & 0x40 == 0 {
        return Some(frame[header..].to_vec());
    }
    assembler.inflate(text, &frame[header..], <[u8]>::to_vec).ok()
}

/// A `Sec-WebSocket-Extensions` header (lines split at newlines) against a route's options.
///
/// The selector's bits: 0, a dedicated compressor (else shared); 1, a dedicated decompressor.
pub fn ws_extension(data: &[u8]) {
    let (sel, text) = selector(data);
    let options = DeflateOptions {
        compress: if sel & 1 != 0 { Compressor::Dedicated } else { Compressor::Shared },
        dedicated_decompressor: sel & 2 != 0,
        threshold: 1024,
    };
    let mut headers = HeaderMap::new();
    for line in text.split(|&b| b == b'\n') {
        if let Ok(value) = HeaderValue::from_bytes(line) {
            headers.append(SEC_WEBSOCKET_EXTENSIONS, value);
        }
    }
    let Some((agreement, answer)) = negotiate(&headers, &options) else { return };
    let answer = answer.to_str().expect("an answer is ASCII");
    let mut params = answer.split(';').map(str::trim);
    assert_eq!(params.next(), Some("permessage-deflate"));
    let mut stated = (false, false);
    for param in params {
        let (name, value) = param.split_once('=').map_or((param, None), |(n, v)| (n, Some(v)));
        match (name, value) {
            ("server_no_context_takeover", None) => stated.0 = true,
            ("client_no_context_takeover", None) => stated.1 = true,
            ("server_max_window_bits" | "client_max_window_bits", Some(bits)) => {
                let bits: u8 = bits.parse().expect("a window is a number");
                assert!((8..=15).contains(&bits), "window {bits}");
            }
            _ => panic!("an unknown parameter in the answer: {param}"),
        }
    }
    match agreement.compress {
        Outbound::Dedicated(bits) => {
            assert!(!stated.0, "a kept context is answered server_no_context_takeover");
            assert!((9..=15).contains(&bits), "window {bits}");
        }
        Outbound::Shared(bits) => {
            assert!(stated.0, "a reset context is not announced");
            assert!((9..=15).contains(&bits), "window {bits}");
        }
        Outbound::Plain => {}
    }
    assert_eq!(agreement.client_takeover, !stated.1, "the client's context is kept only when not refused");
    assert!(!agreement.client_takeover || options.dedicated_decompressor, "a context kept without a decompressor");
}

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

/// A `Range` header against a file whose length the first eight bytes give.
pub fn range(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (len, header) = data.split_at(8);
    let len = u64::from_le_bytes(len.try_into().expect("eight bytes")) >> (len[0] & 63);
    match ranges::evaluate(header, len) {
        Ranged::Partial(r) => {
            assert!(r.start < r.end && r.end <= len, "range {r:?} outside a file of {len} bytes");
            let stated = ranges::content_range(&r, len);
            assert_eq!(stated, format!("bytes {}-{}/{len}", r.start, r.end - 1));
        }
        Ranged::Unsatisfiable => assert_eq!(ranges::unsatisfied_range(len), format!("bytes */{len}")),
        Ranged::Full => {}
    }
}

/// `Accept-Encoding` lines (split at newlines) against every order of the codings the engine offers.
pub fn accept_encoding(data: &[u8]) {
    let (sel, text) = selector(data);
    let mut headers = HeaderMap::new();
    for line in text.split(|&b| b == b'\n') {
        if let Ok(value) = HeaderValue::from_bytes(line) {
            headers.append(ACCEPT_ENCODING, value);
        }
    }
    let accepted = crate::bodies::compress::encoding::Accepted::from_headers(&headers);
    let mut offered = Encoding::ALL.to_vec();
    let n = offered.len();
    offered.rotate_left(usize::from(sel) % n);
    offered.truncate(1 + usize::from(sel >> 2) % n);
    let best = accepted.best(&offered);
    let ranked = accepted.ranked(&offered);
    assert_eq!(best, ranked.first().copied(), "the best is not ranked first");
    for coding in &ranked {
        assert!(offered.contains(coding), "{coding:?} was not offered");
    }
    let mut seen = ranked.clone();
    seen.dedup();
    assert_eq!(seen.len(), ranked.len(), "a coding ranked twice");
}

/// A request path: the routing form keeps `%2F` and `%25` escaped and decodes, once more, to what the raw path
/// decodes to.
pub fn request_path(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let Some(routed) = routing_path(raw) else {
        return;
    };
    let mut rest = routed.as_ref();
    while let Some(at) = rest.find('%') {
        let escape = rest.get(at..at + 3);
        assert!(matches!(escape, Some("%2F" | "%25")), "routing form keeps {escape:?}");
        rest = &rest[at + 3..];
    }
    assert_eq!(percent_decode(&routed).as_deref(), percent_decode(raw).as_deref(), "decoded twice differs");
}

/// The static files' guard: a root with files, a dotfile, a directory and links in and out, beside a sibling
/// whose name extends the root's and a directory outside it.
pub fn static_path(data: &[u8]) {
    let (sel, raw) = selector(data);
    let Ok(raw) = std::str::from_utf8(raw) else { return };
    let tree = fixture_tree();
    let mut root = Root::new(tree.join("root")).expect("the fixture root");
    root.dotfiles = sel & 1 != 0;
    let dir = root.dir().to_path_buf();
    let Some(found) = root.resolve(raw) else { return };
    let path = match found {
        Found::File(path, meta) => {
            assert!(meta.is_file());
            path
        }
        Found::Directory(path) => path,
    };
    assert!(path.starts_with(&dir), "{raw:?} resolved to {} outside {}", path.display(), dir.display());
    if !root.dotfiles {
        let hidden = path
            .strip_prefix(&dir)
            .expect("inside")
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        assert!(!hidden, "{raw:?} resolved to a dotfile: {}", path.display());
    }
}

/// The tree [`static_path`] serves, made once per process under the system's temporary directory.
fn fixture_tree() -> &'static Path {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("gust-fuzz-tree-{}", std::process::id()));
        let write = |rel: &str, body: &str| {
            let path = base.join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("fixture dir");
            std::fs::write(path, body).expect("fixture file");
        };
        write("root/index.html", "index");
        write("root/a.txt", "a");
        write("root/.env", "secret");
        write("root/dir/b.txt", "b");
        write("root/dir/.git/config", "secret");
        write("root-evil/x.txt", "outside");
        write("outside/secret.txt", "outside");
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink(base.join("outside/secret.txt"), base.join("root/out-link"));
            let _ = std::os::unix::fs::symlink(base.join("outside"), base.join("root/out-dir"));
            let _ = std::os::unix::fs::symlink(base.join("root/a.txt"), base.join("root/dir/in-link"));
        }
        base
    })
}

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

/// What HTTP/2's client sends first (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The server [`connection`] talks to, started once: a turbo route, and dynamic routes answered by a thread
/// standing in for JavaScript; short timeouts, so a connection that stalls is closed within a second.
fn fuzz_server() -> std::net::SocketAddr {
    static SERVER: OnceLock<(std::sync::Arc<crate::Server>, std::net::SocketAddr)> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            use std::sync::{mpsc, Arc, Mutex};
            use std::time::Duration;

            struct Forward(Mutex<mpsc::Sender<crate::RequestBatch>>);
            impl crate::Handler for Forward {
                fn handle(&self, batch: crate::RequestBatch) -> Result<(), crate::Closed> {
                    self.0.lock().unwrap_or_else(|e| e.into_inner()).send(batch).map_err(|_| crate::Closed)
                }
            }
            let mut routes = crate::RouteTable::builder();
            let hi = crate::FixedResponse::new(200, [("content-type", "text/plain")], Bytes::from_static(b"hi"))
                .expect("a valid fixed response");
            routes.add("GET", "/", crate::Target::Fixed(std::sync::Arc::new(hi))).expect("a route");
            routes.add("ALL", "/dyn/*", crate::Target::Dynamic(1)).expect("a route");
            let mut config = crate::Config::default();
            config.addrs = vec!["127.0.0.1:0".parse().expect("an address")];
            config.io_threads = 1;
            config.header_timeout = Duration::from_millis(500);
            config.idle_timeout = Duration::from_millis(500);
            config.body_timeout = Duration::from_millis(500);
            config.handler_timeout = Some(Duration::from_millis(500));
            let (tx, rx) = mpsc::channel();
            let server = Arc::new(
                crate::Server::start(config, routes.build(), Arc::new(Forward(Mutex::new(tx)))).expect("a server"),
            );
            let responder = server.responder();
            // Every request is answered `200 ok` at once (its body, if it streams, is left unread).
            std::thread::spawn(move || {
                for batch in rx {
                    let bytes = batch.into_bytes();
                    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
                    let mut meta = Vec::new();
                    let mut bodies = Vec::new();
                    let mut at = 0;
                    while at + 12 <= bytes.len() {
                        let (kind, len) = (word(at) & 0xff, word(at + 4) as usize);
                        if kind == 1 {
                            meta.extend([2 | u32::from(crate::wire::VERSION) << 8 | u32::from(BINARY_BODY) << 16, word(at + 8), 200, 0, 2]);
                            bodies.push(Bytes::from_static(b"ok"));
                        }
                        if len == 0 {
                            break;
                        }
                        at += len;
                    }
                    if !meta.is_empty() {
                        let answers = AnswerBatch::decode(&meta, Text::Ascii(Bytes::new()), bodies).expect("valid answers");
                        responder.respond(answers.records());
                    }
                }
            });
            let addr = server.local_addrs()[0];
            (server, addr)
        })
        .1
}

/// Sends `data` on a fresh connection, half-closes it, and reads until the server closes; panics when it has
/// done neither within five seconds.
fn exchange(addr: std::net::SocketAddr, data: &[u8]) -> Vec<u8> {
    use std::io::{ErrorKind, Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("the fuzz server takes connections");
    s.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("a timeout");
    // The server may refuse the bytes before they are all written (a 400 and a close): nothing more to send.
    let _ = s.write_all(data);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!("the connection was neither answered nor closed within 5 s ({} bytes came)", out.len())
            }
            // A reset after an error answer: the connection is over.
            Err(_) => return out,
        }
    }
}

/// Whole connections through the real server: bytes that open with HTTP/2's preface are HTTP/2 (h2c by prior
/// knowledge), anything else HTTP/1.1. Each connection must be answered or closed in time (the server's timeouts
/// are half a second), in the protocol it opened with: HTTP/1.1 status lines, or HTTP/2 frames starting with the
/// server's SETTINGS. Every 256 inputs, a plain request on a new connection must still be answered.
pub fn connection(data: &[u8]) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let addr = fuzz_server();
    let out = exchange(addr, data);
    if !out.is_empty() {
        if data.starts_with(H2_PREFACE) {
            // A frame header: 24-bit length, then its type; the server's first frame is SETTINGS (type 4).
            assert!(out.len() >= 9 && out[3] == 4, "an HTTP/2 connection answered with {:?}", &out[..out.len().min(32)]);
        } else {
            assert!(out.starts_with(b"HTTP/1."), "an HTTP/1.1 connection answered with {:?}", &out[..out.len().min(32)]);
        }
    }
    if RUNS.fetch_add(1, Ordering::Relaxed) % 256 == 0 {
        let ok = exchange(addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n");
        assert!(ok.starts_with(b"HTTP/1.1 200 ") && ok.ends_with(b"hi"), "the server stopped serving: {:?}", String::from_utf8_lossy(&ok));
    }
}
