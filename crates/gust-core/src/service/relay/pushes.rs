//! What the connections of one link hear from Redis, handled where redis-rs reads it (the relay's thread, in
//! the connection's task): a message delivered to the local subscribers at once, their engines woken once per
//! burst; an unsubscribe the link did not ask for (a cluster moved the slot), or a lost connection, noted so the
//! link starts over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use redis::aio::{AsyncPushSender, SendError};
use redis::{PushInfo, PushKind, Value};

use super::failures::LOST;
use super::shared::RelayShared;
use crate::values::sync::Locked;

/// What the connections of one link hear from Redis, handled where it is read (the relay's thread, in the
/// connection's task): messages delivered at once, a lost connection or a subscription Redis ended noted for
/// the link.
pub(super) struct Pushes {
    shared: Arc<RelayShared>,
    /// Why the link must start over, once something said so.
    pub(super) lost: Mutex<Option<String>>,
    /// Messages were delivered since the subscribers were last woken.
    pub(super) unflushed: AtomicBool,
    /// Wakes the flusher.
    pub(super) ring: tokio::sync::Notify,
}

impl Pushes {
    pub(super) fn new(shared: Arc<RelayShared>) -> Self {
        Self { shared, lost: Mutex::default(), unflushed: AtomicBool::new(false), ring: tokio::sync::Notify::new() }
    }

    fn lose(&self, why: &str) {
        self.lost.locked().get_or_insert_with(|| why.to_owned());
        self.shared.wake.notify_one();
    }

    /// Wakes the subscribers' engines for what was delivered since the last time: once per burst, not per
    /// message (the flusher runs when the connections have read all there was).
    pub(super) fn flush(&self) {
        if self.unflushed.swap(false, Ordering::AcqRel) {
            if let Some(peers) = self.shared.peers.get().and_then(std::sync::Weak::upgrade) {
                peers.flush();
            }
        }
    }
}

/// The push sender given to redis-rs (its trait wants an owned type).
pub(super) struct Forward(pub(super) Arc<Pushes>);

impl AsyncPushSender for Forward {
    fn send(&self, info: PushInfo) -> Result<(), SendError> {
        let pushes = &self.0;
        match info.kind {
            PushKind::Message | PushKind::SMessage => {
                if let [Value::BulkString(channel), Value::BulkString(payload)] = info.data.as_slice() {
                    if pushes.shared.deliver(channel, payload) {
                        pushes.unflushed.store(true, Ordering::Release);
                        pushes.ring.notify_one();
                    }
                }
            }
            PushKind::Unsubscribe | PushKind::SUnsubscribe => {
                let Some(Value::BulkString(channel)) = info.data.first() else { return Ok(()) };
                // The ledger knows whether the link asked for it.
                let asked = pushes.shared.state.locked().subscriptions.left(channel);
                if !asked {
                    pushes.lose("Redis ended a subscription (a cluster slot moved)");
                }
            }
            PushKind::Disconnection => pushes.lose(LOST),
            _ => {}
        }
        Ok(())
    }
}
