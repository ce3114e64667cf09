//! Compressing a response on its way out, under the rules of [`Compression`]: a whole body coded at once, a
//! stream or a file given a compressor that codes it as it goes.

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};

use super::body::Body;
use crate::bodies::compress::body::EncodedBody;
use crate::bodies::compress::encoder::{self, Encoder};
use crate::bodies::compress::{add_vary, weaken_etag, Accepted, Compression, Encoding, TypeHint};

/// Whole bodies up to this size are compressed on the I/O thread; larger ones on tokio's blocking pool, so one
/// big response does not stall every other connection.
const INLINE_MAX: usize = 64 * 1024;

/// Compresses a response when the rules above allow it and the client accepts a coding.
///
/// Cost for a response that is not compressed: a few header lookups. For one that is: one compression of
/// the body (on the blocking pool past 64 KiB), or a compressor attached to a stream or file.
pub(crate) async fn apply(
    c: &Compression,
    method: &Method,
    request: &HeaderMap,
    res: Response<Body>,
) -> Response<Body> {
    match plan(c, method, request, res) {
        Plan::Done(res) => res,
        Plan::Code(res, encoding, forced) => coded(c, res, encoding, forced).await,
    }
}

/// What [`plan`] decided.
pub(crate) enum Plan {
    /// Nothing to code: the response as it goes out (with `Vary` when it could have been coded).
    Done(Response<Body>),
    /// The body is to be coded with this encoding ([`coded`]); `true`: whatever its size (identity refused).
    Code(Response<Body>, Encoding, bool),
}

/// [`apply`]'s decision, taken without waiting, so that a caller whose responses are mostly not coded (small
/// answers, clients that accept no coding) awaits the coding's future only when there is one: kept out of the
/// caller's own future, it does not make every request's future larger (a dynamic request's by 712 bytes,
/// moved and allocated per request).
pub(crate) fn plan(c: &Compression, method: &Method, request: &HeaderMap, mut res: Response<Body>) -> Plan {
    // The cheapest refusals first: nothing to code (a HEAD answer still gets the `Vary` its GET would).
    if matches!(res.body(), Body::Full(None)) && res.status() != StatusCode::NOT_MODIFIED && method != Method::HEAD {
        return Plan::Done(res);
    }
    let hint = res.extensions().get::<TypeHint>().copied();
    if !c.eligible(res.status(), res.headers(), hint) {
        return Plan::Done(res);
    }
    add_vary(res.headers_mut());
    let accepted = Accepted::from_headers(request);
    let Some(encoding) = accepted.best(&c.encodings) else { return Plan::Done(res) };
    if res.status() == StatusCode::NOT_MODIFIED {
        // The client revalidated the coded variant: its tag stays the one that variant was sent with.
        weaken_etag(res.headers_mut());
        return Plan::Done(res);
    }
    if method == Method::HEAD {
        return Plan::Done(res);
    }
    Plan::Code(res, encoding, accepted.refuses_identity())
}

/// The response with its body coded as [`plan`] decided (as it was when coding does not pay or cannot start).
pub(crate) async fn coded(
    c: &Compression,
    mut res: Response<Body>,
    encoding: Encoding,
    forced: bool,
) -> Response<Body> {
    let body = std::mem::take(res.body_mut());
    match code(c, encoding, forced, body).await {
        Ok(coded) => {
            *res.body_mut() = coded;
            let h = res.headers_mut();
            h.remove(CONTENT_LENGTH);
            h.insert(CONTENT_ENCODING, HeaderValue::from_static(encoding.token()));
            weaken_etag(h);
        }
        Err(plain) => *res.body_mut() = plain,
    }
    res
}

/// The body coded with `encoding`, or `Err` with it as it was: under the threshold (unless `forced`, the
/// client refusing identity), a whole body that would not shrink, or a compressor that could not start.
async fn code(c: &Compression, encoding: Encoding, forced: bool, body: Body) -> Result<Body, Body> {
    let level = c.level(encoding);
    let small = |len: u64| len < c.threshold as u64 && !forced;
    match body {
        Body::Full(Some(bytes)) if !small(bytes.len() as u64) => {
            let coded = if bytes.len() <= INLINE_MAX {
                encoder::compress(encoding, level, &bytes).ok()
            } else {
                let input = bytes.clone();
                crate::rt::spawn_blocking(move || encoder::compress(encoding, level, &input).ok()).await.ok().flatten()
            };
            match coded {
                Some(coded) if coded.len() < bytes.len() || forced => Ok(Body::full(coded)),
                _ => Err(Body::Full(Some(bytes))),
            }
        }
        Body::Stream(stream) if !stream.declared_length().is_some_and(small) => match Encoder::new(encoding, level) {
            Ok(e) => Ok(Body::Encoded(Box::new(EncodedBody::new(Body::Stream(stream), e)))),
            Err(_) => Err(Body::Stream(stream)),
        },
        Body::File(file) if !small(file.remaining()) => match Encoder::new(encoding, level) {
            Ok(e) => Ok(Body::File(file.encoded(e))),
            Err(_) => Err(Body::File(file)),
        },
        // Empty, small, or already coded.
        other => Err(other),
    }
}
