//! WebSocket frames (RFC 6455 §5): client frames decoded from a connection's bytes, server frames encoded.
//!
//! Server frames are never masked (§5.1), so one encoded frame can be written, as the same bytes, to every
//! subscriber of a topic: publishing frames a message once.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// A frame's opcode (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpCode {
    /// The next fragment of a message.
    Continuation,
    /// A text message (UTF-8).
    Text,
    /// A binary message.
    Binary,
    /// The close handshake.
    Close,
    /// A ping, answered with a pong carrying the same payload.
    Ping,
    /// A pong.
    Pong,
}

impl OpCode {
    fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            0x0 => OpCode::Continuation,
            0x1 => OpCode::Text,
            0x2 => OpCode::Binary,
            0x8 => OpCode::Close,
            0x9 => OpCode::Ping,
            0xA => OpCode::Pong,
            _ => return None,
        })
    }

    fn bits(self) -> u8 {
        match self {
            OpCode::Continuation => 0x0,
            OpCode::Text => 0x1,
            OpCode::Binary => 0x2,
            OpCode::Close => 0x8,
            OpCode::Ping => 0x9,
            OpCode::Pong => 0xA,
        }
    }

    /// Close, ping and pong: at most 125 bytes, never fragmented, allowed between a message's fragments.
    pub fn is_control(self) -> bool {
        matches!(self, OpCode::Close | OpCode::Ping | OpCode::Pong)
    }
}

/// One decoded frame, its payload unmasked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The last fragment of its message.
    pub fin: bool,
    /// RSV1: the first frame of a compressed message (permessage-deflate, RFC 7692 §6).
    pub compressed: bool,
    /// What the frame carries.
    pub opcode: OpCode,
    /// The payload.
    pub payload: Bytes,
}

/// Why a client's bytes are not a valid frame; the connection is then closed with [`FrameError::close_code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// Reserved bits set that no extension gives a meaning (RSV1 is permessage-deflate's, on a message's first
    /// frame only), an unknown opcode, an unmasked client frame, a fragmented or oversized control frame, or a
    /// 64-bit length with its top bit set (§5.2).
    Protocol(&'static str),
    /// A payload over the server's limit.
    TooBig,
}

impl FrameError {
    /// The close code that reports it (§7.4.1): 1002 protocol error, 1009 message too big.
    pub fn close_code(self) -> u16 {
        match self {
            FrameError::Protocol(_) => 1002,
            FrameError::TooBig => 1009,
        }
    }
}

/// Decodes client frames from a connection's bytes, refusing payloads over `max_payload` before reading them.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_payload: u64,
    /// permessage-deflate was agreed: RSV1 marks a compressed message.
    deflate: bool,
}

impl FrameDecoder {
    /// A decoder for frames whose payload is at most `max_payload` bytes; `deflate`: permessage-deflate was
    /// agreed, so a data frame that begins a message may carry RSV1.
    pub fn new(max_payload: u64, deflate: bool) -> Self {
        Self { max_payload, deflate }
    }

    /// Reads the header of the frame at the front of `buf`, checking it; `Ok(None)` when the header is not all
    /// there yet. Refuses a payload over the limit before any of it is read.
    pub fn head(&self, buf: &[u8]) -> Result<Option<Head>, FrameError> {
        if buf.len() < 2 {
            return Ok(None);
        }
        let (b0, b1) = (buf[0], buf[1]);
        if b0 & 0x30 != 0 {
            return Err(FrameError::Protocol("reserved bits set without an extension"));
        }
        let fin = b0 & 0x80 != 0;
        let compressed = b0 & 0x40 != 0;
        let opcode = OpCode::from_bits(b0 & 0x0F).ok_or(FrameError::Protocol("unknown opcode"))?;
        if compressed {
            if !self.deflate {
                return Err(FrameError::Protocol("reserved bits set without an extension"));
            }
            // RFC 7692 §6: a message's first frame says it is compressed; control frames never are.
            if !matches!(opcode, OpCode::Text | OpCode::Binary) {
                return Err(FrameError::Protocol("RSV1 on a control or continuation frame"));
            }
        }
        if b1 & 0x80 == 0 {
            return Err(FrameError::Protocol("a client frame must be masked"));
        }
        let (len, header) = match b1 & 0x7F {
            126 => {
                if buf.len() < 4 {
                    return Ok(None);
                }
                (u64::from(u16::from_be_bytes([buf[2], buf[3]])), 4)
            }
            127 => {
                if buf.len() < 10 {
                    return Ok(None);
                }
                let mut raw = [0u8; 8];
                raw.copy_from_slice(&buf[2..10]);
                let len = u64::from_be_bytes(raw);
                if len >> 63 != 0 {
                    return Err(FrameError::Protocol("a 64-bit length must have its top bit clear"));
                }
                (len, 10)
            }
            n => (u64::from(n), 2),
        };
        if opcode.is_control() {
            if !fin {
                return Err(FrameError::Protocol("a control frame cannot be fragmented"));
            }
            if len > 125 {
                return Err(FrameError::Protocol("a control frame carries at most 125 bytes"));
            }
        }
        if len > self.max_payload {
            return Err(FrameError::TooBig);
        }
        if buf.len() < header + 4 {
            return Ok(None);
        }
        let mut mask = [0u8; 4];
        mask.copy_from_slice(&buf[header..header + 4]);
        Ok(Some(Head { fin, compressed, opcode, header: header + 4, len: len as usize, mask }))
    }

    /// Takes the next whole frame from the front of `buf`; `Ok(None)` when more bytes are needed (nothing is
    /// consumed then). Cost: one pass unmasking the payload, in place; the payload shares `buf`'s memory.
    pub fn decode(&self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(head) = self.head(buf)? else { return Ok(None) };
        let total = head.header + head.len;
        if buf.len() < total {
            buf.reserve(total - buf.len());
            return Ok(None);
        }
        buf.advance(head.header);
        let mut payload = buf.split_to(head.len);
        unmask(&mut payload, head.mask);
        Ok(Some(Frame { fin: head.fin, compressed: head.compressed, opcode: head.opcode, payload: payload.freeze() }))
    }
}

/// A checked frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The last fragment of its message.
    pub fin: bool,
    /// RSV1: the first frame of a compressed message.
    pub compressed: bool,
    /// What the frame carries.
    pub opcode: OpCode,
    /// Bytes before the payload, the mask included.
    pub header: usize,
    /// Payload bytes.
    pub len: usize,
    /// The client's masking key.
    pub mask: [u8; 4],
}

impl Head {
    /// Unmasks the payload of this frame where it lies, at the front of `frame` (the frame's bytes from its
    /// header on), and returns it.
    pub fn payload<'a>(&self, frame: &'a mut [u8]) -> &'a mut [u8] {
        let payload = &mut frame[self.header..self.header + self.len];
        unmask(payload, self.mask);
        payload
    }
}

/// XORs `data` with the 4-byte `mask` (§5.3), eight bytes at a time.
fn unmask(data: &mut [u8], mask: [u8; 4]) {
    let wide = u64::from_ne_bytes([mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3]]);
    let mut chunks = data.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(word) ^ wide).to_ne_bytes());
    }
    for (i, byte) in chunks.into_remainder().iter_mut().enumerate() {
        *byte ^= mask[i % 4];
    }
}

/// Encodes one server frame (unmasked), header and payload in one buffer.
pub fn encode(fin: bool, opcode: OpCode, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(payload.len() + 10);
    put_head(&mut out, if fin { 0x80 } else { 0 } | opcode.bits(), 0, payload.len());
    out.extend_from_slice(payload);
    out.freeze()
}

/// Encodes one server frame that holds a whole compressed message (FIN and RSV1 set, RFC 7692 §6.1): `deflated`
/// is the message compressed, without the 4-byte tail a sync flush ends with.
pub fn encode_compressed(opcode: OpCode, deflated: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(deflated.len() + 10);
    put_head(&mut out, 0xC0 | opcode.bits(), 0, deflated.len());
    out.extend_from_slice(deflated);
    out.freeze()
}

/// Encodes one client frame, masked with `mask` (§5.3): what a client sends (tests, load tools).
pub fn encode_masked(fin: bool, opcode: OpCode, payload: &[u8], mask: [u8; 4]) -> Bytes {
    masked(if fin { 0x80 } else { 0 } | opcode.bits(), payload, mask)
}

/// A masked frame whose first byte is `first` (flags and opcode, as they go on the wire).
fn masked(first: u8, payload: &[u8], mask: [u8; 4]) -> Bytes {
    let mut out = BytesMut::with_capacity(payload.len() + 14);
    put_head(&mut out, first, 0x80, payload.len());
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out.freeze()
}

/// The first byte, then the length in its shortest form with `mask_bit` on its first byte.
fn put_head(out: &mut BytesMut, first: u8, mask_bit: u8, len: usize) {
    out.put_u8(first);
    match len {
        n if n < 126 => out.put_u8(mask_bit | n as u8),
        n if n <= 0xFFFF => {
            out.put_u8(mask_bit | 126);
            out.put_u16(n as u16);
        }
        n => {
            out.put_u8(mask_bit | 127);
            out.put_u64(n as u64);
        }
    }
}

/// A server close frame with `code` and `reason` (see [`close_payload`]).
pub fn close(code: u16, reason: &str) -> Bytes {
    encode(true, OpCode::Close, &close_payload(code, reason))
}

/// A close frame's payload: the code, then the reason (cut to fit 125 bytes at a character boundary).
pub fn close_payload(code: u16, reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = Vec::with_capacity(2 + end);
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(&reason.as_bytes()[..end]);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A client frame: masked with `mask`, with any opcode bits (reserved ones too).
    pub(crate) fn client_frame(fin: bool, opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        masked(if fin { 0x80 } else { 0 } | opcode, payload, mask).to_vec()
    }

    #[test]
    fn frames_of_every_length_form_decode_whole_and_byte_by_byte() {
        let d = FrameDecoder::new(1 << 20, false);
        for len in [0usize, 1, 7, 125, 126, 65_535, 65_536, 200_000] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let raw = client_frame(true, 0x2, &payload, [0x12, 0x34, 0x56, 0x78]);
            let mut buf = BytesMut::from(&raw[..]);
            let frame = d.decode(&mut buf).unwrap().unwrap();
            assert_eq!((frame.fin, frame.opcode, &frame.payload[..]), (true, OpCode::Binary, &payload[..]));
            assert!(buf.is_empty());
            if len <= 126 {
                let mut buf = BytesMut::new();
                for (i, b) in raw.iter().enumerate() {
                    buf.put_u8(*b);
                    let got = d.decode(&mut buf).unwrap();
                    assert_eq!(got.is_some(), i + 1 == raw.len(), "len {len}, byte {i}");
                }
            }
        }
    }

    #[test]
    fn protocol_violations_are_refused_with_their_close_code() {
        let d = FrameDecoder::new(1000, false);
        let refuse = |raw: Vec<u8>| d.decode(&mut BytesMut::from(&raw[..])).unwrap_err();
        let mask = [1, 2, 3, 4];
        assert_eq!(refuse(vec![0x81, 0x01, b'a']).close_code(), 1002, "unmasked");
        let mut rsv = client_frame(true, 0x1, b"a", mask);
        rsv[0] |= 0x40;
        assert_eq!(refuse(rsv).close_code(), 1002);
        assert_eq!(refuse(client_frame(true, 0x3, b"", mask)).close_code(), 1002, "reserved opcode");
        assert_eq!(refuse(client_frame(false, 0x9, b"", mask)).close_code(), 1002, "fragmented ping");
        assert_eq!(refuse(client_frame(true, 0x9, &[0; 126], mask)).close_code(), 1002, "long ping");
        assert_eq!(refuse(client_frame(true, 0x2, &[0; 1001], mask)), FrameError::TooBig);
        let mut huge = vec![0x82, 0x80 | 127];
        huge.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(refuse(huge).close_code(), 1002);
    }

    #[test]
    fn rsv1_marks_a_compressed_message_only_where_deflate_was_agreed() {
        let mask = [9, 8, 7, 6];
        let with_rsv1 = |opcode: u8, fin: bool| {
            let mut raw = client_frame(fin, opcode, b"x", mask);
            raw[0] |= 0x40;
            raw
        };
        let plain = FrameDecoder::new(1000, false);
        let agreed = FrameDecoder::new(1000, true);
        let decode = |d: &FrameDecoder, raw: Vec<u8>| d.decode(&mut BytesMut::from(&raw[..]));
        assert_eq!(decode(&plain, with_rsv1(0x1, true)).unwrap_err().close_code(), 1002, "not agreed");
        let frame = decode(&agreed, with_rsv1(0x2, false)).unwrap().unwrap();
        assert!(frame.compressed && !frame.fin && frame.opcode == OpCode::Binary);
        assert!(!decode(&agreed, client_frame(true, 0x1, b"x", mask)).unwrap().unwrap().compressed);
        for opcode in [0x0, 0x8, 0x9, 0xA] {
            assert_eq!(decode(&agreed, with_rsv1(opcode, true)).unwrap_err().close_code(), 1002, "opcode {opcode}");
        }
        for bit in [0x20, 0x10] {
            let mut raw = client_frame(true, 0x1, b"x", mask);
            raw[0] |= bit;
            assert_eq!(decode(&agreed, raw).unwrap_err().close_code(), 1002, "RSV2 and RSV3 have no meaning");
        }
        assert_eq!(&encode_compressed(OpCode::Text, b"ab")[..], &[0xC1, 2, b'a', b'b']);
    }

    #[test]
    fn server_frames_are_unmasked_with_the_shortest_length() {
        assert_eq!(&encode(true, OpCode::Text, b"hi")[..], &[0x81, 2, b'h', b'i']);
        assert_eq!(&encode(false, OpCode::Binary, &[0; 126])[..4], &[0x02, 126, 0, 126]);
        assert_eq!(&encode(true, OpCode::Binary, &[0; 70_000])[..10], &[0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]);
        assert_eq!(close_payload(1000, "bye"), vec![0x03, 0xE8, b'b', b'y', b'e']);
        let long = "é".repeat(100);
        let cut = close_payload(1001, &long);
        assert!(cut.len() <= 125 && std::str::from_utf8(&cut[2..]).is_ok());
    }
}
