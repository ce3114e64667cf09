//! A dynamic request's trip to JavaScript and back: its body received (all of a small one) or left to stream
//! as the handler reads it, its slot taken and its record pushed to its lane's batcher, the answer awaited, and
//! what the answer asks for done here (a 101 and a socket, a file served with the request's headers, a stream
//! that sends no body).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::header::EXPECT;
use http::{HeaderValue, Request, Response, StatusCode, Version};
use hyper::body::Incoming;

use super::config::Config;
use super::conn_state::{ConnState, Peer};
use super::request_body::{self, Received};
use super::shared::Shared;
use super::upgrade;
use super::ws;
use crate::bodies::compress::decode::RequestBody;
use crate::bodies::compress::Encoding;
use crate::bodies::upload::{self, UploadGuard};
use crate::responses::body::Body;
use crate::responses::compressed;
use crate::responses::files;
use crate::responses::rate_limit::LimitFields;
use crate::responses::response::{self, messages};
use crate::wire::answer::{FileTarget, Reply};
use crate::wire::event::SIGNAL_ONLY;
use crate::wire::request::RequestFields;
use crate::wire::Kind;

/// Where a dynamic request goes, as routing decided.
pub(crate) struct Route {
    pub(crate) handler: u32,
    pub(crate) params: Vec<String>,
    pub(crate) path: Option<String>,
    /// The largest body the route accepts.
    pub(crate) limit: u64,
    /// A WebSocket route's options and the request's handshake (boxed: most routes have none).
    pub(crate) ws: Option<Box<(Arc<ws::WsOptions>, ws::handshake::Handshake)>>,
    /// The rate-limit fields its answer carries, whatever answers (boxed: most requests have none).
    pub(crate) fields: Option<Box<LimitFields>>,
}

/// Receives the body's start (all of a small one), hands the request to the batcher and waits for the handler's
/// answer; the rest of a large body streams meanwhile, as the handler reads it.
///
/// The request takes its `max_pending` slot, and its handler timeout starts, only at the hand-over: a slow
/// small upload holds body budget, never a slot, and never eats its handler's time. The slot is taken and the
/// request pushed in the same poll, so a request whose waiter is gone is never handed over.
///
/// Its future is allocated and moved once per dynamic request, so what is rare stays out of it: the request is
/// taken apart before the future starts (else it is held twice, as the request and as its parts), and the
/// waits that are not every request's (a body to receive, a file to serve, a body to compress) are boxed
/// where they happen. That took it from 1,960 bytes to 944.
pub(crate) fn dynamic(
    shared: Arc<Shared>,
    conn: Arc<ConnState>,
    peer: Peer,
    mut route: Route,
    req: Request<Incoming>,
) -> impl Future<Output = Response<Body>> + Send {
    // Added to whatever answers, the handler or the engine (413, 415, 503); inline, not a boxed future around it.
    let fields = route.fields.take();
    let answer = answered(shared, conn, peer, route, req);
    async move {
        let mut res = answer.await;
        if let Some(fields) = fields {
            fields.add_to(res.headers_mut());
        }
        res
    }
}

/// [`dynamic`]'s answer, before any rate-limit fields.
fn answered(
    shared: Arc<Shared>,
    conn: Arc<ConnState>,
    peer: Peer,
    route: Route,
    req: Request<Incoming>,
) -> impl Future<Output = Response<Body>> + Send {
    let (mut parts, body) = req.into_parts();
    // A block rather than an `async fn`: an async fn's arguments are copied into locals of its own, a block's
    // captures are used where they are.
    async move {
        let body = match request_coding(&shared.config, &mut parts.headers, &body) {
            Ok(None) => RequestBody::Plain(body),
            Ok(Some(coding)) => RequestBody::decoded(body, coding),
            Err(Unsupported) => {
                let mut res = response::text(StatusCode::UNSUPPORTED_MEDIA_TYPE, messages::UNSUPPORTED_CODING);
                res.headers_mut().insert(http::header::ACCEPT_ENCODING, HeaderValue::from_static("gzip, br, zstd"));
                return res;
            }
        };
        // Looked up only for a request with a body: a header lookup is most of what this costs a bodiless one.
        let expect_continue = !hyper::body::Body::is_end_stream(&body)
            && parts.version == Version::HTTP_11
            && parts.headers.get(EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        let received = if hyper::body::Body::is_end_stream(&body) {
            Received::nothing(&shared.bodies)
        } else {
            match Box::pin(request_body::receive(body, &shared.config, &shared.bodies, route.limit, expect_continue))
                .await
            {
                Ok(received) => received,
                Err(refused) => return refused,
            }
        };
        let pick = |n: &[u32], turn: &mut u32| shared.lanes.pick(n, turn);
        let Some((id, lane, answer)) = shared.completions.register(shared.config.max_pending, pick) else {
            return response::unavailable(messages::QUEUE_FULL);
        };
        // The lane (JavaScript thread) the request goes to.
        let batcher = shared.lanes.batcher(lane, usize::from(shared.shard));
        let mut waiting = Waiting { shared: &shared, id, armed: true };
        let (first, held, rest) = match received {
            Received::Whole(bytes, held) => (bytes, Some(held), None),
            Received::Streamed(bytes, rest) => (bytes, None, Some(rest)),
        };
        // Opened before the hand-over, so the handler's first read finds it.
        let upload = rest.map(|rest| (shared.uploads.open(id), rest));
        let url = parts.uri.path_and_query().map_or_else(|| parts.uri.path(), |pq| pq.as_str());
        batcher.push(&RequestFields {
            id,
            handler: route.handler,
            method: &parts.method,
            http_10: parts.version == Version::HTTP_10,
            tls: peer.tls.as_deref(),
            http_2: parts.version == Version::HTTP_2,
            url,
            path: route.path.as_deref().unwrap_or(""),
            params: &route.params,
            headers: &parts.headers,
            peer_ip: &peer.ip,
            peer_port: peer.port,
            body: &first,
            body_stream: upload.is_some(),
        });
        // The body now lives in the batch.
        let inline = first.len() as u64;
        drop(held);
        drop(first);
        let upload = upload.map(|(slot, rest)| {
            let pump = upload::Pump {
                id,
                slot: slot.clone(),
                uploads: shared.uploads.clone(),
                events: batcher.clone(),
                received: inline,
                limit: route.limit,
                timeout: shared.config.body_timeout,
            };
            crate::rt::spawn(pump.run(rest));
            UploadGuard(slot)
        });

        // The handler timeout is the completion table's sweep, which answers 503 through this same channel. A
        // client that stops sending meanwhile is told to the handler (its `c.req.signal` aborts); the answer is still
        // awaited and sent, should a half-closing client be waiting for it. Cost: one relaxed load per poll.
        let mut answer = answer;
        let mut told = false;
        let answer = std::future::poll_fn(|cx| {
            if !told && conn.peer_done() {
                told = true;
                // The lane that has it now (one whose thread exited before taking it hands it to another).
                if let Some(lane) = shared.completions.lane(id) {
                    shared.lanes.batcher(lane, usize::from(shared.shard)).send(Kind::Cancel, SIGNAL_ONLY, id);
                }
            }
            Pin::new(&mut answer).poll(cx)
        })
        .await;
        waiting.armed = false;
        let reply = answer.unwrap_or_else(|_| response::unavailable(messages::SHUTTING_DOWN).into());
        let mut res = match reply {
            Reply::Send(res) => res,
            Reply::File { headers, target } => Box::pin(file_answer(&shared, &parts, target, &headers)).await,
            Reply::Upgrade { headers, lane } => {
                return upgrade::accept(&shared, &conn, (id, lane), &mut parts, route.ws, &headers);
            }
        };
        // Over HTTP/2 a 2xx to a WebSocket's extended CONNECT opens the socket (RFC 8441 §5): one that is not an
        // upgrade (a refusal sent as `new Response('no')`) would tell the client it is open, with nobody behind
        // it. A bug of the handler's side, as an upgrade answer to a request that is not a handshake: 500, logged.
        if parts.method == http::Method::CONNECT && res.status().is_success() {
            eprintln!(
                "gust: {} {}: a WebSocket handshake over HTTP/2 answered {} without upgrading; refuse one with a 4xx (sent 500 instead)",
                parts.method,
                parts.uri.path(),
                res.status().as_u16()
            );
            res = response::text(StatusCode::INTERNAL_SERVER_ERROR, messages::INTERNAL);
        }
        // hyper sends no body for these: the stream's producer is told to stop, without the request counting as failed.
        let status = res.status();
        if let Body::Stream(stream) = res.body_mut() {
            if parts.method == http::Method::HEAD
                || status == StatusCode::NO_CONTENT
                || status == StatusCode::NOT_MODIFIED
            {
                stream.set_bodiless();
            }
            // The request's body stays readable while the response streams (an echo, a transform).
            if let Some(upload) = upload {
                stream.hold(upload);
            }
            // The connection is busy until the stream ends, however long it is quiet: its idle timeout does not
            // apply (the send stall timeout does, to a client that stops reading).
            stream.keep_busy(Box::new(conn.busy()));
        }
        // Otherwise the guard drops here: the response is whole, so what the handler has not read of the body is
        // never wanted; hyper discards it or closes the connection.
        let Some(c) = &shared.config.compression else { return res };
        match compressed::plan(c, &parts.method, &parts.headers, res) {
            compressed::Plan::Done(res) => res,
            compressed::Plan::Code(res, encoding, forced) => {
                Box::pin(compressed::coded(c, res, encoding, forced)).await
            }
        }
    }
}

/// A request body's coding the server cannot decode.
struct Unsupported;

/// The coding a request body is decoded from, when the server decodes them: `None` for a body sent as it is
/// (or no body); 415 with the codings it could decode, in `Accept-Encoding` (RFC 9110 §15.5.16), for a coding
/// it cannot or for several stacked. A decoded body's `Content-Encoding` and `Content-Length` are removed, so the
/// handler sees the body it reads.
fn request_coding(
    config: &Config,
    headers: &mut http::HeaderMap,
    body: &Incoming,
) -> Result<Option<Encoding>, Unsupported> {
    use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
    if !config.decode_request_bodies || !headers.contains_key(CONTENT_ENCODING) {
        return Ok(None);
    }
    let mut codings = Vec::new();
    for value in headers.get_all(CONTENT_ENCODING) {
        for token in value.to_str().unwrap_or("\0").split(',') {
            let token = token.trim();
            if !token.is_empty() && !token.eq_ignore_ascii_case("identity") {
                codings.push(Encoding::parse(token));
            }
        }
    }
    let coding = match codings.as_slice() {
        [] => None,
        [Some(coding)] => Some(*coding),
        _ => return Err(Unsupported),
    };
    headers.remove(CONTENT_ENCODING);
    if coding.is_some() && !hyper::body::Body::is_end_stream(body) {
        headers.remove(CONTENT_LENGTH);
        return Ok(coding);
    }
    Ok(None)
}

/// A handler's `FILE` answer, served with the request's conditional and range headers; the answer's own
/// `headers` (CORS, cache policy a middleware set) are added, replacing the file's of the same name, except those
/// that frame the body. A missing file, or a mount the route table no longer holds, is 404, with those headers
/// too.
async fn file_answer(
    shared: &Shared,
    parts: &http::request::Parts,
    target: FileTarget,
    headers: &http::HeaderMap,
) -> Response<Body> {
    let served = match target {
        FileTarget::Mount { index, tail } => match shared.routes.load().mount(index) {
            Some(dir) => {
                let uri = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
                let compression = shared.config.compression.as_ref();
                dir.serve_coded(&parts.method, &parts.headers, &tail, uri, compression).await
            }
            None => None,
        },
        FileTarget::Path(path) => files::serve_file(path, &parts.method, &parts.headers).await,
    };
    let res = served.unwrap_or_else(|| response::text(StatusCode::NOT_FOUND, messages::NOT_FOUND));
    files::with_headers(res, headers)
}

/// Removes a request from the waiting table if it ends unanswered (client gone, server closing), and tells its
/// handler, whose `c.req.signal` then aborts.
struct Waiting<'a> {
    shared: &'a Shared,
    id: u32,
    armed: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.armed {
            if let Some(lane) = self.shared.completions.cancel(self.id) {
                self.shared.lanes.batcher(lane, usize::from(self.shared.shard)).send(Kind::Cancel, 0, self.id);
            }
        }
    }
}
