use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use gust_core::{Closed, Handler, RequestBatch};
use napi::bindgen_prelude::{Buffer, FnArgs};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// The JavaScript dispatcher: `(batch: Buffer, count: number) => void`.
pub(crate) type Dispatch = ThreadsafeFunction<RequestBatch, (), FnArgs<(Buffer, u32)>, napi::Status, false>;

/// The server's lifecycle listener: `(event: 'unbound' | 'stopped', failure: string | null) => void`. Weak: it
/// never keeps the event loop alive on its own.
pub(crate) type Events =
    ThreadsafeFunction<(String, Option<String>), (), FnArgs<(String, Option<String>)>, napi::Status, false, true>;

/// Hands each batch to JavaScript: one threadsafe call, hence one wake of the JavaScript thread, per batch.
/// The batch's bytes become a Buffer without a copy.
pub(crate) struct JsHandler {
    dispatch: Mutex<Option<Dispatch>>,
    events: Mutex<Option<Events>>,
    /// Batches handed to the JavaScript queue (wrapping): the caller compares with those it received to tell
    /// whether any is still on its way.
    sent: AtomicU32,
}

impl JsHandler {
    pub(crate) fn new(dispatch: Dispatch, events: Events) -> Self {
        Self { dispatch: Mutex::new(Some(dispatch)), events: Mutex::new(Some(events)), sent: AtomicU32::new(0) }
    }

    /// Lets the event loop exit while this handler is idle (an in-memory server: whoever waits on one of its
    /// connections keeps the loop alive instead).
    pub(crate) fn unref(&self, env: &napi::Env) -> napi::Result<()> {
        if let Some(dispatch) = self.dispatch.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
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
        self.dispatch.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Releases both threadsafe functions, on their environment's thread, before that environment tears them
    /// down: taken under their locks, so no I/O thread can be calling them meanwhile or call them later. Node
    /// before 24.14 could crash when a threadsafe function of a worker being torn down was called
    /// (nodejs/node#58484); this makes sure none is.
    pub(crate) fn release_all(&self) {
        self.release();
        self.events.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    fn emit(&self, event: &str, failure: Option<String>) {
        if let Some(events) = self.events.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            // Fails only while the environment is being torn down, when nobody is left to tell.
            let _ = events.call((event.to_owned(), failure), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl Handler for JsHandler {
    fn handle(&self, batch: RequestBatch) -> Result<(), Closed> {
        let dispatch = self.dispatch.lock().unwrap_or_else(|e| e.into_inner());
        match dispatch.as_ref() {
            Some(dispatch) if dispatch.call(batch, ThreadsafeFunctionCallMode::NonBlocking) == napi::Status::Ok => {
                self.sent.fetch_add(1, Ordering::AcqRel);
                Ok(())
            }
            _ => Err(Closed),
        }
    }

    fn unbound(&self) {
        self.emit("unbound", None);
    }

    fn stopped(&self, failure: Option<&gust_core::Error>) {
        self.emit("stopped", failure.map(ToString::to_string));
    }
}
