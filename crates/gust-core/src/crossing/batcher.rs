//! Collects dynamic requests, and events about requests already handed over, and hands them to the handler side
//! in batches, one wake per event-loop turn.

use std::sync::{Arc, Mutex};
use std::task::Context;

use tokio::sync::Notify;

use super::backlog::Backlog;
use super::completions::Completions;
use super::handler::{Handler, RequestBatch};
use crate::bodies::stream::StreamEvents;
use crate::bodies::upload::{BodyState, UploadEvents};
use crate::responses::response::{self, messages};
use crate::values::sync::Locked;
use crate::wire::event::{body_flags, encode_body, encode_event, COMPLETE};
use crate::wire::request::{encode_request, RequestFields};
use crate::wire::Kind;

/// The batch being filled, and the flusher's doorbell.
pub(crate) struct Batcher {
    handler: Arc<dyn Handler>,
    completions: Arc<Completions>,
    pending: Mutex<Pending>,
    ready: Notify,
    backlog: Arc<Backlog>,
}

impl Batcher {
    pub(crate) fn new(handler: Arc<dyn Handler>, completions: Arc<Completions>) -> Self {
        Self {
            handler,
            completions,
            pending: Mutex::new(Pending::default()),
            ready: Notify::new(),
            backlog: Arc::default(),
        }
    }

    /// A batch of `bytes`, counted in the backlog until it is taken.
    fn batch(&self, bytes: Vec<u8>, len: usize) -> RequestBatch {
        let queued = Backlog::queue(&self.backlog, bytes.len());
        RequestBatch { bytes, len, _queued: Some(queued) }
    }

    /// Queues one request; rings the flusher when it is the first of a batch. Cost: an uncontended lock (only the
    /// I/O thread touches it) and the encoding in [`encode_request`].
    pub(crate) fn push(&self, request: &RequestFields<'_>) {
        self.queue(Some(request.id), |bytes| encode_request(bytes, request));
    }

    /// Runs on the I/O thread for the server's lifetime.
    ///
    /// After the doorbell rings, `yield_now` puts this task behind everything already runnable *and* behind the
    /// next poll of the I/O driver (tokio defers yielded tasks until then), so one hand-over carries every request
    /// that became readable in this turn. Waking the JavaScript thread per request instead costs two context
    /// switches each, which measured as a quarter of the throughput on one core.
    pub(crate) async fn run(&self) {
        loop {
            self.ready.notified().await;
            crate::rt::yield_now().await;
            let (bytes, ids) = {
                let mut pending = self.pending.locked();
                // The next batch starts with room for one like this one: growing from empty by doubling would
                // copy everything pushed so far several times per batch.
                let (len, count) = (pending.bytes.len(), pending.ids.len());
                (
                    std::mem::replace(&mut pending.bytes, Vec::with_capacity(len)),
                    std::mem::replace(&mut pending.ids, Vec::with_capacity(count)),
                )
            };
            if bytes.is_empty() {
                continue;
            }
            if self.handler.handle(self.batch(bytes, ids.len())).is_err() {
                self.completions.fail(&ids, || response::unavailable(messages::SHUTTING_DOWN));
            }
        }
    }

    /// Hands over whatever is pending now, outside the flusher task: the I/O thread's last act, so the events of
    /// connections that ended as the server stopped (WebSocket closes) still reach JavaScript.
    pub(crate) fn flush_now(&self) {
        let (bytes, ids) = {
            let mut pending = self.pending.locked();
            (std::mem::take(&mut pending.bytes), std::mem::take(&mut pending.ids))
        };
        if !bytes.is_empty() && self.handler.handle(self.batch(bytes, ids.len())).is_err() {
            self.completions.fail(&ids, || response::unavailable(messages::SHUTTING_DOWN));
        }
    }

    /// Appends an event record to the batch being filled.
    pub(crate) fn append(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        self.queue(None, encode);
    }

    /// Appends a record (a request's, with its id, kept to answer it should the batch not be delivered) to the
    /// batch being filled, ringing the flusher when it is the first; nothing once the batcher is closed.
    fn queue(&self, request: Option<u32>, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut pending = self.pending.locked();
        if pending.closed {
            return;
        }
        let first = pending.bytes.is_empty();
        encode(&mut pending.bytes);
        pending.ids.extend(request);
        drop(pending);
        if first {
            self.ready.notify_one();
        }
    }

    /// Refuses everything pushed from now on (its lane is gone) and returns what was pending, for whoever closes
    /// it to hand to another lane or answer.
    pub(crate) fn close(&self) -> Vec<u8> {
        let mut pending = self.pending.locked();
        pending.closed = true;
        pending.ids = Vec::new();
        std::mem::take(&mut pending.bytes)
    }

    /// Queues a request record another lane was given and never took (its thread exited), as it was encoded.
    /// Called from that lane's thread as it leaves.
    pub(crate) fn push_record(&self, record: &[u8], id: u32) {
        self.queue(Some(id), |bytes| bytes.extend_from_slice(record));
    }
}

impl Batcher {
    /// Queues an event in the batch being filled, ringing the flusher when it is the first record. Called on the
    /// I/O thread (a body taken or dropped, a request abandoned); a lock and twelve bytes.
    pub(crate) fn send(&self, kind: Kind, flags: u16, id: u32) {
        self.append(|bytes| encode_event(bytes, kind, flags, id));
    }

    /// Whether the handler side has room for more WebSocket messages (see [`Backlog::poll_room`]).
    pub(crate) fn poll_room(&self, cx: &mut Context<'_>) -> bool {
        self.backlog.poll_room(cx)
    }
}

impl StreamEvents for Batcher {
    fn drained(&self, id: u32) {
        self.send(Kind::Drain, 0, id);
    }

    fn cancelled(&self, id: u32, complete: bool) {
        self.send(Kind::Cancel, if complete { COMPLETE } else { 0 }, id);
    }
}

impl UploadEvents for Batcher {
    /// Queues bytes of a streamed request body (called by its pump, on the I/O thread). Cost: the lock and one
    /// copy of the bytes.
    fn body(&self, id: u32, state: BodyState, data: &[bytes::Bytes]) {
        self.append(|bytes| encode_body(bytes, body_flags(state), id, data));
    }

    fn progress(&self, id: u32) {
        self.completions.touch(id);
    }
}

/// The batch being filled: encoded requests and events, and the requests' ids (kept here, so a batch that cannot
/// be delivered can still be answered).
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    ids: Vec<u32>,
    /// The lane is gone: nothing more is queued.
    closed: bool,
}
