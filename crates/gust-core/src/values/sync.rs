//! Locks that a panic does not take down with it: every lock of the engine and of the binding is taken through
//! [`Locked`], the one place that decides what a poisoned lock means (the trait says why it is ignored).

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Locking a `Mutex` without poison: [`locked`](Locked::locked) waits for the lock like `lock()`, and takes it
/// even after a thread panicked while holding it. Every lock of the engine and of the binding is taken this way.
///
/// A `std::sync::Mutex` is poisoned when a thread panics while holding it, and every `lock()` after that fails.
/// A server cannot treat that as fatal: one panic (a bug on one request, a JavaScript thread torn down
/// mid-call) would turn every later lock of the same table into a second panic, on I/O threads that serve every
/// other connection, until the whole server is down. The critical sections are short (an entry inserted or
/// taken, a queue pushed or drained, a counter moved): what a panic could leave half-done is at worst one
/// request's or one socket's entry, far better than a server that fails everything after it. So the poison is
/// ignored, and the guard is taken as if no thread had panicked.
///
/// Cost: `lock()`'s, nothing more (the poison check is a load and a branch never taken).
///
/// ```
/// use std::sync::Mutex;
/// use gust_core::Locked;
///
/// let queue = Mutex::new(vec![1]);
/// queue.locked().push(2);
/// assert_eq!(*queue.locked(), [1, 2]);
/// ```
pub trait Locked<T: ?Sized> {
    /// Waits for the lock and returns its guard, whether or not a thread panicked while holding it.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> Locked<T> for Mutex<T> {
    #[inline]
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Waiting on a `Condvar` the same way: the guard comes back whether or not a thread panicked holding the lock.
pub(crate) trait Waits {
    /// Blocks until notified (or woken spuriously), with the lock released meanwhile, and returns its guard.
    fn wait_locked<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T>;

    /// As [`Waits::wait_locked`], for at most `limit`; also says whether the time ran out.
    fn wait_timeout_locked<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        limit: std::time::Duration,
    ) -> (MutexGuard<'a, T>, bool);
}

impl Waits for Condvar {
    fn wait_locked<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.wait(guard).unwrap_or_else(PoisonError::into_inner)
    }

    fn wait_timeout_locked<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        limit: std::time::Duration,
    ) -> (MutexGuard<'a, T>, bool) {
        let (guard, result) = self.wait_timeout(guard, limit).unwrap_or_else(PoisonError::into_inner);
        (guard, result.timed_out())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::Locked;

    #[test]
    fn a_lock_held_by_a_thread_that_panicked_is_still_taken() {
        let shared = Arc::new(Mutex::new(1));
        let held = shared.clone();
        let panicked = std::thread::spawn(move || {
            let mut guard = held.locked();
            *guard = 2;
            panic!("a bug while holding the lock");
        })
        .join();
        assert!(panicked.is_err());
        assert!(shared.is_poisoned());
        assert_eq!(*shared.locked(), 2, "the guard comes back, with what the thread left");
    }
}
