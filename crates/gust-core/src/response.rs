//! Responses built in Rust: turbo responses fixed at start-up, the engine's own error answers, and validated
//! responses coming back from JavaScript handlers.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER, TRANSFER_ENCODING};
use http::{HeaderMap, Response, StatusCode};
use hyper::body::{Frame, SizeHint};

use crate::stream::{StreamAborted, StreamBody};

/// The body of every response Gust sends: one whole buffer (sent with `content-length`), or a stream a handler
/// writes as it goes (see [`crate::stream`]). One enum, not a boxed trait object: the whole-body path costs
/// nothing more than hyper's own `Full`.
#[derive(Debug)]
pub enum Body {
    /// The whole body; `None` once taken, or when empty.
    Full(Option<Bytes>),
    /// A streamed body.
    Stream(StreamBody),
    /// A file, or part of one, read as hyper sends it.
    File(crate::files::body::FileBody),
    /// A streamed body compressed as it goes (see [`crate::compress`]).
    Encoded(Box<crate::compress::body::EncodedBody>),
}

impl Body {
    /// A whole body.
    pub fn full(bytes: Bytes) -> Self {
        Body::Full((!bytes.is_empty()).then_some(bytes))
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::Full(None)
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = StreamAborted;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamAborted>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(stream) => stream.poll_frame(cx),
            Body::File(file) => file.poll_frame(cx),
            Body::Encoded(coded) => coded.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Full(None) => true,
            Body::Encoded(coded) => coded.is_end_stream(),
            _ => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(stream) => stream.size_hint(),
            Body::File(file) => file.size_hint(),
            Body::Encoded(coded) => coded.size_hint(),
        }
    }
}

const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

/// A response encoded once and served as-is: status, headers and body are cloned per request (the body is
/// reference-counted, never copied). hyper adds `content-length` and `date`.
#[derive(Debug, Clone)]
pub struct FixedResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    /// Coded variants, compressed once when the route table was installed (see [`FixedResponse::compressed`]).
    coded: Option<std::sync::Arc<Coded>>,
}

/// A fixed response's coded variants: per coding (by [`crate::Encoding`]'s index) the body and the headers that
/// go with it (`Content-Encoding`, `Vary`, a weak `ETag`).
#[derive(Debug)]
struct Coded {
    offered: Vec<crate::Encoding>,
    variants: [Option<(HeaderMap, Bytes)>; 3],
}

impl FixedResponse {
    /// Validates a response given by the user at registration.
    pub fn new<'a>(
        status: u32,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        body: Bytes,
    ) -> Result<Self, InvalidResponse> {
        let headers: Vec<_> =
            headers.into_iter().map(|(n, v)| (n.as_bytes(), Bytes::copy_from_slice(v.as_bytes()))).collect();
        let (status, headers, _) = validate(status, headers, false)?;
        Ok(Self { status, headers, body, coded: None })
    }

    pub(crate) fn not_found() -> Self {
        let mut headers = HeaderMap::with_capacity(1);
        headers.insert(CONTENT_TYPE, TEXT_PLAIN);
        Self { status: StatusCode::NOT_FOUND, headers, body: Bytes::from_static(b"Not Found"), coded: None }
    }

    /// This response with its coded variants under `compression`: compressed now, once per coding, and
    /// `Vary: Accept-Encoding` on every variant when the type is compressible. Cost: the compressions, at
    /// install time only.
    pub(crate) fn compressed(&self, compression: &crate::Compression) -> Self {
        let mut out = self.clone();
        out.coded = None;
        let Some(bodies) = compression.fixed_variants(self.status, &self.headers, &self.body) else { return out };
        crate::compress::add_vary(&mut out.headers);
        let mut variants = [None, None, None];
        for (slot, body) in variants.iter_mut().zip(bodies) {
            if let Some((body, coding)) = body {
                let mut headers = out.headers.clone();
                headers.insert(http::header::CONTENT_ENCODING, HeaderValue::from_static(coding.token()));
                crate::compress::weaken_etag(&mut headers);
                *slot = Some((headers, body));
            }
        }
        if variants.iter().any(Option::is_some) {
            out.coded = Some(std::sync::Arc::new(Coded { offered: compression.encodings.clone(), variants }));
        }
        out
    }

    /// The response for a request: a coded variant when there are some and the client accepts one (never for
    /// HEAD). Cost without variants: nothing more than [`FixedResponse::to_response`].
    pub(crate) fn respond(&self, method: &http::Method, request: &HeaderMap) -> Response<Body> {
        if let Some(coded) = &self.coded {
            if method != http::Method::HEAD {
                let accepted = crate::compress::Accepted::from_headers(request);
                if let Some((headers, body)) =
                    accepted.best(&coded.offered).and_then(|e| coded.variants[e.index()].as_ref())
                {
                    let mut res = Response::new(Body::full(body.clone()));
                    *res.status_mut() = self.status;
                    *res.headers_mut() = headers.clone();
                    return res;
                }
            }
        }
        self.to_response()
    }

    /// The headers sent with it.
    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Cost: one header-map clone (two small allocations) and a reference-count increment on the body.
    pub(crate) fn to_response(&self) -> Response<Body> {
        let mut res = Response::new(Body::full(self.body.clone()));
        *res.status_mut() = self.status;
        *res.headers_mut() = self.headers.clone();
        res
    }
}

/// Why a handler's response could not be sent; the client gets a 500 instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidResponse(String);

impl std::fmt::Display for InvalidResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidResponse {}

/// Builds a handler's response, refusing an out-of-range status or a header that is not valid HTTP (CR/LF
/// included). Framing headers are dropped: hyper derives `content-length` from the whole body.
///
/// Cost: one map allocation sized up front; values are kept as the shared slices they came in (no copy), and a
/// name allocates only when it is not one of `http`'s standard names.
pub(crate) fn handler_response<'a>(
    status: u32,
    headers: impl IntoIterator<Item = (&'a [u8], Bytes), IntoIter: ExactSizeIterator>,
    body: Bytes,
) -> Result<Response<Body>, InvalidResponse> {
    let (status, headers, _) = validate(status, headers, false)?;
    let mut res = Response::new(Body::full(body));
    *res.status_mut() = status;
    *res.headers_mut() = headers;
    Ok(res)
}

/// Builds the head of a streamed response, as [`handler_response`] does, with the body `open` makes from the
/// `content-length` the handler declared, if any (hyper then sends that header and exactly that many bytes;
/// without one, it chunks the body, or for an HTTP/1.0 client ends it by closing the connection).
pub(crate) fn streamed_response<'a>(
    status: u32,
    headers: impl IntoIterator<Item = (&'a [u8], Bytes), IntoIter: ExactSizeIterator>,
    open: impl FnOnce(Option<u64>) -> StreamBody,
) -> Result<Response<Body>, InvalidResponse> {
    let (status, headers, length) = validate(status, headers, true)?;
    let mut res = Response::new(Body::Stream(open(length)));
    *res.status_mut() = status;
    *res.headers_mut() = headers;
    Ok(res)
}

/// The status, the header map without framing headers, and (with `declared`, for a streamed body, whose length
/// only the handler knows) the `content-length` it declared; a whole body's is its own, so a handler's is dropped.
fn validate<'a>(
    status: u32,
    headers: impl IntoIterator<Item = (&'a [u8], Bytes), IntoIter: ExactSizeIterator>,
    declared: bool,
) -> Result<(StatusCode, HeaderMap, Option<u64>), InvalidResponse> {
    if !(200..=599).contains(&status) {
        return Err(InvalidResponse(format!("invalid status {status}: expected an integer from 200 to 599")));
    }
    let status = StatusCode::from_u16(status as u16).map_err(|e| InvalidResponse(e.to_string()))?;
    let headers = headers.into_iter();
    let mut map = HeaderMap::with_capacity(headers.len());
    let mut length = None;
    for (name, value) in headers {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let header = HeaderName::from_bytes(name)
            .map_err(|_| InvalidResponse(format!("invalid header name {:?}", text(name))))?;
        let value = HeaderValue::from_maybe_shared(value.clone())
            .map_err(|_| InvalidResponse(format!("invalid value for header {:?}: {:?}", text(name), text(&value))))?;
        if header == CONTENT_LENGTH && !declared {
            continue;
        }
        if header == CONTENT_LENGTH {
            let declared = std::str::from_utf8(value.as_bytes())
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| InvalidResponse(format!("invalid content-length {:?}", text(value.as_bytes()))))?;
            if length.is_some_and(|l| l != declared) {
                return Err(InvalidResponse("two different content-length values".into()));
            }
            length = Some(declared);
            continue;
        }
        if header == TRANSFER_ENCODING {
            continue;
        }
        map.append(header, value);
    }
    Ok((status, map, length))
}

/// A plain-text answer generated by the engine itself (404, 405, 413, 503, …). Messages are stable: clients
/// may match on them.
pub(crate) fn text(status: StatusCode, message: &'static str) -> Response<Body> {
    let mut res = Response::new(Body::full(Bytes::from_static(message.as_bytes())));
    *res.status_mut() = status;
    res.headers_mut().insert(CONTENT_TYPE, TEXT_PLAIN);
    res
}

/// 503 with `Retry-After`, for when JavaScript is saturated or the server is going away.
pub(crate) fn unavailable(message: &'static str) -> Response<Body> {
    let mut res = text(StatusCode::SERVICE_UNAVAILABLE, message);
    res.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

/// Stable texts of the engine's own answers.
pub(crate) mod messages {
    pub(crate) const METHOD_NOT_ALLOWED: &str = "Method Not Allowed";
    pub(crate) const PAYLOAD_TOO_LARGE: &str = "Payload Too Large";
    pub(crate) const BAD_REQUEST_BODY: &str = "Bad Request: malformed request body";
    pub(crate) const BODY_TIMEOUT: &str = "Request Timeout: the body did not arrive in time";
    pub(crate) const BAD_PATH_ENCODING: &str = "Bad Request: malformed percent-encoding in path";
    pub(crate) const QUEUE_FULL: &str = "Service Unavailable: too many requests in flight";
    pub(crate) const HANDLER_TIMEOUT: &str = "Service Unavailable: handler timed out";
    pub(crate) const SHUTTING_DOWN: &str = "Service Unavailable: server is shutting down";
    pub(crate) const WORKER_GONE: &str = "Service Unavailable: the worker handling the request exited";
    pub(crate) const INTERNAL: &str = "Internal Server Error";
    pub(crate) const BAD_HOST: &str = "Bad Request: a request needs exactly one valid Host header";
    pub(crate) const BAD_TARGET: &str = "Bad Request: invalid request target";
    pub(crate) const NOT_IMPLEMENTED: &str = "Not Implemented";
    pub(crate) const UNSUPPORTED_CODING: &str = "Unsupported Media Type: unsupported content coding";
    pub(crate) const BODIES_FULL: &str = "Service Unavailable: too many request bodies in flight";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn respond(
        status: u32,
        headers: &[(&'static str, &'static str)],
        body: &'static [u8],
    ) -> Result<Response<Body>, InvalidResponse> {
        let headers: Vec<_> = headers.iter().map(|(n, v)| (n.as_bytes(), Bytes::from_static(v.as_bytes()))).collect();
        handler_response(status, headers, Bytes::from_static(body))
    }

    #[test]
    fn handler_responses_should_reject_crlf_and_bad_status() {
        assert!(respond(200, &[("x-a", "1\r\nx-b: 2")], b"").is_err());
        assert!(respond(200, &[("bad name", "v")], b"").is_err());
        assert!(respond(99, &[], b"").is_err());
        assert!(respond(600, &[], b"").is_err());
        assert!(respond(65_536 + 200, &[], b"").is_err(), "no wrap to 200");
        let err = respond(200, &[("x-a", "a\nb")], b"").unwrap_err();
        assert!(err.to_string().contains("x-a"));
    }

    #[test]
    fn handler_responses_should_keep_repeated_headers_and_drop_framing() {
        let res =
            respond(201, &[("set-cookie", "a=1"), ("set-cookie", "b=2"), ("content-length", "999")], b"ok").unwrap();
        assert_eq!(res.status(), 201);
        assert_eq!(res.headers().get_all("set-cookie").iter().count(), 2);
        assert!(res.headers().get(CONTENT_LENGTH).is_none());
        assert!(respond(200, &[("content-length", "x1")], b"").is_ok(), "a whole body's length is its own");
        let stream = |length: &'static str| {
            let headers = vec![(&b"content-length"[..], Bytes::from_static(length.as_bytes()))];
            validate(200, headers, true).map(|(_, _, declared)| declared)
        };
        assert_eq!(stream("12"), Ok(Some(12)));
        assert!(stream("x1").is_err(), "a streamed body's malformed length is a mistake");
        assert!(stream(" 5").is_err());
    }

    #[test]
    fn whole_bodies_should_be_exactly_sized_and_empty_ones_ended() {
        use hyper::body::Body as _;
        assert_eq!(Body::full(Bytes::from_static(b"abc")).size_hint().exact(), Some(3));
        assert!(Body::full(Bytes::new()).is_end_stream());
        assert!(!Body::full(Bytes::from_static(b"a")).is_end_stream());
    }
}
