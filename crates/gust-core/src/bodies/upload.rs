//! Streamed request bodies: the engine hands a request to JavaScript once its head and the body bytes already
//! received are in, and reads the rest from the socket only as the handler asks for it.
//!
//! Each read record from the handler side lets the body's pump (one task per streamed body, on the I/O thread)
//! take what hyper has received since (at least one frame, at most [`READ_MAX`] bytes) and send it as one
//! body event in the next request batch. hyper reads the socket only while the body is polled, so a
//! handler that stops reading stops the upload: TCP flow control pushes back on the client, and one body holds at
//! most hyper's read buffer plus one event in flight and one chunk queued on the JavaScript side, whatever its
//! size. A request with `Expect: 100-continue` gets its `100 Continue` only at the first read (hyper
//! sends it when the body is first polled), so a handler can refuse an upload it never asked for.
//!
//! The body stays readable until its response is sent (for a streamed response, until that stream ends, so a
//! handler can echo or transform the body as it arrives); then the pump stops, hyper discards or refuses what
//! is left, and a read still waiting hears [`BodyState::Closed`].

use std::collections::HashMap;
use std::future::poll_fn;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body as _;

use crate::bodies::compress::decode::{BodyError, RequestBody};
use crate::values::ids::IdHasher;
use crate::values::sync::Locked;

/// Where a pump sends what it read: the lane's request batcher, handed down by the crossing layer above (this
/// room knows nothing of how the bytes travel).
pub(crate) trait UploadEvents: Send + Sync {
    /// Queues bytes of request `id`'s body, or with empty `data` only how it ended.
    fn body(&self, id: u32, state: BodyState, data: &[Bytes]);
    /// The body is still arriving: its handler's timeout starts again.
    fn progress(&self, id: u32);
}

/// Where a body stands after a body event: more to come, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyState {
    /// More bytes may follow.
    More,
    /// These are the body's last bytes.
    End,
    /// The body passed its route's limit; the rest was not read.
    TooLarge,
    /// The client sent nothing for the body timeout after a read was asked for.
    Timeout,
    /// The body was malformed, or its connection failed; `client_left` when the client left before sending all
    /// of it.
    Broken {
        /// The client left rather than sending something malformed.
        client_left: bool,
    },
    /// The response was sent (or its client left) before the body was read to its end; no more comes.
    Closed,
}

/// Body bytes a request carries inline, in its request record. A body complete within this (or declared no
/// longer) is received whole before the hand-over, as before: one crossing, no reads.
pub(crate) const INLINE_MAX: usize = 64 * 1024;

/// The streamed bodies being read, by request id.
#[derive(Debug, Default)]
pub(crate) struct Uploads {
    open: Mutex<HashMap<u32, Arc<UploadSlot>, BuildHasherDefault<IdHasher>>>,
}

/// What the handler side asked of one body, and the pump waiting for it.
#[derive(Debug, Default)]
pub(crate) struct UploadSlot {
    state: Mutex<SlotState>,
}

#[derive(Debug, Default)]
struct SlotState {
    /// Reads asked for and not yet answered.
    reads: u32,
    /// Stopped by the handler side: it wants nothing more, and is told nothing more.
    stopped: bool,
    /// Stopped because the response is done or its client left: a waiting read hears [`BodyState::Closed`].
    closed: bool,
    waker: Option<Waker>,
}

impl Uploads {
    /// Opens the slot of request `id`, before the request is handed over (so its first read finds it).
    pub(crate) fn open(&self, id: u32) -> Arc<UploadSlot> {
        let slot = Arc::new(UploadSlot::default());
        self.open.locked().insert(id, slot.clone());
        slot
    }

    /// A read record: one more frame wanted, or (`stop`) none. Returns the pump's waker, for the caller to wake
    /// on the I/O thread. Reads of a body that is gone are ignored.
    pub(crate) fn read(&self, id: u32, stop: bool) -> Option<Waker> {
        let slot = self.open.locked().get(&id).cloned()?;
        let mut state = slot.state.locked();
        if stop {
            state.stopped = true;
        } else {
            state.reads = state.reads.saturating_add(1);
        }
        state.waker.take()
    }

    fn close(&self, id: u32, slot: &Arc<UploadSlot>) {
        let mut open = self.open.locked();
        if open.get(&id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            open.remove(&id);
        }
    }
}

/// Ends a streamed body's reading when dropped: with the response (whole), with its stream (streamed), or with
/// the request (its client left).
#[derive(Debug)]
pub(crate) struct UploadGuard(pub(crate) Arc<UploadSlot>);

impl Drop for UploadGuard {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.0.state.locked();
            state.closed = true;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Everything a pump needs, owned (it runs as a task of its own).
pub(crate) struct Pump {
    pub(crate) id: u32,
    pub(crate) slot: Arc<UploadSlot>,
    pub(crate) uploads: Arc<Uploads>,
    pub(crate) events: Arc<dyn UploadEvents>,
    /// Bytes already handed over inline.
    pub(crate) received: u64,
    /// The route's body limit.
    pub(crate) limit: u64,
    /// How long the client may take to send the next bytes once they are asked for.
    pub(crate) timeout: Duration,
}

enum Wanted {
    Read,
    Stopped,
    Closed,
}

impl Pump {
    /// Moves the body from hyper to the handler side, per read what hyper already holds (up to [`READ_MAX`]),
    /// until its end, a failure, the handler's stop or the response's end.
    pub(crate) async fn run(mut self, mut body: RequestBody) {
        let ended = loop {
            match self.wanted().await {
                Wanted::Read => {}
                Wanted::Stopped => break None,
                Wanted::Closed => break Some(BodyState::Closed),
            }
            let next = tokio::select! {
                biased;
                wanted = self.closing() => match wanted {
                    Wanted::Stopped => break None,
                    _ => break Some(BodyState::Closed),
                },
                next = crate::rt::timeout(self.timeout, next_data(&mut body)) => next,
            };
            match next {
                Err(_) => break Some(BodyState::Timeout),
                Ok(Err(failed)) => break Some(failed),
                Ok(Ok(None)) => break Some(BodyState::End),
                Ok(Ok(Some(data))) => {
                    // What else already arrived goes in the same event: hyper hands over one read buffer's
                    // worth per frame, and an event per frame would cost a crossing each.
                    let mut frames = vec![data];
                    let end = take_ready(&mut body, &mut frames, READ_MAX).await;
                    let size: usize = frames.iter().map(Bytes::len).sum();
                    self.received += size as u64;
                    if self.received > self.limit {
                        break Some(BodyState::TooLarge);
                    }
                    let failed = end.err();
                    let end = end.is_ok_and(|ended| ended || body.is_end_stream());
                    self.events.body(self.id, if end { BodyState::End } else { BodyState::More }, &frames);
                    if failed.is_some() {
                        break failed;
                    }
                    // A body still arriving keeps its handler's timeout from running out.
                    self.events.progress(self.id);
                    if end {
                        break None;
                    }
                }
            }
        };
        self.uploads.close(self.id, &self.slot);
        if let Some(ended) = ended {
            self.events.body(self.id, ended, &[]);
        }
    }

    /// Waits for a read, or for the body's reading to end.
    async fn wanted(&self) -> Wanted {
        self.wait(true).await
    }

    /// Resolves only when the body's reading ends (while a read waits for the client).
    async fn closing(&self) -> Wanted {
        self.wait(false).await
    }

    fn wait(&self, reads: bool) -> impl std::future::Future<Output = Wanted> + '_ {
        poll_fn(move |cx| {
            let mut state = self.slot.state.locked();
            if state.stopped {
                return Poll::Ready(Wanted::Stopped);
            }
            if state.closed {
                return Poll::Ready(Wanted::Closed);
            }
            if reads && state.reads > 0 {
                state.reads -= 1;
                return Poll::Ready(Wanted::Read);
            }
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        })
    }
}

/// Bytes one body event carries at most (beyond its first frame).
const READ_MAX: usize = 256 * 1024;

/// Appends the data frames that come without waiting for the client, until `max` bytes are in `frames`.
/// Resolves to whether the body ended, or `Err` with how it failed (see [`failure`]).
///
/// hyper's connection task moves one frame into the body per round of its loop, so a `Pending` is followed by
/// one yield: a frame after it means more was already received; a second `Pending` means the client has not
/// sent more yet. Cost: at most one extra poll per call.
pub(crate) async fn take_ready(body: &mut RequestBody, frames: &mut Vec<Bytes>, max: usize) -> Result<bool, BodyState> {
    let mut size: usize = frames.iter().map(Bytes::len).sum();
    let mut yielded = false;
    poll_fn(|cx| loop {
        if size >= max {
            return Poll::Ready(Ok(false));
        }
        match std::pin::Pin::new(&mut *body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                yielded = false;
                if let Ok(data) = frame.into_data() {
                    if !data.is_empty() {
                        size += data.len();
                        frames.push(data);
                    }
                }
            }
            Poll::Ready(Some(Err(err))) => return Poll::Ready(Err(failure(&err))),
            Poll::Ready(None) => return Poll::Ready(Ok(true)),
            Poll::Pending if !yielded => {
                yielded = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Pending => return Poll::Ready(Ok(false)),
        }
    })
    .await
}

/// How a body that failed ended: broken, and whether because the client left before sending all of it (rather
/// than sending something malformed).
fn failure(err: &BodyError) -> BodyState {
    match err {
        BodyError::Malformed => BodyState::Broken { client_left: false },
        BodyError::Hyper(err) => connection_failure(err),
    }
}

fn connection_failure(err: &hyper::Error) -> BodyState {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cause {
        let gone = e
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| matches!(io.kind(), UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe));
        if gone {
            return BodyState::Broken { client_left: true };
        }
        cause = e.source();
    }
    BodyState::Broken { client_left: err.is_incomplete_message() }
}

/// The next non-empty data frame (trailers are skipped), `None` at the end, `Err` with how a body that failed
/// ended.
async fn next_data(body: &mut RequestBody) -> Result<Option<Bytes>, BodyState> {
    loop {
        match body.frame().await {
            None => return Ok(None),
            Some(Err(err)) => return Err(failure(&err)),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    if !data.is_empty() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_should_count_and_stop_should_win() {
        let uploads = Uploads::default();
        let slot = uploads.open(3);
        assert!(uploads.read(3, false).is_none(), "no pump waiting yet");
        uploads.read(3, false);
        assert_eq!(slot.state.locked().reads, 2);
        uploads.read(3, true);
        assert!(slot.state.locked().stopped);
        assert!(uploads.read(4, false).is_none(), "an unknown body is ignored");
        uploads.close(3, &slot);
        assert!(uploads.open.locked().is_empty());
    }

    #[test]
    fn a_dropped_guard_should_close_the_body() {
        let uploads = Uploads::default();
        let slot = uploads.open(1);
        drop(UploadGuard(slot.clone()));
        let state = slot.state.locked();
        assert!(state.closed && !state.stopped);
    }
}
