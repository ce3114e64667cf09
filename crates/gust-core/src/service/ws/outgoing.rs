//! A message on its way to one socket or to a topic's subscribers, framed for each socket as it agreed: plain,
//! compressed by the sending thread (once for every socket that shares a window size), or by the socket's own
//! compressor.

use bytes::Bytes;

use super::deflate::{self, Dedicated};
use super::extension::{Agreement, Outbound};
use super::frame::{self, OpCode};

/// Message kinds a caller sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    /// A text frame (the caller's string, UTF-8).
    Text(&'a str),
    /// A binary frame.
    Binary(&'a [u8]),
}

/// A message and the frames made of it so far.
pub(crate) struct Outgoing<'a> {
    opcode: OpCode,
    payload: &'a [u8],
    /// The message as the sender gave it (what goes beyond the process).
    given: Payload<'a>,
    /// The sender's word on compression: always, never, or (`None`) from the route's threshold.
    compress: Option<bool>,
    plain: Option<Bytes>,
    /// The shared compressors' frames, by window size (9..=15 bits): a publish compresses once per size.
    shared: [Option<Bytes>; 7],
}

impl<'a> Outgoing<'a> {
    pub(crate) fn new(given: Payload<'a>, compress: Option<bool>) -> Self {
        let (opcode, payload) = match given {
            Payload::Text(t) => (OpCode::Text, t.as_bytes()),
            Payload::Binary(b) => (OpCode::Binary, b),
        };
        Self { opcode, payload, given, compress, plain: None, shared: Default::default() }
    }

    /// The message's length, as a send reports it.
    pub(crate) fn len(&self) -> usize {
        self.payload.len()
    }

    /// The message as the sender gave it.
    pub(crate) fn payload(&self) -> Payload<'a> {
        self.given
    }

    /// The sender's word on compression.
    pub(crate) fn compress(&self) -> Option<bool> {
        self.compress
    }

    /// How a socket that agreed to `agreement` (`None`: no compression) gets this message: plain, or
    /// compressed as it agreed unless the sender or the route's threshold says plain.
    fn outbound(&self, agreement: Option<&Agreement>) -> Outbound {
        match agreement {
            Some(a) if self.compress.unwrap_or(self.payload.len() >= a.threshold) => a.compress,
            _ => Outbound::Plain,
        }
    }

    /// Whether a socket that agreed to `agreement` needs this message compressed by its own compressor (which
    /// only its queue's lock may touch); else [`Self::frame`] needs no compressor of the socket's.
    pub(crate) fn needs_own(&self, agreement: Option<&Agreement>) -> bool {
        matches!(self.outbound(agreement), Outbound::Dedicated(_))
    }

    /// The frame for a socket that agreed to `agreement`; `own` is its dedicated compressor's place. Cost: the
    /// plain frame and each shared one are built once per message, whatever the number of sockets.
    pub(crate) fn frame(&mut self, agreement: Option<&Agreement>, own: &mut Option<Box<Dedicated>>) -> Bytes {
        match self.outbound(agreement) {
            Outbound::Shared(bits) => {
                let (opcode, payload) = (self.opcode, self.payload);
                let slot = &mut self.shared[usize::from(bits.clamp(9, 15) - 9)];
                slot.get_or_insert_with(|| deflate::shared_frame(opcode, payload, bits)).clone()
            }
            Outbound::Dedicated(bits) => {
                own.get_or_insert_with(|| Box::new(Dedicated::new(bits))).frame(self.opcode, self.payload)
            }
            Outbound::Plain => self.plain(),
        }
    }

    fn plain(&mut self) -> Bytes {
        self.plain.get_or_insert_with(|| frame::encode(true, self.opcode, self.payload)).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_socket_gets_the_frame_it_agreed_to_and_shared_ones_are_built_once() {
        let text = "a fairly repetitive message, a fairly repetitive message, a fairly repetitive message";
        let shared = Agreement { compress: Outbound::Shared(15), client_takeover: false, threshold: 0 };
        let shared_over = |threshold| Agreement { threshold, ..shared };
        let mut own = None;
        let mut msg = Outgoing::new(Payload::Text(text), None);
        let plain = msg.frame(None, &mut own);
        assert_eq!(plain[0], 0x81);
        let first = msg.frame(Some(&shared), &mut own);
        assert_eq!(first[0], 0xC1, "compressed");
        assert!(first.len() < plain.len());
        assert_eq!(first.as_ptr(), msg.frame(Some(&shared), &mut own).as_ptr(), "the same bytes for the next");
        assert_eq!(msg.frame(Some(&shared_over(text.len() + 1)), &mut own)[0], 0x81, "under the threshold");
        let mut forced = Outgoing::new(Payload::Text(text), Some(true));
        assert_eq!(forced.frame(Some(&shared_over(usize::MAX)), &mut own)[0], 0xC1, "asked for");
        let mut never = Outgoing::new(Payload::Text(text), Some(false));
        assert_eq!(never.frame(Some(&shared), &mut own)[0], 0x81, "asked not to");
        let plain_only = Agreement { compress: Outbound::Plain, ..shared };
        assert_eq!(Outgoing::new(Payload::Text(text), Some(true)).frame(Some(&plain_only), &mut own)[0], 0x81);
        assert!(own.is_none(), "no compressor of its own for a shared agreement");
        let dedicated = Agreement { compress: Outbound::Dedicated(15), client_takeover: true, threshold: 0 };
        assert_eq!(Outgoing::new(Payload::Binary(&[1, 2, 3]), None).frame(Some(&dedicated), &mut own)[0], 0xC2);
        assert!(own.is_some(), "made at the first compressed message");
    }
}
