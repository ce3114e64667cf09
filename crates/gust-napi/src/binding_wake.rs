//! How a one-thread server's host is woken, by runtime; the host (`binding_local`) only says when (arm, soon,
//! follow the next timer, close), never how.
//!
//! - **Node**: libuv watches the engine's descriptor (`uv_poll`, one handle for the whole poller) and its next
//!   timer (`uv_timer`), on the loop `napi_get_uv_event_loop` gives: no other thread at all.
//! - **Bun on Linux**: its `uv_poll_*` are stubs that abort, so an io_uring turns the descriptor's readiness into
//!   a byte on a socket that Bun's loop watches for the package (`binding_ring`), and its `uv_timer` keeps the
//!   engine's next timer: no other thread either.
//! - **Bun elsewhere, or where io_uring cannot be set up**: a helper thread only *waits* (`poll(2)` on the
//!   descriptor, until the next timer: `binding_uv::Waiter`) and wakes the JavaScript thread with
//!   `uv_async_send`, which Bun runs on its own loop. It is armed again after each turn, so it never wakes the
//!   thread twice for one readiness.

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use napi::sys;

#[cfg(target_os = "linux")]
use crate::binding_ring::RingWake;
use crate::binding_uv::{
    free_handle, new_handle, uv_async_init, uv_close, uv_poll_init, uv_poll_start, uv_poll_stop, uv_timer_init,
    uv_timer_start, uv_timer_stop, uv_unref, UvCallback, UvHandle, UvPollCallback, Waiter, UV_READABLE,
};

/// Whether Bun's one-thread servers may be woken through io_uring (`binding_ring`); set by the package from
/// `GUST_IO_URING` before each `listen()`.
static IO_URING: AtomicBool = AtomicBool::new(true);

/// Lets (or, with `false`, keeps) the next one-thread servers on Bun use io_uring to be woken; without it they use
/// a waiting thread.
#[napi_derive::napi]
pub fn use_io_uring(allowed: bool) {
    IO_URING.store(allowed, Ordering::Relaxed);
}

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
    /// Bun on Linux: a ring watches the descriptor (the package watches its socket), libuv the timer.
    #[cfg(target_os = "linux")]
    Ring { ring: Box<RingWake>, timer: *mut UvHandle, on_timer: UvCallback },
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
            match Self::ring(lp, fd, data, entries) {
                Some(how) => how,
                None => Self::helper(lp, fd, data, entries)?,
            }
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

    /// Bun on Linux: the ring and a timer, or `None` where io_uring cannot be set up or `GUST_IO_URING=0` turns
    /// it off (the waiting thread then).
    #[cfg(target_os = "linux")]
    fn ring<T>(lp: *mut sys::uv_loop_s, fd: c_int, data: *const T, entries: &Entries) -> Option<How> {
        if !IO_URING.load(Ordering::Relaxed) {
            return None;
        }
        let ring = Box::new(RingWake::new(fd).ok()?);
        let timer = new_handle(data);
        // SAFETY: a fresh handle on this thread's loop.
        if unsafe { uv_timer_init(lp, timer) } != 0 {
            // SAFETY: never initialised, so not the loop's: freed here.
            unsafe { free_handle(timer) };
            return None;
        }
        // SAFETY: an open handle of this thread's loop.
        unsafe { uv_unref(timer) };
        Some(How::Ring { ring, timer, on_timer: entries.timer })
    }

    #[cfg(not(target_os = "linux"))]
    fn ring<T>(_: *mut sys::uv_loop_s, _: c_int, _: *const T, _: &Entries) -> Option<How> {
        None
    }

    /// Bun without the ring: the waiting thread and the async handle it wakes the loop with.
    fn helper<T>(lp: *mut sys::uv_loop_s, fd: c_int, data: *const T, entries: &Entries) -> napi::Result<How> {
        let wake = new_handle(data);
        // SAFETY: a fresh handle on this thread's loop.
        if unsafe { uv_async_init(lp, wake, entries.woken) } != 0 {
            // SAFETY: never initialised, so not the loop's: freed here.
            unsafe { free_handle(wake) };
            return Err(napi::Error::from_reason("gust: this runtime cannot wake the one-thread engine"));
        }
        let (waiter, thread) = Waiter::start(fd, wake)
            .map_err(|e| napi::Error::from_reason(format!("gust: cannot start the waiting thread: {e}")))?;
        Ok(How::Helper { wake, waiter, thread: Some(thread) })
    }

    /// Bun with the ring: the socket the package watches (`Bun.connect({ fd })`) and answers with `woken`;
    /// once. `None` otherwise.
    pub(crate) fn take_reader(&self) -> Option<c_int> {
        match &self.how {
            #[cfg(target_os = "linux")]
            How::Ring { ring, .. } => ring.take_reader(),
            _ => None,
        }
    }

    /// Bun: lets the waiting thread wait again, until `next` (the engine's next timer) at the latest, or arms the
    /// ring (its timer follows `next` already, see `follow`). Nothing on Node, whose loop watches all along.
    pub(crate) fn arm(&self, next: Option<Instant>) {
        match &self.how {
            How::Helper { waiter, .. } => {
                self.armed.set(next);
                self.helper_waits.set(true);
                waiter.arm(next);
            }
            #[cfg(target_os = "linux")]
            How::Ring { ring, timer, on_timer } => {
                if let Err(e) = ring.arm() {
                    // Not seen: a ring that was set up takes its two entries. Should it fail, the timer polls
                    // every millisecond rather than the server stalling.
                    eprintln!("gust: the one-thread engine's ring could not be armed ({e}); polling instead");
                    // SAFETY: an open handle of this thread's loop.
                    unsafe { uv_timer_start(*timer, *on_timer, 1, 0) };
                    self.armed.set(None);
                }
            }
            How::Uv { .. } => {}
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
            #[cfg(target_os = "linux")]
            How::Ring { timer, on_timer, .. } => self.set_timer(*timer, *on_timer, next),
            How::Uv { timer, on_timer, .. } => self.set_timer(*timer, *on_timer, next),
            How::Helper { .. }
                if self.helper_waits.get()
                    && next.is_some_and(|at| self.armed.get().is_none_or(|armed| at < armed)) =>
            {
                ring();
            }
            How::Helper { .. } => {}
        }
    }

    /// Sets the loop's timer to `next` (stops it for none).
    fn set_timer(&self, timer: *mut UvHandle, on_timer: UvCallback, next: Option<Instant>) {
        self.armed.set(next);
        // SAFETY: an open handle of this thread's loop.
        unsafe {
            match next {
                Some(at) => {
                    let ms = at.saturating_duration_since(Instant::now()).as_millis();
                    // Rounded up: a timer that fires early finds nothing due and costs a turn.
                    uv_timer_start(timer, on_timer, u64::try_from(ms + 1).unwrap_or(u64::MAX), 0);
                }
                None => {
                    uv_timer_stop(timer);
                }
            }
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
    /// armed again). With the ring: its byte came, and the ring is to be armed again.
    pub(crate) fn woken(&self) {
        self.helper_waits.set(false);
        #[cfg(target_os = "linux")]
        if let How::Ring { ring, .. } = &self.how {
            ring.woken();
        }
    }

    /// Closes the loop's handles and the waiting thread (whose wait ends once `ring` makes the descriptor
    /// readable).
    pub(crate) fn close(self, ring: impl FnOnce()) {
        // SAFETY: handles of this thread's loop, open until here; each is freed by its close callback.
        unsafe {
            match self.how {
                #[cfg(target_os = "linux")]
                How::Ring { ring, timer, .. } => {
                    uv_timer_stop(timer);
                    uv_close(timer, Some(free_handle));
                    // Our end of the pair closes: the package's socket sees the end and closes its own.
                    drop(ring);
                }
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
