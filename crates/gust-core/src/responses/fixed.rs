//! Responses encoded once and served as-is: turbo routes, the engine's 404, and their compressed variants.

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{HeaderMap, Response, StatusCode};

use super::body::Body;
use super::response::{messages, validate, InvalidResponse, TEXT_PLAIN};

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
    offered: Vec<crate::bodies::compress::Encoding>,
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
        Self {
            status: StatusCode::NOT_FOUND,
            headers,
            body: Bytes::from_static(messages::NOT_FOUND.as_bytes()),
            coded: None,
        }
    }

    /// This response with its coded variants under `compression`: compressed now, once per coding, and
    /// `Vary: Accept-Encoding` on every variant when the type is compressible. Cost: the compressions, at
    /// install time only.
    pub(crate) fn compressed(&self, compression: &crate::bodies::compress::Compression) -> Self {
        let mut out = self.clone();
        out.coded = None;
        let Some(bodies) = compression.fixed_variants(self.status, &self.headers, &self.body) else { return out };
        crate::bodies::compress::add_vary(&mut out.headers);
        let mut variants = [None, None, None];
        for (slot, body) in variants.iter_mut().zip(bodies) {
            if let Some((body, coding)) = body {
                let mut headers = out.headers.clone();
                headers.insert(http::header::CONTENT_ENCODING, HeaderValue::from_static(coding.token()));
                crate::bodies::compress::weaken_etag(&mut headers);
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
                let accepted = crate::bodies::compress::Accepted::from_headers(request);
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
