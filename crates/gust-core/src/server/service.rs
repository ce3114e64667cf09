//! One request: everything decidable in Rust is decided here, and only dynamic routes cross into JavaScript.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::ALLOW;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body as _, Incoming};

use super::connection::{BusyGuard, ConnState};
use super::Shared;
use crate::method::method_code;
use crate::path::percent_decode;
use crate::response::{self, messages, Body};
use crate::route_table::{Lookup, Target};

/// hyper's service for one connection.
pub(super) struct ConnService {
    shared: Arc<Shared>,
    conn: Arc<ConnState>,
}

impl ConnService {
    pub(super) fn new(shared: Arc<Shared>, conn: Arc<ConnState>) -> Self {
        Self { shared, conn }
    }
}

/// What routing decided, owning everything it needs once the borrowed request is released.
enum Decision {
    Ready(Response<Body>),
    Dynamic { handler: u32, params: Vec<String> },
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ServiceFuture;

    fn call(&self, req: Request<Incoming>) -> ServiceFuture {
        let busy = self.conn.busy();
        let routes = self.shared.routes.load();
        let decision = match routes.lookup(method_code(req.method()), req.uri().path()) {
            Lookup::Found { target: Target::Fixed(fixed), .. } | Lookup::NotFound { target: Target::Fixed(fixed) } => {
                Decision::Ready(fixed.to_response())
            }
            Lookup::Found { target: Target::Dynamic(handler), params } => {
                let decoded: Option<Vec<String>> =
                    params.iter().map(|(_, raw)| percent_decode(raw).map(|v| v.into_owned())).collect();
                match decoded {
                    Some(params) => Decision::Dynamic { handler: *handler, params },
                    None => Decision::Ready(response::text(StatusCode::BAD_REQUEST, messages::BAD_PATH_ENCODING)),
                }
            }
            Lookup::NotFound { target: Target::Dynamic(handler) } => {
                Decision::Dynamic { handler: *handler, params: Vec::new() }
            }
            Lookup::MethodNotAllowed { allow } | Lookup::Options { allow } => match routes.method_fallback() {
                Some(Target::Dynamic(handler)) => Decision::Dynamic {
                    handler: *handler,
                    params: vec![String::from_utf8_lossy(allow.as_bytes()).into_owned()],
                },
                _ if req.method() == http::Method::OPTIONS => {
                    let mut res = Response::new(Body::default());
                    *res.status_mut() = StatusCode::NO_CONTENT;
                    Decision::Ready(with_allow(res, allow))
                }
                _ => Decision::Ready(with_allow(
                    response::text(StatusCode::METHOD_NOT_ALLOWED, messages::METHOD_NOT_ALLOWED),
                    allow,
                )),
            },
        };
        drop(routes);
        match decision {
            Decision::Ready(res) => ServiceFuture { inner: Inner::Ready(Some(res)), _busy: busy },
            Decision::Dynamic { handler, params } => ServiceFuture {
                inner: Inner::Dynamic(Box::pin(dynamic(self.shared.clone(), handler, params, req))),
                _busy: busy,
            },
        }
    }
}

fn with_allow(mut res: Response<Body>, allow: &HeaderValue) -> Response<Body> {
    res.headers_mut().insert(ALLOW, allow.clone());
    res
}

/// Reads the body within its limit, hands the request to the batcher and waits for the handler's answer.
async fn dynamic(shared: Arc<Shared>, handler: u32, params: Vec<String>, req: Request<Incoming>) -> Response<Body> {
    let config = &shared.config;
    // The slot is taken before the body is read, so `max_pending` also bounds the memory held by bodies.
    let Some((id, answer)) = shared.completions.register(config.max_pending) else {
        return response::unavailable(messages::QUEUE_FULL);
    };
    let mut waiting = Waiting { shared: &shared, id, armed: true };
    let (parts, body) = req.into_parts();
    let body = if body.is_end_stream() {
        Bytes::new()
    } else if body.size_hint().lower() > config.max_body_size as u64 {
        // A declared length over the limit is refused before a byte of it is read.
        return response::text(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE);
    } else {
        // A client trickling its body would otherwise hold the connection forever: the header timeout is over and
        // the handler timeout has not started.
        match tokio::time::timeout(config.body_timeout, Limited::new(body, config.max_body_size).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(err)) if err.is::<LengthLimitError>() => {
                return response::text(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE)
            }
            Ok(Err(_)) => return response::text(StatusCode::BAD_REQUEST, messages::BAD_REQUEST_BODY),
            Err(_) => return response::text(StatusCode::REQUEST_TIMEOUT, messages::BODY_TIMEOUT),
        }
    };

    let url = parts.uri.path_and_query().map_or_else(|| parts.uri.path(), |pq| pq.as_str());
    shared.batcher.push(id, handler, &parts.method, url, &params, &parts.headers, &body);
    drop(body);

    // The handler timeout is the completion table's sweep, which answers 503 through this same channel.
    let answer = answer.await;
    waiting.armed = false;
    answer.unwrap_or_else(|_| response::unavailable(messages::SHUTTING_DOWN))
}

/// Removes a request from the waiting table if it ends unanswered (timeout, client gone, server closing).
struct Waiting<'a> {
    shared: &'a Shared,
    id: u32,
    armed: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.completions.cancel(self.id);
        }
    }
}

/// The service's future: ready at once for everything answered in Rust, boxed only for dynamic routes.
pub(super) struct ServiceFuture {
    inner: Inner,
    _busy: BusyGuard,
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
            Inner::Dynamic(fut) => fut.as_mut().poll(cx).map(Ok),
        }
    }
}
