//! What the one-thread engine's host (`binding_local`) needs of libuv, declared by hand: handles of any kind as
//! opaque room, the few functions it calls (Node's libuv, or Bun's implementations on its own loop, resolved when
//! the addon loads), and Bun's waiting thread, which only waits on the engine's descriptor and wakes the loop.

use std::ffi::c_int;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use gust_core::Locked;
use napi::sys;

/// Room for any libuv handle (`uv_poll_t`, `uv_timer_t`, `uv_async_t` are 160 bytes or less on 64-bit
/// systems); its first field is `void* data`.
#[repr(C, align(16))]
pub(crate) struct UvHandle([u8; 256]);

pub(crate) type UvCallback = unsafe extern "C" fn(*mut UvHandle);
pub(crate) type UvPollCallback = unsafe extern "C" fn(*mut UvHandle, c_int, c_int);

extern "C" {
    pub(crate) fn uv_poll_init(lp: *mut sys::uv_loop_s, handle: *mut UvHandle, fd: c_int) -> c_int;
    pub(crate) fn uv_poll_start(handle: *mut UvHandle, events: c_int, cb: UvPollCallback) -> c_int;
    pub(crate) fn uv_poll_stop(handle: *mut UvHandle) -> c_int;
    pub(crate) fn uv_timer_init(lp: *mut sys::uv_loop_s, handle: *mut UvHandle) -> c_int;
    pub(crate) fn uv_timer_start(handle: *mut UvHandle, cb: UvCallback, timeout: u64, repeat: u64) -> c_int;
    pub(crate) fn uv_timer_stop(handle: *mut UvHandle) -> c_int;
    pub(crate) fn uv_async_init(lp: *mut sys::uv_loop_s, handle: *mut UvHandle, cb: UvCallback) -> c_int;
    pub(crate) fn uv_async_send(handle: *mut UvHandle) -> c_int;
    pub(crate) fn uv_close(handle: *mut UvHandle, cb: Option<UvCallback>);
    pub(crate) fn uv_unref(handle: *mut UvHandle);
}

pub(crate) const UV_READABLE: c_int = 1;

/// A zeroed handle whose `data` (its first field) points at `data`; freed by [`free_handle`] once closed.
pub(crate) fn new_handle<T>(data: *const T) -> *mut UvHandle {
    let handle = Box::into_raw(Box::new(UvHandle([0; 256])));
    // SAFETY: `data` is the first field of every libuv handle; the handle is ours until closed.
    unsafe { (handle as *mut *const T).write(data) };
    handle
}

/// What `data` points at. SAFETY (callers): a handle made by [`new_handle`] with a `T`.
pub(crate) unsafe fn data_of<T>(handle: *mut UvHandle) -> *const T {
    (handle as *const *const T).read()
}

/// The close callback of every handle made by [`new_handle`].
pub(crate) unsafe extern "C" fn free_handle(handle: *mut UvHandle) {
    drop(Box::from_raw(handle));
}

/// What the waiting thread and the JavaScript thread share.
pub(crate) struct Waiter {
    state: Mutex<WaiterState>,
    armed: Condvar,
}

#[derive(Default)]
struct WaiterState {
    armed: bool,
    quit: bool,
    deadline: Option<Instant>,
}

impl Waiter {
    /// A waiting thread for descriptor `fd` that wakes the loop through the async handle `wake`.
    pub(crate) fn start(
        fd: std::os::fd::RawFd,
        wake: *mut UvHandle,
    ) -> std::io::Result<(Arc<Self>, std::thread::JoinHandle<()>)> {
        let waiter = Arc::new(Self { state: Mutex::new(WaiterState::default()), armed: Condvar::new() });
        let thread_waiter = waiter.clone();
        let target = wake as usize;
        let thread = std::thread::Builder::new()
            .name("gust-wait".to_owned())
            .spawn(move || wait_loop(&thread_waiter, fd, target))?;
        Ok((waiter, thread))
    }

    /// Lets the thread wait again, until `deadline` at the latest.
    pub(crate) fn arm(&self, deadline: Option<Instant>) {
        let mut state = self.state.locked();
        state.armed = true;
        state.deadline = deadline;
        drop(state);
        self.armed.notify_one();
    }

    /// Tells the thread to end (its current wait ends when the descriptor becomes readable).
    pub(crate) fn quit(&self) {
        self.state.locked().quit = true;
        self.armed.notify_one();
    }
}

/// The waiting thread (Bun): waits until armed, then until the engine's descriptor is readable or its deadline
/// passes, then wakes the JavaScript thread and waits to be armed again.
fn wait_loop(waiter: &Waiter, fd: std::os::fd::RawFd, target: usize) {
    loop {
        let deadline = {
            let mut state = waiter.state.locked();
            while !state.armed && !state.quit {
                state = waiter.armed.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            if state.quit {
                return;
            }
            state.armed = false;
            state.deadline
        };
        let timeout = deadline.map(|at| at.saturating_duration_since(Instant::now()));
        wait_readable(fd, timeout);
        if waiter.state.locked().quit {
            return;
        }
        // SAFETY: the async handle stays open until this thread has been joined (`LocalHost::close`).
        unsafe { uv_async_send(target as *mut UvHandle) };
    }
}

fn wait_readable(fd: std::os::fd::RawFd, timeout: Option<Duration>) {
    let mut fds = [libc::pollfd { fd, events: libc::POLLIN, revents: 0 }];
    let ms = timeout.map_or(-1, |d| c_int::try_from(d.as_millis() + 1).unwrap_or(c_int::MAX));
    // SAFETY: one valid pollfd; the descriptor outlives this thread (joined before the engine is dropped).
    unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
}
