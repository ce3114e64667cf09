//! How a one-thread server's host is woken, by runtime; the host (`binding_local`) only says when (arm, soon,
//! follow the next timer, close), never how.
//!
//! - **Node**: libuv watches the engine's descriptor (`uv_poll`, one handle for the whole poller) and its next
//!   timer (`uv_timer`), on the loop `napi_get_uv_event_loop` gives: no other thread at all.
//! - **Bun**: its `uv_poll_*` are stubs that abort, so a helper thread only *waits* (`poll(2)` on the
//!   descriptor, until the next timer: `binding_uv::Waiter`) and wakes the JavaScript thread with
//!   `uv_async_send`, which Bun runs on its own loop. It is armed again after each turn, so it never wakes the
//!   thread twice for one readiness.

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::Arc;
use std::time::Instant;

use napi::sys;

use crate::binding_uv::{
    free_handle, new_handle, uv_async_init, uv_close, uv_poll_init, uv_poll_start, uv_poll_stop, uv_timer_init,
    uv_timer_start, uv_timer_stop, uv_unref, UvCallback, UvHandle, UvPollCallback, Waiter, UV_READABLE,
};

/// The host's entry points, which libuv calls on the JavaScript thread: the descriptor is readable (Node), the
/// timer fired (Node), the waiting thread woke the loop (Bun).
pub(crate) struct Entries {
    pub(crate) readable: UvPollCallback,
    pub(crate) timer: UvCallback,
    pub(crate) woken: UvCallback,
}

/// How the host is woken, and what it has asked for.
pub(crate) struct Wake {
    how: How,
    /// The deadline the loop's timer (or the waiting thread) is set to.
    armed: Cell<Option<Instant>>,
    /// Bun: the waiting thread waits (armed since the last async wake-up). Otherwise a wake-up is already on its
    /// way to the loop (the waiting thread's, or one the last turn posted), and the turn it brings re-arms the
    /// thread with the engine's next timer: nothing to ring. Ringing anyway cost a `write(2)` per answer
    /// delivered from JavaScript (a streamed download's chunk each) while clients were busy.
    helper_waits: Cell<bool>,
}

enum How {
    /// Node: libuv watches the descriptor and the timer.
    Uv { poll: *mut UvHandle, timer: *mut UvHandle, on_timer: UvCallback },
    /// Bun: a thread waits for the descriptor or the timer and sends an async wake-up.
    Helper { wake: *mut UvHandle, waiter: Arc<Waiter>, thread: Option<std::thread::JoinHandle<()>> },
}

impl Wake {
    /// Starts watching descriptor `fd` on `env`'s loop for the host at `data` (what the handles' callbacks get):
    /// with libuv's own poll and timer, or (`on_bun`) with a waiting thread.
    pub(crate) fn start<T>(
        env: sys::napi_env,
        fd: c_int,
        data: *const T,
        on_bun: bool,
        entries: &Entries,
    ) -> napi::Result<Self> {
        let mut lp = std::ptr::null_mut();
        // SAFETY: a napi call on the JavaScript thread with its environment.
        if unsafe { sys::napi_get_uv_event_loop(env, &mut lp) } != sys::Status::napi_ok {
            return Err(napi::Error::from_reason(
                "gust: this runtime gives no event loop to watch the one-thread engine",
            ));
        }
        let how = if on_bun {
            let wake = new_handle(data);
            // SAFETY: a fresh handle on this thread's loop.
            if unsafe { uv_async_init(lp, wake, entries.woken) } != 0 {
                // SAFETY: never initialised, so not the loop's: freed here.
                unsafe { free_handle(wake) };
                return Err(napi::Error::from_reason("gust: this runtime cannot wake the one-thread engine"));
            }
            let (waiter, thread) = Waiter::start(fd, wake)
                .map_err(|e| napi::Error::from_reason(format!("gust: cannot start the waiting thread: {e}")))?;
            How::Helper { wake, waiter, thread: Some(thread) }
        } else {
            let (poll, timer) = (new_handle(data), new_handle(data));
            // SAFETY: fresh handles on this thread's loop; the descriptor lives as long as the engine, which
            // outlives the handles (they are closed before the host lets go of it).
            unsafe {
                if uv_poll_init(lp, poll, fd) != 0 || uv_timer_init(lp, timer) != 0 {
                    return Err(napi::Error::from_reason("gust: libuv cannot watch the one-thread engine"));
                }
                uv_poll_start(poll, UV_READABLE, entries.readable);
                uv_unref(timer);
            }
            How::Uv { poll, timer, on_timer: entries.timer }
        };
        Ok(Self { how, armed: Cell::new(None), helper_waits: Cell::new(false) })
    }

    /// Bun: lets the waiting thread wait again, until `next` (the engine's next timer) at the latest. Nothing on
    /// Node, whose loop watches all along.
    pub(crate) fn arm(&self, next: Option<Instant>) {
        if let How::Helper { waiter, .. } = &self.how {
            self.armed.set(next);
            self.helper_waits.set(true);
            waiter.arm(next);
        }
    }

    /// After a turn or a delivery: the loop's timer follows the engine's next one (`next`). On Bun the waiting
    /// thread takes the new deadline when it is armed next; one earlier than the one it waits for interrupts its
    /// wait (`ring`: the engine's descriptor made readable).
    pub(crate) fn follow(&self, next: Option<Instant>, ring: impl FnOnce()) {
        if next == self.armed.get() {
            return;
        }
        match &self.how {
            How::Uv { timer, on_timer, .. } => {
                self.armed.set(next);
                // SAFETY: an open handle of this thread's loop.
                unsafe {
                    match next {
                        Some(at) => {
                            let ms = at.saturating_duration_since(Instant::now()).as_millis();
                            // Rounded up: a timer that fires early finds nothing due and costs a turn.
                            uv_timer_start(*timer, *on_timer, u64::try_from(ms + 1).unwrap_or(u64::MAX), 0);
                        }
                        None => {
                            uv_timer_stop(*timer);
                        }
                    }
                }
            }
            How::Helper { .. }
                if self.helper_waits.get()
                    && next.is_some_and(|at| self.armed.get().is_none_or(|armed| at < armed)) =>
            {
                ring();
            }
            How::Helper { .. } => {}
        }
    }

    /// Makes sure a turn comes soon, from the loop: `ring`s the engine's descriptor, unless (Bun) a wake-up is
    /// already on its way (see `helper_waits`).
    pub(crate) fn soon(&self, ring: impl FnOnce()) {
        if matches!(self.how, How::Helper { .. }) && !self.helper_waits.get() {
            return;
        }
        ring();
    }

    /// Node's one-shot timer has fired: it is set to nothing, so the next `follow` arms it again, even for the
    /// same deadline (it may fire a little early, by libuv's millisecond clock).
    pub(crate) fn timer_fired(&self) {
        self.armed.set(None);
    }

    /// Bun's waiting thread woke the loop: whoever sent it, the thread is not waiting now (it waits only once
    /// armed again).
    pub(crate) fn woken(&self) {
        self.helper_waits.set(false);
    }

    /// Closes the loop's handles and the waiting thread (whose wait ends once `ring` makes the descriptor
    /// readable).
    pub(crate) fn close(self, ring: impl FnOnce()) {
        // SAFETY: handles of this thread's loop, open until here; each is freed by its close callback.
        unsafe {
            match self.how {
                How::Uv { poll, timer, .. } => {
                    uv_poll_stop(poll);
                    uv_timer_stop(timer);
                    uv_close(poll, Some(free_handle));
                    uv_close(timer, Some(free_handle));
                }
                How::Helper { wake, waiter, thread } => {
                    waiter.quit();
                    ring();
                    if let Some(thread) = thread {
                        let _ = thread.join();
                    }
                    uv_close(wake, Some(free_handle));
                }
            }
        }
    }
}
