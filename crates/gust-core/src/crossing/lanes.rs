//! The JavaScript threads that run dynamic handlers, called lanes: the thread that started the server (lane 0)
//! and worker threads attached to it. Each lane has a batcher of its own, so each gets at most one hand-over
//! per turn of the I/O loop.
//!
//! A request goes to a lane when it is handed over: the least busy one, ties taken in turn, so that even one
//! keep-alive connection spreads. Everything about the request afterwards goes to that same lane: while it
//! waits for its answer, its waiter in the completion table names the lane (cancels, timeouts); once answered,
//! the lane that answered owns what follows (a stream's drains and cancels, the WebSocket it became), and a
//! streamed request body's pump holds that lane's batcher. A request handed to a lane whose thread exits before
//! taking it is handed to another one (the waiter's lane changes); one it took gets 503.
//!
//! With several I/O threads (shards), each lane has one batcher per shard, filled by that shard's thread only.
//! The top bits of a request's id name its shard, so answers go back to the thread that holds the connection.
//!
//! While any worker is attached, lane 0 takes no request: the starting thread supervises. It serves again
//! when every worker is gone (restarting, say), so requests are never refused for want of a lane.

use std::sync::{Arc, Mutex};

use arc_swap::{ArcSwap, ArcSwapOption};

use super::batcher::Batcher;
use super::completions::{Completions, TimedOut};
use super::handler::{Closed, Handler, RequestBatch};
use crate::values::ids::MAX_LANES;
use crate::values::sync::Locked;
use crate::wire::event::TIMED_OUT;
use crate::wire::Kind;

/// A lane of a running server, as handed out by [`crate::Server::attach`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaneId(pub(crate) u8);

impl LaneId {
    /// The lane's number: 0 for the thread that started the server, 1–255 for attached ones.
    pub fn index(self) -> u32 {
        u32::from(self.0)
    }
}

/// One JavaScript thread's side of the server.
pub(crate) struct Lane {
    pub(crate) handler: Arc<dyn Handler>,
    /// One per shard.
    pub(crate) batchers: Box<[Arc<Batcher>]>,
    /// The batchers' tasks on the I/O threads (none for lane 0, whose tasks the engine watches).
    tasks: Mutex<Vec<tokio::task::AbortHandle>>,
}

/// Every lane of a server.
pub(crate) struct Lanes {
    slots: Box<[ArcSwapOption<Lane>]>,
    /// The lanes that take new requests: the attached ones, or lane 0 when there is none.
    serving: ArcSwap<Vec<u8>>,
    /// Serialises attach and detach; holds the next index to try.
    changes: Mutex<u8>,
    /// Where events of a lane that is gone go: nowhere (one closed batcher per shard).
    gone: Box<[Arc<Batcher>]>,
}

/// A handler that takes nothing: the sink of a closed batcher.
struct Nobody;

impl Handler for Nobody {
    fn handle(&self, _: RequestBatch) -> Result<(), Closed> {
        Err(Closed)
    }
}

impl Lanes {
    /// Lanes for a server whose shards have these completion tables, with `first` as lane 0.
    pub(crate) fn new(first: Arc<dyn Handler>, shards: &[Arc<Completions>]) -> Self {
        let slots: Box<[ArcSwapOption<Lane>]> = (0..MAX_LANES).map(|_| ArcSwapOption::empty()).collect();
        let batchers = shards.iter().map(|c| Arc::new(Batcher::new(first.clone(), c.clone()))).collect();
        slots[0].store(Some(Arc::new(Lane { handler: first, batchers, tasks: Mutex::default() })));
        let nobody: Arc<dyn Handler> = Arc::new(Nobody);
        let gone: Box<[Arc<Batcher>]> =
            shards.iter().map(|c| Arc::new(Batcher::new(nobody.clone(), c.clone()))).collect();
        for batcher in &gone {
            let _ = batcher.close();
        }
        Self { slots, serving: ArcSwap::from_pointee(vec![0]), changes: Mutex::new(1), gone }
    }

    /// Lane `lane`'s batcher on shard `shard`, or a closed one when that lane is gone. Cost: an atomic load and
    /// one reference count.
    pub(crate) fn batcher(&self, lane: u8, shard: usize) -> Arc<Batcher> {
        let slot = self.slots[usize::from(lane)].load();
        match slot.as_ref() {
            Some(lane) => lane.batchers[shard].clone(),
            None => self.gone[shard].clone(),
        }
    }

    /// Picks the lane for a new request: the one with the fewest requests in flight on this shard, ties in turn
    /// (`turn` is the shard's own). Called under the shard's completion table's lock (which holds the counts).
    /// Cost: an atomic load and a scan of the lanes.
    pub(crate) fn pick(&self, in_flight: &[u32], turn: &mut u32) -> u8 {
        let serving = self.serving.load();
        let n = serving.len();
        if n == 1 {
            return serving[0];
        }
        *turn = turn.wrapping_add(1);
        let start = *turn as usize;
        let mut best = serving[start % n];
        for k in 1..n {
            let lane = serving[(start + k) % n];
            if in_flight[usize::from(lane)] < in_flight[usize::from(best)] {
                best = lane;
            }
        }
        best
    }

    /// Adds a lane for `handler`; `spawn(shard, batcher)` starts its batcher on that shard's I/O thread. `None`
    /// when every lane is taken.
    pub(crate) fn attach(
        &self,
        handler: Arc<dyn Handler>,
        shards: &[Arc<Completions>],
        spawn: impl Fn(usize, Arc<Batcher>) -> tokio::task::AbortHandle,
    ) -> Option<LaneId> {
        let mut next = self.changes.locked();
        // Indexes are taken in turn, so a lane's number is reused only after every other one was: a late event
        // for a lane that is gone rarely reaches a new one (and one that does names an id the new one ignores).
        let index = (0..MAX_LANES - 1)
            .map(|k| 1 + (usize::from(*next) - 1 + k) % (MAX_LANES - 1))
            .find(|&i| self.slots[i].load().is_none())?;
        *next = u8::try_from(index % (MAX_LANES - 1) + 1).unwrap_or(1);
        let batchers: Box<[Arc<Batcher>]> =
            shards.iter().map(|c| Arc::new(Batcher::new(handler.clone(), c.clone()))).collect();
        let tasks = batchers.iter().enumerate().map(|(shard, b)| spawn(shard, b.clone())).collect();
        self.slots[index].store(Some(Arc::new(Lane { handler, batchers, tasks: Mutex::new(tasks) })));
        self.publish_serving();
        u8::try_from(index).ok().map(LaneId)
    }

    /// Removes lane `index` from dispatch and closes its batchers; returns what they held, per shard (to hand to
    /// other lanes), or `None` if it was already gone. Lane 0 cannot be removed.
    pub(crate) fn detach(&self, lane: LaneId) -> Option<Vec<Vec<u8>>> {
        if lane.0 == 0 {
            return None;
        }
        let _changes = self.changes.locked();
        let removed = self.slots[usize::from(lane.0)].swap(None)?;
        self.publish_serving();
        let pending = removed.batchers.iter().map(|b| b.close()).collect();
        for task in std::mem::take(&mut *removed.tasks.locked()) {
            task.abort();
        }
        Some(pending)
    }

    fn publish_serving(&self) {
        let attached: Vec<u8> =
            (1..MAX_LANES).filter(|&i| self.slots[i].load().is_some()).filter_map(|i| u8::try_from(i).ok()).collect();
        self.serving.store(Arc::new(if attached.is_empty() { vec![0] } else { attached }));
    }

    /// Every lane now attached, lane 0 first.
    pub(crate) fn all(&self) -> Vec<(LaneId, Arc<Lane>)> {
        (0..MAX_LANES).filter_map(|i| Some((LaneId(u8::try_from(i).ok()?), self.slots[i].load_full()?))).collect()
    }
}

impl TimedOut for Lanes {
    /// Tells the handler its request timed out (a cancel event flagged [`TIMED_OUT`]): its `c.req.signal` aborts,
    /// so it can stop, and whoever observes the request hears of the 503 it got.
    fn timed_out(&self, lane: u8, shard: usize, id: u32) {
        self.batcher(lane, shard).send(Kind::Cancel, TIMED_OUT, id);
    }
}
