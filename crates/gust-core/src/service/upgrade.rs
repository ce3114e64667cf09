//! A handler's acceptance of a WebSocket handshake, turned into the 101 and a registered socket.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::conn_state::ConnState;
use super::shared::Shared;
use crate::responses::body::Body;
use crate::responses::response::{self, messages};
use crate::service::ws;
use crate::values::sync::Locked;

/// The handler on lane `lane` accepted a WebSocket handshake: the 101, with the answer's `headers` (a chosen
/// subprotocol, cookies); the socket is registered now, so it has its id, and runs in a task of its own once
/// hyper lets go of the connection. Its events go to that lane. An upgrade answer to a request that is not a handshake, or naming a subprotocol
/// the client did not offer, is a bug of the handler's side: 500, logged.
pub(super) fn accept(
    shared: &Shared,
    conn: &Arc<ConnState>,
    (request, lane): (u32, u8),
    parts: &mut http::request::Parts,
    ws: Option<Box<(Arc<ws::WsOptions>, ws::handshake::Handshake)>>,
    headers: &HeaderMap,
) -> Response<Body> {
    use http::header::{
        CONNECTION, CONTENT_LENGTH, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_EXTENSIONS, SEC_WEBSOCKET_PROTOCOL,
        TRANSFER_ENCODING, UPGRADE,
    };
    let internal = |why: &str| {
        eprintln!("gust: {} {}: {why}; sent 500 instead", parts.method, parts.uri.path());
        response::text(StatusCode::INTERNAL_SERVER_ERROR, messages::INTERNAL)
    };
    let Some(ws) = ws else { return internal("an upgrade answer to a request that is not a WebSocket handshake") };
    let (options, handshake) = *ws;
    let protocol = headers.get(SEC_WEBSOCKET_PROTOCOL).and_then(|v| v.to_str().ok());
    if let Some(p) = protocol {
        if !handshake.protocols.iter().any(|offered| offered == p) {
            return internal(&format!("subprotocol {p:?} was not offered by the client"));
        }
    }
    let Some(on_upgrade) = parts.extensions.remove::<hyper::upgrade::OnUpgrade>() else {
        return internal("the connection cannot be upgraded");
    };
    let mut res = ws::handshake::accept(&handshake, protocol);
    // The engine speaks for the extensions: a handler's `Sec-WebSocket-Extensions` would promise frames it does
    // not send.
    for (name, value) in headers {
        let framing = [
            CONNECTION,
            UPGRADE,
            CONTENT_LENGTH,
            TRANSFER_ENCODING,
            SEC_WEBSOCKET_ACCEPT,
            SEC_WEBSOCKET_PROTOCOL,
            SEC_WEBSOCKET_EXTENSIONS,
        ];
        if !framing.contains(name) {
            res.headers_mut().append(name, value.clone());
        }
    }
    let over_h2 = handshake.accept.is_none();
    let deflate = handshake.deflate.map(|(agreement, _)| agreement);
    let socket = shared.websockets.open(options, lane, shared.shard, deflate);
    if over_h2 {
        // Over HTTP/2 the socket is one stream of a connection that goes on serving others: hyper hands the
        // stream over once the 200 is sent, and the socket runs in a task of its own now. It holds the
        // connection busy, as an open request does, so that the connection's idle timeout spares it, and counted,
        // so that a stop, even a forced one, drives the connection until the socket has said 1001 (its bytes
        // leave through the connection) or its closing time has passed.
        let events: Arc<dyn ws::task::WsEvents> = shared.lanes.batcher(lane, usize::from(shared.shard));
        let hub = shared.websockets.clone();
        let guard = conn.socket();
        crate::rt::spawn(async move {
            let io = on_upgrade.await.ok().map(|stream| (TokioIo::new(stream), Bytes::new()));
            crate::rt::spawn(ws::task::run(io, (socket, request), hub, events, guard));
        });
        return res;
    }
    *conn.upgrade.locked() = Some(ws::task::Accepted { on_upgrade, socket, request });
    res
}
