//! The topic table: who subscribes to what. A published message is framed once (once plain, once compressed by
//! the shared compressor) and the same bytes (a reference-counted `Bytes`) are queued for every subscriber.
//! What carries pub/sub beyond the process ([`Beyond`]) hears of each topic's first and last subscriber here.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex};
use std::task::Waker;

use super::beyond::Beyond;
use super::outgoing::Outgoing;
use super::socket::{SendStatus, Socket, State};
use crate::values::ids::IdHasher;
use crate::values::sync::Locked;

type Subscribers = HashMap<u32, Arc<Socket>, BuildHasherDefault<IdHasher>>;

/// Topics by name. One lock guards the table and every socket's own list of topics, so the two never disagree.
#[derive(Default)]
pub(crate) struct Topics {
    map: Mutex<HashMap<Arc<str>, Subscribers>>,
    /// Told of each topic's first subscriber and its last, under the lock, so in the order they happened.
    beyond: Option<Arc<dyn Beyond>>,
}

impl Topics {
    /// A table whose topics' first and last subscribers `beyond` hears of.
    pub(crate) fn new(beyond: Option<Arc<dyn Beyond>>) -> Self {
        Self { map: Mutex::default(), beyond }
    }

    /// Subscribes `socket` to `topic`; false if it already was, or has ended.
    pub(crate) fn subscribe(&self, socket: &Arc<Socket>, topic: &str) -> bool {
        let mut map = self.map.locked();
        if socket.state() == State::Ended {
            return false;
        }
        let name: Arc<str> = match map.get_key_value(topic) {
            Some((name, _)) => name.clone(),
            None => topic.into(),
        };
        let subscribers = map.entry(name.clone()).or_default();
        if subscribers.insert(socket.id, socket.clone()).is_some() {
            return false;
        }
        if subscribers.len() == 1 {
            if let Some(beyond) = &self.beyond {
                beyond.opened(topic);
            }
        }
        socket.topics.locked().push(name);
        true
    }

    /// Unsubscribes `socket` from `topic`; false if it was not subscribed.
    pub(crate) fn unsubscribe(&self, socket: &Socket, topic: &str) -> bool {
        let mut map = self.map.locked();
        let Some(subscribers) = map.get_mut(topic) else { return false };
        if subscribers.remove(&socket.id).is_none() {
            return false;
        }
        if subscribers.is_empty() {
            map.remove(topic);
            if let Some(beyond) = &self.beyond {
                beyond.closed(topic);
            }
        }
        socket.topics.locked().retain(|t| &**t != topic);
        true
    }

    /// The topics `socket` subscribes to.
    pub(crate) fn of(&self, socket: &Socket) -> Vec<Arc<str>> {
        let _map = self.map.locked();
        socket.topics.locked().clone()
    }

    /// Marks `socket` ended and drops every subscription it had, in one step, so none can be added after.
    pub(crate) fn end(&self, socket: &Socket) {
        let mut map = self.map.locked();
        socket.end();
        let topics = std::mem::take(&mut *socket.topics.locked());
        for topic in topics {
            if let Some(subscribers) = map.get_mut(&topic) {
                subscribers.remove(&socket.id);
                if subscribers.is_empty() {
                    map.remove(&topic);
                    if let Some(beyond) = &self.beyond {
                        beyond.closed(&topic);
                    }
                }
            }
        }
    }

    /// Queues `msg` for every subscriber of `topic` but `exclude`; returns how many took it, and pushes the
    /// wakers of parked sockets onto `wake`. Cost per subscriber: a lock and a reference-count increment. A
    /// subscriber with a compressor of its own is sent to after the table's lock is let go (each costs a
    /// compression, which must not hold up the sockets that end or subscribe meanwhile).
    pub(crate) fn publish(
        &self,
        topic: &str,
        msg: &mut Outgoing<'_>,
        exclude: Option<u32>,
        wake: &mut Vec<(u8, Waker)>,
    ) -> usize {
        let mut reached = 0;
        let mut own = Vec::new();
        {
            let map = self.map.locked();
            let Some(subscribers) = map.get(topic) else { return 0 };
            for (id, socket) in subscribers {
                if Some(*id) == exclude {
                    continue;
                }
                if msg.needs_own(socket.deflate.as_ref()) {
                    own.push(socket.clone());
                    continue;
                }
                reached += send(socket, msg, wake);
            }
        }
        for socket in own {
            reached += send(&socket, msg, wake);
        }
        reached
    }

    /// How many sockets subscribe to `topic`.
    pub(crate) fn count(&self, topic: &str) -> usize {
        self.map.locked().get(topic).map_or(0, HashMap::len)
    }
}

impl Drop for Topics {
    /// A hub that goes away with subscribers left (its sockets' tasks dropped with their engine, not ended one
    /// by one) still lets go of their topics beyond the process.
    fn drop(&mut self) {
        if let Some(beyond) = &self.beyond {
            let map = self.map.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
            for topic in map.keys() {
                beyond.closed(topic);
            }
        }
    }
}

/// Sends `msg` to one subscriber: 1 if it took it.
fn send(socket: &Socket, msg: &mut Outgoing<'_>, wake: &mut Vec<(u8, Waker)>) -> usize {
    let (status, waker) = socket.send(msg);
    wake.extend(waker.map(|w| (socket.shard, w)));
    usize::from(status != SendStatus::Dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::ws::outgoing::Payload;
    use crate::values::ws_options::WsOptions;

    fn socket(id: u32) -> Arc<Socket> {
        Arc::new(Socket::new(id, 0, 0, Arc::new(WsOptions::default()), None))
    }

    #[test]
    fn a_publish_reaches_every_subscriber_but_the_excluded_one_with_the_same_bytes() {
        let t = Topics::default();
        let (a, b, c) = (socket(1), socket(2), socket(3));
        assert!(t.subscribe(&a, "room"));
        assert!(!t.subscribe(&a, "room"), "once");
        assert!(t.subscribe(&b, "room"));
        assert!(t.subscribe(&c, "other"));
        let mut msg = Outgoing::new(Payload::Text("hi"), None);
        let mut wake = Vec::new();
        assert_eq!(t.publish("room", &mut msg, None, &mut wake), 2);
        assert_eq!(t.publish("room", &mut msg, Some(1), &mut wake), 1);
        assert_eq!(t.publish("nobody", &mut msg, None, &mut wake), 0);
        assert_eq!((a.buffered(), b.buffered(), c.buffered()), (4, 8, 0));
        assert_eq!(t.count("room"), 2);
    }

    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl Beyond for Heard {
        fn opened(&self, topic: &str) {
            self.0.lock().unwrap().push(format!("+{topic}"));
        }
        fn closed(&self, topic: &str) {
            self.0.lock().unwrap().push(format!("-{topic}"));
        }
        fn published(&self, _: &str, _: Payload<'_>, _: Option<bool>) {}
    }

    #[test]
    fn beyond_hears_each_topics_first_and_last_subscriber_only() {
        let heard = Arc::new(Heard::default());
        let t = Topics::new(Some(heard.clone()));
        let (a, b) = (socket(1), socket(2));
        t.subscribe(&a, "room");
        t.subscribe(&b, "room");
        t.subscribe(&a, "x");
        t.unsubscribe(&a, "room");
        t.unsubscribe(&a, "room");
        t.end(&b);
        t.end(&a);
        assert_eq!(*heard.0.lock().unwrap(), ["+room", "+x", "-room", "-x"]);
        // A table dropped with subscribers left lets go of their topics too.
        t.subscribe(&socket(3), "kept");
        drop(t);
        assert_eq!(heard.0.lock().unwrap().last().map(String::as_str), Some("-kept"));
    }

    #[test]
    fn an_ended_socket_leaves_every_topic_and_cannot_join_again() {
        let t = Topics::default();
        let a = socket(1);
        t.subscribe(&a, "x");
        t.subscribe(&a, "y");
        assert_eq!(t.of(&a).len(), 2);
        t.end(&a);
        assert_eq!((t.count("x"), t.count("y")), (0, 0));
        assert!(!t.subscribe(&a, "x"));
        assert!(t.of(&a).is_empty());
        assert!(!t.unsubscribe(&a, "x"));
    }
}
