//! Every open WebSocket of a server, by id, and the topic table: what the binding calls to send, close,
//! subscribe and publish; and [`Peers`], the hubs of servers that serve one app together. Usable from any thread; the JavaScript thread calls it synchronously, so `send`
//! returns Bun's status at once.
//!
//! Sockets parked with nothing to write are not woken by each send: their wakers wait in [`WebSockets::flush`]'s
//! list until the caller is done (the package flushes once per turn of its event loop). Waking the I/O thread
//! per send measured as a doorbell and a context switch per message when both threads share a core.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use arc_swap::ArcSwap;

use bytes::Bytes;

use super::beyond::Beyond;
use super::extension::Agreement;
use super::frame::{self, OpCode};
use super::outgoing::{Outgoing, Payload};
use super::socket::{SendStatus, Socket};
use super::topics::Topics;
use crate::crossing::completions::Completions;
use crate::values::error::Error;
use crate::values::ids::IdHasher;
use crate::values::sync::Locked;
use crate::values::ws_options::WsOptions;

/// The WebSockets of one server. Cheap to share (`Arc`).
pub struct WebSockets {
    sockets: Mutex<HashMap<u32, Arc<Socket>, BuildHasherDefault<IdHasher>>>,
    next: AtomicU32,
    topics: Topics,
    /// Each shard's answer queue, through which its sockets are woken on their own I/O thread.
    shards: Box<[Arc<Completions>]>,
    /// Sockets with something new to write, to wake at the next flush, with their shard.
    wakes: Mutex<Vec<(u8, std::task::Waker)>>,
    /// The server is stopping: 1 gracefully, 2 forced. A socket that opens meanwhile closes at once.
    stopping: std::sync::atomic::AtomicU8,
    /// The hubs of the other servers this one serves an app with (workers on the one-thread engine): publishes,
    /// flushes and counts reach all of them.
    peers: Option<Arc<Peers>>,
}

impl std::fmt::Debug for WebSockets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSockets").field("open", &self.sockets.locked().len()).finish_non_exhaustive()
    }
}

/// The close frame a stopping server sends.
pub(crate) fn goodbye() -> Bytes {
    frame::close(1001, "server shutting down")
}

impl WebSockets {
    /// A hub whose sockets are served by `shards`, publishing to `peers` too when it has some (it joins them).
    pub(crate) fn new(shards: Box<[Arc<Completions>]>, peers: Option<Arc<Peers>>) -> Arc<Self> {
        let hub = Arc::new(Self {
            sockets: Mutex::default(),
            next: AtomicU32::new(1),
            topics: Topics::new(peers.as_ref().and_then(|p| p.beyond.clone())),
            shards,
            wakes: Mutex::default(),
            stopping: std::sync::atomic::AtomicU8::new(0),
            peers,
        });
        if let Some(peers) = &hub.peers {
            peers.join(&hub);
        }
        hub
    }

    fn get(&self, id: u32) -> Option<Arc<Socket>> {
        self.sockets.locked().get(&id).cloned()
    }

    /// Registers a socket about to open, with a fresh id, for lane `lane`, served by shard `shard`, compressing
    /// as `deflate` agreed.
    pub(crate) fn open(&self, options: Arc<WsOptions>, lane: u8, shard: u8, deflate: Option<Agreement>) -> Arc<Socket> {
        let mut sockets = self.sockets.locked();
        loop {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            if id == 0 || sockets.contains_key(&id) {
                continue;
            }
            let socket = Arc::new(Socket::new(id, lane, shard, options, deflate));
            sockets.insert(id, socket.clone());
            return socket;
        }
    }

    /// The server stops: every socket of shard `shard` says goodbye with 1001; gracefully it then waits for the
    /// client's reply (at most 5 s), forced it ends as soon as that is written (at most 500 ms). Called on that
    /// shard's I/O thread, where waking a socket's task is a local schedule.
    pub(crate) fn shutdown(&self, forced: bool, shard: u8) {
        self.stopping.fetch_max(if forced { 2 } else { 1 }, Ordering::AcqRel);
        let sockets: Vec<Arc<Socket>> = self.sockets.locked().values().filter(|s| s.shard == shard).cloned().collect();
        for socket in sockets {
            if let Some(waker) = socket.close(goodbye(), forced) {
                waker.wake();
            }
        }
    }

    /// Closes every socket of lane `lane` with 1001 (its thread is gone, so none of their events can be
    /// heard): the close handshake runs as a stopping server's does. Called from any thread.
    pub(crate) fn close_lane(&self, lane: u8) {
        let sockets: Vec<Arc<Socket>> = self.sockets.locked().values().filter(|s| s.lane == lane).cloned().collect();
        let mut wakes = Vec::new();
        for socket in sockets {
            wakes.extend(socket.close(frame::close(1001, "worker exited"), false).map(|w| (socket.shard, w)));
        }
        self.wake_through_shards(wakes);
    }

    /// Whether the server is stopping: `Some(forced)`.
    pub(crate) fn stopping(&self) -> Option<bool> {
        match self.stopping.load(Ordering::Acquire) {
            0 => None,
            n => Some(n == 2),
        }
    }

    /// Forgets a socket whose task has ended: its subscriptions go, and sends to it are dropped.
    pub(crate) fn remove(&self, socket: &Socket) {
        self.topics.end(socket);
        self.sockets.locked().remove(&socket.id);
    }

    fn wake(&self, socket: &Socket, waker: Option<std::task::Waker>) {
        if let Some(waker) = waker {
            self.wakes.locked().push((socket.shard, waker));
        }
    }

    /// Wakes every socket that was sent something since the last flush: one doorbell per I/O thread for all of
    /// them. Sends, closes and publishes take effect only once this is called. With peers, theirs are flushed
    /// too (a publish may have reached them).
    pub fn flush(&self) {
        match &self.peers {
            Some(peers) => peers.flush(),
            None => self.flush_here(),
        }
    }

    /// [`Self::flush`] of this hub alone.
    pub(crate) fn flush_here(&self) {
        let wakes = std::mem::take(&mut *self.wakes.locked());
        self.wake_through_shards(wakes);
    }

    /// Hands wakers to their shards' I/O threads, one doorbell each.
    fn wake_through_shards(&self, wakes: Vec<(u8, std::task::Waker)>) {
        if wakes.is_empty() {
            return;
        }
        if self.shards.len() == 1 {
            self.shards[0].wake_all(wakes.into_iter().map(|(_, w)| w).collect());
            return;
        }
        let mut by_shard: Vec<Vec<std::task::Waker>> = vec![Vec::new(); self.shards.len()];
        for (shard, waker) in wakes {
            by_shard[usize::from(shard)].push(waker);
        }
        for (completions, wakes) in self.shards.iter().zip(by_shard) {
            if !wakes.is_empty() {
                completions.wake_all(wakes);
            }
        }
    }

    /// Sends a message to socket `id`: sent (its length), queued behind backpressure (-1), or dropped (0; the
    /// socket is closing or gone, or over its backpressure limit); written after the next [`Self::flush`].
    /// `compress`: compress it where the client agreed to permessage-deflate (`None`: when it is at least the
    /// route's threshold). Cost: the frame is built (one copy of the payload, or compressed on this thread) and
    /// two uncontended locks.
    pub fn send(&self, id: u32, payload: Payload<'_>, compress: Option<bool>) -> SendStatus {
        let Some(socket) = self.get(id) else { return SendStatus::Dropped };
        let (status, waker) = socket.send(&mut Outgoing::new(payload, compress));
        self.wake(&socket, waker);
        status
    }

    /// Sends a ping (at most 125 bytes) to socket `id`.
    pub fn ping(&self, id: u32, data: &[u8]) -> Result<SendStatus, Error> {
        if data.len() > 125 {
            return Err(Error::config(format!("a ping carries at most 125 bytes, got {}", data.len())));
        }
        let Some(socket) = self.get(id) else { return Ok(SendStatus::Dropped) };
        let (status, waker) = socket.ping(frame::encode(true, OpCode::Ping, data), data.len());
        self.wake(&socket, waker);
        Ok(status)
    }

    /// Starts the close handshake with `code` and `reason`: the client's reply (or a timeout) ends the socket.
    /// The code must be one an endpoint may send (1000–1003, 1007–1014, 3000–4999) and the reason at most 123
    /// bytes of UTF-8.
    pub fn close(&self, id: u32, code: u16, reason: &str) -> Result<(), Error> {
        if !matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999) {
            return Err(Error::config(format!(
                "close code {code} cannot be sent; use 1000, 1001–1003, 1007–1014 or 3000–4999"
            )));
        }
        if reason.len() > 123 {
            return Err(Error::config(format!("a close reason is at most 123 bytes, got {}", reason.len())));
        }
        if let Some(socket) = self.get(id) {
            self.wake(&socket, socket.close(frame::close(code, reason), false));
        }
        Ok(())
    }

    /// Drops socket `id`'s connection at once, without the close handshake.
    pub fn terminate(&self, id: u32) {
        if let Some(socket) = self.get(id) {
            self.wake(&socket, socket.terminate());
        }
    }

    /// Bytes queued for socket `id` and not yet taken by its client.
    pub fn buffered(&self, id: u32) -> usize {
        self.get(id).map_or(0, |s| s.buffered())
    }

    /// Subscribes socket `id` to `topic`; false if it already was, or is gone.
    pub fn subscribe(&self, id: u32, topic: &str) -> bool {
        self.get(id).is_some_and(|s| self.topics.subscribe(&s, topic))
    }

    /// Unsubscribes socket `id` from `topic`; false if it was not subscribed.
    pub fn unsubscribe(&self, id: u32, topic: &str) -> bool {
        self.get(id).is_some_and(|s| self.topics.unsubscribe(&s, topic))
    }

    /// Whether socket `id` subscribes to `topic`.
    pub fn is_subscribed(&self, id: u32, topic: &str) -> bool {
        self.get(id).is_some_and(|s| self.topics.of(&s).iter().any(|t| &**t == topic))
    }

    /// The topics socket `id` subscribes to.
    pub fn subscriptions(&self, id: u32) -> Vec<Arc<str>> {
        self.get(id).map_or_else(Vec::new, |s| self.topics.of(&s))
    }

    /// Sends a message to every subscriber of `topic` except `exclude`; returns how many sockets took it.
    /// `compress` as for [`Self::send`]. Cost: the plain frame is built once, and so is the compressed one for
    /// every subscriber that agreed to shared compression; per subscriber a lock and a reference count (or its
    /// own compression, where it agreed to a dedicated compressor); one doorbell in all.
    /// With peers, their subscribers get it too (framed once for all).
    pub fn publish(&self, topic: &str, payload: Payload<'_>, exclude: Option<u32>, compress: Option<bool>) -> usize {
        let mut msg = Outgoing::new(payload, compress);
        match &self.peers {
            Some(peers) => peers.publish_from(self, exclude, topic, &mut msg),
            None => self.publish_here(topic, &mut msg, exclude),
        }
    }

    /// [`Self::publish`] to this hub's subscribers alone.
    pub(crate) fn publish_here(&self, topic: &str, msg: &mut Outgoing<'_>, exclude: Option<u32>) -> usize {
        // Wakers gathered here and handed over after, so other threads' sends never wait on a publish's framing.
        let mut wakes = Vec::new();
        let reached = self.topics.publish(topic, msg, exclude, &mut wakes);
        if !wakes.is_empty() {
            self.wakes.locked().append(&mut wakes);
        }
        reached
    }

    /// How many sockets subscribe to `topic` (with peers, on every hub).
    pub fn subscriber_count(&self, topic: &str) -> usize {
        self.peers.as_ref().map_or_else(|| self.subscriber_count_here(topic), |p| p.subscriber_count(topic))
    }

    pub(crate) fn subscriber_count_here(&self, topic: &str) -> usize {
        self.topics.count(topic)
    }

    /// How many sockets are open (with peers, on every hub).
    pub fn len(&self) -> usize {
        self.peers.as_ref().map_or_else(|| self.len_here(), |p| p.len())
    }

    pub(crate) fn len_here(&self) -> usize {
        self.sockets.locked().len()
    }

    /// Whether no socket is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// The WebSocket hubs of servers that serve one app together: with `workers` on the one-thread engine each
// worker thread runs a server of its own, and a message published on any of them must reach the subscribers of
// all, as it does on the threaded engine, whose one hub every worker shares.
//
// A hub joins when its server starts and is forgotten once dropped. A publish frames the message once for every
// hub ([`Outgoing`] keeps the frames it built) and queues it for each hub's subscribers; their wakers wait in
// each hub's list until the publishing thread flushes, which wakes each hub's engine once (a doorbell on the
// thread that polls its sockets).

/// The hubs of one group of servers. Cheap to share (`Arc`); read on every publish without a lock.
#[derive(Default)]
pub struct Peers {
    hubs: ArcSwap<Vec<Weak<WebSockets>>>,
    /// What carries the group's publishes to other processes, and theirs here: told of every publish made
    /// here and of each topic's first and last subscriber on each hub.
    beyond: Option<Arc<dyn Beyond>>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers").field("hubs", &self.hubs.load().len()).finish()
    }
}

impl Peers {
    /// An empty group.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// An empty group whose pub/sub reaches beyond the process through `beyond`.
    pub fn beyond(beyond: Arc<dyn Beyond>) -> Arc<Self> {
        Arc::new(Self { hubs: ArcSwap::default(), beyond: Some(beyond) })
    }

    /// Queues a message that came from beyond the process for `topic`'s subscribers on every hub: it goes no
    /// further (not back beyond), and is written after the next [`Self::flush`] (a caller delivering a burst
    /// flushes once for all of it: each socket then writes the burst in one go). How many sockets took it.
    pub fn deliver(&self, topic: &str, payload: Payload<'_>, compress: Option<bool>) -> usize {
        let mut msg = Outgoing::new(payload, compress);
        self.each().map(|hub| hub.publish_here(topic, &mut msg, None)).sum()
    }

    /// Adds `hub`, dropping the entries of hubs that are gone.
    pub(crate) fn join(&self, hub: &Arc<WebSockets>) {
        let weak = Arc::downgrade(hub);
        self.hubs.rcu(|hubs| {
            let mut next: Vec<Weak<WebSockets>> = hubs.iter().filter(|h| h.strong_count() > 0).cloned().collect();
            next.push(weak.clone());
            next
        });
    }

    /// Every hub still alive.
    pub(crate) fn each(&self) -> impl Iterator<Item = Arc<WebSockets>> {
        let hubs = self.hubs.load_full();
        (0..hubs.len()).filter_map(move |i| hubs[i].upgrade())
    }

    /// Sends a message to every subscriber of `topic` on every hub (from a thread that serves none of them: the
    /// main thread of a group of workers); how many sockets took it. Written after [`Self::flush`].
    pub fn publish(&self, topic: &str, payload: Payload<'_>, compress: Option<bool>) -> usize {
        self.publish_to_all(None, topic, &mut Outgoing::new(payload, compress))
    }

    /// A publish from `from`'s thread: `exclude` is an id of `from`'s (ids of other hubs may be the same number).
    pub(crate) fn publish_from(
        &self,
        from: &WebSockets,
        exclude: Option<u32>,
        topic: &str,
        msg: &mut Outgoing<'_>,
    ) -> usize {
        self.publish_to_all(exclude.map(|id| (from, id)), topic, msg)
    }

    /// Queues `msg` for `topic`'s subscribers on every hub, framed once for all, but the one socket `exclude` names.
    /// Goes beyond the process too, when the group has a way there: the count is of this process's sockets.
    fn publish_to_all(&self, exclude: Option<(&WebSockets, u32)>, topic: &str, msg: &mut Outgoing<'_>) -> usize {
        let skip = |hub: &WebSockets| exclude.filter(|(from, _)| std::ptr::eq(*from, hub)).map(|(_, id)| id);
        let reached = self.each().map(|hub| hub.publish_here(topic, msg, skip(&hub))).sum();
        if let Some(beyond) = &self.beyond {
            beyond.published(topic, msg.payload(), msg.compress());
        }
        reached
    }

    /// Wakes, on every hub, the sockets sent something since the last flush.
    pub fn flush(&self) {
        for hub in self.each() {
            hub.flush_here();
        }
    }

    /// How many sockets subscribe to `topic`, on every hub.
    pub fn subscriber_count(&self, topic: &str) -> usize {
        self.each().map(|hub| hub.subscriber_count_here(topic)).sum()
    }

    /// How many sockets are open, on every hub.
    pub fn len(&self) -> usize {
        self.each().map(|hub| hub.len_here()).sum()
    }

    /// Whether no socket is open on any hub.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
