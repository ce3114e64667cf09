//! The timers and the server's phase around one connection, whatever its protocol: the header timeout (HTTP/1.1
//! only: a client still sending a request head), the idle timeout (no request in flight), the send timeout (a
//! client that reads nothing while a response waits for room in its socket), a graceful shutdown when the server
//! drains, and the end when it closes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::phase::{next_phase, Phase};
use crate::service::conn_state::{ConnState, IDLE, READING_HEAD};
use crate::values::clock;

/// A connection hyper serves, which can be asked to finish what is in flight and take nothing new.
pub(crate) trait Graceful: Future {
    /// HTTP/1.1 closes once the request in flight is answered; HTTP/2 sends GOAWAY and finishes its streams.
    fn graceful(self: Pin<&mut Self>);
}

/// Serves `conn` until it closes, is timed out, or the server closes. `timeouts.header`: `None` for a protocol
/// whose connections have no request head to time between requests (HTTP/2).
///
/// Hot path: every wake of this task for connection progress costs one poll of hyper's connection, an atomic
/// load (has the phase changed?) and a timer waker check. The clock is read and the timer re-armed only when the
/// timer fires, at most once per `min(idle, header)` timeout, never per request.
///
/// `conn` comes pinned by the caller, whose future holds it: taken by value, it would be held twice in the
/// connection's task (the argument and the pinned copy), and hyper's HTTP/1.1 state machine is most of what an
/// idle connection costs.
pub(crate) async fn police<C: Graceful>(
    mut conn: Pin<&mut C>,
    state: &Arc<ConnState>,
    phase: watch::Receiver<Phase>,
    timeouts: Timeouts,
) {
    let Timeouts { header: header_timeout, idle: idle_timeout, send: send_timeout } = timeouts;
    let mut draining = false;
    if *phase.borrow() != Phase::Serving {
        conn.as_mut().graceful();
        draining = true;
    }
    // Activity only ever pushes deadlines later, so the timer need not follow it: when it fires, the deadline is
    // recomputed from the connection's state. It never sleeps longer than the shorter timeout, so a switch from
    // idle to reading a head (which nothing signals) is still caught on time.
    // HTTP/2 has no head to time (a frame between requests is a ping or a window update): only idleness counts.
    let period = header_timeout.map_or(idle_timeout, |h| idle_timeout.min(h)).min(send_timeout);
    let sleep = tokio::time::sleep(period);
    tokio::pin!(sleep);
    // Polling `changed()` takes the phase channel's waiter-list lock every time. It is polled once to register
    // its waker; after that, a clone of the receiver tells with one atomic load whether polling again is worth it.
    let mut watcher = phase.clone();
    let mut phase_change = Box::pin(next_phase(phase));
    let mut registered = false;
    loop {
        let event = std::future::poll_fn(|cx| {
            if conn.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Closed);
            }
            if !registered || !matches!(watcher.has_changed(), Ok(false)) {
                registered = true;
                if let Poll::Ready(next) = phase_change.as_mut().poll(cx) {
                    return Poll::Ready(Event::Phase(next));
                }
            }
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Tick);
            }
            Poll::Pending
        })
        .await;
        match event {
            Event::Closed => return,
            Event::Phase((rx, next)) => {
                match next {
                    Some(Phase::Serving) => {}
                    Some(Phase::Draining) => {
                        if !draining {
                            conn.as_mut().graceful();
                            draining = true;
                        }
                    }
                    Some(Phase::Closing) | None => return,
                }
                watcher.borrow_and_update();
                phase_change = Box::pin(next_phase(rx));
                registered = false;
            }
            Event::Tick => {
                // Timeouts are measured on the coarse clock the connection is stamped with (see `clock`).
                let now = clock::now_ms();
                // A client that has read nothing for the send timeout while a response waits for its socket:
                // nothing more can be done for it (a graceful close would wait on the same write).
                if state.blocked_since().is_some_and(|since| now >= since.saturating_add(ms(send_timeout))) {
                    return;
                }
                let (activity, since) = state.get();
                let deadline = match activity {
                    IDLE => since.saturating_add(ms(idle_timeout)),
                    READING_HEAD => match header_timeout {
                        Some(header) => since.saturating_add(ms(header)),
                        None => since.saturating_add(ms(idle_timeout)),
                    },
                    _ => now + ms(period),
                };
                if now >= deadline {
                    match activity {
                        // Closing an idle keep-alive connection is what a graceful shutdown does to it at once.
                        IDLE if !draining => {
                            conn.as_mut().graceful();
                            draining = true;
                        }
                        READING_HEAD if header_timeout.is_none() && !draining => {
                            conn.as_mut().graceful();
                            draining = true;
                        }
                        IDLE | READING_HEAD => return,
                        _ => {}
                    }
                }
                let wait = Duration::from_millis(deadline.saturating_sub(now)).min(period);
                sleep.as_mut().reset((Instant::now() + wait).into());
            }
        }
    }
}

/// A connection's timeouts, from the server's configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) header: Option<Duration>,
    pub(crate) idle: Duration,
    pub(crate) send: Duration,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What woke a connection's task with something to do.
enum Event {
    Closed,
    Phase((watch::Receiver<Phase>, Option<Phase>)),
    Tick,
}
