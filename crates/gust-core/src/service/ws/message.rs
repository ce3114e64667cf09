//! Messages from frames (RFC 6455 §5.4–5.5): fragments reassembled, text checked as UTF-8 as it arrives (an
//! invalid sequence fails at the fragment that carries it, not at the end), control frames passed through
//! between fragments, close frames checked (§5.5.1, §7.4), compressed messages inflated (RFC 7692, where it was
//! agreed; their text is checked once inflated).

use bytes::{Bytes, BytesMut};

use super::deflate::{self, Inflater};
use super::frame::{Frame, OpCode};
pub use super::violation::Violation;

/// What a client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A whole text message, valid UTF-8.
    Text(Bytes),
    /// A whole binary message.
    Binary(Bytes),
    /// A ping: answer with a pong carrying the same bytes.
    Ping(Bytes),
    /// A pong.
    Pong(Bytes),
    /// The client closes: its code and reason, when it gave one.
    Close(Option<(u16, String)>),
}

/// How compressed messages are inflated, where permessage-deflate was agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inflation {
    /// Not agreed: the frame decoder refuses RSV1, so no message is compressed.
    #[default]
    Off,
    /// The client resets its context for every message: the I/O thread's decompressor serves.
    Shared,
    /// The client keeps its context: a decompressor of the socket's own, made at its first compressed message.
    Own,
}

/// A message in progress: its kind, its bytes so far, how far they are known to be valid UTF-8, and whether
/// they are compressed (checked once inflated then).
#[derive(Debug)]
struct Partial {
    kind: OpCode,
    buf: BytesMut,
    valid: usize,
    compressed: bool,
}

/// Reassembles one connection's messages, refusing any over `max_message` bytes in all (inflated, and before).
pub struct Assembler {
    /// At most 4 GiB (a `u32`: with `inflation` it fills one word of an idle socket's task, not two).
    max_message: u32,
    /// Boxed: a fragmented message is rare, and an idle socket's task carries one word for it instead of six.
    partial: Option<Box<Partial>>,
    inflation: Inflation,
    /// The socket's own decompressor (`Inflation::Own`), once a compressed message came.
    own: Option<Box<Inflater>>,
}

impl std::fmt::Debug for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler").field("partial", &self.partial).field("inflation", &self.inflation).finish()
    }
}

impl Assembler {
    /// An assembler for messages of at most `max_message` bytes, inflating as `inflation` says.
    pub fn new(max_message: usize, inflation: Inflation) -> Self {
        let max_message = u32::try_from(max_message).unwrap_or(u32::MAX);
        Self { max_message, partial: None, inflation, own: None }
    }

    /// Whether a fragmented message is in progress (a data frame now would be a protocol error).
    pub fn in_message(&self) -> bool {
        self.partial.is_some()
    }

    /// Whether compressed messages go through a decompressor that keeps the client's context: every one must be
    /// inflated, even one that is not wanted, or the next would not inflate.
    pub fn keeps_context(&self) -> bool {
        self.inflation == Inflation::Own
    }

    /// Inflates a whole compressed message, checks it (UTF-8 for text) and hands it to `deliver` from the
    /// thread's buffer: a message in one frame goes from the read buffer to JavaScript with no allocation.
    pub fn inflate<R>(&mut self, text: bool, payload: &[u8], deliver: impl FnOnce(&[u8]) -> R) -> Result<R, Violation> {
        let max = self.max_message as usize;
        let own = match self.inflation {
            Inflation::Off => return Err(Violation::protocol("a compressed message where compression was not agreed")),
            Inflation::Shared => None,
            Inflation::Own => Some(&mut **self.own.get_or_insert_with(|| Box::new(Inflater::new()))),
        };
        deflate::inflate(payload, max, own, |inflated| {
            if text && std::str::from_utf8(inflated).is_err() {
                return Err(Violation::invalid_utf8());
            }
            Ok(deliver(inflated))
        })?
    }

    /// Takes one frame; returns a message once one is whole. Cost: a whole single-frame message is handed on
    /// without a copy; fragments are appended once; a compressed message is inflated once, and copied out of
    /// the thread's buffer.
    pub fn push(&mut self, frame: Frame) -> Result<Option<Message>, Violation> {
        match frame.opcode {
            OpCode::Ping => Ok(Some(Message::Ping(frame.payload))),
            OpCode::Pong => Ok(Some(Message::Pong(frame.payload))),
            OpCode::Close => close(&frame.payload).map(|c| Some(Message::Close(c))),
            OpCode::Text | OpCode::Binary => {
                if self.partial.is_some() {
                    return Err(Violation::protocol("a new message began before the last one ended"));
                }
                if frame.payload.len() > self.max_message as usize {
                    return Err(Violation::too_big());
                }
                let text = frame.opcode == OpCode::Text;
                if frame.fin {
                    if frame.compressed {
                        return self.inflated(text, &frame.payload).map(Some);
                    }
                    return if text {
                        std::str::from_utf8(&frame.payload).map_err(|_| Violation::invalid_utf8())?;
                        Ok(Some(Message::Text(frame.payload)))
                    } else {
                        Ok(Some(Message::Binary(frame.payload)))
                    };
                }
                let mut buf = BytesMut::with_capacity(frame.payload.len() * 2);
                buf.extend_from_slice(&frame.payload);
                let valid = if text && !frame.compressed { check_utf8(&buf, 0)? } else { 0 };
                self.partial = Some(Box::new(Partial { kind: frame.opcode, buf, valid, compressed: frame.compressed }));
                Ok(None)
            }
            OpCode::Continuation => {
                let Some(mut partial) = self.partial.take() else {
                    return Err(Violation::protocol("a continuation frame with no message to continue"));
                };
                if partial.buf.len() + frame.payload.len() > self.max_message as usize {
                    return Err(Violation::too_big());
                }
                partial.buf.extend_from_slice(&frame.payload);
                let text = partial.kind == OpCode::Text;
                if text && !partial.compressed {
                    partial.valid = check_utf8(&partial.buf, partial.valid)?;
                }
                if !frame.fin {
                    self.partial = Some(partial);
                    return Ok(None);
                }
                if partial.compressed {
                    return self.inflated(text, &partial.buf).map(Some);
                }
                let Partial { buf, valid, .. } = *partial;
                if text {
                    if valid != buf.len() {
                        return Err(Violation::invalid_utf8());
                    }
                    return Ok(Some(Message::Text(buf.freeze())));
                }
                Ok(Some(Message::Binary(buf.freeze())))
            }
        }
    }

    fn inflated(&mut self, text: bool, payload: &[u8]) -> Result<Message, Violation> {
        let data = self.inflate(text, payload, Bytes::copy_from_slice)?;
        Ok(if text { Message::Text(data) } else { Message::Binary(data) })
    }
}

/// Checks `buf` as UTF-8 from `from` (the part already known valid); returns how far it is now known valid. An
/// unfinished sequence at the end is allowed (the next fragment may finish it), an invalid one is not.
fn check_utf8(buf: &[u8], from: usize) -> Result<usize, Violation> {
    match std::str::from_utf8(&buf[from..]) {
        Ok(_) => Ok(buf.len()),
        Err(e) if e.error_len().is_none() => Ok(from + e.valid_up_to()),
        Err(_) => Err(Violation::invalid_utf8()),
    }
}

/// A close frame's code and reason (§5.5.1): none, or a code a peer may send (§7.4) and a UTF-8 reason.
fn close(payload: &[u8]) -> Result<Option<(u16, String)>, Violation> {
    match payload.len() {
        0 => Ok(None),
        1 => Err(Violation::protocol("a close payload of one byte")),
        _ => {
            let code = u16::from_be_bytes([payload[0], payload[1]]);
            // 1004–1006 and 1015 are reserved for reports, never sent; below 1000 and 1016–2999 are unassigned.
            let allowed = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
            if !allowed {
                return Err(Violation::protocol("a close code a peer may not send"));
            }
            let reason = std::str::from_utf8(&payload[2..]).map_err(|_| Violation::invalid_utf8())?;
            Ok(Some((code, reason.to_owned())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(fin: bool, opcode: OpCode, payload: &[u8]) -> Frame {
        Frame { fin, compressed: false, opcode, payload: Bytes::copy_from_slice(payload) }
    }

    /// What a client sends compressed: a sync flush, its tail dropped.
    fn deflated(payload: &[u8]) -> Vec<u8> {
        let mut c = flate2::Compress::new_with_window_bits(flate2::Compression::fast(), false, 15);
        let mut out = Vec::with_capacity(payload.len() + 64);
        c.compress_vec(payload, &mut out, flate2::FlushCompress::Sync).unwrap();
        out.truncate(out.len() - 4);
        out
    }

    #[test]
    fn compressed_messages_are_inflated_whole_or_in_fragments_and_checked() {
        let mut a = Assembler::new(1 << 20, Inflation::Shared);
        let text = "héllo ".repeat(100);
        let body = deflated(text.as_bytes());
        let whole = Frame { fin: true, compressed: true, opcode: OpCode::Text, payload: Bytes::from(body.clone()) };
        assert_eq!(a.push(whole), Ok(Some(Message::Text(Bytes::from(text.clone())))));
        let (head, tail) = body.split_at(body.len() / 2);
        let first =
            Frame { fin: false, compressed: true, opcode: OpCode::Binary, payload: Bytes::copy_from_slice(head) };
        assert_eq!(a.push(first), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Ping, b"")), Ok(Some(Message::Ping(Bytes::new()))));
        assert_eq!(
            a.push(frame(true, OpCode::Continuation, tail)),
            Ok(Some(Message::Binary(Bytes::from(text.clone()))))
        );
        let bad =
            Frame { fin: true, compressed: true, opcode: OpCode::Text, payload: Bytes::from(deflated(&[0xFF, 0xFE])) };
        assert_eq!(a.push(bad).unwrap_err().code, 1007, "invalid UTF-8 once inflated");
        let mut small = Assembler::new(100, Inflation::Shared);
        let big =
            Frame { fin: true, compressed: true, opcode: OpCode::Binary, payload: Bytes::from(deflated(&[0; 101])) };
        assert_eq!(small.push(big).unwrap_err().code, 1009, "the limit applies inflated");
        let mut off = Assembler::new(100, Inflation::Off);
        assert_eq!(off.inflate(false, &body, |_| ()).unwrap_err().code, 1002);
    }

    #[test]
    fn fragments_are_reassembled_with_control_frames_between() {
        let mut a = Assembler::new(1 << 20, Inflation::Off);
        assert_eq!(a.push(frame(false, OpCode::Text, b"hel")), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Ping, b"p")), Ok(Some(Message::Ping(Bytes::from_static(b"p")))));
        assert_eq!(a.push(frame(false, OpCode::Continuation, b"lo ")), Ok(None));
        assert_eq!(
            a.push(frame(true, OpCode::Continuation, b"world")),
            Ok(Some(Message::Text(Bytes::from_static(b"hello world"))))
        );
        assert_eq!(
            a.push(frame(true, OpCode::Binary, &[0, 255])),
            Ok(Some(Message::Binary(Bytes::from_static(&[0, 255]))))
        );
    }

    #[test]
    fn utf8_is_checked_as_it_arrives_across_fragment_boundaries() {
        let euro = "€".as_bytes(); // three bytes
        let mut a = Assembler::new(1 << 20, Inflation::Off);
        assert_eq!(a.push(frame(false, OpCode::Text, &euro[..1])), Ok(None), "an unfinished sequence may continue");
        assert_eq!(a.push(frame(false, OpCode::Continuation, &euro[1..2])), Ok(None));
        assert_eq!(
            a.push(frame(true, OpCode::Continuation, &euro[2..])),
            Ok(Some(Message::Text(Bytes::from_static(euro))))
        );
        let mut a = Assembler::new(1 << 20, Inflation::Off);
        assert_eq!(a.push(frame(false, OpCode::Text, &[b'a', 0xFF])).unwrap_err().code, 1007, "fails fast");
        let mut a = Assembler::new(1 << 20, Inflation::Off);
        assert_eq!(a.push(frame(false, OpCode::Text, &euro[..2])), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Continuation, b"")).unwrap_err().code, 1007, "unfinished at the end");
        assert_eq!(
            Assembler::new(10, Inflation::Off).push(frame(true, OpCode::Text, &[0xC0, 0x80])).unwrap_err().code,
            1007
        );
    }

    #[test]
    fn misplaced_frames_bad_closes_and_big_messages_are_refused() {
        let mut a = Assembler::new(8, Inflation::Off);
        assert_eq!(a.push(frame(true, OpCode::Continuation, b"x")).unwrap_err().code, 1002);
        assert_eq!(a.push(frame(false, OpCode::Binary, b"1234")), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Text, b"x")).unwrap_err().code, 1002, "interleaved messages");
        let mut a = Assembler::new(8, Inflation::Off);
        assert_eq!(a.push(frame(false, OpCode::Binary, b"12345")), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Continuation, b"6789")).unwrap_err().code, 1009);
        let mut a = Assembler::new(8, Inflation::Off);
        assert_eq!(a.push(frame(true, OpCode::Close, b"")), Ok(Some(Message::Close(None))));
        assert_eq!(
            a.push(frame(true, OpCode::Close, &[0x03, 0xE8, b'o', b'k'])),
            Ok(Some(Message::Close(Some((1000, "ok".into())))))
        );
        for code in [0u16, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            let raw = code.to_be_bytes();
            assert_eq!(a.push(frame(true, OpCode::Close, &raw)).unwrap_err().code, 1002, "code {code}");
        }
        assert_eq!(a.push(frame(true, OpCode::Close, &[0x03])).unwrap_err().code, 1002);
        assert_eq!(a.push(frame(true, OpCode::Close, &[0x03, 0xE8, 0xFF])).unwrap_err().code, 1007);
        assert_eq!(
            a.push(frame(true, OpCode::Close, &[0x0F, 0xA0])),
            Ok(Some(Message::Close(Some((4000, String::new())))))
        );
    }
}
