//! Every key's TAT for one limit ([`super::gcra`]), in shards so that threads deciding for different clients
//! rarely wait on one lock. Keys come from clients, so the map's hasher is keyed at random (SipHash, std's
//! default) and the map is bounded: an entry a window old limits nothing and is dropped when its shard is full;
//! a shard full of live entries admits new keys uncounted rather than forget counted ones (counted as
//! `overflowed`). A shard is swept at most once per sixteenth of a window, so a flood of new keys into a full
//! store costs one lookup each, not a sweep each. Cost per decision: one hash for the shard, one map lookup
//! under its lock.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::gcra::{Gcra, Verdict};
use crate::values::sync::Locked;

const SHARDS: usize = 16;

#[derive(Debug, Default)]
struct Shard {
    tats: HashMap<Box<[u8]>, u64>,
    /// When it was last swept of entries that limit nothing.
    swept_at: u64,
}

#[derive(Debug)]
pub(crate) struct Counters {
    shards: Box<[Mutex<Shard>]>,
    shard_of: RandomState,
    per_shard: usize,
    overflowed: AtomicU64,
}

impl Counters {
    /// Room for about `max_keys` keys in all.
    pub(crate) fn new(max_keys: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            shard_of: RandomState::new(),
            per_shard: max_keys.div_ceil(SHARDS).max(1),
            overflowed: AtomicU64::new(0),
        }
    }

    /// Decides one request of `key` at `now`.
    pub(crate) fn take(&self, gcra: &Gcra, key: &[u8], now: u64) -> Verdict {
        let shard = &self.shards[(self.shard_of.hash_one(key) as usize) % SHARDS];
        let mut shard = shard.locked();
        if let Some(tat) = shard.tats.get_mut(key) {
            return gcra.take(tat, now);
        }
        if shard.tats.len() >= self.per_shard {
            if now >= shard.swept_at + gcra.window_ns() / 16 {
                shard.swept_at = now;
                shard.tats.retain(|_, tat| gcra.live(*tat, now));
            }
            if shard.tats.len() >= self.per_shard {
                self.overflowed.fetch_add(1, Ordering::Relaxed);
                let mut tat = 0;
                return gcra.take(&mut tat, now);
            }
        }
        let mut tat = 0;
        let verdict = gcra.take(&mut tat, now);
        shard.tats.insert(key.into(), tat);
        verdict
    }

    /// Moves `key`'s TAT to at least `now + ahead` (what Redis says all processes let through), when it is held or
    /// there is room; a TAT never moves back.
    pub(crate) fn merge(&self, gcra: &Gcra, key: &[u8], now: u64, ahead: u64) {
        let tat = now.saturating_add(ahead.min(gcra.window_ns()));
        let shard = &self.shards[(self.shard_of.hash_one(key) as usize) % SHARDS];
        let mut shard = shard.locked();
        let room = shard.tats.len() < self.per_shard;
        match shard.tats.get_mut(key) {
            Some(held) => *held = (*held).max(tat),
            None if room && ahead > 0 => {
                shard.tats.insert(key.into(), tat);
            }
            None => {}
        }
    }

    /// `key`'s TAT, when held (tests: what a merge did).
    #[cfg(test)]
    pub(crate) fn tat(&self, key: &[u8]) -> Option<u64> {
        let shard = &self.shards[(self.shard_of.hash_one(key) as usize) % SHARDS];
        shard.locked().tats.get(key).copied()
    }

    /// Keys held now (live or not yet dropped).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.locked().tats.len()).sum()
    }

    /// Decisions taken without counting, because the store was full of live keys.
    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn keys_should_be_counted_apart() {
        let g = Gcra::new(2, S);
        let c = Counters::new(100);
        assert!(c.take(&g, b"a", S).allowed && c.take(&g, b"a", S).allowed);
        assert!(!c.take(&g, b"a", S).allowed);
        assert!(c.take(&g, b"b", S).allowed, "another key has its own quota");
    }

    #[test]
    fn what_other_processes_counted_should_be_merged_never_moving_back() {
        let g = Gcra::new(4, 4 * S);
        let c = Counters::new(100);
        assert!(c.take(&g, b"a", 10 * S).allowed);
        // Redis says the key's TAT is 3 s ahead (three more requests elsewhere): one is left.
        c.merge(&g, b"a", 10 * S, 3 * S);
        assert!(c.take(&g, b"a", 10 * S).allowed);
        assert!(!c.take(&g, b"a", 10 * S).allowed);
        // An older answer (less ahead) changes nothing; one past the window is cut to it.
        c.merge(&g, b"a", 10 * S, S);
        assert!(!c.take(&g, b"a", 10 * S).allowed);
        c.merge(&g, b"b", 10 * S, 60 * S);
        assert!(c.take(&g, b"b", 14 * S).allowed, "never more than a window ahead");
    }

    #[test]
    fn memory_should_stay_bounded_under_a_flood_of_keys() {
        let g = Gcra::new(10, S);
        let c = Counters::new(1_000);
        // A million distinct keys, a window apart in batches: stale entries go, live ones are kept.
        for round in 0..100u64 {
            for i in 0..10_000u64 {
                c.take(&g, &(round * 10_000 + i).to_le_bytes(), round * 2 * S);
            }
            assert!(c.len() <= 1_000 + SHARDS, "{} keys held", c.len());
        }
        assert!(c.overflowed() > 0, "a burst of live keys past the bound is admitted uncounted");
        // A counted key keeps its count while the flood goes on.
        let c = Counters::new(64);
        (0..10).for_each(|_| assert!(c.take(&g, b"counted", 5 * S).allowed));
        for i in 0..10_000u64 {
            c.take(&g, &i.to_le_bytes(), 5 * S);
        }
        assert!(!c.take(&g, b"counted", 5 * S).allowed, "its entry was not forgotten");
    }
}
