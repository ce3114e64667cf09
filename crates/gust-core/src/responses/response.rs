//! Responses built in Rust: validated responses coming back from JavaScript handlers, and the engine's own
//! answers (404, 405, 413, 503, …) with their stable messages.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER, TRANSFER_ENCODING};
use http::{HeaderMap, Response, StatusCode};

use super::body::Body;
use crate::bodies::stream::StreamBody;

pub(crate) const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

/// The least status a response may have: 1xx belong to the protocol (hyper sends `100 Continue` itself), never
/// to a handler.
pub const MIN_STATUS: u16 = 200;
/// The greatest status a response may have (the last of HTTP's five classes).
pub const MAX_STATUS: u16 = 599;

/// Why a handler's response could not be sent; the client gets a 500 instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidResponse(String);

impl std::fmt::Display for InvalidResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidResponse {}

impl InvalidResponse {
    /// An answer refused for `why` (the wire layer's too: a file answer naming no file).
    pub(crate) fn new(why: String) -> Self {
        Self(why)
    }
}

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
pub(crate) fn validate<'a>(
    status: u32,
    headers: impl IntoIterator<Item = (&'a [u8], Bytes), IntoIter: ExactSizeIterator>,
    declared: bool,
) -> Result<(StatusCode, HeaderMap, Option<u64>), InvalidResponse> {
    if !(u32::from(MIN_STATUS)..=u32::from(MAX_STATUS)).contains(&status) {
        return Err(InvalidResponse(format!(
            "invalid status {status}: expected an integer from {MIN_STATUS} to {MAX_STATUS}"
        )));
    }
    let status = StatusCode::from_u16(status as u16).map_err(|e| InvalidResponse(e.to_string()))?;
    let headers = headers.into_iter();
    // One more: a server with compression adds `Vary` to most answers, which would otherwise grow the map.
    // `try_`: a handler's answer with more headers than a map holds (about 24,000) is refused, not a panic.
    let too_many = || InvalidResponse("too many headers".into());
    let mut map = HeaderMap::try_with_capacity(headers.len() + 1).map_err(|_| too_many())?;
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
        map.try_append(header, value).map_err(|_| too_many())?;
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

/// Stable texts of the engine's own answers: clients may match on them, and the JavaScript package reads them
/// (through the binding's `engineInfo().messages`) where it answers the same way.
pub mod messages {
    /// 404, for a path no route matches.
    pub const NOT_FOUND: &str = "Not Found";
    /// 405, for a method the path's routes do not take.
    pub const METHOD_NOT_ALLOWED: &str = "Method Not Allowed";
    /// 413, for a body over its limit.
    pub const PAYLOAD_TOO_LARGE: &str = "Payload Too Large";
    /// 400, for a body whose framing or coding is broken.
    pub const BAD_REQUEST_BODY: &str = "Bad Request: malformed request body";
    /// 408, for a body that stopped arriving.
    pub const BODY_TIMEOUT: &str = "Request Timeout: the body did not arrive in time";
    /// 400, for a path with a bad `%` escape.
    pub const BAD_PATH_ENCODING: &str = "Bad Request: malformed percent-encoding in path";
    /// 503, when as many requests as `max_pending` wait for JavaScript.
    pub const QUEUE_FULL: &str = "Service Unavailable: too many requests in flight";
    /// 503, for a handler that did not answer within `handler_timeout`.
    pub const HANDLER_TIMEOUT: &str = "Service Unavailable: handler timed out";
    /// 503, for a request caught by the server's shutdown.
    pub const SHUTTING_DOWN: &str = "Service Unavailable: server is shutting down";
    /// 503, for a request whose worker thread exited before answering.
    pub const WORKER_GONE: &str = "Service Unavailable: the worker handling the request exited";
    /// 500, for an answer the engine could not send (and the package's default for an unhandled error).
    pub const INTERNAL: &str = "Internal Server Error";
    /// 400, for a request without exactly one valid `Host`.
    pub const BAD_HOST: &str = "Bad Request: a request needs exactly one valid Host header";
    /// 400, for a request target that is not a path (or `*` for OPTIONS).
    pub const BAD_TARGET: &str = "Bad Request: invalid request target";
    /// 501, for a request the engine does not implement (`CONNECT`, say).
    pub const NOT_IMPLEMENTED: &str = "Not Implemented";
    /// An extended CONNECT for a WebSocket (RFC 8441) to a path without a WebSocket route.
    pub const NO_WEBSOCKET: &str = "Not Implemented: no WebSocket at this path";
    /// 415, for a request body in a coding the engine cannot decode.
    pub const UNSUPPORTED_CODING: &str = "Unsupported Media Type: unsupported content coding";
    /// 503, when the bodies being received fill `max_body_buffer`.
    pub const BODIES_FULL: &str = "Service Unavailable: too many request bodies in flight";
    /// 503: a rate limit shared through Redis, declared to refuse while Redis cannot be reached, cannot reach it.
    pub const RATE_LIMIT_UNREACHABLE: &str = "Service Unavailable: the rate limit's store cannot be reached";
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
    fn more_headers_than_a_map_holds_are_refused_not_a_panic() {
        let names: Vec<String> = (0..40_000).map(|i| format!("x-h{i}")).collect();
        let headers: Vec<_> = names.iter().map(|n| (n.as_bytes(), Bytes::from_static(b"v"))).collect();
        let err = handler_response(200, headers, Bytes::new()).map(|_| ()).unwrap_err();
        assert_eq!(err.to_string(), "too many headers");
        // One name repeated past the limit: the map's entries, not its names, run out.
        let repeated: Vec<_> = (0..40_000).map(|_| (&b"x-same"[..], Bytes::from_static(b"v"))).collect();
        assert!(handler_response(200, repeated, Bytes::new()).is_err());
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
    fn handler_responses_should_take_exactly_the_statuses_from_min_to_max() {
        for status in [MIN_STATUS, MAX_STATUS] {
            assert_eq!(respond(status.into(), &[], b"").unwrap().status(), status);
        }
        for status in [MIN_STATUS - 1, MAX_STATUS + 1] {
            let err = respond(status.into(), &[], b"").unwrap_err().to_string();
            assert_eq!(err, format!("invalid status {status}: expected an integer from 200 to 599"), "the stable text");
        }
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
}
