//! The cooperative budget of the one-thread engine's tasks, as tokio's: a task may do [`PER_POLL`] socket
//! operations per poll, then yields (woken to go on in the next round). A task reading a socket that a fast
//! client keeps full would otherwise never return, and the batcher (or any other task) would never run.

use std::cell::Cell;
use std::task::{Context, Poll};

/// Socket operations per poll of a task.
const PER_POLL: u32 = 128;

thread_local! {
    /// What the task being polled may still do.
    static LEFT: Cell<u32> = const { Cell::new(PER_POLL) };
}

/// A task is about to be polled: its budget is whole again.
pub(super) fn renew() {
    LEFT.with(|left| left.set(PER_POLL));
}

/// Spends one unit of the polled task's budget: `Pending` (the task woken to go on) once it is spent.
pub(super) fn consume(cx: &mut Context<'_>) -> Poll<()> {
    LEFT.with(|left| match left.get() {
        0 => {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
        n => {
            left.set(n - 1);
            Poll::Ready(())
        }
    })
}
