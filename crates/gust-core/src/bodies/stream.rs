//! Streamed response bodies: JavaScript writes chunks as it produces them, hyper takes them as the socket
//! accepts them, and the two meet in a small queue per response.
//!
//! The JavaScript thread appends chunks a batch at a time (in [`crate::Responder::respond`]) and learns there
//! which streams went over [`HIGH_WATER`], so it stops producing for them. The I/O thread takes chunks only when
//! hyper has room to write them (hyper polls a body only while its write buffer is below its limit, so a client
//! that reads slowly stops the taking). Once a paused stream's queue is down to [`LOW_WATER`], a
//! drain event goes out in the next request batch and the producer resumes. A response whose client
//! leaves, or that hyper drops unsent (a HEAD request, a 204, a declared length reached), sends a cancel.
//!
//! So one response holds at most [`HIGH_WATER`] plus the bytes its producer wrote in one batch (64 KiB before the
//! JavaScript side flushes early), plus hyper's write queue (64 KiB, see `vendor/PATCHES.md`), whatever the
//! client's speed.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

use crate::values::error::StreamAborted;
use crate::values::ids::IdHasher;
use crate::values::sync::Locked;

/// Bytes queued for one response above which its producer is told to pause.
pub const HIGH_WATER: usize = 64 * 1024;
/// Bytes queued at or below which a paused producer is told to resume.
pub const LOW_WATER: usize = 16 * 1024;

/// Where a stream tells its producer to resume or stop: the lane's request batcher, which the crossing layer
/// above hands down (this room knows nothing of how the events travel).
pub(crate) trait StreamEvents: Send + Sync {
    /// The queue of request `id`'s response is down to its low-water mark: a paused producer may resume.
    fn drained(&self, id: u32);
    /// Request `id`'s body is no longer wanted: `complete` when the response is whole anyway (a HEAD, a 204, a
    /// declared length reached), else because its client left.
    fn cancelled(&self, id: u32, complete: bool);
}

/// The open streams, by request id.
#[derive(Default)]
pub(crate) struct Streams {
    open: Mutex<HashMap<u32, Arc<Stream>, BuildHasherDefault<IdHasher>>>,
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streams").field("open", &self.open.locked().len()).finish_non_exhaustive()
    }
}

/// What became of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// Queued; the producer may go on.
    Open,
    /// Queued, and the queue is over [`HIGH_WATER`]: the producer should wait for a drain event.
    Full,
    /// The stream is gone (its client left; a cancel event is on its way); the bytes were dropped.
    Gone,
}

struct Stream {
    id: u32,
    /// The lane (JavaScript thread) whose handler produces it.
    lane: u8,
    /// Where its drain and cancel events go: that lane's batcher.
    events: Arc<dyn StreamEvents>,
    state: Mutex<State>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("id", &self.id).field("lane", &self.lane).finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct State {
    chunks: VecDeque<Bytes>,
    buffered: usize,
    /// The producer wrote its last chunk.
    end: bool,
    /// The producer failed: the response is cut off.
    aborted: bool,
    /// The producer was told the queue is full and waits for a drain event.
    paused: bool,
    /// The body is gone (sent, or dropped): writes are refused.
    closed: bool,
    /// hyper's task, waiting for a chunk.
    waker: Option<Waker>,
}

impl Streams {
    /// Opens the body of answer `id`, to be handed to hyper with its head; its producer is on lane `lane`, told of
    /// drains and cancels through `events`. `length` is the `content-length` the handler declared, if any: hyper
    /// then frames the body by it (and cuts off a longer one) instead of chunking it.
    pub(crate) fn open(
        self: &Arc<Self>,
        id: u32,
        lane: u8,
        events: Arc<dyn StreamEvents>,
        length: Option<u64>,
    ) -> StreamBody {
        let stream = Arc::new(Stream { id, lane, events, state: Mutex::default() });
        self.open.locked().insert(id, stream.clone());
        StreamBody {
            stream,
            streams: self.clone(),
            length,
            finished: false,
            flushed_before_abort: false,
            sent: 0,
            bodiless: false,
            upload: None,
            busy: None,
        }
    }

    /// Appends bytes to stream `id` (any thread). Returns what became of them, and the waker of a body waiting
    /// for them: the caller wakes it, or has it woken on the I/O thread (cheaper there: no syscall).
    pub(crate) fn write(&self, id: u32, data: Bytes, end: bool, abort: bool) -> (Written, Option<Waker>) {
        self.append(id, data, end, abort, true)
    }

    /// As [`Streams::write`]; with `pause` false, a queue that goes over [`HIGH_WATER`] is reported
    /// [`Written::Full`] but its producer is not marked paused yet: for bytes the socket is about to take within
    /// the same call (the one-thread engine writes what an answer batch woke before the batch's call returns).
    /// [`Streams::pause_if_full`] decides once those writes are done, so a queue the socket emptied costs no
    /// pause and no drain event (a round trip through the loop per 64 KiB of a download).
    pub(crate) fn append(&self, id: u32, data: Bytes, end: bool, abort: bool, pause: bool) -> (Written, Option<Waker>) {
        let Some(stream) = self.open.locked().get(&id).cloned() else { return (Written::Gone, None) };
        let mut state = stream.state.locked();
        if state.closed || state.end || state.aborted {
            return (Written::Gone, None);
        }
        if abort {
            // What was written before the failure still goes out; then the body fails.
            state.aborted = true;
        } else {
            if !data.is_empty() {
                state.buffered += data.len();
                state.chunks.push_back(data);
            }
            state.end = end;
        }
        let full = !state.end && !state.aborted && state.buffered > HIGH_WATER;
        if full && pause {
            state.paused = true;
        }
        (if full { Written::Full } else { Written::Open }, state.waker.take())
    }

    /// After writes appended without pausing: pauses stream `id`'s producer if its queue is still over
    /// [`HIGH_WATER`] (a drain event follows once it is down to [`LOW_WATER`]); whether it did.
    pub(crate) fn pause_if_full(&self, id: u32) -> bool {
        let Some(stream) = self.open.locked().get(&id).cloned() else { return false };
        let mut state = stream.state.locked();
        let full = !state.closed && !state.end && !state.aborted && state.buffered > HIGH_WATER;
        if full {
            state.paused = true;
        }
        full
    }

    /// Cuts off every open stream of lane `lane` (its producer's thread is gone): what was written goes out,
    /// then the body fails, so the client sees a truncated response rather than one that never ends. Called
    /// from any thread.
    pub(crate) fn abort_lane(&self, lane: usize) {
        let ids: Vec<u32> = self.open.locked().values().filter(|s| usize::from(s.lane) == lane).map(|s| s.id).collect();
        for id in ids {
            if let (_, Some(waker)) = self.write(id, Bytes::new(), false, true) {
                waker.wake();
            }
        }
    }
}

/// The reading end of a stream, inside the response hyper sends.
#[derive(Debug)]
pub struct StreamBody {
    stream: Arc<Stream>,
    streams: Arc<Streams>,
    length: Option<u64>,
    /// The body reached its end or its abort: nothing to cancel when it is dropped.
    finished: bool,
    /// An abort waited one poll, so hyper could flush what was written before it.
    flushed_before_abort: bool,
    /// Bytes handed to hyper.
    sent: u64,
    /// The response has no body (HEAD, 204, 304): dropping it unsent completes it.
    bodiless: bool,
    /// The request's streamed body, readable until this response ends (a handler may echo it as it arrives).
    upload: Option<crate::bodies::upload::UploadGuard>,
    /// What the layer above keeps for as long as this response streams: its connection's busy mark, so that a
    /// stream quiet between events (SSE) is not taken for an idle connection. Boxed (one word) because this
    /// layer cannot name the service's type; allocated once per streamed response.
    busy: Option<Held>,
}

/// Something kept alive by a body, opaque to it.
struct Held(#[allow(dead_code)] Box<dyn Send + Sync>);

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held")
    }
}

impl StreamBody {
    /// Takes the next chunk. Cost: one uncontended lock; a drain event only when a paused producer may resume.
    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamAborted>>> {
        // A declared length is a promise: past it nothing more goes out (hyper frames by it; a compressed body's
        // coded length is unknown, so the limit is kept here).
        if self.length.is_some_and(|length| self.sent >= length) {
            return Poll::Ready(None);
        }
        let mut state = self.stream.state.locked();
        if let Some(mut chunk) = state.chunks.pop_front() {
            state.buffered -= chunk.len();
            let drained = state.paused && state.buffered <= LOW_WATER;
            if drained {
                state.paused = false;
            }
            drop(state);
            if drained {
                self.stream.events.drained(self.stream.id);
            }
            if let Some(length) = self.length {
                chunk.truncate(usize::try_from(length - self.sent).unwrap_or(usize::MAX));
            }
            self.sent += chunk.len() as u64;
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if state.aborted {
            // hyper drops what it has buffered when a body fails: yield once first, so its dispatch loop
            // flushes what came before the failure, then fail.
            if !self.flushed_before_abort {
                self.flushed_before_abort = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.finished = true;
            return Poll::Ready(Some(Err(StreamAborted)));
        }
        if state.end {
            self.finished = true;
            return Poll::Ready(None);
        }
        if !state.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    pub(crate) fn size_hint(&self) -> SizeHint {
        self.length.map(SizeHint::with_exact).unwrap_or_default()
    }

    /// The `content-length` its handler declared, if any.
    pub(crate) fn declared_length(&self) -> Option<u64> {
        self.length
    }

    /// Keeps the request's streamed body readable for as long as this response streams.
    pub(crate) fn hold(&mut self, upload: crate::bodies::upload::UploadGuard) {
        self.upload = Some(upload);
    }

    /// Keeps `mark` until this response has been sent or dropped.
    pub(crate) fn keep_busy(&mut self, mark: Box<dyn Send + Sync>) {
        self.busy = Some(Held(mark));
    }

    /// Marks a response hyper sends without a body (a HEAD request, a 204 or 304).
    pub(crate) fn set_bodiless(&mut self) {
        self.bodiless = true;
    }
}

impl Drop for StreamBody {
    fn drop(&mut self) {
        {
            let mut state = self.stream.state.locked();
            state.closed = true;
            state.chunks.clear();
            state.waker = None;
        }
        let mut open = self.streams.open.locked();
        if open.get(&self.stream.id).is_some_and(|s| Arc::ptr_eq(s, &self.stream)) {
            open.remove(&self.stream.id);
        }
        drop(open);
        if !self.finished {
            // Dropped unfinished: either nothing more was wanted (no body to send, or its declared length was
            // reached: hyper stops there), or the client is gone.
            let complete = self.bodiless || self.length.is_some_and(|length| self.sent >= length);
            self.stream.events.cancelled(self.stream.id, complete);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    /// What a stream told its producer.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Drain,
        Cancel,
    }

    #[derive(Default)]
    struct Heard(Mutex<Vec<(Kind, u32)>>);

    impl StreamEvents for Heard {
        fn drained(&self, id: u32) {
            self.0.lock().unwrap().push((Kind::Drain, id));
        }

        fn cancelled(&self, id: u32, complete: bool) {
            // A cancel that completes is told apart by its id's sign in these tests: recorded as `u32::MAX - id`.
            self.0.lock().unwrap().push((Kind::Cancel, if complete { u32::MAX - id } else { id }));
        }
    }

    #[derive(Default)]
    struct CountWakes(AtomicUsize);

    impl Wake for CountWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn setup() -> (Arc<Heard>, Arc<Streams>) {
        let heard = Arc::new(Heard::default());
        (heard, Arc::default())
    }

    fn poll(body: &mut StreamBody) -> Poll<Option<Result<Frame<Bytes>, StreamAborted>>> {
        let waker = Waker::from(Arc::new(CountWakes::default()));
        body.poll_frame(&mut Context::from_waker(&waker))
    }

    fn data(p: Poll<Option<Result<Frame<Bytes>, StreamAborted>>>) -> Bytes {
        match p {
            Poll::Ready(Some(Ok(frame))) => frame.into_data().unwrap(),
            other => panic!("expected data, got {other:?}"),
        }
    }

    #[test]
    fn chunks_should_come_out_in_order_then_the_end() {
        let (heard, streams) = setup();
        let mut body = streams.open(1, 0, heard.clone(), None);
        assert!(poll(&mut body).is_pending());
        assert_eq!(streams.write(1, Bytes::from_static(b"a"), false, false).0, Written::Open);
        assert_eq!(streams.write(1, Bytes::from_static(b"b"), true, false).0, Written::Open);
        assert_eq!(streams.write(1, Bytes::from_static(b"late"), false, false).0, Written::Gone, "after the end");
        assert_eq!(data(poll(&mut body)), "a");
        assert_eq!(data(poll(&mut body)), "b");
        assert!(matches!(poll(&mut body), Poll::Ready(None)));
        drop(body);
        assert!(heard.0.lock().unwrap().is_empty(), "a finished body cancels nothing");
        assert!(streams.open.locked().is_empty());
    }

    #[test]
    fn a_write_should_hand_back_the_waiting_bodys_waker() {
        let (heard, streams) = setup();
        let mut body = streams.open(2, 0, heard.clone(), None);
        let wakes = Arc::new(CountWakes::default());
        let waker = Waker::from(wakes.clone());
        assert!(body.poll_frame(&mut Context::from_waker(&waker)).is_pending());
        let (_, to_wake) = streams.write(2, Bytes::from_static(b"x"), false, false);
        to_wake.expect("the body was waiting").wake();
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert!(streams.write(2, Bytes::from_static(b"y"), false, false).1.is_none(), "woken once");
    }

    #[test]
    fn a_full_queue_should_pause_the_producer_until_it_drains() {
        let (heard, streams) = setup();
        let mut body = streams.open(3, 0, heard.clone(), None);
        let chunk = Bytes::from(vec![0u8; 16 * 1024]);
        let mut results = Vec::new();
        for _ in 0..5 {
            results.push(streams.write(3, chunk.clone(), false, false).0);
        }
        assert_eq!(results, [Written::Open, Written::Open, Written::Open, Written::Open, Written::Full]);
        for _ in 0..3 {
            data(poll(&mut body));
            assert!(heard.0.lock().unwrap().is_empty(), "not yet down to the low-water mark");
        }
        data(poll(&mut body));
        assert_eq!(*heard.0.lock().unwrap(), [(Kind::Drain, 3)]);
        data(poll(&mut body));
        assert_eq!(heard.0.lock().unwrap().len(), 1, "one drain per pause");
    }

    #[test]
    fn a_queue_written_out_before_the_call_returns_should_not_pause_its_producer() {
        let (heard, streams) = setup();
        let mut body = streams.open(8, 0, heard.clone(), None);
        let chunk = Bytes::from(vec![0u8; 40 * 1024]);
        assert_eq!(streams.append(8, chunk.clone(), false, false, false).0, Written::Open);
        assert_eq!(streams.append(8, chunk.clone(), false, false, false).0, Written::Full, "over the mark");
        // The socket takes both within the call: nothing to pause, and no drain event.
        data(poll(&mut body));
        data(poll(&mut body));
        assert!(!streams.pause_if_full(8));
        assert!(heard.0.lock().unwrap().is_empty());
        // The socket takes only one: the producer pauses now, and hears a drain once the rest is taken.
        streams.append(8, chunk.clone(), false, false, false);
        streams.append(8, chunk.clone(), false, false, false);
        data(poll(&mut body));
        streams.append(8, chunk.clone(), false, false, false);
        assert!(streams.pause_if_full(8), "80 KiB still queued");
        data(poll(&mut body));
        assert!(heard.0.lock().unwrap().is_empty(), "40 KiB: not yet down to the low-water mark");
        data(poll(&mut body));
        assert_eq!(*heard.0.lock().unwrap(), [(Kind::Drain, 8)]);
    }

    #[test]
    fn a_body_dropped_before_its_end_should_cancel_and_refuse_more() {
        let (heard, streams) = setup();
        let body = streams.open(4, 0, heard.clone(), Some(10));
        assert_eq!(body.size_hint().exact(), Some(10));
        streams.write(4, Bytes::from_static(b"abc"), false, false);
        drop(body);
        assert_eq!(*heard.0.lock().unwrap(), [(Kind::Cancel, 4)]);
        assert_eq!(streams.write(4, Bytes::from_static(b"d"), false, false).0, Written::Gone);
    }

    #[test]
    fn a_body_dropped_at_its_declared_length_or_unsent_should_complete_not_cancel() {
        let (heard, streams) = setup();
        let mut body = streams.open(6, 0, heard.clone(), Some(3));
        streams.write(6, Bytes::from_static(b"abc"), false, false);
        data(poll(&mut body));
        drop(body);
        let mut head = streams.open(7, 0, heard.clone(), None);
        head.set_bodiless();
        drop(head);
        assert_eq!(*heard.0.lock().unwrap(), [(Kind::Cancel, u32::MAX - 6), (Kind::Cancel, u32::MAX - 7)]);
    }

    #[test]
    fn an_abort_should_fail_the_body_and_cancel_nothing() {
        let (heard, streams) = setup();
        let mut body = streams.open(5, 0, heard.clone(), None);
        streams.write(5, Bytes::from_static(b"abc"), false, false);
        streams.write(5, Bytes::new(), false, true);
        assert_eq!(data(poll(&mut body)), "abc", "what came before the failure is still sent");
        assert!(poll(&mut body).is_pending(), "once, so hyper flushes it");
        assert!(matches!(poll(&mut body), Poll::Ready(Some(Err(StreamAborted)))));
        drop(body);
        assert!(heard.0.lock().unwrap().is_empty());
    }
}
