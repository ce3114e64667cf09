//! The timers and the server's phase around one connection, whatever its protocol: the header timeout (HTTP/1.1
//! only: a client still sending a request head), the idle timeout (no request in flight and no response bytes
//! waiting on the client), the send timeout (a client that reads nothing while a response waits for room in its
//! socket, or, on HTTP/2, grants no flow-control window while response bytes wait for it), a graceful shutdown
//! when the server drains, and the end when it closes.

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
    let Timeouts { header: header_timeout, idle: idle_timeout, send: send_timeout, park } = timeouts;
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
    let period = park.map_or(period, |p| period.min(p));
    let sleep = crate::rt::sleep(period);
    tokio::pin!(sleep);
    let mut stall = Stall::default();
    // Polling `changed()` takes the phase channel's waiter-list lock every time. It is polled once to register
    // its waker; after that, a clone of the receiver tells with one atomic load whether polling again is worth it.
    let mut watcher = phase.clone();
    let mut phase_change = Box::pin(next_phase(phase));
    let mut registered = false;
    // A forced stop waiting for the WebSockets on this connection's streams: until when.
    let mut closing_until: Option<u64> = None;
    loop {
        let event = std::future::poll_fn(|cx| {
            if conn.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Closed);
            }
            if closing_until.is_none() && (!registered || !matches!(watcher.has_changed(), Ok(false))) {
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
                    Some(Phase::Closing) | None => {
                        // WebSockets on this connection's streams (HTTP/2) say 1001 first, as those on connections
                        // of their own do: the connection's bytes are theirs too, so it is driven until they have
                        // ended, at most [`SOCKETS_CLOSE`], then dropped.
                        if state.sockets() == 0 {
                            return;
                        }
                        if !draining {
                            conn.as_mut().graceful();
                            draining = true;
                        }
                        // The phase is final: it is not watched any more (a dropped sender would wake at once).
                        closing_until = Some(clock::now_ms() + SOCKETS_CLOSE);
                        sleep.as_mut().reset(Instant::now() + CLOSING_TICK);
                        continue;
                    }
                }
                watcher.borrow_and_update();
                phase_change = Box::pin(next_phase(rx));
                registered = false;
            }
            Event::Tick => {
                // Timeouts are measured on the coarse clock the connection is stamped with (see `clock`).
                let now = clock::now_ms();
                if let Some(until) = closing_until {
                    if state.sockets() == 0 || now >= until {
                        return;
                    }
                    sleep.as_mut().reset(Instant::now() + CLOSING_TICK);
                    continue;
                }
                // A response held up by its client: a socket left full (it reads nothing), or on HTTP/2 bytes
                // owed that flow control lets none of out (it grants no window, so its socket never fills). The
                // send timeout runs from the earlier; past it nothing more can be done (a graceful close would
                // wait on the same bytes), and before it the connection is not idle, even once its handler is done.
                let held = state.blocked_since().into_iter().chain(stall.since(state.owed(), now)).min();
                let held_until = held.map(|since| since.saturating_add(ms(send_timeout)));
                if held_until.is_some_and(|until| now >= until) {
                    return;
                }
                let (activity, since) = state.get();
                // Idle long enough to park: hyper's next poll sees the end of the stream and lets go of the
                // connection (this future then returns, and the caller waits for the next request without it).
                let park_at = park.filter(|_| activity == IDLE && held.is_none() && !draining && !state.parking());
                let park_at = park_at.map(|p| since.saturating_add(ms(p)));
                if park_at.is_some_and(|at| now >= at) {
                    state.park();
                }
                let deadline = match activity {
                    _ if held.is_some() => now + ms(period),
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
                let wake = held_until.map_or(deadline, |until| deadline.min(until));
                let wait = Duration::from_millis(wake.saturating_sub(now)).min(period);
                sleep.as_mut().reset(Instant::now() + wait);
            }
        }
    }
}

/// How long a forced stop drives an HTTP/2 connection for the WebSockets on its streams: the sockets' own
/// forced-close time (500 ms), and a little for their last bytes.
const SOCKETS_CLOSE: u64 = 600;

/// How often a connection waiting for its sockets at a forced stop looks whether they have ended.
const CLOSING_TICK: Duration = Duration::from_millis(20);

/// A connection's timeouts, from the server's configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) header: Option<Duration>,
    pub(crate) idle: Duration,
    pub(crate) send: Duration,
    /// How long an idle connection keeps hyper's state before it is parked without it (HTTP/1.1); `None`:
    /// never parked (HTTP/2, whose state holds the client's settings and streams).
    pub(crate) park: Option<Duration>,
}

/// Since when an HTTP/2 connection has owed its client bytes and let none of them out, as its ticks saw it: from
/// the first tick that found bytes owed and the settled count where the previous tick left it, so never earlier
/// than the wait began (and at most a tick later). Two relaxed loads per tick.
#[derive(Default)]
struct Stall {
    settled: u64,
    since: Option<u64>,
}

impl Stall {
    fn since(&mut self, (owed, settled): (u64, u64), now: u64) -> Option<u64> {
        if owed == 0 {
            self.since = None;
        } else if settled != self.settled || self.since.is_none() {
            self.since = Some(now);
        }
        self.settled = settled;
        self.since
    }
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

#[cfg(test)]
mod tests {
    use super::Stall;

    #[test]
    fn a_stall_runs_from_the_first_tick_that_saw_bytes_owed_and_none_leave() {
        let mut stall = Stall::default();
        assert_eq!(stall.since((0, 0), 10), None, "nothing owed: an SSE stream between events");
        assert_eq!(stall.since((100, 0), 20), Some(20));
        assert_eq!(stall.since((100, 0), 30), Some(20), "nothing left since");
        assert_eq!(stall.since((60, 40), 40), Some(40), "some left: the wait starts again");
        assert_eq!(stall.since((0, 100), 50), None);
    }
}
