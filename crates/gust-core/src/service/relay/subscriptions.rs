//! The relay's one ledger of subscriptions (as redis-rs keeps one `SubscriptionTracker`): which topics the
//! process wants (a local subscriber on some hub), which changed since the link last looked, which Redis has
//! confirmed, and which channels the link is leaving. The hubs change what is wanted from any thread; the link
//! (`link.rs`) only sequences the work: it takes a snapshot when it connects, the changes on each pass, asks
//! what differs from what Redis confirmed, and records what Redis confirmed. Kept behind the relay's state
//! lock, with the publishes' queue.

use std::collections::{HashMap, HashSet};

/// What is wanted, what changed, what Redis confirmed, what is being left.
#[derive(Default)]
pub(super) struct Subscriptions {
    /// Topics with local subscribers, and on how many hubs.
    wanted: HashMap<Box<str>, u32>,
    /// Topics whose wanted state changed since the link last looked; recorded only while a link follows them
    /// (`linked`: a new connection starts from all that is wanted), so a long outage cannot grow it.
    changed: Vec<Box<str>>,
    linked: bool,
    /// Topics Redis has confirmed subscribed on the present link.
    confirmed: HashSet<Box<str>>,
    /// Channels the link is unsubscribing: their confirmations are expected. Any other unsubscribe is Redis's
    /// doing (a cluster moved the channel's slot to another node), and means the link must start over.
    leaving: HashSet<Vec<u8>>,
}

impl Subscriptions {
    /// A hub's socket subscribed to `topic`: whether it is the process's first (the link has work).
    pub(super) fn open(&mut self, topic: &str) -> bool {
        let count = self.wanted.entry(topic.into()).or_insert(0);
        *count += 1;
        let first = *count == 1;
        if first && self.linked {
            self.changed.push(topic.into());
        }
        first
    }

    /// A hub's socket left `topic`: whether it was the process's last (the link has work).
    pub(super) fn close(&mut self, topic: &str) -> bool {
        let Some(count) = self.wanted.get_mut(topic) else { return false };
        *count -= 1;
        if *count > 0 {
            return false;
        }
        self.wanted.remove(topic);
        if self.linked {
            self.changed.push(topic.into());
        }
        true
    }

    /// A link has connected: nothing is confirmed on it yet, changes are recorded from now on, and everything
    /// wanted now is to be subscribed.
    pub(super) fn link(&mut self) -> Vec<Box<str>> {
        self.linked = true;
        self.changed.clear();
        self.confirmed.clear();
        self.leaving.clear();
        self.wanted.keys().cloned().collect()
    }

    /// The link has ended: nothing is subscribed, and until the next one takes its snapshot, changes need no
    /// record.
    pub(super) fn unlink(&mut self) {
        self.linked = false;
        self.changed.clear();
        self.confirmed.clear();
        self.leaving.clear();
    }

    /// The topics that changed since the last call.
    pub(super) fn take_changes(&mut self) -> Vec<Box<str>> {
        std::mem::take(&mut self.changed)
    }

    /// Of `topics`, those to subscribe (wanted, not confirmed) and those to unsubscribe (confirmed, no longer
    /// wanted), each once however often it changed.
    pub(super) fn diff(&self, topics: Vec<Box<str>>) -> (Vec<Box<str>>, Vec<Box<str>>) {
        // A topic left and joined again (and again) since the last pass comes once per change: once is enough,
        // and a second unsubscribe's confirmation would look like Redis's own.
        let topics: HashSet<Box<str>> = topics.into_iter().collect();
        let (mut add, mut remove) = (Vec::new(), Vec::new());
        for topic in topics {
            let wanted = self.wanted.contains_key(&topic);
            let confirmed = self.confirmed.contains(&topic);
            if wanted && !confirmed {
                add.push(topic);
            } else if !wanted && confirmed {
                remove.push(topic);
            }
        }
        (add, remove)
    }

    /// The wanted topics `pick` chooses (a repaired primary's, say).
    pub(super) fn wanted_where(&self, mut pick: impl FnMut(&str) -> bool) -> Vec<Box<str>> {
        self.wanted.keys().filter(|t| pick(t)).cloned().collect()
    }

    /// The link is about to unsubscribe `channels`: their confirmations are expected.
    pub(super) fn leave(&mut self, channels: impl IntoIterator<Item = Vec<u8>>) {
        self.leaving.extend(channels);
    }

    /// Redis says `channel` is unsubscribed: whether the link asked for it (otherwise Redis did it of its own).
    pub(super) fn left(&mut self, channel: &[u8]) -> bool {
        self.leaving.remove(channel)
    }

    /// Redis confirmed `added` (those `served` says have a node up: a topic whose primary is down waits) and
    /// `removed`.
    pub(super) fn confirm(&mut self, added: Vec<Box<str>>, removed: &[Box<str>], served: impl Fn(&str) -> bool) {
        self.confirmed.extend(added.into_iter().filter(|t| served(t)));
        for topic in removed {
            self.confirmed.remove(topic);
        }
    }

    /// Topics subscribed in Redis now.
    pub(super) fn count(&self) -> usize {
        self.confirmed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(topics: &[&str]) -> Vec<Box<str>> {
        topics.iter().map(|&t| t.into()).collect()
    }

    #[test]
    fn the_first_and_last_subscriber_are_the_changes_and_only_while_linked() {
        let mut s = Subscriptions::default();
        assert!(s.open("a"));
        assert!(!s.open("a"));
        assert!(s.take_changes().is_empty(), "no link: nothing recorded");
        assert_eq!(s.link(), boxed(&["a"]));
        assert!(!s.close("a"));
        assert!(s.close("a"));
        assert!(!s.close("a"), "an extra close changes nothing");
        assert_eq!(s.take_changes(), boxed(&["a"]));
        s.unlink();
        assert!(s.open("b"));
        assert!(s.take_changes().is_empty());
    }

    #[test]
    fn a_topic_left_and_joined_again_is_one_change_against_what_redis_confirmed() {
        let mut s = Subscriptions::default();
        s.open("a");
        let first = s.link();
        let (add, remove) = s.diff(first);
        assert_eq!((add.clone(), remove.clone()), (boxed(&["a"]), vec![]));
        s.confirm(add, &remove, |_| true);
        assert_eq!(s.count(), 1);
        for _ in 0..50 {
            s.close("a");
            s.open("a");
        }
        let changes = s.take_changes();
        let (add, remove) = s.diff(changes);
        assert!(add.is_empty() && remove.is_empty(), "still wanted, still confirmed: nothing to do");
        s.close("a");
        let changes = s.take_changes();
        let (add, remove) = s.diff(changes);
        assert_eq!((add, remove.clone()), (vec![], boxed(&["a"])));
        s.confirm(Vec::new(), &remove, |_| true);
        assert_eq!(s.count(), 0);
    }

    #[test]
    fn a_topic_whose_node_is_down_is_not_confirmed_and_unexpected_unsubscribes_are_told() {
        let mut s = Subscriptions::default();
        s.open("up");
        s.open("down");
        let wanted = s.link();
        let (add, remove) = s.diff(wanted);
        s.confirm(add, &remove, |t| t == "up");
        assert_eq!(s.count(), 1);
        assert_eq!(s.wanted_where(|t| t == "down"), boxed(&["down"]));
        s.leave([b"gust#up".to_vec()]);
        assert!(s.left(b"gust#up"));
        assert!(!s.left(b"gust#up"), "a second confirmation is Redis's own");
        s.unlink();
        assert_eq!(s.count(), 0);
    }
}
