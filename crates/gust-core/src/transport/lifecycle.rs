//! What the I/O threads are told ([`Phase`]) and what they report back ([`Unbound`]): shared by the server
//! that starts them, and the listeners and connections that obey.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::crossing::lanes::Lanes;

/// What the I/O thread is told to do with its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Serving,
    /// Stop accepting; finish in-flight requests; close idle connections; WebSockets close with 1001 and wait
    /// for the client's reply.
    Draining,
    /// Close everything now.
    Closing,
}

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
