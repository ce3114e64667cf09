//! Bytes handed to the handler side and not taken yet, and what pauses WebSocket reading while they are too
//! many. Below the handler contract, which carries a [`Queued`] in every batch.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

use crate::values::sync::Locked;

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
        self.waiting.locked().push(cx.waker().clone());
        // Taken meanwhile: no wake would come.
        self.bytes.load(Ordering::Acquire) <= BACKLOG_LIMIT
    }

    /// Counts `n` bytes handed over until the returned guard is dropped (the batch taken or dropped).
    pub(crate) fn queue(this: &Arc<Self>, n: usize) -> Queued {
        this.bytes.fetch_add(n, Ordering::AcqRel);
        Queued(this.clone(), n)
    }

    fn release(&self, n: usize) {
        let before = self.bytes.fetch_sub(n, Ordering::AcqRel);
        if before > BACKLOG_LIMIT && before - n <= BACKLOG_LIMIT {
            for waker in std::mem::take(&mut *self.waiting.locked()) {
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
