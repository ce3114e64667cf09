//! A limit counted across processes and machines through Redis (`rateLimit({ shared: true })`): every process
//! decides locally, at once, as for a limit of its own, and what it let through is added to the key's TAT in
//! Redis shortly after (the relay's link does it, batched: one script call per key per pass, [`Sharing`]). What
//! Redis answers (the key's TAT there, with every process's requests in it) is merged into the local count, so
//! a process learns of the others' requests one round trip after its own. Accuracy: on top of the limit, a key
//! may get what the other processes let through in the round trip before they heard, which is at most a round
//! trip's worth of requests per process. Cost on the request's thread: a lock and a map entry per request a
//! shared limit lets through; the relay wakes once per batch.
//!
//! While Redis cannot be reached, a limit fails **open** (each process counts on its own, as without Redis)
//! or **closed** (every request it covers is refused with 503), as declared; each request let through or refused
//! so is counted (`unsynced`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::values::sync::Locked;

/// What a shared limit does while Redis cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreDown {
    /// Count on each process alone.
    Open,
    /// Refuse every request it covers (503 with `Retry-After`).
    Closed,
}

/// A waker the relay leaves so that a limit with new counts to send can call it.
type Wake = Arc<dyn Fn() + Send + Sync>;

/// The shared side of one limit.
pub(crate) struct Sharing {
    /// This limit's part of its Redis keys (`<prefix>:rl:<name>:<client>`), the same in every process.
    pub(crate) name: String,
    pub(crate) down: StoreDown,
    /// Requests let through per client since the last pass sent them.
    pending: Mutex<HashMap<Box<[u8]>, u32>>,
    wake: Mutex<Option<Wake>>,
    /// The relay's link is up; until the first connection, and whenever it is lost, it is not.
    reachable: AtomicBool,
    /// Requests let through that Redis did not hear of (unreachable, a batch full, a refused script), and
    /// requests refused because it could not be reached (failing closed).
    pub(crate) unsynced: AtomicU64,
}

impl std::fmt::Debug for Sharing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharing").field("name", &self.name).field("down", &self.down).finish_non_exhaustive()
    }
}

/// Clients per pass past which new ones wait for the next: a flood of distinct clients cannot grow the batch
/// without bound while Redis is slow.
const MAX_PENDING: usize = 65_536;

impl Sharing {
    pub(crate) fn new(name: String, down: StoreDown) -> Self {
        Self {
            name,
            down,
            pending: Mutex::new(HashMap::new()),
            wake: Mutex::new(None),
            reachable: AtomicBool::new(false),
            unsynced: AtomicU64::new(0),
        }
    }

    pub(crate) fn reachable(&self) -> bool {
        self.reachable.load(Ordering::Acquire)
    }

    /// The relay says whether its link is up; counts waiting are dropped when it goes down (they were counted
    /// here, and Redis forgets them within a window anyway).
    pub(crate) fn set_reachable(&self, up: bool) {
        self.reachable.store(up, Ordering::Release);
        if !up {
            self.pending.locked().clear();
        }
    }

    pub(crate) fn set_wake(&self, wake: Wake) {
        *self.wake.locked() = Some(wake);
    }

    /// Records a request let through for `key`, waking the relay when it is the first of a batch.
    pub(crate) fn note(&self, key: &[u8]) {
        if !self.reachable() {
            self.unsynced.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let first = {
            let mut pending = self.pending.locked();
            let (first, room) = (pending.is_empty(), pending.len() < MAX_PENDING);
            match pending.get_mut(key) {
                Some(n) => *n = n.saturating_add(1),
                None if room => {
                    pending.insert(key.into(), 1);
                }
                None => {
                    self.unsynced.fetch_add(1, Ordering::Relaxed);
                }
            }
            first
        };
        if first {
            if let Some(wake) = self.wake.locked().clone() {
                wake();
            }
        }
    }

    /// The counts waiting to be sent, taken.
    pub(crate) fn take(&self) -> HashMap<Box<[u8]>, u32> {
        std::mem::take(&mut *self.pending.locked())
    }
}
