//! One connection's life: served in the protocol it speaks (`protocol::h1` or `protocol::h2`), then, if hyper
//! handed it over for a WebSocket the handler accepted, run as that socket.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::activity::Tracked;
use super::file_out::FileOut;
use crate::protocol::phase::Phase;
use crate::protocol::police::{police, Timeouts};
use crate::protocol::{h1, h2};
use crate::service::conn_service::ConnService;
use crate::service::conn_state::{ConnState, Peer};
use crate::service::shared::Shared;

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
    let Some(protocol) = Box::pin(stream.protocol(&shared)).await else { return };
    // Files leave by `sendfile` on plain HTTP/1.1 (h2 frames its bodies itself).
    let state = Arc::new(ConnState::new(S::SENDS_FILES && protocol == Protocol::Http1));
    if protocol == Protocol::Http2 {
        Box::pin(http2(stream, Peer::new(peer, tls), shared, phase, state)).await;
        return;
    }
    let service = ConnService::new(shared.clone(), state.clone(), Peer::new(peer, tls));
    let conn = h1::connection(Tracked { inner: stream, state: state.clone() }, service, &shared.config);
    tokio::pin!(conn);
    police(conn.as_mut(), &state, phase, timeouts(&shared, Some(shared.config.header_timeout))).await;
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

/// An HTTP/2 connection, in a future of its own (boxed by the caller).
async fn http2<S: AsyncRead + AsyncWrite + FileOut + Unpin + Send + 'static>(
    stream: S,
    peer: Peer,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    state: Arc<ConnState>,
) {
    let service = ConnService::new(shared.clone(), state.clone(), peer);
    let conn = h2::connection(Tracked { inner: stream, state: state.clone() }, service, &shared.config);
    tokio::pin!(conn);
    police(conn.as_mut(), &state, phase, timeouts(&shared, None)).await;
}

fn timeouts(shared: &Shared, header: Option<std::time::Duration>) -> Timeouts {
    Timeouts { header, idle: shared.config.idle_timeout, send: shared.config.send_timeout }
}
