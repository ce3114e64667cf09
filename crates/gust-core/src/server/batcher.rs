//! Collects dynamic requests, and events about requests already handed over, and hands them to the handler side
//! in batches, one wake per event-loop turn.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Waker};

use tokio::sync::Notify;

use crate::completions::Completions;
use crate::handler::{Handler, RequestBatch};
use crate::response::{self, messages};
use crate::stream::Events;
use crate::wire::event::{encode_body, encode_data, encode_event, encode_ws_open, WS_BINARY, WS_FAILED};
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

/// Bytes of batches handed to the handler side that it has not taken yet: when JavaScript falls behind, they
/// would pile up without bound. HTTP requests are bounded by `max_pending`; WebSocket messages are not (a client
/// may send as fast as its link allows), so sockets stop reading while the backlog is over [`BACKLOG_LIMIT`] and
/// resume when the handler side catches up. TCP then pushes back on the clients.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    waiting: Mutex<Vec<Waker>>,
}

/// Bytes of untaken batches above which WebSockets stop reading.
pub(crate) const BACKLOG_LIMIT: usize = 64 * 1024 * 1024;

impl Backlog {
    /// Whether there is room to read more; if not, `cx` is woken when there is. Cost: one atomic load.
    pub(crate) fn poll_room(&self, cx: &mut Context<'_>) -> bool {
        if self.bytes.load(Ordering::Acquire) <= BACKLOG_LIMIT {
            return true;
        }
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).push(cx.waker().clone());
        // Taken meanwhile: no wake would come.
        self.bytes.load(Ordering::Acquire) <= BACKLOG_LIMIT
    }

    fn release(&self, n: usize) {
        let before = self.bytes.fetch_sub(n, Ordering::AcqRel);
        if before > BACKLOG_LIMIT && before - n <= BACKLOG_LIMIT {
            for waker in std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner())) {
                waker.wake();
            }
        }
    }
}

/// A batch's bytes in the backlog, released when the batch is taken or dropped.
#[derive(Debug)]
pub(crate) struct Queued(Arc<Backlog>, usize);

impl Drop for Queued {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
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
        let n = bytes.len();
        self.backlog.bytes.fetch_add(n, Ordering::AcqRel);
        RequestBatch { bytes, len, _queued: Some(Queued(self.backlog.clone(), n)) }
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
            tokio::task::yield_now().await;
            let (bytes, ids) = {
                let mut pending = self.lock();
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
            let mut pending = self.lock();
            (std::mem::take(&mut pending.bytes), std::mem::take(&mut pending.ids))
        };
        if !bytes.is_empty() && self.handler.handle(self.batch(bytes, ids.len())).is_err() {
            self.completions.fail(&ids, || response::unavailable(messages::SHUTTING_DOWN));
        }
    }

    /// Appends an event record to the batch being filled.
    fn append(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        self.queue(None, encode);
    }

    /// Appends a record (a request's, with its id, kept to answer it should the batch not be delivered) to the
    /// batch being filled, ringing the flusher when it is the first; nothing once the batcher is closed.
    fn queue(&self, request: Option<u32>, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut pending = self.lock();
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
        let mut pending = self.lock();
        pending.closed = true;
        pending.ids = Vec::new();
        std::mem::take(&mut pending.bytes)
    }

    /// Queues a request record another lane was given and never took (its thread exited), as it was encoded.
    /// Called from that lane's thread as it leaves.
    pub(crate) fn push_record(&self, record: &[u8], id: u32) {
        self.queue(Some(id), |bytes| bytes.extend_from_slice(record));
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Events for Batcher {
    /// Queues an event in the batch being filled, ringing the flusher when it is the first record. Called on the
    /// I/O thread (a body taken or dropped, a request abandoned); a lock and twelve bytes.
    fn send(&self, kind: Kind, flags: u16, id: u32) {
        self.append(|bytes| encode_event(bytes, kind, flags, id));
    }

    /// Queues bytes of a streamed request body (called by its pump, on the I/O thread). Cost: the lock and one
    /// copy of the bytes.
    fn body(&self, id: u32, flags: u16, data: &[bytes::Bytes]) {
        self.append(|bytes| encode_body(bytes, flags, id, data));
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

impl crate::ws::task::WsEvents for Batcher {
    fn open(&self, socket: u32, request: u32, failed: bool) {
        self.append(|bytes| encode_ws_open(bytes, if failed { WS_FAILED } else { 0 }, socket, request));
    }

    /// Cost: the lock and one copy of the message.
    fn message(&self, socket: u32, binary: bool, data: &[u8]) {
        self.append(|bytes| encode_data(bytes, Kind::WsMessage, if binary { WS_BINARY } else { 0 }, socket, data));
    }

    fn closed(&self, socket: u32, code: u16, reason: &[u8]) {
        self.append(|bytes| encode_data(bytes, Kind::WsClose, code, socket, reason));
    }

    fn drain(&self, socket: u32) {
        self.append(|bytes| encode_event(bytes, Kind::WsDrain, 0, socket));
    }

    fn poll_room(&self, cx: &mut Context<'_>) -> bool {
        self.backlog.poll_room(cx)
    }
}
