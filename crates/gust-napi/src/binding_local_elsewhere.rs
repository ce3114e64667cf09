//! The one-thread engine's host where it does not run (Windows: its poller's descriptor and libuv's `uv_poll`
//! are Unix's): the same face as `binding_local.rs`, so the rest of the binding names no platform, and one
//! error that says what to do instead.

use std::sync::Arc;

use gust_core::LocalEngine;
use napi::sys;

pub(crate) use crate::binding_local_handler::LocalHandler;

/// Refuses the one-thread engine, naming the engine to use instead.
pub(crate) fn check_supported() -> napi::Result<()> {
    Err(napi::Error::new(
        napi::Status::InvalidArg,
        "engine 'one-thread' runs on Linux and macOS; on this system use engine 'threads'",
    ))
}

/// Tells the addon it runs on Bun: nothing to change where the one-thread engine does not run.
#[napi_derive::napi]
pub fn host_is_bun() {}

/// Whether Bun's one-thread servers may use io_uring: nothing to change where the one-thread engine does not run.
#[napi_derive::napi]
pub fn use_io_uring(_allowed: bool) {}

/// No value of it exists: every method is unreachable.
pub(crate) enum LocalHost {}

impl LocalHost {
    pub(crate) fn start(
        _env: &napi::Env,
        _engine: LocalEngine,
        _handler: Arc<LocalHandler>,
        _dispatch: sys::napi_value,
        _events: sys::napi_value,
    ) -> napi::Result<std::rc::Rc<Self>> {
        check_supported()
            .and_then(|()| Err(napi::Error::from_reason("gust: the one-thread engine cannot be hosted here")))
    }

    pub(crate) fn deliver<T>(&self, _deliver: impl FnOnce() -> T) -> T {
        match *self {}
    }

    pub(crate) fn close(&self) {
        match *self {}
    }

    pub(crate) fn close_now(&self) {
        match *self {}
    }

    pub(crate) fn handler(&self) -> &Arc<LocalHandler> {
        match *self {}
    }

    pub(crate) fn take_wake_reader(&self) -> Option<i32> {
        match *self {}
    }

    pub(crate) fn on_woken(&self) {
        match *self {}
    }
}
