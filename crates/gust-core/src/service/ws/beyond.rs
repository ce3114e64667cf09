//! What carries pub/sub beyond this process (the Redis relay, `service::relay`): told when a topic gains its
//! first subscriber among the hubs of a [`Peers`](super::Peers) group and when it loses its last, and of every
//! publish made here. This room knows nothing of what is on the other side.

use super::outgoing::Payload;

/// The far side of a group's pub/sub. Called from any thread, with the topic table's lock held for
/// `opened`/`closed` (so they arrive in the order the table changed): they must not block.
pub trait Beyond: Send + Sync {
    /// `topic` has its first subscriber on one of the group's hubs.
    fn opened(&self, topic: &str);
    /// `topic` has no subscriber left on one of the group's hubs.
    fn closed(&self, topic: &str);
    /// A message was published to `topic` here; it should reach the subscribers elsewhere.
    fn published(&self, topic: &str, payload: Payload<'_>, compress: Option<bool>);
}
