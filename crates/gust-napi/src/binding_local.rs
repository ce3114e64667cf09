//! The host of a one-thread server: drives its engine ([`gust_core::LocalEngine`]) from the JavaScript thread's
//! own loop, and calls the dispatcher in the same turn as the requests were read.
//!
//! Being woken differs by runtime:
//! - **Node**: libuv watches the engine's descriptor (`uv_poll`, one handle for the whole poller) and its next
//!   timer (`uv_timer`), on the loop `napi_get_uv_event_loop` gives: no other thread at all.
//! - **Bun**: its `uv_poll_*` are stubs that abort, so a helper thread only *waits* (`poll(2)` on the
//!   descriptor, until the next timer) and wakes the JavaScript thread with `uv_async_send`, which Bun runs on its
//!   own loop. It is armed again after each turn, so it never wakes the thread twice for one readiness. Every
//!   read, write and parse stays on the JavaScript thread.
//!
//! JavaScript is called with `napi_make_callback`, as a native callback: microtasks and `process.nextTick` run
//! when it returns, so an async handler that settles at once is answered in the same turn.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use gust_core::{Closed, Handler, LocalEngine, Locked, RequestBatch};
use napi::sys;

use crate::binding_uv::{
    data_of, free_handle, new_handle, uv_async_init, uv_async_send, uv_close, uv_poll_init, uv_poll_start,
    uv_poll_stop, uv_timer_init, uv_timer_start, uv_timer_stop, uv_unref, UvHandle, Waiter, UV_READABLE,
};
use crate::js_handler::Inbox;

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

/// The handler of a one-thread server: batches wait in the inbox, and lifecycle events in a queue of their
/// own; the host calls the dispatcher, then the lifecycle listener, after the turn that queued them (so the
/// last batch, closes of WebSockets that ended with the server, comes before `stopped`).
pub(crate) struct LocalHandler {
    inbox: Arc<Inbox>,
    ring: AtomicBool,
    events: Mutex<Vec<(&'static str, Option<String>)>>,
    sent: AtomicU32,
}

impl LocalHandler {
    pub(crate) fn new(inbox: Arc<Inbox>) -> Self {
        Self { inbox, ring: AtomicBool::new(false), events: Mutex::default(), sent: AtomicU32::new(0) }
    }

    pub(crate) fn sent(&self) -> u32 {
        self.sent.load(Ordering::Acquire)
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

/// The host whose handle this is, held for the callback (the callback may close the handles, which let go of
/// their own reference). SAFETY (callers): only from a libuv callback of an open handle, whose host is alive
/// (the open handles hold a strong reference, `LocalHost::keep`).
unsafe fn host_of(handle: *mut UvHandle) -> Rc<LocalHost> {
    let host = data_of::<LocalHost>(handle);
    Rc::increment_strong_count(host);
    Rc::from_raw(host)
}

unsafe extern "C" fn on_readable(handle: *mut UvHandle, _status: c_int, _events: c_int) {
    host_of(handle).on_wake();
}

unsafe extern "C" fn on_timer(handle: *mut UvHandle) {
    let host = host_of(handle);
    // A one-shot timer that has fired is set to nothing: the next `after` arms it again, even for the same
    // deadline (it may fire a little early, by libuv's millisecond clock).
    host.armed.set(None);
    host.on_wake();
}

unsafe extern "C" fn on_async(handle: *mut UvHandle) {
    let host = host_of(handle);
    // Whoever sent this, the waiting thread is not waiting now (it waits only once armed again, below).
    host.helper_waits.set(false);
    // While clients are active (the turn took socket events: requests, or room after answers) the next turn is
    // posted from here: one async send, and no other thread is woken, where each wake of the waiting thread
    // costs two context switches (measured: 45 µs of CPU per request at one connection, against 32 this way, and
    // half the latency). A turn that finds the sockets quiet hands back to the waiting thread, so an idle server
    // spins nothing.
    if host.on_wake() > 0 {
        uv_async_send(handle);
    } else {
        host.arm_helper();
    }
}

/// How the host is woken.
enum Wake {
    /// Node: libuv watches the descriptor and the timer.
    Uv { poll: *mut UvHandle, timer: *mut UvHandle },
    /// Bun: a thread waits for the descriptor or the timer and sends an async wake-up.
    Helper { wake: *mut UvHandle, waiter: Arc<Waiter>, thread: Option<std::thread::JoinHandle<()>> },
}

/// A one-thread server's host, on its JavaScript thread.
pub(crate) struct LocalHost {
    engine: LocalEngine,
    handler: Arc<LocalHandler>,
    env: sys::napi_env,
    dispatch: Cell<sys::napi_ref>,
    /// The lifecycle listener: `(event, failure) => void`.
    events: Cell<sys::napi_ref>,
    context: Cell<sys::napi_async_context>,
    wake: RefCell<Option<Wake>>,
    /// A wake is being handled: it calls the dispatcher and re-arms when done.
    in_wake: Cell<bool>,
    /// The deadline the loop's timer (or the waiting thread) is set to.
    armed: Cell<Option<Instant>>,
    /// Bun: the waiting thread waits (armed since the last async wake-up). Otherwise a wake-up is already on its
    /// way to the loop (the waiting thread's, or one the last turn posted), and the turn it brings re-arms the
    /// thread with the engine's next timer: nothing to ring. Ringing anyway cost a `write(2)` per answer
    /// delivered from JavaScript (a streamed download's chunk each) while clients were busy.
    helper_waits: Cell<bool>,
    /// The strong reference the open handles hold, released when they close.
    keep: RefCell<Option<Rc<LocalHost>>>,
}

impl LocalHost {
    /// Hosts `engine` on this thread's loop; `dispatch` is the dispatcher's function.
    pub(crate) fn start(
        env: &napi::Env,
        engine: LocalEngine,
        handler: Arc<LocalHandler>,
        dispatch: sys::napi_value,
        events: sys::napi_value,
    ) -> napi::Result<Rc<Self>> {
        let raw = env.raw();
        let mut reference = std::ptr::null_mut();
        let mut listener = std::ptr::null_mut();
        let mut context = std::ptr::null_mut();
        let mut lp = std::ptr::null_mut();
        // SAFETY: napi calls on the calling (JavaScript) thread with its environment and a live function value.
        unsafe {
            check(sys::napi_create_reference(raw, dispatch, 1, &mut reference))?;
            check(sys::napi_create_reference(raw, events, 1, &mut listener))?;
            let mut name = std::ptr::null_mut();
            check(sys::napi_create_string_utf8(raw, c"gust".as_ptr(), 4, &mut name))?;
            check(sys::napi_async_init(raw, std::ptr::null_mut(), name, &mut context))?;
            check(sys::napi_get_uv_event_loop(raw, &mut lp))?;
        }
        let host = Rc::new(Self {
            engine,
            handler,
            env: raw,
            dispatch: Cell::new(reference),
            events: Cell::new(listener),
            context: Cell::new(context),
            wake: RefCell::new(None),
            in_wake: Cell::new(false),
            armed: Cell::new(None),
            helper_waits: Cell::new(false),
            keep: RefCell::new(None),
        });
        let ptr = Rc::as_ptr(&host);
        let fd = host.engine.fd();
        let wake = if ON_BUN.load(Ordering::Relaxed) {
            let wake = new_handle(ptr);
            // SAFETY: a fresh handle on this thread's loop.
            if unsafe { uv_async_init(lp, wake, on_async) } != 0 {
                // SAFETY: never initialised, so not the loop's: freed here.
                unsafe { free_handle(wake) };
                return Err(napi::Error::from_reason("gust: this runtime cannot wake the one-thread engine"));
            }
            let (waiter, thread) = Waiter::start(fd, wake)
                .map_err(|e| napi::Error::from_reason(format!("gust: cannot start the waiting thread: {e}")))?;
            Wake::Helper { wake, waiter, thread: Some(thread) }
        } else {
            let (poll, timer) = (new_handle(ptr), new_handle(ptr));
            // SAFETY: fresh handles on this thread's loop; the descriptor lives as long as the engine, which
            // outlives the handles (they are closed before the host lets go of it).
            unsafe {
                if uv_poll_init(lp, poll, fd) != 0 || uv_timer_init(lp, timer) != 0 {
                    return Err(napi::Error::from_reason("gust: libuv cannot watch the one-thread engine"));
                }
                uv_poll_start(poll, UV_READABLE, on_readable);
                uv_unref(timer);
            }
            Wake::Uv { poll, timer }
        };
        *host.wake.borrow_mut() = Some(wake);
        *host.keep.borrow_mut() = Some(host.clone());
        // The first turn: whatever is ready already (nothing, usually), and the timers armed at start.
        host.engine.wake_soon();
        host.arm_helper();
        Ok(host)
    }

    /// A turn, the dispatcher for what it queued (again while answers make more, a few times at most), and
    /// the lifecycle listener; once the engine has finished (the last batch and `stopped` told), the handles
    /// close.
    /// Returns the readiness events the turn took.
    fn on_wake(&self) -> usize {
        if self.wake.borrow().is_none() {
            return 0;
        }
        self.in_wake.set(true);
        let turn = self.engine.turn();
        let mut calls = 0;
        while self.handler.ring.swap(false, Ordering::AcqRel) {
            if calls == MAX_CALLS {
                self.handler.ring.store(true, Ordering::Release);
                self.engine.wake_soon();
                break;
            }
            calls += 1;
            self.handler.sent.fetch_add(1, Ordering::AcqRel);
            self.call(&self.dispatch);
        }
        self.in_wake.set(false);
        self.tell_events();
        let finished = turn.finished || self.engine.is_finished();
        self.after(finished);
        if finished {
            0
        } else {
            turn.events
        }
    }

    /// Runs `deliver` (answers, WebSocket sends) and writes what it woke before returning.
    pub(crate) fn deliver<T>(&self, deliver: impl FnOnce() -> T) -> T {
        let (out, turn) = self.engine.deliver(deliver);
        if !self.in_wake.get() {
            if turn.finished || self.handler.ring.load(Ordering::Acquire) || !self.handler.events.locked().is_empty() {
                // Requests read while writing (pipelined ones), lifecycle events, the end: told from the loop,
                // not from inside the call that caused them.
                self.turn_soon();
            } else {
                self.after(false);
            }
        }
        out
    }

    /// Calls the lifecycle listener for every event queued (`unbound`, `stopped`).
    fn tell_events(&self) {
        let events = std::mem::take(&mut *self.handler.events.locked());
        for (event, failure) in events {
            // SAFETY: called by `call_with` on the JavaScript thread, inside the handle scope it opened.
            self.call_with(&self.events, |env, args| unsafe {
                let mut name = std::ptr::null_mut();
                sys::napi_create_string_utf8(env, event.as_ptr().cast(), event.len() as isize, &mut name);
                let mut why = std::ptr::null_mut();
                match &failure {
                    Some(text) => {
                        sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut why);
                    }
                    None => {
                        sys::napi_get_null(env, &mut why);
                    }
                }
                args.push(name);
                args.push(why);
            });
        }
    }

    /// After a turn or a delivery: the loop's timer follows the engine's next one; a finished engine's handles
    /// close.
    fn after(&self, finished: bool) {
        if finished {
            self.close();
            return;
        }
        let next = self.engine.next_timer();
        if next == self.armed.get() {
            return;
        }
        match self.wake.borrow().as_ref() {
            Some(Wake::Uv { timer, .. }) => {
                self.armed.set(next);
                // SAFETY: an open handle of this thread's loop.
                unsafe {
                    match next {
                        Some(at) => {
                            let ms = at.saturating_duration_since(Instant::now()).as_millis();
                            // Rounded up: a timer that fires early finds nothing due and costs a turn.
                            uv_timer_start(*timer, on_timer, u64::try_from(ms + 1).unwrap_or(u64::MAX), 0);
                        }
                        None => {
                            uv_timer_stop(*timer);
                        }
                    }
                }
            }
            // The waiting thread takes the new deadline when it is armed next; one earlier than the one it waits
            // for interrupts its wait.
            Some(Wake::Helper { .. })
                if self.helper_waits.get()
                    && next.is_some_and(|at| self.armed.get().is_none_or(|armed| at < armed)) =>
            {
                self.engine.wake_soon();
            }
            Some(Wake::Helper { .. }) | None => {}
        }
    }

    /// Bun: lets the waiting thread wait again, until the engine's next timer at the latest.
    fn arm_helper(&self) {
        if let Some(Wake::Helper { waiter, .. }) = self.wake.borrow().as_ref() {
            let deadline = self.engine.next_timer();
            self.armed.set(deadline);
            self.helper_waits.set(true);
            waiter.arm(deadline);
        }
    }

    /// Makes sure a turn comes soon, from the loop: rings the engine's descriptor, unless (Bun) a wake-up is
    /// already on its way (see `helper_waits`).
    fn turn_soon(&self) {
        if matches!(self.wake.borrow().as_ref(), Some(Wake::Helper { .. })) && !self.helper_waits.get() {
            return;
        }
        self.engine.wake_soon();
    }

    fn call(&self, function: &Cell<sys::napi_ref>) {
        self.call_with(function, |_, _| {});
    }

    /// Calls the function behind `function` with the arguments `args` builds, as a native callback.
    fn call_with(&self, function: &Cell<sys::napi_ref>, args: impl FnOnce(sys::napi_env, &mut Vec<sys::napi_value>)) {
        let env = self.env;
        // SAFETY: on the JavaScript thread, from a libuv callback (no JavaScript on the stack), with the
        // environment the host was started with; every value lives in the handle scope opened here.
        unsafe {
            let mut scope = std::ptr::null_mut();
            if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
                return;
            }
            let mut func = std::ptr::null_mut();
            let mut recv = std::ptr::null_mut();
            if !function.get().is_null()
                && sys::napi_get_reference_value(env, function.get(), &mut func) == sys::Status::napi_ok
                && !func.is_null()
                // An object, as `napi_make_callback` wants one (the package's callbacks are arrow functions).
                && sys::napi_get_global(env, &mut recv) == sys::Status::napi_ok
            {
                let mut argv = Vec::new();
                args(env, &mut argv);
                let mut result = std::ptr::null_mut();
                let status = sys::napi_make_callback(
                    env,
                    self.context.get(),
                    recv,
                    func,
                    argv.len(),
                    argv.as_ptr(),
                    &mut result,
                );
                if status == sys::Status::napi_pending_exception {
                    // The package's callbacks never throw; should one, the process hears it as an uncaught
                    // exception, as it would from a threadsafe call.
                    let mut err = std::ptr::null_mut();
                    sys::napi_get_and_clear_last_exception(env, &mut err);
                    sys::napi_fatal_exception(env, err);
                }
            }
            sys::napi_close_handle_scope(env, scope);
        }
    }

    /// Closes the loop's handles and the waiting thread (the engine has finished, or the thread is going
    /// away). Idempotent.
    pub(crate) fn close(&self) {
        let Some(wake) = self.wake.borrow_mut().take() else { return };
        // SAFETY: handles of this thread's loop, open until here; each is freed by its close callback.
        unsafe {
            match wake {
                Wake::Uv { poll, timer } => {
                    uv_poll_stop(poll);
                    uv_timer_stop(timer);
                    uv_close(poll, Some(free_handle));
                    uv_close(timer, Some(free_handle));
                }
                Wake::Helper { wake, waiter, thread } => {
                    waiter.quit();
                    // Its wait ends when the descriptor becomes readable.
                    self.engine.wake_soon();
                    if let Some(thread) = thread {
                        let _ = thread.join();
                    }
                    uv_close(wake, Some(free_handle));
                }
            }
            for function in [&self.dispatch, &self.events] {
                let reference = function.replace(std::ptr::null_mut());
                if !reference.is_null() {
                    sys::napi_delete_reference(self.env, reference);
                }
            }
            let context = self.context.replace(std::ptr::null_mut());
            if !context.is_null() {
                sys::napi_async_destroy(self.env, context);
            }
        }
        // The handles no longer hold the host (dropped last: this may be the last reference).
        let keep = self.keep.borrow_mut().take();
        drop(keep);
    }

    /// Stops at once (the environment is being torn down): every connection drops, the handles close; nothing
    /// more is told to JavaScript.
    pub(crate) fn close_now(&self) {
        self.engine.close_now();
        self.handler.events.locked().clear();
        self.close();
    }

    pub(crate) fn handler(&self) -> &Arc<LocalHandler> {
        &self.handler
    }
}

/// Dispatcher calls per wake: past them, what is still queued waits for the next turn of the loop.
const MAX_CALLS: u32 = 8;

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("gust: a Node-API call failed with status {status}")))
    }
}

impl Drop for LocalHost {
    fn drop(&mut self) {
        self.close();
    }
}
