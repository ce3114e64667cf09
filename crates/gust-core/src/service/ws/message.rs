//! Messages from frames (RFC 6455 §5.4–5.5): fragments reassembled, text checked as UTF-8 as it arrives (an
//! invalid sequence fails at the fragment that carries it, not at the end), control frames passed through
//! between fragments, close frames checked (§5.5.1, §7.4).

use bytes::{Bytes, BytesMut};

use super::frame::{Frame, OpCode};

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

/// A violation that ends the connection with `code` (§7.4.1): 1002 protocol error, 1007 invalid UTF-8,
/// 1009 message too big.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Violation {
    /// The close code to send.
    pub code: u16,
    /// What went wrong, for the close frame's reason.
    pub reason: &'static str,
}

/// Reassembles one connection's messages, refusing any over `max_message` bytes in all.
#[derive(Debug)]
pub struct Assembler {
    max_message: usize,
    /// The message in progress: its kind, its bytes so far, and how far they are known to be valid UTF-8.
    partial: Option<(OpCode, BytesMut, usize)>,
}

impl Assembler {
    /// An assembler for messages of at most `max_message` bytes.
    pub fn new(max_message: usize) -> Self {
        Self { max_message, partial: None }
    }

    /// Whether a fragmented message is in progress (a data frame now would be a protocol error).
    pub fn in_message(&self) -> bool {
        self.partial.is_some()
    }

    /// Takes one frame; returns a message once one is whole. Cost: a whole single-frame message is handed on
    /// without a copy; fragments are appended once.
    pub fn push(&mut self, frame: Frame) -> Result<Option<Message>, Violation> {
        match frame.opcode {
            OpCode::Ping => Ok(Some(Message::Ping(frame.payload))),
            OpCode::Pong => Ok(Some(Message::Pong(frame.payload))),
            OpCode::Close => close(&frame.payload).map(|c| Some(Message::Close(c))),
            OpCode::Text | OpCode::Binary => {
                if self.partial.is_some() {
                    return Err(protocol("a new message began before the last one ended"));
                }
                if frame.payload.len() > self.max_message {
                    return Err(too_big());
                }
                if frame.fin {
                    return if frame.opcode == OpCode::Text {
                        std::str::from_utf8(&frame.payload).map_err(|_| invalid_utf8())?;
                        Ok(Some(Message::Text(frame.payload)))
                    } else {
                        Ok(Some(Message::Binary(frame.payload)))
                    };
                }
                let mut buf = BytesMut::with_capacity(frame.payload.len() * 2);
                buf.extend_from_slice(&frame.payload);
                let valid = if frame.opcode == OpCode::Text { check_utf8(&buf, 0)? } else { 0 };
                self.partial = Some((frame.opcode, buf, valid));
                Ok(None)
            }
            OpCode::Continuation => {
                let Some((kind, mut buf, valid)) = self.partial.take() else {
                    return Err(protocol("a continuation frame with no message to continue"));
                };
                if buf.len() + frame.payload.len() > self.max_message {
                    return Err(too_big());
                }
                buf.extend_from_slice(&frame.payload);
                let valid = if kind == OpCode::Text { check_utf8(&buf, valid)? } else { 0 };
                if !frame.fin {
                    self.partial = Some((kind, buf, valid));
                    return Ok(None);
                }
                if kind == OpCode::Text {
                    if valid != buf.len() {
                        return Err(invalid_utf8());
                    }
                    return Ok(Some(Message::Text(buf.freeze())));
                }
                Ok(Some(Message::Binary(buf.freeze())))
            }
        }
    }
}

/// Checks `buf` as UTF-8 from `from` (the part already known valid); returns how far it is now known valid. An
/// unfinished sequence at the end is allowed (the next fragment may finish it), an invalid one is not.
fn check_utf8(buf: &[u8], from: usize) -> Result<usize, Violation> {
    match std::str::from_utf8(&buf[from..]) {
        Ok(_) => Ok(buf.len()),
        Err(e) if e.error_len().is_none() => Ok(from + e.valid_up_to()),
        Err(_) => Err(invalid_utf8()),
    }
}

/// A close frame's code and reason (§5.5.1): none, or a code a peer may send (§7.4) and a UTF-8 reason.
fn close(payload: &[u8]) -> Result<Option<(u16, String)>, Violation> {
    match payload.len() {
        0 => Ok(None),
        1 => Err(protocol("a close payload of one byte")),
        _ => {
            let code = u16::from_be_bytes([payload[0], payload[1]]);
            // 1004–1006 and 1015 are reserved for reports, never sent; below 1000 and 1016–2999 are unassigned.
            let allowed = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
            if !allowed {
                return Err(protocol("a close code a peer may not send"));
            }
            let reason = std::str::from_utf8(&payload[2..]).map_err(|_| invalid_utf8())?;
            Ok(Some((code, reason.to_owned())))
        }
    }
}

fn protocol(reason: &'static str) -> Violation {
    Violation { code: 1002, reason }
}

pub(crate) fn invalid_utf8() -> Violation {
    Violation { code: 1007, reason: "a text message that is not valid UTF-8" }
}

fn too_big() -> Violation {
    Violation { code: 1009, reason: "message too big" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(fin: bool, opcode: OpCode, payload: &[u8]) -> Frame {
        Frame { fin, opcode, payload: Bytes::copy_from_slice(payload) }
    }

    #[test]
    fn fragments_are_reassembled_with_control_frames_between() {
        let mut a = Assembler::new(1 << 20);
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
        let mut a = Assembler::new(1 << 20);
        assert_eq!(a.push(frame(false, OpCode::Text, &euro[..1])), Ok(None), "an unfinished sequence may continue");
        assert_eq!(a.push(frame(false, OpCode::Continuation, &euro[1..2])), Ok(None));
        assert_eq!(
            a.push(frame(true, OpCode::Continuation, &euro[2..])),
            Ok(Some(Message::Text(Bytes::from_static(euro))))
        );
        let mut a = Assembler::new(1 << 20);
        assert_eq!(a.push(frame(false, OpCode::Text, &[b'a', 0xFF])).unwrap_err().code, 1007, "fails fast");
        let mut a = Assembler::new(1 << 20);
        assert_eq!(a.push(frame(false, OpCode::Text, &euro[..2])), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Continuation, b"")).unwrap_err().code, 1007, "unfinished at the end");
        assert_eq!(Assembler::new(10).push(frame(true, OpCode::Text, &[0xC0, 0x80])).unwrap_err().code, 1007);
    }

    #[test]
    fn misplaced_frames_bad_closes_and_big_messages_are_refused() {
        let mut a = Assembler::new(8);
        assert_eq!(a.push(frame(true, OpCode::Continuation, b"x")).unwrap_err().code, 1002);
        assert_eq!(a.push(frame(false, OpCode::Binary, b"1234")), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Text, b"x")).unwrap_err().code, 1002, "interleaved messages");
        let mut a = Assembler::new(8);
        assert_eq!(a.push(frame(false, OpCode::Binary, b"12345")), Ok(None));
        assert_eq!(a.push(frame(true, OpCode::Continuation, b"6789")).unwrap_err().code, 1009);
        let mut a = Assembler::new(8);
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
