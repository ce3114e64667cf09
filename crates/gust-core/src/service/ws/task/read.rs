//! The reading side of a socket's task: bytes from the connection become frames, messages for JavaScript, pongs,
//! and the close handshake's replies; a violation fails the connection with its code.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, ReadBuf};

use super::{Stage, Task, Wake, CLOSE_TIMEOUT, SCRATCH};
use crate::service::ws::frame::{self, OpCode};
use crate::service::ws::message::Message;
use crate::service::ws::violation::Violation;
use crate::values::clock;

impl Task {
    pub(super) fn poll_read<S: AsyncRead + Unpin>(&mut self, io: &mut S, cx: &mut Context<'_>) -> Poll<Wake> {
        // Messages waiting for JavaScript are bounded: while it is behind, the client's bytes wait in the kernel
        // and TCP slows the client down. The close handshake reads on regardless (nothing goes to JavaScript).
        if self.stage == Stage::Open && !self.events.poll_room(cx) {
            return Poll::Pending;
        }
        let read = SCRATCH.with_borrow_mut(|scratch| {
            let mut buf = ReadBuf::new(&mut scratch[..]);
            let n = match Pin::new(&mut *io).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => return Poll::Ready(Err(())),
                Poll::Ready(Ok(())) => buf.filled().len(),
            };
            if n > 0 && matches!(self.stage, Stage::Open | Stage::AwaitReply) {
                if self.pending.is_empty() {
                    // Whole frames are handled where they were read: no copy and no allocation per message.
                    let used = self.frames_in_place(&mut scratch[..n]);
                    if used < n {
                        self.pending.extend_from_slice(&scratch[used..n]);
                    }
                } else {
                    self.pending.extend_from_slice(&scratch[..n]);
                    self.frames();
                }
            }
            Poll::Ready(Ok(n))
        });
        match read {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(())) => Poll::Ready(Wake::Broken),
            Poll::Ready(Ok(0)) => Poll::Ready(Wake::Eof),
            Poll::Ready(Ok(_)) => {
                self.last_read = clock::now_ms();
                self.pinged = false;
                Poll::Ready(Wake::Read)
            }
        }
    }

    /// Handles every whole frame at the front of `buf` (bytes just read, with nothing pending before them) where
    /// it lies: a message in one frame goes to JavaScript straight from the read buffer. Returns the bytes used;
    /// the rest is the start of a frame, or nothing is wanted any more.
    fn frames_in_place(&mut self, buf: &mut [u8]) -> usize {
        let mut at = 0;
        let decoder = self.decoder();
        while matches!(self.stage, Stage::Open | Stage::AwaitReply) && at < buf.len() {
            let head = match decoder.head(&buf[at..]) {
                Ok(Some(head)) if buf.len() - at >= head.header + head.len => head,
                Ok(_) => return at,
                Err(e) => {
                    self.fail_frame(e);
                    break;
                }
            };
            let payload = head.payload(&mut buf[at..]);
            let data = matches!(head.opcode, OpCode::Text | OpCode::Binary);
            if head.fin && data && !self.assembler.in_message() {
                let binary = head.opcode == OpCode::Binary;
                let open = self.stage == Stage::Open;
                if head.compressed {
                    // Once the server closed, what the client still sends is not wanted, but a decompressor that
                    // keeps the client's context must still see it, or a later message would not inflate.
                    if open || self.assembler.keeps_context() {
                        let (events, id) = (&self.events, self.socket.id);
                        let deliver = |data: &[u8]| {
                            if open {
                                events.message(id, binary, data)
                            }
                        };
                        if let Err(v) = self.assembler.inflate(!binary, payload, deliver) {
                            self.fail(v.code, v.reason);
                        }
                    }
                } else if !open {
                    // The server closed: what the client still sends is not wanted.
                } else if binary || std::str::from_utf8(payload).is_ok() {
                    self.events.message(self.socket.id, binary, payload);
                } else {
                    let v = Violation::invalid_utf8();
                    self.fail(v.code, v.reason);
                }
            } else {
                let frame = frame::Frame {
                    fin: head.fin,
                    compressed: head.compressed,
                    opcode: head.opcode,
                    payload: Bytes::copy_from_slice(payload),
                };
                match self.assembler.push(frame) {
                    Err(v) => self.fail(v.code, v.reason),
                    Ok(None) => {}
                    Ok(Some(message)) => self.on_message(message),
                }
            }
            at += head.header + head.len;
        }
        buf.len()
    }

    fn fail_frame(&mut self, e: frame::FrameError) {
        let reason = match e {
            frame::FrameError::Protocol(why) => why,
            frame::FrameError::TooBig => "message too big",
        };
        self.fail(e.close_code(), reason);
    }

    /// Decodes every whole frame read so far.
    pub(super) fn frames(&mut self) {
        let decoder = self.decoder();
        while matches!(self.stage, Stage::Open | Stage::AwaitReply) {
            let frame = match decoder.decode(&mut self.pending) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(e) => {
                    self.fail_frame(e);
                    break;
                }
            };
            match self.assembler.push(frame) {
                Err(v) => self.fail(v.code, v.reason),
                Ok(None) => {}
                Ok(Some(message)) => self.on_message(message),
            }
        }
        if self.pending.is_empty() {
            // Frees the bytes of frames already handed on; an idle socket holds no read buffer.
            self.pending = BytesMut::new();
        } else if matches!(self.stage, Stage::Flush | Stage::Linger) {
            self.pending = BytesMut::new();
        }
    }

    pub(super) fn on_message(&mut self, message: Message) {
        match message {
            Message::Text(data) | Message::Binary(data) if self.stage != Stage::Open => drop(data),
            Message::Text(data) => self.events.message(self.socket.id, false, &data),
            Message::Binary(data) => self.events.message(self.socket.id, true, &data),
            Message::Ping(data) => self.socket.pong(frame::encode(true, OpCode::Pong, &data)),
            Message::Pong(_) => {}
            Message::Close(status) => {
                let (code, reason) = match status {
                    Some((code, reason)) => (code, Bytes::from(reason)),
                    None => (1005, Bytes::new()),
                };
                if self.stage == Stage::Open {
                    // Echo the client's code (§5.5.1), or an empty close for an empty one.
                    let echo =
                        if code == 1005 { frame::encode(true, OpCode::Close, &[]) } else { frame::close(code, "") };
                    self.socket.close(echo, false);
                }
                self.closing(code, reason);
                self.stage = Stage::Flush;
                self.deadline = clock::now_ms() + CLOSE_TIMEOUT;
            }
        }
    }

    /// Fails the connection (§7.1.7): a close frame with `code`, then the end.
    pub(super) fn fail(&mut self, code: u16, reason: &'static str) {
        self.socket.close(frame::close(code, reason), false);
        self.closing(code, Bytes::from_static(reason.as_bytes()));
        self.stage = Stage::Flush;
        self.deadline = clock::now_ms() + CLOSE_TIMEOUT;
        self.pending = BytesMut::new();
    }
}
