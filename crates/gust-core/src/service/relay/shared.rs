//! What the relay's handle, its thread and the hubs share: the ledger of subscriptions, the queued publishes,
//! the counters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, Weak};

use super::envelope;
use super::options::RelayOptions;
use super::subscriptions::Subscriptions;
use crate::responses::rate_limit::RateLimit;
use crate::service::ws::Peers;

/// What the relay's thread and the hubs share.
pub(super) struct RelayShared {
    pub(super) options: RelayOptions,
    /// This relay's id in every envelope it publishes.
    pub(super) origin: [u8; 16],
    pub(super) state: Mutex<State>,
    /// Rung when there is something to publish, a subscription to change, or it is time to stop.
    pub(super) wake: tokio::sync::Notify,
    /// Where messages from Redis go.
    pub(super) peers: OnceLock<Weak<Peers>>,
    pub(super) published: AtomicU64,
    pub(super) delivered: AtomicU64,
    pub(super) dropped: AtomicU64,
    pub(super) reconnects: AtomicU64,
    pub(super) connected: AtomicBool,
    pub(super) quit: AtomicBool,
    /// Rate limits counted through this link (`limits`).
    pub(super) limits: Mutex<Vec<Weak<RateLimit>>>,
}

impl RelayShared {
    /// Hands a message from Redis to the local subscribers of its topic, unless it is this relay's own or not
    /// Gust's; whether it was delivered.
    pub(super) fn deliver(&self, channel: &[u8], payload: &[u8]) -> bool {
        let Some(topic) = self.options.topic(channel) else { return false };
        let Some(received) = envelope::decode(payload) else { return false };
        if received.origin == self.origin {
            return false;
        }
        let Some(peers) = self.peers.get().and_then(std::sync::Weak::upgrade) else { return false };
        peers.deliver(topic, received.payload, received.compress);
        self.delivered.fetch_add(1, Ordering::Relaxed);
        true
    }

    pub(super) fn new(options: RelayOptions) -> Self {
        Self {
            origin: origin(),
            options,
            state: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            peers: OnceLock::new(),
            published: AtomicU64::new(0),
            delivered: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            connected: AtomicBool::new(false),
            quit: AtomicBool::new(false),
            limits: Mutex::new(Vec::new()),
        }
    }
}

#[derive(Default)]
pub(super) struct State {
    /// What is wanted, what Redis confirmed, what changed and what is being left.
    pub(super) subscriptions: Subscriptions,
    /// Publishes waiting for Redis: channel and envelope.
    pub(super) outbox: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// Their bytes.
    pub(super) queued: usize,
    /// The link speaks sharded pub/sub (Redis 7 or later, or a cluster).
    pub(super) sharded: bool,
    /// Redis servers the link holds a connection to now (a cluster's primaries).
    pub(super) nodes: usize,
    pub(super) last_error: Option<String>,
}

/// A relay id unique enough among the processes on one Redis: the hasher's random keys, the process id and
/// the time.
pub(super) fn origin() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; 16];
    for (i, half) in out.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_usize(i);
        hasher
            .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    out
}
