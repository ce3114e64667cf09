//! What the I/O threads report back ([`Unbound`]) to the server that starts them. What they are told
//! (`Phase`) is the protocol layer's, since each protocol obeys it in its own way.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::crossing::lanes::Lanes;

/// Tells every lane's handler `unbound` once every I/O thread has closed its listening sockets.
pub(crate) struct UnboundAll {
    lanes: Arc<Lanes>,
    left: AtomicUsize,
}

/// One I/O thread's part: counted at most once, whichever way the thread ends.
pub(crate) struct Unbound {
    all: Arc<UnboundAll>,
    sent: AtomicBool,
}

impl UnboundAll {
    /// Waits for `threads` I/O threads, then tells `lanes`.
    pub(crate) fn new(lanes: Arc<Lanes>, threads: usize) -> Arc<Self> {
        Arc::new(Self { lanes, left: AtomicUsize::new(threads) })
    }
}

impl Unbound {
    /// One I/O thread's part of `all`.
    pub(crate) fn new(all: &Arc<UnboundAll>) -> Self {
        Self { all: all.clone(), sent: AtomicBool::new(false) }
    }

    /// This I/O thread has closed its listening sockets (a second call counts for nothing).
    pub(crate) fn unbound(&self) {
        if !self.sent.swap(true, Ordering::AcqRel) && self.all.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            for (_, lane) in self.all.lanes.all() {
                lane.handler.unbound();
            }
        }
    }
}
