//! One WebSocket's shared state: its send queue, which the JavaScript thread fills (sends, publishes) and the
//! socket's task on the I/O thread drains, and the topics it subscribes to.
//!
//! Backpressure follows Bun's (uWS's) rules. A send is *dropped* (0) when the queue already holds more than the
//! route's `backpressure_limit`, so a client that stops reading costs at most the limit plus one message. It is
//! *queued* (-1) when the last write left bytes the kernel would not take; the socket's `drain` event then fires
//! once the queue is empty again. Otherwise it is *sent* (its length).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::Waker;

use bytes::Bytes;

use super::deflate::Dedicated;
use super::extension::Agreement;
use super::outgoing::Outgoing;
use crate::values::sync::Locked;
use crate::values::ws_options::WsOptions;

/// What became of a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendStatus {
    /// Queued behind nothing: its payload length.
    Sent(usize),
    /// Queued behind bytes the client has not taken yet: wait for `drain`.
    Queued,
    /// Not queued: the socket is closing or closed, or its queue is over the backpressure limit.
    Dropped,
}

impl SendStatus {
    /// Bun's number for it: the length, -1, or 0.
    pub fn code(self) -> i64 {
        match self {
            SendStatus::Sent(n) => n as i64,
            SendStatus::Queued => -1,
            SendStatus::Dropped => 0,
        }
    }
}

/// Where a socket is in its life, as its queue sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum State {
    #[default]
    Open,
    /// A close frame is queued: no more data frames.
    Closing,
    /// The connection is to be dropped now (`terminate()`, or the backpressure limit with
    /// `closeOnBackpressureLimit`).
    Terminated,
    /// The socket's task has ended.
    Ended,
}

/// One WebSocket, shared by its task, the hub and the topics it subscribes to.
pub(crate) struct Socket {
    pub(crate) id: u32,
    /// The lane (JavaScript thread) that accepted it and hears its events.
    pub(crate) lane: u8,
    /// The shard (I/O thread) whose task serves it: woken through that thread's queue.
    pub(crate) shard: u8,
    pub(crate) options: Arc<WsOptions>,
    /// permessage-deflate, where the client agreed to it.
    pub(crate) deflate: Option<Agreement>,
    out: Mutex<Outbox>,
    /// The topics it subscribes to, kept under the topic table's lock.
    pub(crate) topics: Mutex<Vec<Arc<str>>>,
}

#[derive(Default)]
struct Outbox {
    frames: VecDeque<Bytes>,
    /// Bytes queued and not yet written, those the task holds included.
    buffered: usize,
    state: State,
    /// The last write left bytes the client would not take.
    blocked: bool,
    /// A send was queued behind a blocked write, or dropped: `drain` fires when the queue empties.
    want_drain: bool,
    /// The task, parked until there is something to write.
    waker: Option<Waker>,
    /// The server is forced to stop: the close frame goes out if it can, and the socket ends soon after.
    forced: bool,
    /// The socket's own compressor (a dedicated one was agreed), made at its first compressed message and used
    /// under this lock, so the frames queue in the order the compressor saw them.
    compressor: Option<Box<Dedicated>>,
    /// Where in `frames` a pong waits, not yet taken by the task: a later ping's pong replaces it.
    pong_at: Option<usize>,
}

/// What the task found when it came for more to write.
pub(crate) struct Refill {
    /// Frames were moved into its hands.
    pub(crate) frames: bool,
    pub(crate) state: State,
    /// The queue emptied after a send was queued behind backpressure or dropped: the socket's `drain` event is
    /// due.
    pub(crate) drain: bool,
    /// The server is forced to stop (see [`Socket::close`]).
    pub(crate) forced: bool,
}

impl Socket {
    pub(crate) fn new(id: u32, lane: u8, shard: u8, options: Arc<WsOptions>, deflate: Option<Agreement>) -> Self {
        Self { id, lane, shard, options, deflate, out: Mutex::new(Outbox::default()), topics: Mutex::new(Vec::new()) }
    }

    /// Queues a message, framed as this socket agreed. Returns the waker of a parked task, for the caller to
    /// wake once it has queued everything. Cost: a lock, and a clone of a frame already built for another socket
    /// (a reference count), or the framing, done before the lock (the socket's I/O thread takes the same lock to
    /// write) except by a dedicated compressor, which must compress under it: it may see only what is queued,
    /// and in the queue's order.
    pub(crate) fn send(&self, msg: &mut Outgoing<'_>) -> (SendStatus, Option<Waker>) {
        let (len, agreed) = (msg.len(), self.deflate.as_ref());
        if msg.needs_own(agreed) {
            return self.queue(len, |compressor| msg.frame(agreed, compressor));
        }
        let frame = msg.frame(agreed, &mut None);
        self.queue(len, |_| frame)
    }

    /// Queues a ping the caller asked for, under a message's rules.
    pub(crate) fn ping(&self, frame: Bytes, len: usize) -> (SendStatus, Option<Waker>) {
        self.queue(len, |_| frame)
    }

    /// Queues the frame `make` builds (`len` bytes of message), or drops it under Bun's rules without building it.
    fn queue(
        &self,
        len: usize,
        make: impl FnOnce(&mut Option<Box<Dedicated>>) -> Bytes,
    ) -> (SendStatus, Option<Waker>) {
        let mut out = self.out.locked();
        if out.state != State::Open {
            return (SendStatus::Dropped, None);
        }
        if out.buffered > self.options.backpressure_limit {
            out.want_drain = true;
            if self.options.close_on_backpressure_limit {
                out.state = State::Terminated;
                return (SendStatus::Dropped, out.waker.take());
            }
            return (SendStatus::Dropped, None);
        }
        let frame = make(&mut out.compressor);
        out.buffered += frame.len();
        out.frames.push_back(frame);
        let status = if out.blocked {
            out.want_drain = true;
            SendStatus::Queued
        } else {
            SendStatus::Sent(len)
        };
        (status, out.waker.take())
    }

    /// Queues the pong answering a ping while the socket is open. A client that reads gets a pong for every ping
    /// (Autobahn 2.10 checks it). One that does not read (the last write left bytes it would not take) has a
    /// waiting pong replaced by the next one, which RFC 6455 §5.5.3 allows: a ping flood from a client that
    /// never reads then costs two pongs (the one waiting, one the task holds), not a pong per ping.
    pub(crate) fn pong(&self, frame: Bytes) {
        let mut out = self.out.locked();
        if out.state != State::Open {
            return;
        }
        let out = &mut *out;
        match out.pong_at {
            Some(at) if out.blocked => {
                let old = std::mem::replace(&mut out.frames[at], frame);
                out.buffered = out.buffered - old.len() + out.frames[at].len();
            }
            _ => {
                out.pong_at = Some(out.frames.len());
                out.buffered += frame.len();
                out.frames.push_back(frame);
            }
        }
    }

    /// Queues a control frame of the task's own (a ping) while the socket is open.
    pub(crate) fn control(&self, frame: Bytes) {
        let mut out = self.out.locked();
        if out.state == State::Open {
            out.buffered += frame.len();
            out.frames.push_back(frame);
        }
    }

    /// Queues a close frame, once: nothing but it is written after. `forced` (the server is forced to stop): the
    /// socket ends once it is written or soon after, without waiting for the client's reply. Returns the parked
    /// task's waker.
    pub(crate) fn close(&self, frame: Bytes, forced: bool) -> Option<Waker> {
        let mut out = self.out.locked();
        if out.state == State::Open {
            out.state = State::Closing;
            out.buffered += frame.len();
            out.frames.push_back(frame);
        }
        out.forced |= forced;
        out.waker.take()
    }

    /// Asks the task to drop the connection now.
    pub(crate) fn terminate(&self) -> Option<Waker> {
        let mut out = self.out.locked();
        if out.state >= State::Terminated {
            return None;
        }
        out.state = State::Terminated;
        out.waker.take()
    }

    /// Bytes queued and not yet written.
    pub(crate) fn buffered(&self) -> usize {
        self.out.locked().buffered
    }

    pub(crate) fn state(&self) -> State {
        self.out.locked().state
    }

    /// The task takes every queued frame into `into` (which it has emptied), or, with none queued, parks with
    /// `waker` until a send.
    pub(crate) fn refill(&self, into: &mut VecDeque<Bytes>, waker: &Waker) -> Refill {
        let mut out = self.out.locked();
        if out.frames.is_empty() {
            // Everything queued is written: a sender told to wait (-1) or dropped (0) may go on.
            let drain = out.want_drain;
            out.blocked = false;
            out.want_drain = false;
            if !out.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                out.waker = Some(waker.clone());
            }
            return Refill { frames: false, state: out.state, drain, forced: out.forced };
        }
        std::mem::swap(&mut out.frames, into);
        out.pong_at = None;
        Refill { frames: true, state: out.state, drain: false, forced: out.forced }
    }

    /// The task wrote `n` bytes.
    pub(crate) fn wrote(&self, n: usize) {
        let mut out = self.out.locked();
        out.buffered = out.buffered.saturating_sub(n);
    }

    /// The client would not take all the task had: sends report backpressure until the queue empties.
    pub(crate) fn blocked(&self) {
        self.out.locked().blocked = true;
    }

    /// The task has ended: nothing more is queued, and what was is freed.
    pub(crate) fn end(&self) {
        let mut out = self.out.locked();
        out.state = State::Ended;
        out.frames = VecDeque::new();
        out.pong_at = None;
        out.buffered = 0;
        out.waker = None;
        out.compressor = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    fn socket(limit: usize, close_on_limit: bool) -> Socket {
        let options = WsOptions {
            backpressure_limit: limit,
            close_on_backpressure_limit: close_on_limit,
            ..WsOptions::default()
        };
        Socket::new(1, 0, 0, Arc::new(options), None)
    }

    /// A six-byte frame: four bytes of payload.
    fn msg() -> Outgoing<'static> {
        Outgoing::new(super::super::outgoing::Payload::Binary(b"1234"), None)
    }

    #[test]
    fn sends_are_sent_then_queued_behind_a_blocked_write_then_dropped_over_the_limit() {
        let s = socket(10, false);
        assert_eq!(s.send(&mut msg()).0, SendStatus::Sent(4));
        s.blocked();
        assert_eq!(s.send(&mut msg()).0, SendStatus::Queued);
        assert_eq!(s.buffered(), 12);
        assert_eq!(s.send(&mut msg()).0, SendStatus::Dropped, "over the limit");
        assert_eq!(s.buffered(), 12, "a dropped frame is not queued");
        let waker = Waker::from(Arc::new(Noop));
        let mut hands = VecDeque::new();
        assert!(s.refill(&mut hands, &waker).frames);
        s.wrote(12);
        hands.clear();
        let r = s.refill(&mut hands, &waker);
        assert!(!r.frames && r.drain, "the queue emptied after backpressure: drain is due");
        assert!(!s.refill(&mut hands, &waker).drain, "once");
        assert_eq!(s.send(&mut msg()).0, SendStatus::Sent(4));
    }

    #[test]
    fn the_limit_closes_the_socket_when_asked_to() {
        let s = socket(4, true);
        assert_eq!(s.send(&mut msg()).0, SendStatus::Sent(4));
        assert_eq!(s.send(&mut msg()).0, SendStatus::Dropped);
        assert_eq!(s.state(), State::Terminated);
    }

    #[test]
    fn after_a_close_frame_nothing_else_is_queued() {
        let s = socket(1 << 20, false);
        s.close(Bytes::from_static(b"\x88\x00"), false);
        s.close(Bytes::from_static(b"\x88\x00"), false);
        assert_eq!(s.buffered(), 2, "once");
        assert_eq!(s.send(&mut msg()).0, SendStatus::Dropped);
        s.pong(Bytes::from_static(b"\x8a\x00"));
        assert_eq!(s.buffered(), 2, "no pong after the close frame");
        assert_eq!(s.state(), State::Closing);
    }

    #[test]
    fn a_pong_waiting_for_a_client_that_does_not_read_is_replaced_by_the_next_one() {
        let s = socket(1 << 20, false);
        s.pong(Bytes::from_static(b"\x8a\x01a"));
        s.pong(Bytes::from_static(b"\x8a\x01b"));
        assert_eq!(s.buffered(), 6, "a client that reads gets a pong for every ping");
        let (waker, mut hands) = (Waker::from(Arc::new(Noop)), VecDeque::new());
        assert!(s.refill(&mut hands, &waker).frames);
        s.wrote(6);
        hands.clear();
        s.blocked();
        s.pong(Bytes::from_static(b"\x8a\x01a"));
        assert_eq!(s.send(&mut msg()).0, SendStatus::Queued, "behind the blocked write");
        s.pong(Bytes::from_static(b"\x8a\x02bc"));
        s.pong(Bytes::from_static(b"\x8a\x02de"));
        assert_eq!(s.buffered(), 4 + 6, "one pong, the latest, and the message");
        assert!(s.refill(&mut hands, &waker).frames);
        assert_eq!(hands[0], Bytes::from_static(b"\x8a\x02de"), "in the first pong's place, before the message");
        s.pong(Bytes::from_static(b"\x8a\x01f"));
        assert_eq!(s.buffered(), 10 + 3, "the task holds one pong; the queue another");
    }
}
