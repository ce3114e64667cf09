//! The handler of a one-thread server (`gust_core::Handler`): batches wait in the inbox and lifecycle events in
//! a queue of their own, both taken by the host (`binding_local`) on the JavaScript thread after the turn that
//! queued them, so the last batch (closes of WebSockets that ended with the server) comes before `stopped`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use gust_core::{Closed, Handler, Locked, RequestBatch};

use crate::js_handler::Inbox;

/// A one-thread server's handler: what its turns queued for JavaScript.
pub(crate) struct LocalHandler {
    inbox: Arc<Inbox>,
    /// A batch waits: the dispatcher is to be called.
    ring: AtomicBool,
    events: Mutex<Vec<(&'static str, Option<String>)>>,
    sent: AtomicU32,
}

// Where the one-thread engine does not run (`binding_local_elsewhere.rs`) only its type is named.
#[cfg_attr(not(unix), allow(dead_code))]
impl LocalHandler {
    pub(crate) fn new(inbox: Arc<Inbox>) -> Self {
        Self { inbox, ring: AtomicBool::new(false), events: Mutex::default(), sent: AtomicU32::new(0) }
    }

    /// Batches handed to the dispatcher so far (wrapping).
    pub(crate) fn sent(&self) -> u32 {
        self.sent.load(Ordering::Acquire)
    }

    /// Whether a batch waits for the dispatcher, taking the signal: the host calls the dispatcher if so.
    pub(crate) fn take_ring(&self) -> bool {
        self.ring.swap(false, Ordering::AcqRel)
    }

    /// Whether a batch waits, leaving the signal as it is.
    pub(crate) fn rung(&self) -> bool {
        self.ring.load(Ordering::Acquire)
    }

    /// Puts back the signal taken by [`take_ring`](Self::take_ring) (the host left the batch for its next turn).
    pub(crate) fn ring_again(&self) {
        self.ring.store(true, Ordering::Release);
    }

    /// The dispatcher is about to be called for what waits: one more batch sent.
    pub(crate) fn count_sent(&self) {
        self.sent.fetch_add(1, Ordering::AcqRel);
    }

    /// Every lifecycle event queued, taken.
    pub(crate) fn take_events(&self) -> Vec<(&'static str, Option<String>)> {
        std::mem::take(&mut *self.events.locked())
    }

    /// Whether a lifecycle event waits.
    pub(crate) fn has_events(&self) -> bool {
        !self.events.locked().is_empty()
    }

    /// Forgets the events queued (the environment is going away: nothing more is told to JavaScript).
    pub(crate) fn clear_events(&self) {
        self.events.locked().clear();
    }

    fn emit(&self, event: &'static str, failure: Option<String>) {
        self.events.locked().push((event, failure));
    }
}

impl Handler for LocalHandler {
    fn handle(&self, batch: RequestBatch) -> Result<(), Closed> {
        self.inbox.push(batch);
        self.ring.store(true, Ordering::Release);
        Ok(())
    }

    fn unbound(&self) {
        self.emit("unbound", None);
    }

    fn stopped(&self, failure: Option<&gust_core::Error>) {
        self.emit("stopped", failure.map(ToString::to_string));
    }
}
