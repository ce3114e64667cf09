//! Answering a request with a file: a directory's (the route table's mounts), a turbo file route's, or a
//! handler's `FILE` answer. Validators, conditional requests, ranges, HEAD, a directory's redirect; the lookups
//! themselves are the body layer's ([`crate::bodies::files::dir`]), run on tokio's blocking pool so the I/O
//! thread never waits for the disk.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    ACCEPT_RANGES, ALLOW, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG,
    LAST_MODIFIED, LOCATION,
};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};

use super::body::Body;
use super::fixed::FixedResponse;
use super::response::InvalidResponse;
use crate::bodies::compress::{add_vary, Compression, TypeHint};
use crate::bodies::files::body::FileBody;
use crate::bodies::files::conditional::{self, Precondition, Validators};
use crate::bodies::files::dir::{accepted_encodings, lookup_file, Lookup, StaticDir};
use crate::bodies::files::range::{self, Ranged};
use crate::values::mime;

impl StaticDir {
    /// Answers `method` (GET or HEAD) for `tail`, the request path below the directory's prefix, still
    /// percent-encoded; `target` is the whole request target, for a directory's redirect. `None`: nothing there
    /// (or nothing that may be served), for the app's not-found answer.
    pub async fn serve(
        self: &Arc<Self>,
        method: &Method,
        headers: &HeaderMap,
        tail: &str,
        target: &str,
    ) -> Option<Response<Body>> {
        self.serve_coded(method, headers, tail, target, None).await
    }

    /// [`StaticDir::serve`], with the server's compression: a small file's coded variant is made once per coding
    /// and kept beside it in the cache (revalidated with it), so a compressed asset costs no compression per
    /// request. Larger files are coded as they stream (see [`crate::bodies::compress`]).
    pub(crate) async fn serve_coded(
        self: &Arc<Self>,
        method: &Method,
        headers: &HeaderMap,
        tail: &str,
        target: &str,
        compression: Option<&Compression>,
    ) -> Option<Response<Body>> {
        if method != Method::GET && method != Method::HEAD {
            let mut res = status(StatusCode::METHOD_NOT_ALLOWED);
            res.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Some(res);
        }
        let this = self.clone();
        let tail = tail.to_owned();
        let accepted = if self.options().precompressed { accepted_encodings(headers) } else { Vec::new() };
        let looked = crate::rt::spawn_blocking(move || this.lookup(&tail, &accepted)).await.unwrap_or(Lookup::Missing);
        let looked = match compression {
            Some(c) if method == Method::GET && !headers.contains_key(http::header::RANGE) => {
                self.code(looked, headers, c)
            }
            _ => looked,
        };
        let coded = matches!(looked, Lookup::File { weak: true, .. });
        let mut res = respond(looked, method, headers, target, self.options().cache_control.as_ref());
        if coded || self.options().precompressed {
            if let Some(res) = res.as_mut() {
                add_vary(res.headers_mut());
            }
        }
        res
    }
}

/// One file as a `GET`/`HEAD` answer (any other method gets 405): what a handler's `c.file(path)` sends. `None`
/// when there is no regular file there.
pub(crate) async fn serve_file(path: PathBuf, method: &Method, headers: &HeaderMap) -> Option<Response<Body>> {
    if method != Method::GET && method != Method::HEAD {
        let mut res = status(StatusCode::METHOD_NOT_ALLOWED);
        res.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(res);
    }
    let looked = crate::rt::spawn_blocking(move || lookup_file(path)).await.unwrap_or(Lookup::Missing);
    respond(looked, method, headers, "", None)
}

/// A route answered with one file, entirely in Rust (a turbo file route): the file is looked up per request, so
/// it is served fresh when it changes, with the route's headers added.
#[derive(Debug)]
pub struct FileRoute {
    path: PathBuf,
    headers: HeaderMap,
}

impl FileRoute {
    /// `path` should be absolute; `headers` are validated as a fixed response's are, and framing ones refused.
    pub fn new<'a>(
        path: impl Into<PathBuf>,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, InvalidResponse> {
        let fixed = FixedResponse::new(200, headers, Bytes::new())?;
        Ok(Self { path: path.into(), headers: fixed.headers().clone() })
    }

    /// The file's answer for this request, the route's headers added; `None` when there is no file.
    pub async fn serve(&self, method: &Method, headers: &HeaderMap) -> Option<Response<Body>> {
        let res = serve_file(self.path.clone(), method, headers).await?;
        Some(with_headers(res, &self.headers))
    }
}

/// Adds a handler's or route's headers to a file's answer, replacing the file's of the same name, except those
/// that frame the body (`content-length`, `transfer-encoding`, `content-range`): the file frames its own, and a
/// length or range from elsewhere would contradict the bytes sent.
pub(crate) fn with_headers(mut res: Response<Body>, extra: &HeaderMap) -> Response<Body> {
    let mut replaced = Vec::new();
    for (name, value) in extra {
        if name == CONTENT_LENGTH || name == http::header::TRANSFER_ENCODING || name == CONTENT_RANGE {
            continue;
        }
        if !replaced.contains(name) {
            res.headers_mut().remove(name);
            replaced.push(name.clone());
        }
        res.headers_mut().append(name, value.clone());
    }
    res
}

/// The response for what the blocking pool found: validators, preconditions, range, and the body.
fn respond(
    looked: Lookup,
    method: &Method,
    headers: &HeaderMap,
    target: &str,
    cache_control: Option<&HeaderValue>,
) -> Option<Response<Body>> {
    let Lookup::File { path, len, modified, small, file, encoding, weak } = looked else {
        return match looked {
            Lookup::Redirect => Some(redirect(target)),
            _ => None,
        };
    };
    let mut validators = Validators::new(len, modified);
    if let (Some(coding), false) = (encoding, weak) {
        // Each encoding is its own representation, with a tag of its own (never the identity file's).
        validators.etag.insert_str(validators.etag.len() - 1, &format!("-{}", coding.token()));
    }
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let mut res = Response::new(Body::default());
    let h = res.headers_mut();
    if weak {
        h.insert(ETAG, header(&format!("W/{}", validators.etag)));
    } else {
        h.insert(ETAG, header(&validators.etag));
    }
    // A variant coded here is as long as its bytes; the file's size made its tag.
    let len = if weak { small.as_ref().map_or(len, |b| b.len() as u64) } else { len };
    if let Some(coding) = encoding {
        h.insert(CONTENT_ENCODING, HeaderValue::from_static(coding.token()));
    }
    h.insert(LAST_MODIFIED, header(&validators.last_modified_header()));
    if let Some(cache) = cache_control {
        h.insert(CACHE_CONTROL, cache.clone());
    }
    match conditional::evaluate(headers, &validators, true) {
        Precondition::NotModified => {
            *res.status_mut() = StatusCode::NOT_MODIFIED;
            // No body, no type: compression still needs the type to give the 304 the tag its 200 had.
            res.extensions_mut().insert(TypeHint(mime::content_type(&name)));
            return Some(res);
        }
        Precondition::Failed => return Some(status(StatusCode::PRECONDITION_FAILED)),
        Precondition::Proceed => {}
    }
    let h = res.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(mime::content_type(&name)));
    h.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let mut part = 0..len;
    if let Some(asked) = headers.get(http::header::RANGE) {
        if conditional::range_applies(headers, &validators) {
            match range::evaluate(asked.as_bytes(), len) {
                Ranged::Full => {}
                Ranged::Partial(r) => {
                    h.insert(CONTENT_RANGE, header(&range::content_range(&r, len)));
                    *res.status_mut() = StatusCode::PARTIAL_CONTENT;
                    part = r;
                }
                Ranged::Unsatisfiable => {
                    let mut refused = status(StatusCode::RANGE_NOT_SATISFIABLE);
                    refused.headers_mut().insert(CONTENT_RANGE, header(&range::unsatisfied_range(len)));
                    return Some(refused);
                }
            }
        }
    }
    res.headers_mut().insert(CONTENT_LENGTH, HeaderValue::from(part.end - part.start));
    if method == Method::HEAD {
        return Some(res);
    }
    *res.body_mut() = match (small, file) {
        (Some(bytes), _) => Body::full(bytes.slice(part.start as usize..part.end as usize)),
        (None, Some(file)) => Body::File(FileBody::new(file, part.start, part.end)),
        (None, None) => return None,
    };
    Some(res)
}

fn status(code: StatusCode) -> Response<Body> {
    let mut res = Response::new(Body::default());
    *res.status_mut() = code;
    res
}

/// A permanent redirect to the directory with its trailing slash, the query kept.
fn redirect(target: &str) -> Response<Body> {
    let (path, query) = target.split_once('?').map_or((target, None), |(p, q)| (p, Some(q)));
    // `//evil.example/dir` must not become a protocol-relative redirect to another host.
    let path = format!("/{}", path.trim_start_matches('/'));
    let location = match query {
        Some(q) => format!("{path}/?{q}"),
        None => format!("{path}/"),
    };
    let mut res = status(StatusCode::MOVED_PERMANENTLY);
    res.headers_mut().insert(LOCATION, header(&location));
    res
}

/// A header value from text built here (validators, ranges, a target hyper accepted): always visible ASCII.
fn header(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::files::dir::StaticOptions;
    use http::header::VARY;
    use http_body_util::BodyExt;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn dir(options: StaticOptions) -> (PathBuf, Arc<StaticDir>) {
        static N: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir().join(format!(
            "gust-serve-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(base.join("docs")).unwrap();
        std::fs::write(base.join("a.txt"), "hello world").unwrap();
        std::fs::write(base.join("index.html"), "<h1>home</h1>").unwrap();
        std::fs::write(base.join("docs/index.html"), "<h1>docs</h1>").unwrap();
        let big: Vec<u8> = (0..(3 * 1024 * 1024 + 17)).map(|i: u32| (i % 251) as u8).collect();
        std::fs::write(base.join("big.bin"), big).unwrap();
        let served = Arc::new(StaticDir::new(&base, options).unwrap());
        (base, served)
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(http::HeaderName::from_bytes(n.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    async fn get(d: &Arc<StaticDir>, tail: &str, h: &[(&str, &str)]) -> (StatusCode, HeaderMap, Vec<u8>) {
        let Some(res) = d.serve(&Method::GET, &headers(h), tail, &format!("/static/{tail}")).await else {
            return (StatusCode::NOT_FOUND, HeaderMap::new(), Vec::new());
        };
        let (parts, body) = res.into_parts();
        let bytes = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
        (parts.status, parts.headers, bytes)
    }

    #[test]
    fn a_file_comes_with_its_type_validators_and_length_and_head_has_no_body() {
        let (base, d) = dir(StaticOptions {
            cache_control: Some(HeaderValue::from_static("public, max-age=60")),
            ..Default::default()
        });
        run(async {
            let (status, h, body) = get(&d, "a.txt", &[]).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(body, b"hello world");
            assert_eq!(h[CONTENT_TYPE], "text/plain; charset=utf-8");
            assert_eq!(h[CONTENT_LENGTH], "11");
            assert_eq!(h[ACCEPT_RANGES], "bytes");
            assert_eq!(h[CACHE_CONTROL], "public, max-age=60");
            assert!(h[ETAG].to_str().unwrap().starts_with("\"b-"));
            assert!(h.contains_key(LAST_MODIFIED));
            let head = d.serve(&Method::HEAD, &HeaderMap::new(), "a.txt", "/a.txt").await.unwrap();
            assert_eq!(head.headers()[CONTENT_LENGTH], "11");
            assert!(hyper::body::Body::is_end_stream(head.body()));
            let post = d.serve(&Method::POST, &HeaderMap::new(), "a.txt", "/a.txt").await.unwrap();
            assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
            assert_eq!(post.headers()[ALLOW], "GET, HEAD");
        });
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn conditional_requests_get_304_or_412_and_ranges_206_or_416() {
        let (base, d) = dir(StaticOptions::default());
        run(async {
            let (_, h, _) = get(&d, "a.txt", &[]).await;
            let etag = h[ETAG].to_str().unwrap().to_owned();
            let date = h[LAST_MODIFIED].to_str().unwrap().to_owned();
            let (status, h304, body) = get(&d, "a.txt", &[("if-none-match", &etag)]).await;
            assert_eq!((status, body.len()), (StatusCode::NOT_MODIFIED, 0));
            assert_eq!(h304[ETAG], etag.as_str(), "a 304 carries the validators");
            assert_eq!(get(&d, "a.txt", &[("if-modified-since", &date)]).await.0, StatusCode::NOT_MODIFIED);
            assert_eq!(
                get(&d, "a.txt", &[("if-none-match", "\"no\""), ("if-modified-since", &date)]).await.0,
                StatusCode::OK
            );
            assert_eq!(get(&d, "a.txt", &[("if-match", "\"no\"")]).await.0, StatusCode::PRECONDITION_FAILED);
            let (status, h, body) = get(&d, "a.txt", &[("range", "bytes=6-")]).await;
            assert_eq!((status, body.as_slice()), (StatusCode::PARTIAL_CONTENT, b"world".as_slice()));
            assert_eq!(h[CONTENT_RANGE], "bytes 6-10/11");
            assert_eq!(h[CONTENT_LENGTH], "5");
            let (status, h, _) = get(&d, "a.txt", &[("range", "bytes=50-")]).await;
            assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
            assert_eq!(h[CONTENT_RANGE], "bytes */11");
            let (status, _, body) = get(&d, "a.txt", &[("range", "bytes=0-4"), ("if-range", "\"old\"")]).await;
            assert_eq!((status, body.len()), (StatusCode::OK, 11), "a stale If-Range gets the whole file");
            let (status, _, body) = get(&d, "a.txt", &[("range", "bytes=0-4"), ("if-range", &etag)]).await;
            assert_eq!((status, body.as_slice()), (StatusCode::PARTIAL_CONTENT, b"hello".as_slice()));
        });
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn a_large_file_streams_in_chunks_and_ranges_of_it_are_exact() {
        let (base, d) = dir(StaticOptions::default());
        let expected = std::fs::read(base.join("big.bin")).unwrap();
        run(async {
            let res = d.serve(&Method::GET, &HeaderMap::new(), "big.bin", "/big.bin").await.unwrap();
            assert!(matches!(res.body(), Body::File(_)), "a large file is not read whole");
            let (status, _, body) = get(&d, "big.bin", &[]).await;
            assert_eq!(status, StatusCode::OK);
            assert!(body == expected);
            let (status, h, body) = get(&d, "big.bin", &[("range", "bytes=1000000-2999999")]).await;
            assert_eq!(status, StatusCode::PARTIAL_CONTENT);
            assert_eq!(h[CONTENT_LENGTH], "2000000");
            assert!(body == expected[1_000_000..3_000_000]);
        });
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn directories_redirect_then_serve_their_index_and_a_fallback_answers_the_rest() {
        let (base, d) = dir(StaticOptions { fallback: Some("index.html".into()), ..Default::default() });
        run(async {
            let res = d.serve(&Method::GET, &HeaderMap::new(), "docs", "/static/docs?x=1").await.unwrap();
            assert_eq!(res.status(), StatusCode::MOVED_PERMANENTLY);
            assert_eq!(res.headers()[LOCATION], "/static/docs/?x=1");
            let evil = d.serve(&Method::GET, &HeaderMap::new(), "docs", "//evil.example/docs").await.unwrap();
            assert_eq!(evil.headers()[LOCATION], "/evil.example/docs/", "never a protocol-relative redirect");
            assert_eq!(get(&d, "docs/", &[]).await.2, b"<h1>docs</h1>");
            assert_eq!(get(&d, "", &[]).await.2, b"<h1>home</h1>");
            let (status, h, body) = get(&d, "app/route/42", &[]).await;
            assert_eq!((status, body.as_slice()), (StatusCode::OK, b"<h1>home</h1>".as_slice()));
            assert_eq!(h[CONTENT_TYPE], "text/html; charset=utf-8");
            assert_eq!(
                get(&d, "../etc/passwd", &[]).await.2,
                b"<h1>home</h1>",
                "a refused path is only ever not found"
            );
        });
        std::fs::remove_dir_all(base).unwrap();
        let (base, d) = dir(StaticOptions { index: None, ..Default::default() });
        run(async {
            assert_eq!(get(&d, "docs/", &[]).await.0, StatusCode::NOT_FOUND);
            assert_eq!(get(&d, "missing", &[]).await.0, StatusCode::NOT_FOUND);
            assert_eq!(get(&d, "%2e%2e/x", &[]).await.0, StatusCode::NOT_FOUND);
        });
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn serves_should_agree_with_what_serving_finds() {
        for options in [
            StaticOptions::default(),
            StaticOptions { index: None, ..Default::default() },
            StaticOptions { fallback: Some("index.html".into()), ..Default::default() },
            StaticOptions { fallback: Some("gone.html".into()), index: None, ..Default::default() },
        ] {
            let (base, d) = dir(options);
            run(async {
                for tail in
                    ["a.txt", "", "docs", "docs/", "missing", "docs/missing", "../etc/passwd", "%2e%2e/x", "a.txt/"]
                {
                    let found = d.serve(&Method::GET, &HeaderMap::new(), tail, "/s").await.is_some();
                    assert_eq!(d.serves(tail), found, "{tail:?} with {:?}", d.options());
                }
            });
            assert!(crate::bodies::files::dir::is_file(&base.join("a.txt")));
            assert!(!crate::bodies::files::dir::is_file(&base.join("docs")), "a directory is not a file");
            assert!(!crate::bodies::files::dir::is_file(&base.join("missing")));
            std::fs::remove_dir_all(base).unwrap();
        }
    }

    #[test]
    fn a_file_changed_on_disk_is_served_fresh() {
        let (base, d) = dir(StaticOptions::default());
        run(async {
            let (_, first, body) = get(&d, "a.txt", &[]).await;
            assert_eq!(body, b"hello world");
            std::fs::write(base.join("a.txt"), "changed, and longer").unwrap();
            let (_, second, body) = get(&d, "a.txt", &[]).await;
            assert_eq!(body, b"changed, and longer");
            assert_ne!(first[ETAG], second[ETAG]);
        });
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn precompressed_siblings_are_served_when_accepted() {
        let (base, d) = dir(StaticOptions { precompressed: true, ..Default::default() });
        std::fs::write(base.join("a.txt.br"), "BROTLI-BYTES").unwrap();
        std::fs::write(base.join("a.txt.gz"), "GZIP-BYTES").unwrap();
        run(async {
            let (status, h, body) = get(&d, "a.txt", &[("accept-encoding", "gzip, br")]).await;
            assert_eq!((status, body.as_slice()), (StatusCode::OK, b"BROTLI-BYTES".as_slice()));
            assert_eq!(h[CONTENT_ENCODING], "br");
            assert_eq!(h[CONTENT_TYPE], "text/plain; charset=utf-8", "the type is the file's, not the sibling's");
            assert_eq!(h[VARY], "accept-encoding");
            assert!(h[ETAG].to_str().unwrap().ends_with("-br\""));
            let (_, h, body) = get(&d, "a.txt", &[("accept-encoding", "gzip")]).await;
            assert_eq!((h[CONTENT_ENCODING].to_str().unwrap(), body.as_slice()), ("gzip", b"GZIP-BYTES".as_slice()));
            let (_, h, body) = get(&d, "a.txt", &[("accept-encoding", "zstd")]).await;
            assert_eq!(body, b"hello world", "no .zst sibling: the file itself");
            assert!(!h.contains_key(CONTENT_ENCODING));
            assert_eq!(h[VARY], "accept-encoding", "the answer still varies by encoding");
            let (_, h, _) = get(&d, "a.txt", &[]).await;
            let identity = h[ETAG].to_str().unwrap().to_owned();
            let (status, _, _) = get(&d, "a.txt", &[("accept-encoding", "br"), ("if-none-match", &identity)]).await;
            assert_eq!(status, StatusCode::OK, "the identity tag does not validate the brotli variant");
        });
        std::fs::remove_dir_all(base).unwrap();
        let (base, d) = dir(StaticOptions::default());
        std::fs::write(base.join("a.txt.br"), "BROTLI-BYTES").unwrap();
        run(async {
            let (_, h, body) = get(&d, "a.txt", &[("accept-encoding", "br")]).await;
            assert_eq!(body, b"hello world", "off unless asked for");
            assert!(!h.contains_key(VARY));
        });
        std::fs::remove_dir_all(base).unwrap();
    }
}
