//! Requests handed to JavaScript and waiting for their answer, by id.
//!
//! Answers cross back to the I/O thread as one queue per batch: the JavaScript thread appends a batch and rings
//! once; a task on the I/O thread hands each answer to its request there. Completing each request's channel
//! from the JavaScript thread instead wakes the I/O runtime once per request (an `eventfd` write and the
//! runtime's inject-queue lock each), which measured as one extra syscall per request.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::Waker;
use std::time::Duration;

use http::Response;
use tokio::sync::{oneshot, Notify};

use crate::responses::body::Body;
use crate::responses::response::{self, messages};
use crate::values::ids::{request_id, IdHasher, MAX_LANES, MAX_PENDING};
use crate::values::sync::Locked;
use crate::wire::answer::Reply;

type Waiters = HashMap<u32, Waiter, BuildHasherDefault<IdHasher>>;

/// A request waiting for JavaScript: where its answer goes, the sweep tick it was registered in, and the lane
/// (JavaScript thread) it was handed to.
#[derive(Debug)]
struct Waiter {
    tx: oneshot::Sender<Reply>,
    tick: u32,
    lane: u8,
}

/// The handler timeout is enforced by a sweep of the table, this many times per timeout, instead of a timer per
/// request: a tokio timer costs a clock read, a registration in the timer wheel and a removal per request, and
/// the sweep costs nothing per request. A request times out at most two ticks (1/8 of the timeout, or 2 s) late,
/// never early.
const TICKS_PER_TIMEOUT: u32 = 16;
const MAX_TICK: Duration = Duration::from_secs(1);
const MIN_TICK: Duration = Duration::from_millis(1);

/// One I/O thread's table of unanswered requests, touched only by that thread (so its lock is never
/// contended), and the queue of answers the JavaScript threads fill a batch at a time.
#[derive(Default)]
pub(crate) struct Completions {
    /// The shard (I/O thread) whose table this is: its number is in every id it gives.
    shard: u8,
    /// Requests waiting on every shard of the server, for `max_pending`: one atomic add and subtract per
    /// request, uncontended with one I/O thread.
    pending: Arc<AtomicUsize>,
    inner: Mutex<Inner>,
    answered: Mutex<Vec<Delivery>>,
    doorbell: Notify,
    /// Where a request answered 503 by the handler timeout is told to its handler: the server's lanes (weak:
    /// their batchers hold this table), known here only as [`TimedOut`], since lanes sit above this room.
    lanes: OnceLock<Weak<dyn TimedOut>>,
}

impl std::fmt::Debug for Completions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completions").field("inner", &self.inner).finish_non_exhaustive()
    }
}

/// Where a request the handler timeout answered is told to its handler, so its `c.req.signal` aborts (the
/// server's lanes implement it).
pub(crate) trait TimedOut: Send + Sync {
    /// Request `id` of shard `shard`, handed to lane `lane`, was answered 503 by the handler timeout.
    fn timed_out(&self, lane: u8, shard: usize, id: u32);
}

/// What the JavaScript thread hands the I/O thread.
#[derive(Debug)]
pub(crate) enum Delivery {
    /// The answer to a waiting request.
    Answer(u32, Reply),
    /// A streamed body that now has bytes to send, or a request body's pump that may read on. Woken from the I/O thread, where waking a task is a local
    /// schedule, instead of from the JavaScript thread, where each wake is a syscall.
    Wake(Waker),
}

#[derive(Debug)]
struct Inner {
    next_id: u32,
    /// Sweep ticks so far; each waiter remembers the one it arrived in.
    tick: u32,
    waiters: Waiters,
    /// Waiters per lane, for picking the least busy one.
    in_flight: Vec<u32>,
    /// Where ties between lanes are broken next.
    turn: u32,
}

impl Default for Inner {
    fn default() -> Self {
        Self { next_id: 0, tick: 0, waiters: Waiters::default(), in_flight: vec![0; MAX_LANES], turn: 0 }
    }
}

impl Completions {
    /// The table of shard `shard`, counting its waiters in `pending` with the other shards'.
    pub(crate) fn new(shard: u8, pending: Arc<AtomicUsize>) -> Self {
        Self { shard, pending, ..Self::default() }
    }

    /// Removes a waiter, counting it out of its lane and of the server's pending requests.
    fn take(&self, inner: &mut Inner, id: u32) -> Option<Waiter> {
        let waiter = inner.waiters.remove(&id)?;
        inner.in_flight[usize::from(waiter.lane)] -= 1;
        self.pending.fetch_sub(1, Ordering::AcqRel);
        Some(waiter)
    }

    /// Registers a request with the lane `pick` chooses from the lanes' counts of waiters (and the shard's turn
    /// for ties); `None` when `max_pending` are already waiting on the server. Returns its id (which names this
    /// shard) and lane.
    pub(crate) fn register(
        &self,
        max_pending: usize,
        pick: impl FnOnce(&[u32], &mut u32) -> u8,
    ) -> Option<(u32, u8, oneshot::Receiver<Reply>)> {
        // Below `MAX_PENDING` in all, every lane has a free id on every shard, so the search below ends.
        if self.pending.fetch_add(1, Ordering::AcqRel) >= max_pending.min(MAX_PENDING) {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let mut inner = self.inner.locked();
        let Inner { in_flight, turn, .. } = &mut *inner;
        let lane = pick(in_flight, turn);
        let (tx, rx) = oneshot::channel();
        let tick = inner.tick;
        loop {
            let id = request_id(self.shard, inner.next_id);
            inner.next_id = inner.next_id.wrapping_add(1);
            if let std::collections::hash_map::Entry::Vacant(slot) = inner.waiters.entry(id) {
                slot.insert(Waiter { tx, tick, lane });
                inner.in_flight[usize::from(lane)] += 1;
                return Some((id, lane, rx));
            }
        }
    }

    /// The lane request `id` was handed to, while it waits for its answer.
    pub(crate) fn lane(&self, id: u32) -> Option<u8> {
        self.inner.locked().waiters.get(&id).map(|w| w.lane)
    }

    /// Hands waiting request `id` from lane `from` (whose thread exited before taking it) to the lane `pick`
    /// chooses; the new lane, or `None` when it no longer waits there.
    pub(crate) fn reassign(&self, id: u32, from: u8, pick: impl FnOnce(&[u32], &mut u32) -> u8) -> Option<u8> {
        let mut inner = self.inner.locked();
        let old = inner.waiters.get(&id).map(|w| w.lane).filter(|&l| l == from)?;
        let Inner { in_flight, turn, .. } = &mut *inner;
        let lane = pick(in_flight, turn);
        in_flight[usize::from(old)] -= 1;
        in_flight[usize::from(lane)] += 1;
        inner.waiters.get_mut(&id)?.lane = lane;
        Some(lane)
    }

    /// Requests of lane `lane` waiting for their answer.
    pub(crate) fn in_flight(&self, lane: usize) -> u32 {
        self.inner.locked().in_flight.get(lane).copied().unwrap_or(0)
    }

    /// Answers every waiting request of lane `lane` with the same response (its thread is gone).
    pub(crate) fn fail_lane(&self, lane: usize, make: impl Fn() -> Response<Body>) {
        let mut inner = self.inner.locked();
        let gone: Vec<(u32, Waiter)> = inner.waiters.extract_if(|_, w| usize::from(w.lane) == lane).collect();
        inner.in_flight[lane] = 0;
        drop(inner);
        self.pending.fetch_sub(gone.len(), Ordering::AcqRel);
        for (_, waiter) in gone {
            let _ = waiter.tx.send(make().into());
        }
    }

    /// Sets where timed-out requests are told to their handlers (once, when the server starts).
    pub(crate) fn set_lanes(&self, lanes: Weak<dyn TimedOut>) {
        let _ = self.lanes.set(lanes);
    }

    /// Restarts request `id`'s handler timeout: its body is still arriving, a chunk at a time as the handler reads
    /// it, so the handler is not idle. Cost: one lookup under the table's uncontended lock, per body chunk.
    pub(crate) fn touch(&self, id: u32) {
        let mut inner = self.inner.locked();
        let tick = inner.tick;
        if let Some(waiter) = inner.waiters.get_mut(&id) {
            waiter.tick = tick;
        }
    }

    /// Forgets a request whose client or deadline is gone; a late answer to it is ignored. Returns the lane it
    /// was handed to, when it was still waiting.
    pub(crate) fn cancel(&self, id: u32) -> Option<u8> {
        let mut inner = self.inner.locked();
        self.take(&mut inner, id).map(|w| w.lane)
    }

    /// Answers every request of `ids` with the same response (used when a batch cannot be delivered).
    pub(crate) fn fail(&self, ids: &[u32], make: impl Fn() -> Response<Body>) {
        let mut inner = self.inner.locked();
        for &id in ids {
            if let Some(waiter) = self.take(&mut inner, id) {
                let _ = waiter.tx.send(make().into());
            }
        }
    }

    /// Queues a batch of answers and rings the I/O thread, once for the whole batch.
    pub(crate) fn post(&self, batch: Vec<Delivery>) {
        if batch.is_empty() {
            return;
        }
        let mut answered = self.answered.locked();
        // A queue that already holds answers has already rung; the delivery task has not taken them yet.
        let ring = answered.is_empty();
        answered.extend(batch);
        drop(answered);
        if ring {
            self.doorbell.notify_one();
        }
    }

    /// Wakes tasks of the I/O thread (WebSockets with something to write) from another thread, through the
    /// answer queue: one doorbell for everything queued before the I/O thread takes it.
    pub(crate) fn wake_all(&self, wakers: Vec<Waker>) {
        self.post(wakers.into_iter().map(Delivery::Wake).collect());
    }

    /// Runs on the I/O thread for the server's lifetime: hands queued answers to their requests (waking a request
    /// task from here is a local schedule: no syscall, no lock) and answers 503 to those past `handler_timeout`.
    pub(crate) async fn deliver(&self, handler_timeout: Option<Duration>) {
        let Some(timeout) = handler_timeout else {
            loop {
                self.doorbell.notified().await;
                self.hand_over();
            }
        };
        let tick = (timeout / TICKS_PER_TIMEOUT).clamp(MIN_TICK, MAX_TICK);
        // A waiter has surely waited `timeout` once this many ticks have passed since the one it arrived in.
        let expiry = u32::try_from(timeout.as_nanos().div_ceil(tick.as_nanos())).unwrap_or(u32::MAX).saturating_add(1);
        // Each tick is armed `tick` after the last one ran: a late tick delays the next rather than bunching.
        let ticks = crate::rt::sleep(tick);
        tokio::pin!(ticks);
        loop {
            tokio::select! {
                () = self.doorbell.notified() => self.hand_over(),
                () = &mut ticks => {
                    self.expire(expiry);
                    ticks.as_mut().reset(crate::rt::after(tick));
                }
            }
        }
    }

    fn hand_over(&self) {
        let batch = std::mem::take(&mut *self.answered.locked());
        let mut inner = self.inner.locked();
        for delivery in batch {
            match delivery {
                // Requests that timed out or whose client left are gone from the table: their answer is dropped
                // (a streamed one then tells its producer to stop).
                Delivery::Answer(id, reply) => {
                    if let Some(waiter) = self.take(&mut inner, id) {
                        let _ = waiter.tx.send(reply);
                    }
                }
                Delivery::Wake(waker) => waker.wake(),
            }
        }
    }

    fn expire(&self, expiry: u32) {
        let mut inner = self.inner.locked();
        inner.tick = inner.tick.wrapping_add(1);
        let now = inner.tick;
        let expired: Vec<(u32, Waiter)> = inner.waiters.extract_if(|_, w| now.wrapping_sub(w.tick) >= expiry).collect();
        for (_, waiter) in &expired {
            inner.in_flight[usize::from(waiter.lane)] -= 1;
        }
        drop(inner);
        self.pending.fetch_sub(expired.len(), Ordering::AcqRel);
        let lanes = self.lanes.get().and_then(Weak::upgrade);
        for (id, waiter) in expired {
            let _ = waiter.tx.send(response::unavailable(messages::HANDLER_TIMEOUT).into());
            // The handler still works on it: its `c.req.signal` aborts, so it can stop.
            if let Some(lanes) = &lanes {
                lanes.timed_out(waiter.lane, usize::from(self.shard), id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_should_stop_at_max_pending() {
        let c = Completions::default();
        let (a, _, _ra) = c.register(2, |_, _| 0).unwrap();
        let (b, _, _rb) = c.register(2, |_, _| 0).unwrap();
        assert_ne!(a, b);
        assert!(c.register(2, |_, _| 0).is_none());
        c.cancel(a);
        assert!(c.register(2, |_, _| 0).is_some());
    }

    #[test]
    fn the_sweep_should_time_out_only_waiters_old_enough() {
        let c = Completions::default();
        let (_, _, mut old) = c.register(8, |_, _| 0).unwrap();
        c.expire(3);
        let (_, _, mut young) = c.register(8, |_, _| 0).unwrap();
        c.expire(3);
        assert!(old.try_recv().is_err(), "two ticks are not yet three");
        c.expire(3);
        assert!(matches!(old.try_recv().unwrap(), Reply::Send(res) if res.status() == 503));
        assert!(young.try_recv().is_err());
        c.expire(3);
        assert!(matches!(young.try_recv().unwrap(), Reply::Send(res) if res.status() == 503));
    }
}
