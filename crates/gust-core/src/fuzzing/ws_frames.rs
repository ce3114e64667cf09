//! The door for WebSocket frames and their reassembly into messages.

use bytes::BytesMut;

use super::selector;
use crate::service::ws::frame::FrameDecoder;
use crate::service::ws::message::{Assembler, Inflation, Message};

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
