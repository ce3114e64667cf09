use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use gust_core::{Closed, Handler, Locked, RequestBatch};
use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// The JavaScript dispatcher: `() => void`, a doorbell. The batches wait in the handler's inbox, and the
/// dispatcher takes them (`BindingServer.takeBatch`) when it runs.
pub(crate) type Dispatch = ThreadsafeFunction<(), (), (), napi::Status, false>;

/// Batches handed to a JavaScript thread that it has not taken yet. They wait here rather than in the
/// threadsafe function's queue, and JavaScript takes them itself rather than being handed them as arguments,
/// because a thread that is being torn down may still be called (and take them) without running any
/// JavaScript, and its queue is never handed back (napi-rs leaks it): these are requests another thread can
/// still serve. Cost: one native call per batch more.
#[derive(Default)]
pub(crate) struct Inbox(Mutex<VecDeque<RequestBatch>>);

impl Inbox {
    /// Queues a batch for the dispatcher to take.
    pub(crate) fn push(&self, batch: RequestBatch) {
        self.0.locked().push_back(batch);
    }

    /// Everything waiting, as one buffer (records are self-delimited, so batches concatenate). Cost: a lock;
    /// nothing more for one batch (its bytes become the Buffer), a copy of the others when several I/O threads'
    /// batches wait together.
    pub(crate) fn take(&self) -> Vec<u8> {
        let mut waiting = self.0.locked();
        let Some(first) = waiting.pop_front() else { return Vec::new() };
        let mut bytes = first.into_bytes();
        while let Some(batch) = waiting.pop_front() {
            bytes.extend_from_slice(&batch.into_bytes());
        }
        bytes
    }
}

/// The server's lifecycle listener: `(event: 'unbound' | 'stopped', failure: string | null) => void`. Weak: it
/// never keeps the event loop alive on its own.
pub(crate) type Events =
    ThreadsafeFunction<(String, Option<String>), (), FnArgs<(String, Option<String>)>, napi::Status, false, true>;

/// Hands batches to one JavaScript thread: each is queued in the inbox, and one threadsafe call (one wake of
/// that thread) rings for all that queue up before it runs.
pub(crate) struct JsHandler {
    dispatch: Mutex<Option<Dispatch>>,
    inbox: std::sync::Arc<Inbox>,
    /// An attached (worker) thread's: when it leaves, what it did not take goes to another thread.
    hands_back: bool,
    events: Mutex<Option<Events>>,
    /// Batches handed to the JavaScript queue (wrapping): the caller compares with those it received to tell
    /// whether any is still on its way.
    sent: AtomicU32,
}

impl JsHandler {
    pub(crate) fn new(dispatch: Dispatch, inbox: std::sync::Arc<Inbox>, events: Events, hands_back: bool) -> Self {
        let (dispatch, events) = (Mutex::new(Some(dispatch)), Mutex::new(Some(events)));
        Self { dispatch, inbox, hands_back, events, sent: AtomicU32::new(0) }
    }

    /// Takes no more batches, and returns those not taken by the JavaScript thread, for the engine to hand to
    /// another thread (this one is leaving). Releases the dispatcher.
    pub(crate) fn close_inbox(&self) -> Vec<Vec<u8>> {
        let mut dispatch = self.dispatch.locked();
        dispatch.take();
        let waiting: Vec<Vec<u8>> = self.inbox.0.locked().drain(..).map(RequestBatch::into_bytes).collect();
        drop(dispatch);
        waiting
    }

    /// Lets the event loop exit while this handler is idle (an in-memory server: whoever waits on one of its
    /// connections keeps the loop alive instead).
    pub(crate) fn unref(&self, env: &napi::Env) -> napi::Result<()> {
        if let Some(dispatch) = self.dispatch.locked().as_mut() {
            // Deprecated as a reference-counting tool; here it is what it says, `napi_unref_threadsafe_function`,
            // done once at start-up (the dispatcher's type, shared with listening servers, stays one type).
            #[allow(deprecated)]
            dispatch.unref(env)?;
        }
        Ok(())
    }

    /// Batches handed to JavaScript so far (wrapping).
    pub(crate) fn sent(&self) -> u32 {
        self.sent.load(Ordering::Acquire)
    }

    /// Releases the dispatcher's threadsafe function, which is what keeps the JavaScript event loop alive while
    /// serving. Lifecycle events still arrive.
    pub(crate) fn release(&self) {
        self.dispatch.locked().take();
    }

    /// Releases both threadsafe functions, on their environment's thread, before that environment tears them
    /// down: taken under their locks, so no I/O thread can be calling them meanwhile or call them later. Node
    /// before 24.14 could crash when a threadsafe function of a worker being torn down was called
    /// (nodejs/node#58484); this makes sure none is.
    pub(crate) fn release_all(&self) {
        self.release();
        self.events.locked().take();
    }

    fn emit(&self, event: &str, failure: Option<String>) {
        if let Some(events) = self.events.locked().as_ref() {
            // Fails only while the environment is being torn down, when nobody is left to tell.
            let _ = events.call((event.to_owned(), failure), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl Handler for JsHandler {
    /// Queues the batch in the inbox and, when it was empty, rings the JavaScript thread (which takes all that
    /// waits): one call per turn of its event loop, however many I/O threads hand it batches. Under the
    /// dispatcher's lock, so that `close_inbox` finds every batch that was queued.
    fn handle(&self, batch: RequestBatch) -> Result<(), Closed> {
        let dispatch = self.dispatch.locked();
        let Some(dispatch) = dispatch.as_ref() else { return Err(Closed) };
        let mut inbox = self.inbox.0.locked();
        let ring = inbox.is_empty();
        inbox.push_back(batch);
        drop(inbox);
        if !ring {
            return Ok(());
        }
        if dispatch.call((), ThreadsafeFunctionCallMode::NonBlocking) == napi::Status::Ok {
            self.sent.fetch_add(1, Ordering::AcqRel);
            Ok(())
        } else if self.hands_back {
            // A worker's environment is going away: its cleanup hook hands what waits here to another thread.
            Ok(())
        } else {
            // The batch is refused (the inbox held only it), and answered 503.
            self.inbox.0.locked().clear();
            Err(Closed)
        }
    }

    fn unbound(&self) {
        self.emit("unbound", None);
    }

    fn stopped(&self, failure: Option<&gust_core::Error>) {
        self.emit("stopped", failure.map(ToString::to_string));
    }
}
