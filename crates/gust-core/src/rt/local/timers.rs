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
    /// This sleep's entry there, once polled.
    armed: Option<Key>,
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

    /// Cost when not yet due: a clock read and a lock; a map insert the first time and when the deadline moved.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            self.disarm();
            return Poll::Ready(());
        }
        let mut timers = self.timers.locked();
        if let Some(key) = self.armed {
            if key.0 == self.deadline {
                if let Some(waker) = timers.waiting.get_mut(&key) {
                    if !waker.will_wake(cx.waker()) {
                        *waker = cx.waker().clone();
                    }
                    return Poll::Pending;
                }
            }
            timers.waiting.remove(&key);
        }
        timers.seq += 1;
        let key = (self.deadline, timers.seq);
        timers.waiting.insert(key, cx.waker().clone());
        self.armed = Some(key);
        Poll::Pending
    }

    fn disarm(&mut self) {
        if let Some(key) = self.armed.take() {
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
