//! The host of a one-thread server: drives its engine ([`gust_core::LocalEngine`]) from the JavaScript thread's
//! own loop, and calls the dispatcher in the same turn as the requests were read. Its parts, one job each: how
//! it is woken on Node and on Bun (`binding_wake`, over `binding_uv`), how it calls JavaScript
//! (`binding_js_calls`), and the engine's handler (`binding_local_handler`). Every read, write and parse stays on
//! the JavaScript thread.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gust_core::LocalEngine;
use napi::sys;

use crate::binding_js_calls::JsCalls;
pub(crate) use crate::binding_local_handler::LocalHandler;
use crate::binding_uv::{data_of, uv_async_send, UvHandle};
use crate::binding_wake::{Entries, Wake};

/// The one-thread engine runs on this system (Linux and macOS); see `binding_local_elsewhere.rs` for the others.
pub(crate) fn check_supported() -> napi::Result<()> {
    Ok(())
}

/// Set once by the package on Bun (`hostIsBun()`): no `uv_poll` there.
static ON_BUN: AtomicBool = AtomicBool::new(false);

/// Tells the addon it runs on Bun, whose loop cannot watch a descriptor for an addon.
#[napi_derive::napi]
pub fn host_is_bun() {
    ON_BUN.store(true, Ordering::Relaxed);
}

/// The host whose handle this is, held for the callback (the callback may close the handles, which let go of
/// their own reference). SAFETY (callers): only from a libuv callback of an open handle, whose host is alive
/// (the open handles hold a strong reference, `LocalHost::keep`).
unsafe fn host_of(handle: *mut UvHandle) -> Rc<LocalHost> {
    let host = data_of::<LocalHost>(handle);
    Rc::increment_strong_count(host);
    Rc::from_raw(host)
}

/// Node: the engine's descriptor is readable.
unsafe extern "C" fn on_readable(handle: *mut UvHandle, _status: c_int, _events: c_int) {
    host_of(handle).on_wake();
}

/// Node: the engine's next timer is due.
unsafe extern "C" fn on_timer(handle: *mut UvHandle) {
    let host = host_of(handle);
    if let Some(wake) = host.wake.borrow().as_ref() {
        wake.timer_fired();
    }
    host.on_wake();
}

/// Bun: the waiting thread (or the last turn) woke the loop.
unsafe extern "C" fn on_async(handle: *mut UvHandle) {
    let host = host_of(handle);
    if let Some(wake) = host.wake.borrow().as_ref() {
        wake.woken();
    }
    // While clients are active (the turn took socket events: requests, or room after answers) the next turn is
    // posted from here: one async send, and no other thread is woken, where each wake of the waiting thread
    // costs two context switches (measured: 45 µs of CPU per request at one connection, against 32 this way, and
    // half the latency). A turn that finds the sockets quiet hands back to the waiting thread, so an idle server
    // spins nothing.
    if host.on_wake() > 0 {
        uv_async_send(handle);
    } else {
        host.arm();
    }
}

/// A one-thread server's host, on its JavaScript thread.
pub(crate) struct LocalHost {
    engine: LocalEngine,
    handler: Arc<LocalHandler>,
    js: JsCalls,
    wake: RefCell<Option<Wake>>,
    /// A wake is being handled: it calls the dispatcher and re-arms when done.
    in_wake: Cell<bool>,
    /// The dispatcher's turn end is called (Node). Not on Bun: there `napi_make_callback` returns before the
    /// microtasks run, so at the turn end nothing more is written yet, and the call would only cost.
    turn_end: bool,
    /// The strong reference the open handles hold, released when they close.
    keep: RefCell<Option<Rc<LocalHost>>>,
}

impl LocalHost {
    /// Hosts `engine` on this thread's loop; `dispatch` is the dispatcher's function, `events` the lifecycle
    /// listener's.
    pub(crate) fn start(
        env: &napi::Env,
        engine: LocalEngine,
        handler: Arc<LocalHandler>,
        dispatch: sys::napi_value,
        events: sys::napi_value,
    ) -> napi::Result<Rc<Self>> {
        let raw = env.raw();
        let js = JsCalls::new(raw, dispatch, events)?;
        let host = Rc::new(Self {
            engine,
            handler,
            js,
            wake: RefCell::new(None),
            in_wake: Cell::new(false),
            turn_end: !ON_BUN.load(Ordering::Relaxed),
            keep: RefCell::new(None),
        });
        let entries = Entries { readable: on_readable, timer: on_timer, woken: on_async };
        let wake = Wake::start(raw, host.engine.fd(), Rc::as_ptr(&host), ON_BUN.load(Ordering::Relaxed), &entries)?;
        *host.wake.borrow_mut() = Some(wake);
        *host.keep.borrow_mut() = Some(host.clone());
        // The first turn: whatever is ready already (nothing, usually), and the timers armed at start.
        host.engine.wake_soon();
        host.arm();
        Ok(host)
    }

    /// A turn, the dispatcher for what it queued (again while answers make more, a few times at most), its
    /// turn end when it asks for one, and the lifecycle listener; once the engine has finished (the last batch
    /// and `stopped` told), the handles close.
    /// Returns the readiness events the turn took.
    fn on_wake(&self) -> usize {
        if self.wake.borrow().is_none() {
            return 0;
        }
        self.in_wake.set(true);
        let turn = self.engine.turn();
        self.dispatch_all();
        self.in_wake.set(false);
        for (event, failure) in self.handler.take_events() {
            self.js.event(event, failure.as_deref());
        }
        let finished = turn.finished || self.engine.is_finished();
        self.after(finished);
        if finished {
            0
        } else {
            turn.events
        }
    }

    /// Calls the dispatcher while batches wait, `MAX_CALLS` times at most (the rest waits for the next turn),
    /// then (on Node) its turn end if it asked for one: what handlers and streams wrote while their microtasks
    /// ran goes out from this callback. Each call drains the microtasks before it returns (`napi_make_callback`);
    /// a turn end that reads pipelined requests has them dispatched too.
    fn dispatch_all(&self) {
        let mut calls = 0;
        loop {
            let mut wanted = false;
            while self.handler.take_ring() {
                if calls == MAX_CALLS {
                    self.handler.ring_again();
                    self.engine.wake_soon();
                    return;
                }
                calls += 1;
                self.handler.count_sent();
                wanted |= self.js.dispatch();
            }
            if !wanted || !self.turn_end {
                return;
            }
            self.js.turn_end();
            if !self.handler.rung() {
                return;
            }
        }
    }

    /// Runs `deliver` (answers, WebSocket sends) and writes what it woke before returning.
    pub(crate) fn deliver<T>(&self, deliver: impl FnOnce() -> T) -> T {
        let (out, turn) = self.engine.deliver(deliver);
        if !self.in_wake.get() {
            if turn.finished || self.handler.rung() || self.handler.has_events() {
                // Requests read while writing (pipelined ones), lifecycle events, the end: told from the loop,
                // not from inside the call that caused them.
                if let Some(wake) = self.wake.borrow().as_ref() {
                    wake.soon(|| self.engine.wake_soon());
                }
            } else {
                self.after(false);
            }
        }
        out
    }

    /// After a turn or a delivery: the wake-up follows the engine's next timer; a finished engine's handles
    /// close.
    fn after(&self, finished: bool) {
        if finished {
            self.close();
            return;
        }
        if let Some(wake) = self.wake.borrow().as_ref() {
            wake.follow(self.engine.next_timer(), || self.engine.wake_soon());
        }
    }

    /// Bun: lets the waiting thread wait again, until the engine's next timer at the latest.
    fn arm(&self) {
        if let Some(wake) = self.wake.borrow().as_ref() {
            wake.arm(self.engine.next_timer());
        }
    }

    /// Closes the loop's handles and the waiting thread (the engine has finished, or the thread is going
    /// away), and lets go of the JavaScript functions. Idempotent.
    pub(crate) fn close(&self) {
        let Some(wake) = self.wake.borrow_mut().take() else { return };
        // Its wait ends when the descriptor becomes readable.
        wake.close(|| self.engine.wake_soon());
        self.js.release();
        // The handles no longer hold the host (dropped last: this may be the last reference).
        let keep = self.keep.borrow_mut().take();
        drop(keep);
    }

    /// Stops at once (the environment is being torn down): every connection drops, the handles close; nothing
    /// more is told to JavaScript.
    pub(crate) fn close_now(&self) {
        self.engine.close_now();
        self.handler.clear_events();
        self.close();
    }

    pub(crate) fn handler(&self) -> &Arc<LocalHandler> {
        &self.handler
    }

    /// Bun with the ring (`binding_ring`): the socket the package is to watch, once; `None` otherwise.
    pub(crate) fn take_wake_reader(&self) -> Option<c_int> {
        self.wake.borrow().as_ref().and_then(Wake::take_reader)
    }

    /// Bun with the ring: the package read the socket's byte. A turn, then the ring armed again (at once
    /// complete if the engine's descriptor is still readable: the next turn then comes from the loop, as
    /// `on_async` posts one).
    pub(crate) fn on_woken(&self) {
        if let Some(wake) = self.wake.borrow().as_ref() {
            wake.woken();
        }
        self.on_wake();
        self.arm();
    }
}

/// Dispatcher calls per wake: past them, what is still queued waits for the next turn of the loop.
const MAX_CALLS: u32 = 8;

impl Drop for LocalHost {
    fn drop(&mut self) {
        self.close();
    }
}
