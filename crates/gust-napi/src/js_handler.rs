use std::sync::Mutex;

use gust_core::{Closed, Handler, RequestBatch};
use napi::bindgen_prelude::{Buffer, FnArgs};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// The JavaScript dispatcher: `(batch: Buffer, count: number) => void`.
pub(crate) type Dispatch = ThreadsafeFunction<RequestBatch, (), FnArgs<(Buffer, u32)>, napi::Status, false>;

/// Hands each batch to JavaScript: one threadsafe call, hence one wake of the JavaScript thread, per batch.
/// The batch's bytes become a Buffer without a copy.
pub(crate) struct JsHandler {
    dispatch: Mutex<Option<Dispatch>>,
}

impl JsHandler {
    pub(crate) fn new(dispatch: Dispatch) -> Self {
        Self { dispatch: Mutex::new(Some(dispatch)) }
    }

    /// Releases the threadsafe function, which is what keeps the JavaScript event loop alive while serving.
    pub(crate) fn release(&self) {
        self.dispatch.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl Handler for JsHandler {
    fn handle(&self, batch: RequestBatch) -> Result<(), Closed> {
        let dispatch = self.dispatch.lock().unwrap_or_else(|e| e.into_inner());
        match dispatch.as_ref() {
            Some(dispatch) if dispatch.call(batch, ThreadsafeFunctionCallMode::NonBlocking) == napi::Status::Ok => {
                Ok(())
            }
            _ => Err(Closed),
        }
    }
}
