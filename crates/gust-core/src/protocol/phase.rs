//! What the I/O thread tells its connections to do: serve, drain (finish what is in flight, take nothing new), or
//! close now. Each protocol obeys in its own way (HTTP/1.1 closes idle keep-alive connections, HTTP/2 sends
//! GOAWAY).

use tokio::sync::watch;

/// What the I/O thread is told to do with its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Serving,
    /// Stop accepting; finish in-flight requests; close idle connections; WebSockets close with 1001 and wait
    /// for the client's reply.
    Draining,
    /// Close everything now.
    Closing,
}

/// The next phase the server enters (`None` once it is gone), handing the receiver back for the one after.
pub(crate) async fn next_phase(mut rx: watch::Receiver<Phase>) -> (watch::Receiver<Phase>, Option<Phase>) {
    let next = match rx.changed().await {
        Ok(()) => Some(*rx.borrow_and_update()),
        Err(_) => None,
    };
    (rx, next)
}

impl Phase {
    /// The phase a stop asks for: a graceful one drains, a forced one closes.
    pub(crate) fn of_stop(force: bool) -> Self {
        if force {
            Phase::Closing
        } else {
            Phase::Draining
        }
    }
}

/// Moves `phase` on to `next` when that is further (a forced stop may follow a graceful one, never the reverse),
/// telling its receivers; whether it moved. Every engine's stop, a group's and a failed shard's go through here.
pub(crate) fn escalate(phase: &watch::Sender<Phase>, next: Phase) -> bool {
    phase.send_if_modified(|p| {
        let further = next > *p;
        if further {
            *p = next;
        }
        further
    })
}
