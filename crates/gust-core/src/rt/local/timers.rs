//! The one-thread engine's timers: an ordered map from deadline to the waker of the sleep waiting for it,
//! fired by the engine's turn; its first deadline is what the host loop's timer is set to. A sleep takes its
//! entry out when it is dropped or moved, so the map holds exactly the sleeps that wait (an idle connection's
//! timer costs one entry, never a trail of dead ones).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use crate::values::sync::Locked;

/// An entry's key: its deadline, then its order of arming (two sleeps may share a deadline).
type Key = (Instant, u64);

/// One engine's timers. Behind a lock only because sleeps must be `Send` like tokio's: one thread uses it.
#[derive(Default)]
pub(crate) struct Timers {
    waiting: BTreeMap<Key, Waker>,
    seq: u64,
}

/// A sleep on the one-thread engine.
pub(crate) struct LocalSleep {
    deadline: Instant,
    /// The engine's timers.
    timers: Arc<Mutex<Timers>>,
    /// This sleep's entry there, once polled, and the waker the entry holds.
    armed: Option<(Key, Waker)>,
}

impl std::fmt::Debug for LocalSleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSleep").field("deadline", &self.deadline).finish_non_exhaustive()
    }
}

impl LocalSleep {
    pub(crate) fn new(deadline: Instant, timers: Arc<Mutex<Timers>>) -> Self {
        Self { deadline, timers, armed: None }
    }

    pub(crate) fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
    }

    /// Cost when not yet due: a clock read, and nothing more while it waits for the same deadline with the same
    /// waker (a connection's timer, polled at each of its wakes: every request); a lock and a map insert the first
    /// time and when the deadline or the waker changed.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            self.disarm();
            return Poll::Ready(());
        }
        // Not due, so its entry has not fired (entries fire only once due) and is still in the map.
        if let Some((key, waker)) = &self.armed {
            if key.0 == self.deadline && waker.will_wake(cx.waker()) {
                return Poll::Pending;
            }
        }
        let mut timers = self.timers.locked();
        if let Some((key, _)) = self.armed.take() {
            timers.waiting.remove(&key);
        }
        timers.seq += 1;
        let key = (self.deadline, timers.seq);
        timers.waiting.insert(key, cx.waker().clone());
        self.armed = Some((key, cx.waker().clone()));
        Poll::Pending
    }

    fn disarm(&mut self) {
        if let Some((key, _)) = self.armed.take() {
            self.timers.locked().waiting.remove(&key);
        }
    }
}

impl Drop for LocalSleep {
    fn drop(&mut self) {
        self.disarm();
    }
}

impl Timers {
    /// Wakes every sleep due by `now` (their entries go).
    pub(crate) fn fire(this: &Mutex<Self>, now: Instant) {
        loop {
            let due = {
                let mut timers = this.locked();
                match timers.waiting.first_key_value() {
                    Some((key, _)) if key.0 <= now => timers.waiting.pop_first(),
                    _ => None,
                }
            };
            // Woken outside the lock: a wake only queues a task, but a sleep polled meanwhile takes it.
            let Some((_, waker)) = due else { return };
            waker.wake();
        }
    }

    /// The earliest deadline a sleep waits for.
    pub(crate) fn next(this: &Mutex<Self>) -> Option<Instant> {
        this.locked().waiting.first_key_value().map(|(key, _)| key.0)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;
    use std::time::Duration;

    use super::*;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn a_sleep_holds_one_entry_follows_its_waker_and_deadline_and_fires_once_due() {
        let timers = Arc::new(Mutex::new(Timers::default()));
        let start = Instant::now();
        let mut sleep = LocalSleep::new(start + Duration::from_secs(60), timers.clone());
        let (first, w1) = waker();
        let (second, w2) = waker();
        for _ in 0..3 {
            assert!(sleep.poll(&mut Context::from_waker(&w1)).is_pending());
        }
        assert_eq!(timers.locked().waiting.len(), 1);
        // Polled by another task's waker: the entry wakes that one from now on.
        assert!(sleep.poll(&mut Context::from_waker(&w2)).is_pending());
        assert_eq!(timers.locked().waiting.len(), 1);
        Timers::fire(&timers, start + Duration::from_secs(61));
        assert_eq!((first.0.load(Ordering::SeqCst), second.0.load(Ordering::SeqCst)), (0, 1));
        assert!(timers.locked().waiting.is_empty());

        // Moved later: the old entry goes at the next poll, the new one fires at the new deadline only.
        let mut sleep = LocalSleep::new(start + Duration::from_secs(60), timers.clone());
        assert!(sleep.poll(&mut Context::from_waker(&w1)).is_pending());
        sleep.reset(start + Duration::from_secs(120));
        assert!(sleep.poll(&mut Context::from_waker(&w1)).is_pending());
        assert_eq!(timers.locked().waiting.len(), 1);
        Timers::fire(&timers, start + Duration::from_secs(90));
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(Timers::next(&timers), Some(start + Duration::from_secs(120)));
        drop(sleep);
        assert!(timers.locked().waiting.is_empty(), "a dropped sleep takes its entry out");

        // Already due: ready at once, nothing armed.
        let mut due = LocalSleep::new(start, timers.clone());
        assert!(due.poll(&mut Context::from_waker(&w1)).is_ready());
        assert!(timers.locked().waiting.is_empty());
    }
}
