//! One request: everything decidable in Rust is decided here (rules, routing, 404/405/OPTIONS, turbo answers,
//! files), and only dynamic routes cross into JavaScript ([`super::hand_over`]).

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{ALLOW, HOST};
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use hyper::body::{Body as _, Incoming};

use super::conn_state::{BusyGuard, ConnState, Peer};
use super::hand_over::{dynamic, Route};
use super::request_rules::{self, Refusal};
use super::shared::Shared;
use super::ws;
use crate::bodies::files::dir::StaticDir;
use crate::responses::body::Body;
use crate::responses::compressed;
use crate::responses::files::FileRoute;
use crate::responses::rate_limit::{Applied, LimitFields};

use crate::responses::response::{self, messages};
use crate::responses::route_table::{Lookup, Target};
use crate::values::method::method_code;
use crate::values::path::{percent_decode, routing_path};

/// A counted request's rate-limit fields, for an answer made later.
type Fields = Option<Box<LimitFields>>;

/// hyper's service for one connection.
pub(crate) struct ConnService {
    shared: Arc<Shared>,
    conn: Arc<ConnState>,
    peer: Peer,
}

impl ConnService {
    pub(crate) fn new(shared: Arc<Shared>, conn: Arc<ConnState>, peer: Peer) -> Self {
        Self { shared, conn, peer }
    }

    /// The connection's state, which its requests mark.
    pub(crate) fn state(&self) -> &Arc<ConnState> {
        &self.conn
    }
}

/// What routing decided, owning everything it needs once the borrowed request is released.
enum Decision {
    Ready(Response<Body>),
    Dynamic(Route),
    /// A file from a directory: the path below the directory, still as routing saw it, and where a miss goes
    /// (the app's not-found handler, as for any unknown path).
    Static(Arc<StaticDir>, String, Option<Route>, Fields),
    /// A turbo file route, and where a miss goes.
    File(Arc<FileRoute>, Option<Route>, Fields),
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ServiceFuture;

    fn call(&self, mut req: Request<Incoming>) -> ServiceFuture {
        let busy = self.conn.busy();
        if req.version() == Version::HTTP_2 {
            host_from_authority(&mut req);
            if req.method() == Method::HEAD {
                // HTTP/1.1's hyper sends no body for HEAD; HTTP/2's would send it as DATA frames.
                let future = self.serve(req, busy);
                return ServiceFuture {
                    inner: Inner::Dynamic(Box::pin(
                        async move { head_only(future.await.unwrap_or_else(|e| match e {})) },
                    )),
                    busy: None,
                };
            }
        }
        self.serve(req, busy)
    }
}

impl ConnService {
    fn serve(&self, req: Request<Incoming>, busy: BusyGuard) -> ServiceFuture {
        let mut applied = Applied::default();
        let mut decision = self.decide(&req, &mut applied);
        // A rate limit counted this request: its answer, whoever gives it, carries the limit's fields (carried
        // to where a later answer is made, rather than a future wrapped around it: one allocation fewer).
        match &mut decision {
            Decision::Ready(res) => applied.add_to(res.headers_mut()),
            Decision::Dynamic(route) => route.fields = applied.fields(),
            Decision::Static(.., fields) | Decision::File(.., fields) => *fields = applied.fields(),
        }
        self.run(decision, req, Some(busy))
    }

    fn run(&self, decision: Decision, req: Request<Incoming>, busy: Option<BusyGuard>) -> ServiceFuture {
        match decision {
            Decision::Ready(res) => {
                if req.version() == Version::HTTP_2 && !req.body().is_end_stream() {
                    let total = self.shared.config.body_timeout;
                    crate::rt::spawn(super::request_body::finish_unread(req.into_body(), total));
                }
                ServiceFuture { inner: Inner::Ready(Some(res)), busy }
            }
            Decision::Static(dir, tail, miss, fields) => {
                let (shared, conn, peer) = (self.shared.clone(), self.conn.clone(), self.peer.clone());
                ServiceFuture {
                    inner: Inner::Dynamic(Box::pin(async move {
                        let target = req.uri().path_and_query().map_or("/", |pq| pq.as_str());
                        let compression = shared.config.compression.as_ref();
                        let served = dir.serve_coded(req.method(), req.headers(), &tail, target, compression).await;
                        from_disk(shared, conn, peer, req, served, miss, fields).await
                    })),
                    busy,
                }
            }
            Decision::File(file, miss, fields) => {
                let (shared, conn, peer) = (self.shared.clone(), self.conn.clone(), self.peer.clone());
                ServiceFuture {
                    inner: Inner::Dynamic(Box::pin(async move {
                        let served = file.serve(req.method(), req.headers()).await;
                        from_disk(shared, conn, peer, req, served, miss, fields).await
                    })),
                    busy,
                }
            }
            Decision::Dynamic(route) => ServiceFuture {
                inner: Inner::Dynamic(Box::pin(dynamic(
                    self.shared.clone(),
                    self.conn.clone(),
                    self.peer.clone(),
                    route,
                    req,
                ))),
                busy,
            },
        }
    }

    fn decide(&self, req: &Request<Incoming>, applied: &mut Applied) -> Decision {
        let routes = self.shared.routes.load();
        match request_rules::check(req) {
            Ok(request_rules::Target::Path) => {}
            Ok(request_rules::Target::Asterisk) => {
                return Decision::Ready(with_allow(empty(StatusCode::NO_CONTENT), routes.allow_any()))
            }
            Err(Refusal::BadHost) => {
                return Decision::Ready(response::text(StatusCode::BAD_REQUEST, messages::BAD_HOST))
            }
            Err(Refusal::BadTarget) => {
                return Decision::Ready(response::text(StatusCode::BAD_REQUEST, messages::BAD_TARGET))
            }
            Err(Refusal::Connect) => {
                return Decision::Ready(response::text(StatusCode::NOT_IMPLEMENTED, messages::NOT_IMPLEMENTED))
            }
        }
        let raw = req.uri().path();
        let Some(path) = routing_path(raw) else {
            return Decision::Ready(response::text(StatusCode::BAD_REQUEST, messages::BAD_PATH_ENCODING));
        };
        // Handed over only when decoding changed it, so the common case copies nothing.
        let decoded = |path: &Cow<'_, str>| match path {
            Cow::Owned(p) => Some(p.clone()),
            Cow::Borrowed(_) => None,
        };
        // An extended CONNECT for a WebSocket over HTTP/2 (RFC 8441) is routed as the route's GET.
        let extended = request_rules::websocket_connect(req);
        let to_js = |handler: u32, params: Vec<String>| {
            let limit = routes.body_limit(handler).unwrap_or(self.shared.config.max_body_size as u64);
            // A WebSocket route takes only valid handshakes; the rest are refused here, without JavaScript.
            let ws = match routes.websocket(handler) {
                None if extended => return Decision::Ready(no_websocket()),
                None => None,
                Some(options) => {
                    let deflate = options.deflate.as_ref();
                    let checked = if extended {
                        ws::handshake::check_extended_connect(req.headers(), deflate)
                    } else {
                        ws::handshake::check(req.method(), req.version(), req.headers(), deflate)
                    };
                    match checked {
                        Ok(handshake) => Some(Box::new((options.clone(), handshake))),
                        Err(refusal) => return Decision::Ready(refusal.response()),
                    }
                }
            };
            Decision::Dynamic(Route { handler, params, path: decoded(&path), limit, ws, fields: None })
        };
        // Where a file route's miss goes: the app's not-found handler, when it has one.
        let miss = |path: &Cow<'_, str>| match routes.not_found() {
            Target::Dynamic(handler) => {
                let limit = routes.body_limit(*handler).unwrap_or(self.shared.config.max_body_size as u64);
                Some(Route {
                    handler: *handler,
                    params: Vec::new(),
                    path: decoded(path),
                    limit,
                    ws: None,
                    fields: None,
                })
            }
            _ => None,
        };
        // Rate limits: those on paths first, in the order declared, then the route's own; the first refusal
        // answers (the limits before it have counted the request, as stacked middleware would).
        for rule in routes.path_limits() {
            let matched = rule.pattern.as_ref().map_or(Some(None), |p| p.matches(&path, rule.param.as_deref()));
            if let Some(param) = matched {
                if let Some(refusal) = rule.limit.admit(&self.peer.ip, req.headers(), param, applied) {
                    return Decision::Ready(refusal);
                }
            }
        }
        let method = if extended { method_code(&Method::GET) } else { method_code(req.method()) };
        let found = routes.lookup(method, &path);
        // Only a WebSocket route takes an extended CONNECT: a fixed value, a file or a 404 cannot become a socket.
        if extended && !matches!(found, Lookup::Found { target: Target::Dynamic(_), .. }) {
            return Decision::Ready(no_websocket());
        }
        if let Lookup::Found { limit: Some(rule), params, .. } = &found {
            let param = rule.param.and_then(|i| params.iter().nth(i).map(|(_, v)| v));
            if let Some(refusal) = rule.limit.admit(&self.peer.ip, req.headers(), param, applied) {
                return Decision::Ready(refusal);
            }
        }
        match found {
            Lookup::Found { target: Target::Fixed(fixed), .. } | Lookup::NotFound { target: Target::Fixed(fixed) } => {
                Decision::Ready(fixed.respond(req.method(), req.headers()))
            }
            Lookup::Found { target: Target::Dynamic(handler), params, empty_tail, .. } => {
                let values: Option<Vec<String>> = params
                    .iter()
                    .map(|(_, raw)| percent_decode(raw).map(Cow::into_owned))
                    .chain(empty_tail.then(|| Some(String::new())))
                    .collect();
                match values {
                    Some(params) => to_js(*handler, params),
                    None => Decision::Ready(response::text(StatusCode::BAD_REQUEST, messages::BAD_PATH_ENCODING)),
                }
            }
            Lookup::Found { target: Target::Static(dir), params, .. } => {
                let tail = params.iter().last().map_or(String::new(), |(_, raw)| raw.to_owned());
                Decision::Static(dir.clone(), tail, miss(&path), None)
            }
            Lookup::Found { target: Target::File(file), .. } => Decision::File(file.clone(), miss(&path), None),
            Lookup::NotFound { target: Target::Dynamic(handler) } => to_js(*handler, Vec::new()),
            // Never registered as a not-found target.
            Lookup::NotFound { target: Target::Static(_) | Target::File(_) } => {
                Decision::Ready(routes.not_found_response())
            }
            Lookup::MethodNotAllowed { allow } | Lookup::Options { allow } => match routes.method_fallback() {
                Some(Target::Dynamic(handler)) => {
                    to_js(*handler, vec![String::from_utf8_lossy(allow.as_bytes()).into_owned()])
                }
                _ if req.method() == http::Method::OPTIONS => {
                    Decision::Ready(with_allow(empty(StatusCode::NO_CONTENT), allow))
                }
                _ => Decision::Ready(with_allow(
                    response::text(StatusCode::METHOD_NOT_ALLOWED, messages::METHOD_NOT_ALLOWED),
                    allow,
                )),
            },
        }
    }
}

/// 501 to an extended CONNECT for a WebSocket at a path that has no WebSocket route.
fn no_websocket() -> Response<Body> {
    response::text(StatusCode::NOT_IMPLEMENTED, messages::NO_WEBSOCKET)
}

/// What a directory or file route found, compressed as the request accepts; nothing found goes where misses go
/// (the app's not-found handler, or Rust's 404).
async fn from_disk(
    shared: Arc<Shared>,
    conn: Arc<ConnState>,
    peer: Peer,
    req: Request<Incoming>,
    served: Option<Response<Body>>,
    miss: Option<Route>,
    fields: Fields,
) -> Response<Body> {
    let mut res = match (served, miss) {
        (Some(res), _) => match &shared.config.compression {
            Some(c) => compressed::apply(c, req.method(), req.headers(), res).await,
            None => res,
        },
        (None, Some(route)) => return dynamic(shared, conn, peer, Route { fields, ..route }, req).await,
        (None, None) => shared.routes.load().not_found_response(),
    };
    if let Some(fields) = fields {
        fields.add_to(res.headers_mut());
    }
    res
}

/// The head of a response to HEAD over HTTP/2, without its body: a whole body's length is kept as
/// `content-length` (what GET would send), a stream is dropped unsent (its producer told to stop).
fn head_only(mut res: Response<Body>) -> Response<Body> {
    if let Body::Full(Some(bytes)) = res.body() {
        let length = HeaderValue::from(bytes.len());
        res.headers_mut().entry(http::header::CONTENT_LENGTH).or_insert(length);
    }
    *res.body_mut() = Body::default();
    res
}

/// An HTTP/2 request names its host in `:authority`, which hyper keeps in the URI: it becomes the `Host` header
/// when there is none, so that handlers, rules and URLs see one host field whatever the protocol (as Node's and
/// Bun's HTTP/2 servers show `host`). Cost: HTTP/2 requests only, one header insert.
fn host_from_authority(req: &mut Request<Incoming>) {
    if req.headers().contains_key(HOST) {
        return;
    }
    if let Some(value) = req.uri().authority().and_then(|a| HeaderValue::from_str(a.as_str()).ok()) {
        req.headers_mut().insert(HOST, value);
    }
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut res = Response::new(Body::default());
    *res.status_mut() = status;
    res
}

fn with_allow(mut res: Response<Body>, allow: &HeaderValue) -> Response<Body> {
    res.headers_mut().insert(ALLOW, allow.clone());
    res
}

/// The service's future: ready at once for everything answered in Rust, boxed only for dynamic routes.
pub(crate) struct ServiceFuture {
    inner: Inner,
    /// `None` for a future that wraps another (which holds the guard).
    busy: Option<BusyGuard>,
}

enum Inner {
    Ready(Option<Response<Body>>),
    Dynamic(Pin<Box<dyn Future<Output = Response<Body>> + Send>>),
}

impl Future for ServiceFuture {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.inner {
            Inner::Ready(res) => Poll::Ready(Ok(res
                .take()
                .unwrap_or_else(|| response::text(StatusCode::INTERNAL_SERVER_ERROR, messages::INTERNAL)))),
            Inner::Dynamic(fut) => {
                let mut res = std::task::ready!(fut.as_mut().poll(cx));
                // A file body on a socket that sends files itself goes by `sendfile`, whichever way it was served
                // (a directory, a file route, a handler's `c.file()`).
                if let (Body::File(_), Some(busy)) = (res.body(), &self.busy) {
                    if busy.conn().sends_files() {
                        if let Body::File(file) = std::mem::take(res.body_mut()) {
                            *res.body_mut() = Body::File(file.sent_by(busy.conn().clone()));
                        }
                    }
                }
                Poll::Ready(Ok(res))
            }
        }
    }
}
