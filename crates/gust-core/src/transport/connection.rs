//! One connection's life: served in the protocol it speaks (`protocol::h1` or `protocol::h2`), then, if hyper
//! handed it over for a WebSocket the handler accepted, run as that socket. An HTTP/1.1 connection idle for half
//! a second is parked: hyper lets go of it (its state machine and timers are freed) and the task waits for the
//! next request's first byte, the idle timeout or the server's drain; that byte wakes a fresh hyper connection.
//! A parked connection costs its task (about 0.5 KiB), tokio's registration and its shared state.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

use super::activity::Tracked;
use super::file_out::FileOut;
use crate::protocol::phase::Phase;
use crate::protocol::police::{police, Timeouts};
use crate::protocol::{h1, h2};
use crate::service::conn_service::ConnService;
use crate::service::conn_state::{ConnState, Peer};
use crate::service::shared::Shared;
use crate::values::sync::Locked;

/// Held by every connection and WebSocket task: the server has stopped once every clone is gone (see
/// `listener::serve`).
pub(super) type Alive = tokio::sync::mpsc::Sender<()>;

/// What a connection speaks, as the transport found out (ALPN, or the client preface).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    Http1,
    Http2,
}

/// A stream that can tell which protocol its client speaks: ALPN's choice over TLS, the client preface on a
/// plain socket (with `http2` on), HTTP/1.1 in memory. `None`: the client left or said nothing in time.
pub(super) trait Speaks {
    fn protocol(&self, shared: &Shared) -> impl Future<Output = Option<Protocol>> + Send;
}

/// Serves one connection (`secure`: over TLS) until it closes, is timed out, or the server stops: in the
/// protocol its client speaks, then, for an upgrade, as a WebSocket.
pub(super) async fn connection<S: AsyncRead + AsyncWrite + Speaks + FileOut + Unpin + Send + Sync + 'static>(
    stream: S,
    peer: SocketAddr,
    tls: Option<Arc<[u8]>>,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    alive: Alive,
) {
    // Boxed, as HTTP/2 is below: what only some connections need must not size every connection's task (an
    // idle keep-alive's is most of what it costs).
    // (Each boxed future is built in a statement of its own: a temporary in the statement that awaits would keep
    // its room in this task's future, moved out or not.)
    let telling = Box::pin(stream.protocol(&shared));
    let Some(protocol) = telling.await else { return };
    // Files leave by `sendfile` on plain HTTP/1.1 (h2 frames its bodies itself).
    let state = Arc::new(ConnState::new(S::SENDS_FILES && protocol == Protocol::Http1));
    if protocol == Protocol::Http2 {
        let serving = Box::pin(http2(stream, Peer::new(peer, tls), shared, phase, state));
        serving.await;
        return;
    }
    let mut service = ConnService::new(shared.clone(), state.clone(), Peer::new(peer, tls));
    let mut io = Tracked::new(stream, state.clone());
    // Boxed: hyper's state machine and its timers are most of what an active connection costs, and a parked one
    // gives them back while it waits. One allocation per connection and per wake from parking, none per request.
    loop {
        let serving = Box::pin(http1(io, service, &shared, &state, phase.clone()));
        let Some(http1::Parts { io: taken, read_buf, service: kept, .. }) = serving.await else { break };
        (io, service) = (taken.into_inner(), kept);
        // hyper is idle only once it has used every byte it read; should it have kept some, they go back first.
        io.unread = if read_buf.is_empty() {
            match parked(&mut io.inner, &state, &shared, phase.clone()).await {
                Some(first) => Some(Bytes::copy_from_slice(&[first])),
                None => {
                    // Closed as hyper closes an idle connection: shut down (over TLS, a close_notify), bounded.
                    let _ = crate::rt::timeout(SHUTDOWN_WAIT, io.inner.shutdown()).await;
                    return;
                }
            }
        } else {
            Some(read_buf)
        };
        state.unpark();
    }
    // hyper has let go of the connection: if it was for a WebSocket the handler accepted, it becomes one in a
    // task of its own, sized for a socket rather than for this task's states. `alive` goes with it: a stop waits
    // for it as for any connection.
    let accepted = state.upgrade.locked().take();
    if let Some(accepted) = accepted {
        // The lane that accepted the socket hears its events.
        let events: Arc<dyn crate::service::ws::task::WsEvents> =
            shared.lanes.batcher(accepted.socket.lane, usize::from(shared.shard));
        let hub = shared.websockets.clone();
        crate::rt::spawn(async move {
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
            // The socket's life in a task of its own, sized for its future alone: this one, which also kept
            // room for the upgrade's wait and the values moved into `run`, ends here (a cell of 640 bytes per
            // idle socket became one of 512).
            crate::rt::spawn(crate::service::ws::task::run(io, (socket, request), hub, events, alive));
        });
    }
}

/// An HTTP/1.1 connection served by hyper until it closes, is upgraded or times out (`None`), or, idle for
/// [`PARK_AFTER`], is parked: hyper lets go of it and its parts come back for the task to wait with.
async fn http1<S: AsyncRead + AsyncWrite + FileOut + Unpin + Send + 'static>(
    io: Tracked<S>,
    service: ConnService,
    shared: &Shared,
    state: &Arc<ConnState>,
    phase: watch::Receiver<Phase>,
) -> Option<http1::Parts<TokioIo<Tracked<S>>, ConnService>> {
    let mut conn = h1::connection(io, service, &shared.config);
    let timeouts = Timeouts { park: Some(PARK_AFTER), ..timeouts(shared, Some(shared.config.header_timeout)) };
    police(Pin::new(&mut conn), state, phase, timeouts).await;
    if state.parking() {
        conn.into_parts()
    } else {
        None
    }
}

/// How long an HTTP/1.1 connection stays idle before it waits for its next request without hyper's state: long
/// enough that a client between two requests of a burst finds it as it left it, short enough that idle
/// keep-alive connections (most of a busy server's, and what a slow-client attack holds open) cost little.
const PARK_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// How long closing a parked connection waits for its socket to take the shutdown (a TLS close_notify).
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A parked connection waiting for its next request: its first byte (read here, handed to hyper first), or
/// `None` when the connection is over: the client closed it, the idle timeout passed, the server drains.
async fn parked<S: AsyncRead + Unpin>(
    io: &mut S,
    state: &ConnState,
    shared: &Shared,
    mut phase: watch::Receiver<Phase>,
) -> Option<u8> {
    use tokio::io::AsyncReadExt;
    if *phase.borrow_and_update() != Phase::Serving {
        return None;
    }
    let (_, idle_since) = state.get();
    let left =
        (idle_since + shared.config.idle_timeout.as_millis() as u64).saturating_sub(crate::values::clock::now_ms());
    let mut byte = [0u8; 1];
    tokio::select! {
        read = io.read(&mut byte) => match read {
            Ok(1) => Some(byte[0]),
            _ => None,
        },
        () = crate::rt::sleep(std::time::Duration::from_millis(left)) => None,
        _ = phase.changed() => None,
    }
}

/// An HTTP/2 connection, in a future of its own (boxed by the caller).
async fn http2<S: AsyncRead + AsyncWrite + FileOut + Unpin + Send + 'static>(
    stream: S,
    peer: Peer,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    state: Arc<ConnState>,
) {
    let service = ConnService::new(shared.clone(), state.clone(), peer);
    let conn = h2::connection(Tracked::new(stream, state.clone()), service, &shared.config);
    tokio::pin!(conn);
    police(conn.as_mut(), &state, phase, timeouts(&shared, None)).await;
}

fn timeouts(shared: &Shared, header: Option<std::time::Duration>) -> Timeouts {
    Timeouts { header, idle: shared.config.idle_timeout, send: shared.config.send_timeout, park: None }
}
