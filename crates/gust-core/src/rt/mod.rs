//! Layer 2, **rt**: the runtime seam. Everything above asks this layer, never tokio, to spawn a task, to sleep,
//! to run blocking work, and (in `transport/`) for sockets' readiness; hyper's own `rt` module is the model.
//!
//! Two engines drive the same code. The threaded engine polls tasks on its I/O threads, each a current-thread
//! tokio runtime: there every call here is tokio's. The one-thread engine polls them on a JavaScript thread, from
//! that runtime's event loop, with a runtime of its own ([`local`]: executor, `mio` poller, timer map, budget,
//! blocking pool), since tokio cannot be driven from a foreign loop (its runtime has no tick and hides its
//! poller). Which one a call reaches is decided per call, by whether a one-thread engine is polling on this
//! thread now (one thread-local read; nothing is boxed on the threaded path that was not before). This file and
//! `sleep` are the seam; `local/` is the one-thread engine's runtime.
//!
//! What stays tokio's on both: its `sync` primitives and its I/O traits (`AsyncRead`, `AsyncWrite`), which
//! need no runtime, and `select!`. Outside this layer, tokio's runtime is named only by the threaded engine's
//! own files (`transport/threaded`, and `transport/assembly` for its runtimes' handles) and by the relay to
//! Redis (`service/relay`), whose thread runs a tokio runtime of its own whichever engine serves: `make test`
//! checks it (`scripts/check-layers.mjs`, `TOKIO_ROOMS`).
//!
//! May import: `values`.

pub(crate) mod local;
mod sleep;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub(crate) use local::BLOCKING_THREADS;
pub(crate) use sleep::{after, sleep, sleep_until, timeout, Sleep};

/// Runs `task` to completion beside the caller: on the one-thread engine polling on this thread, or on the
/// current tokio runtime. Panics outside both, as `tokio::spawn` does. Cost on the threaded path: a
/// thread-local read more than `tokio::spawn`.
pub(crate) fn spawn<F: Future<Output = ()> + Send + 'static>(task: F) {
    if local::is_polling() {
        local::spawn(Box::pin(task));
    } else {
        drop(tokio::spawn(task));
    }
}

/// Runs `task` like [`spawn`], and tells its end: `Ok` with its output, or `Err` with the panic's message. The
/// engine watches its own tasks (the batcher, the answer delivery) this way.
pub(crate) fn spawn_watched<T: Send + 'static, F: Future<Output = T> + Send + 'static>(task: F) -> Watched<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    spawn(async move {
        let _ = tx.send(CatchUnwind { inner: task }.await);
    });
    Watched(rx)
}

/// The end of a task started by [`spawn_watched`].
pub(crate) struct Watched<T>(tokio::sync::oneshot::Receiver<Result<T, String>>);

impl<T> Future for Watched<T> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx).map(|r| r.unwrap_or_else(|_| Err("the task was dropped".to_owned())))
    }
}

pin_project_lite::pin_project! {
    /// A future whose panic becomes an `Err` with its message.
    struct CatchUnwind<F> { #[pin] inner: F }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.project().inner;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => Poll::Ready(Err(panic_message(&*panic))),
        }
    }
}

/// The text of a panic payload, when it has one.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Runs `work` where blocking is allowed (file reads and lookups, big compressions): tokio's blocking pool on
/// the threaded engine, the one-thread engines' shared pool ([`local::blocking`]) on a JavaScript thread, so that the
/// thread's loop never waits on a disk. `Err` when the work panicked.
pub(crate) fn spawn_blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Blocking<T> {
    if local::is_polling() {
        Blocking::Pool(local::blocking::run(work))
    } else {
        Blocking::Tokio(tokio::task::spawn_blocking(work))
    }
}

/// The result of [`spawn_blocking`], to await. Dropping it does not stop the work.
pub(crate) enum Blocking<T> {
    Tokio(tokio::task::JoinHandle<T>),
    Pool(tokio::sync::oneshot::Receiver<T>),
}

impl<T> std::fmt::Debug for Blocking<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Blocking::Tokio(_) => "Blocking(tokio)",
            Blocking::Pool(_) => "Blocking(pool)",
        })
    }
}

/// Blocking work that ended without a result: it panicked, or its runtime is shutting down.
#[derive(Debug)]
pub(crate) struct Gone;

impl<T> Future for Blocking<T> {
    type Output = Result<T, Gone>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Blocking::Tokio(handle) => Pin::new(handle).poll(cx).map(|r| r.map_err(|_| Gone)),
            Blocking::Pool(rx) => Pin::new(rx).poll(cx).map(|r| r.map_err(|_| Gone)),
        }
    }
}

/// Lets every task that is ready run before the caller goes on (and, on the threaded engine, the I/O driver
/// poll once): the batcher's way to collect a whole turn's requests into one hand-over.
pub(crate) async fn yield_now() {
    if local::is_polling() {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                return Poll::Ready(());
            }
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await;
    } else {
        tokio::task::yield_now().await;
    }
}

/// hyper's timer (HTTP/2's keep-alive pings and its handshake and header limits) on whichever engine polls.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HyperTimer;

impl hyper::rt::Timer for HyperTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HyperSleep { inner: sleep(duration) })
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HyperSleep { inner: sleep_until(deadline) })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
        if let Some(ours) = sleep.as_mut().downcast_mut_pin::<HyperSleep>() {
            ours.project().inner.reset(new_deadline);
        } else {
            *sleep = self.sleep_until(new_deadline);
        }
    }
}

pin_project_lite::pin_project! {
    struct HyperSleep { #[pin] inner: Sleep }
}

impl Future for HyperSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().inner.poll(cx)
    }
}

impl hyper::rt::Sleep for HyperSleep {}

/// hyper's executor (HTTP/2 runs each stream's body pump as a task) on whichever engine polls.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HyperExecutor;

impl<F: Future<Output = ()> + Send + 'static> hyper::rt::Executor<F> for HyperExecutor {
    fn execute(&self, task: F) {
        spawn(task);
    }
}
