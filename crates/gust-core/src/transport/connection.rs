//! One connection: hyper's HTTP/1.1 state machine, policed for header-read and idle timeouts, and closed
//! gracefully or at once when the server stops.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::activity::Tracked;
use super::lifecycle::Phase;
use crate::service::conn_service::ConnService;
use crate::service::conn_state::{ConnState, Peer, IDLE, READING_HEAD};
use crate::service::shared::Shared;
use crate::values::clock;

/// Held by every connection and WebSocket task: the server has stopped once every clone is gone (see
/// `listener::serve`).
pub(super) type Alive = tokio::sync::mpsc::Sender<()>;

/// Serves one connection (`secure`: over TLS) until it closes, is timed out, or the server stops.
///
/// Hot path: every wake of this task for connection progress costs one poll of hyper's connection, an atomic
/// load (has the phase changed?) and a timer waker check. The clock is read and the timer re-armed only when the
/// timer fires, at most once per `min(idle, header)` timeout, never per request.
pub(super) async fn connection<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    stream: S,
    peer: SocketAddr,
    secure: bool,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    alive: Alive,
) {
    let state = Arc::new(ConnState::new());
    http(stream, Peer::new(peer, secure), shared.clone(), phase.clone(), state.clone()).await;
    // hyper has let go of the connection: if it was for a WebSocket the handler accepted, it becomes one in a
    // task of its own, so that it does not keep this task's room for hyper's state machine (1.2 KiB) for its
    // life. `alive` goes with it: a stop waits for it as for any connection.
    let accepted = state.upgrade.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(accepted) = accepted {
        // The lane that accepted the socket hears its events.
        let events: Arc<dyn crate::service::ws::task::WsEvents> =
            shared.lanes.batcher(accepted.socket.lane, usize::from(shared.shard));
        let hub = shared.websockets.clone();
        tokio::spawn(async move {
            let crate::service::ws::task::Accepted { on_upgrade, socket, request } = accepted;
            // hyper hands back the connection it was given: unwrapped, the socket reads and writes the stream
            // itself, without hyper's boxed wrapper or the HTTP policing that no longer applies.
            let io = match on_upgrade.await {
                Ok(upgraded) => match upgraded.downcast::<TokioIo<Tracked<S>>>() {
                    Ok(parts) => Some((parts.io.into_inner().into_inner(), parts.read_buf)),
                    Err(_) => None,
                },
                Err(_) => None,
            };
            crate::service::ws::task::run(io, socket, request, hub, events).await;
            drop(alive);
        });
    }
}

/// The HTTP part of a connection's life: until it closes, is timed out, the server stops, or hyper hands it
/// over for an upgrade.
async fn http<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    stream: S,
    peer: Peer,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    state: Arc<ConnState>,
) {
    let header_timeout = shared.config.header_timeout;
    let idle_timeout = shared.config.idle_timeout;
    let io = TokioIo::new(Tracked { inner: stream, state: state.clone() });
    let service = ConnService::new(shared.clone(), state.clone(), peer);
    let mut builder = http1::Builder::new();
    // hyper's own header timer restarts while a keep-alive connection waits for its next request, which would
    // make it an idle timeout too; both are policed below instead, each with its own setting.
    builder.max_buf_size(shared.config.max_header_size).header_read_timeout(None).keep_alive(true);
    // A client may send its request and shut down its write side (`nc -N`, some proxies) while it waits for the
    // answer: that read EOF must not drop the request. A client that is really gone is noticed when the answer
    // is written, and the handler timeout bounds the wait.
    builder.half_close(true);
    let conn = builder.serve_connection(io, service).with_upgrades();
    tokio::pin!(conn);

    let mut draining = false;
    if *phase.borrow() != Phase::Serving {
        conn.as_mut().graceful_shutdown();
        draining = true;
    }
    // Activity only ever pushes deadlines later, so the timer need not follow it: when it fires, the deadline is
    // recomputed from the connection's state. It never sleeps longer than the shorter timeout, so a switch from
    // idle to reading a head (which nothing signals) is still caught on time.
    let period = idle_timeout.min(header_timeout);
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
                            conn.as_mut().graceful_shutdown();
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
                let (activity, since) = state.get();
                let deadline = match activity {
                    IDLE => since.saturating_add(ms(idle_timeout)),
                    READING_HEAD => since.saturating_add(ms(header_timeout)),
                    _ => now + ms(period),
                };
                if now >= deadline {
                    match activity {
                        // Closing an idle keep-alive connection is what a graceful shutdown does to it at once.
                        IDLE if !draining => {
                            conn.as_mut().graceful_shutdown();
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

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What woke a connection's task with something to do.
enum Event {
    Closed,
    Phase((watch::Receiver<Phase>, Option<Phase>)),
    Tick,
}

/// The next phase the server enters (`None` once it is gone), handing the receiver back for the one after.
async fn next_phase(mut rx: watch::Receiver<Phase>) -> (watch::Receiver<Phase>, Option<Phase>) {
    let next = match rx.changed().await {
        Ok(()) => Some(*rx.borrow_and_update()),
        Err(_) => None,
    };
    (rx, next)
}
