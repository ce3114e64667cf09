//! The door for permessage-deflate: the engine's compressors and inflater.

use super::selector;
use crate::service::ws::deflate::{shared_frame, Dedicated};
use crate::service::ws::frame::OpCode;
use crate::service::ws::message::{Assembler, Inflation};

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
    let mut dedicated = Dedicated::new(bits);
    for message in &messages {
        // A text message is checked as UTF-8 once inflated; bytes that are not UTF-8 go as binary.
        let (text, opcode) =
            if text && std::str::from_utf8(message).is_ok() { (true, opcode) } else { (false, OpCode::Binary) };
        let frame = shared_frame(opcode, message, bits);
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
