//! Pub/sub beyond the process: a server's WebSocket topics relayed through Redis (or Valkey), so a publish
//! reaches every subscriber of its topic on every process and machine connected to the same Redis.
//!
//! A [`Relay`] is the far side ([`Beyond`]) of a [`Peers`] group (the hubs of one process: the threaded engine's
//! one hub, or every one-thread worker's). It runs on a thread of its own with a small tokio runtime, the same
//! whichever engine serves, and holds one connection per Redis server ([`nodes`]: the one, or each primary of
//! a cluster, where each channel lives on its slot's owner), carrying both directions. Nothing of it runs on a
//! JavaScript thread or an I/O thread: a publish only queues the message (one copy, bounded by
//! [`RelayOptions::buffer`]), and a topic's first and last subscriber only mark it.
//!
//! - **Subscriptions follow the local ones**: a topic's channel is subscribed once a socket of the process
//!   subscribes to it, and unsubscribed after the last one leaves (one ledger, [`subscriptions`], says what is
//!   wanted and what Redis has; [`link`] reconciles them, so a burst of subscribes and unsubscribes costs what it
//!   changes, not one command each).
//! - **A message from Redis is delivered in Rust**, where the connection reads it: framed once and queued for
//!   the local subscribers, their engines woken once per burst; JavaScript is not involved. A process drops
//!   its own messages when Redis echoes them back (each carries its relay's id, [`envelope`]).
//! - **Faults**: local delivery never waits for Redis. A lost connection is retried with capped, jittered
//!   backoff, and every topic that still has local subscribers is subscribed again. Publishes wait in the
//!   bounded buffer meanwhile and past it are dropped, counted. Delivery across processes is at most once: a
//!   pipeline that failed in flight is counted dropped, never sent twice.
//!
//! Why the `redis` crate (redis-rs): it is the maintained Rust client (the Redis organisation's), speaks to
//! Redis and Valkey alike, has tokio and rustls support (an authority and a client certificate of one's own),
//! and its multiplexed RESP3 connection counts (un)subscribe confirmations as replies and hands every push to a
//! sender of ours, so one connection subscribes (one channel per command: one reply each, a refusal included),
//! publishes and delivers. An unsubscribe Redis sends of its own (a cluster's slot moved) is also taken as a
//! reply, so the link starts over then, and counts what was in flight as dropped. Its cluster connection is not
//! used: after a node reconnects it subscribes again with one command for all of the node's channels, which
//! Redis refuses when they span slots (`CROSSSLOT`); the relay routes by slot itself. `fred` has not been
//! released since early 2025 and would bring a multi-threaded runtime and another TLS stack.

mod envelope;
mod failures;
mod join;
mod limits;
mod link;
mod nodes;
mod options;
mod pushes;
mod shared;
mod slot;
mod subscriptions;
mod topology;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::responses::rate_limit::RateLimit;
use crate::service::ws::{Beyond, Payload, Peers};
use crate::values::error::Error;
use crate::values::sync::Locked;

pub use options::{RelayOptions, RelayTls};
use shared::RelayShared;

/// What a relay has done so far, for `server.pubsub` in JavaScript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Every connection to Redis is up (a cluster's: to each primary), and every topic with a local subscriber
    /// is subscribed.
    pub connected: bool,
    /// Sharded pub/sub is in use (`SSUBSCRIBE`/`SPUBLISH`: Redis 7 or later, Valkey, a cluster).
    pub sharded: bool,
    /// Redis servers connected to now: 1, or a cluster's primaries; 0 while disconnected.
    pub nodes: usize,
    /// Messages published to Redis (its reply received).
    pub published: u64,
    /// Messages from other processes on this process's topics, handed to its subscribers.
    pub delivered: u64,
    /// Publishes lost: over the buffer while Redis could not take them, in flight when a connection failed, or
    /// for a cluster's shard whose primary is down.
    pub dropped: u64,
    /// Times a lost connection was made again.
    pub reconnects: u64,
    /// Bytes of publishes waiting for Redis now.
    pub queued: usize,
    /// Topics whose channel this process subscribes to now.
    pub topics: usize,
    /// Why the last attempt to reach Redis failed, until one succeeds; or which primary of a cluster is down.
    pub last_error: Option<String>,
}

/// A server's link to Redis. Cheap to share (`Arc`); dropping the last handle ends its thread and
/// connections.
pub(crate) struct Relay {
    shared: Arc<RelayShared>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").field("prefix", &self.shared.options.prefix).finish_non_exhaustive()
    }
}

/// Connects to Redis as a relay with `options` would, checks that it may subscribe and publish on the prefix's
/// channels, and lets go: `Ok` if so, else the error `listen()` reports. For a caller that must not block in
/// [`crate::Server::start`]: it checks first, off its own thread, then starts with `required: false`. Each
/// step is bounded by `options.timeout` (a few for one server; a cluster's adds one per primary).
pub fn check(options: &RelayOptions) -> Result<(), Error> {
    options.validate()?;
    link::probe(options).map_err(|cause| unreachable(options, &cause))
}

/// The error of a Redis that cannot be reached, with the code of its cause (`failures::code_of`).
fn unreachable(options: &RelayOptions, cause: &str) -> Error {
    Error::config(format!("pubsub: cannot reach Redis at {}: {cause}", options.name()))
        .with_code(failures::code_of(cause))
}

impl Relay {
    /// Starts the relay's thread and connects. With `options.required`, waits for the first connection (at
    /// most three timeouts) and fails, naming the cause, when it cannot be made;
    /// otherwise returns at once and keeps trying in the background.
    pub(crate) fn start(options: RelayOptions) -> Result<Arc<Self>, Error> {
        options.validate()?;
        let required = options.required;
        let wait = options.timeout * 3 + Duration::from_millis(500);
        let shared = Arc::new(RelayShared::new(options));
        let (first_tx, first_rx) = std::sync::mpsc::channel();
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("gust-relay".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                match runtime {
                    Ok(runtime) => runtime.block_on(link::run(thread_shared, first_tx)),
                    Err(e) => {
                        let _ = first_tx.send(Err(format!("cannot start the relay's runtime: {e}")));
                    }
                }
            })
            .map_err(|e| Error::io("cannot start the pub/sub relay's thread", e))?;
        let relay = Arc::new(Self { shared });
        if required {
            let first = first_rx
                .recv_timeout(wait)
                .unwrap_or_else(|_| Err(failures::timed_out(&format!("no connection within {} ms", wait.as_millis()))));
            if let Err(cause) = first {
                // Dropping the handle ends the thread.
                return Err(unreachable(&relay.shared.options, &cause));
            }
        }
        Ok(relay)
    }

    /// Counts `limits`' shared ones through this link from now on (those counted already are left as they are):
    /// each wakes the link when it has requests to send, and hears whether Redis can be reached.
    pub(crate) fn share<'a>(&self, limits: impl IntoIterator<Item = &'a Arc<RateLimit>>) {
        let mut held = self.shared.limits.locked();
        for limit in limits {
            let Some(sharing) = limit.sharing() else { continue };
            if held.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(limit))) {
                continue;
            }
            held.push(Arc::downgrade(limit));
            let link = Arc::downgrade(&self.shared);
            sharing.set_wake(Arc::new(move || {
                if let Some(link) = link.upgrade() {
                    link.wake.notify_one();
                }
            }));
            sharing.set_reachable(self.shared.connected.load(Ordering::Acquire));
        }
    }

    /// Where messages from other processes are delivered: the process's hubs. Once.
    pub(crate) fn attach(&self, peers: &Arc<Peers>) {
        let _ = self.shared.peers.set(Arc::downgrade(peers));
    }

    /// The counters.
    pub(crate) fn stats(&self) -> RelayStats {
        let s = &self.shared;
        let state = s.state.locked();
        RelayStats {
            connected: s.connected.load(Ordering::Acquire),
            sharded: state.sharded,
            nodes: state.nodes,
            published: s.published.load(Ordering::Relaxed),
            delivered: s.delivered.load(Ordering::Relaxed),
            dropped: s.dropped.load(Ordering::Relaxed),
            reconnects: s.reconnects.load(Ordering::Relaxed),
            queued: state.queued,
            topics: state.subscriptions.count(),
            last_error: state.last_error.clone(),
        }
    }
}

impl Relay {
    /// Ends the relay's thread and closes both connections (the server has stopped): later publishes are
    /// dropped and counted, nothing more is delivered. Idempotent; dropping the last handle does the same.
    pub(crate) fn shut(&self) {
        self.shared.quit.store(true, Ordering::Release);
        self.shared.connected.store(false, Ordering::Release);
        self.shared.wake.notify_one();
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shut();
    }
}

impl Beyond for Relay {
    fn opened(&self, topic: &str) {
        let first = self.shared.state.locked().subscriptions.open(topic);
        if first {
            self.shared.wake.notify_one();
        }
    }

    fn closed(&self, topic: &str) {
        let last = self.shared.state.locked().subscriptions.close(topic);
        if last {
            self.shared.wake.notify_one();
        }
    }

    /// Cost on the publishing thread: the envelope (one copy of the payload) and a lock. A message is taken
    /// when nothing else waits, whatever its size; past that, what would pass `buffer` is dropped.
    fn published(&self, topic: &str, payload: Payload<'_>, compress: Option<bool>) {
        let s = &self.shared;
        if s.quit.load(Ordering::Acquire) {
            s.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let channel = s.options.channel(topic);
        let envelope = envelope::encode(&s.origin, payload, compress);
        let size = channel.len() + envelope.len();
        let mut state = s.state.locked();
        if !state.outbox.is_empty() && state.queued + size > s.options.buffer {
            drop(state);
            s.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        state.queued += size;
        state.outbox.push_back((channel, envelope));
        drop(state);
        s.wake.notify_one();
    }
}

#[cfg(test)]
mod tests;
