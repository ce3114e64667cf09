//! Answering a request from a directory: resolution, validators, conditional requests, ranges, HEAD, directory
//! index and redirect, an SPA fallback, and a cache of small files revalidated against the disk on every request.
//! The disk is touched only on tokio's blocking pool: the I/O thread never waits for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use bytes::Bytes;
use http::header::{
    ACCEPT_RANGES, ALLOW, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG,
    LAST_MODIFIED, LOCATION,
};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};

use super::body::FileBody;
use super::conditional::{self, Precondition, Validators};
use super::mime;
use super::range::{self, Ranged};
use super::resolve::{Found, Root};
use crate::compress::{Accepted, Compression, Encoding, TypeHint};
use crate::response::Body;

/// Files up to this size are kept in memory once read (revalidated by size and modification time).
pub const SMALL_FILE: u64 = 64 * 1024;
/// The most bytes the small-file cache holds; past it, it starts over.
const CACHE_BYTES: usize = 16 * 1024 * 1024;

/// How a directory is served.
#[derive(Debug, Clone)]
pub struct StaticOptions {
    /// The file served for a directory (`index.html`); `None` makes directories 404.
    pub index: Option<String>,
    /// Serve names starting with `.`.
    pub dotfiles: bool,
    /// Follow symbolic links whose targets are outside the directory.
    pub follow_outside_links: bool,
    /// `Cache-Control` sent with every file (`public, max-age=31536000, immutable` for hashed assets).
    pub cache_control: Option<HeaderValue>,
    /// A file (relative to the directory) answered, with 200, for paths that name nothing: an SPA's `index.html`.
    pub fallback: Option<String>,
    /// Serve `<file>.br`, `<file>.zst` or `<file>.gz`, when present and the client accepts that encoding, in
    /// place of the file (with `Content-Encoding`, its own `ETag`, and `Vary: Accept-Encoding` on every answer).
    pub precompressed: bool,
}

impl Default for StaticOptions {
    fn default() -> Self {
        Self {
            index: Some("index.html".into()),
            dotfiles: false,
            follow_outside_links: false,
            cache_control: None,
            fallback: None,
            precompressed: false,
        }
    }
}

/// A directory served as files.
#[derive(Debug)]
pub struct StaticDir {
    root: Root,
    options: StaticOptions,
    cache: Mutex<Cache>,
    coded: Mutex<CodedCache>,
}

#[derive(Debug, Default)]
struct Cache {
    files: HashMap<PathBuf, (u64, SystemTime, Bytes)>,
    bytes: usize,
}

/// Coded variants of small files, by file and coding, with the size and modification time of the file they
/// were made from.
#[derive(Debug, Default)]
struct CodedCache {
    files: HashMap<(PathBuf, Encoding), (u64, SystemTime, Bytes)>,
    bytes: usize,
}

/// What the blocking pool found for a request.
enum Lookup {
    Missing,
    Redirect,
    File {
        path: PathBuf,
        len: u64,
        modified: SystemTime,
        small: Option<Bytes>,
        file: Option<std::fs::File>,
        /// The `Content-Encoding` of a precompressed sibling served instead of the file (`path` stays the file's,
        /// for its type), or of a variant coded here.
        encoding: Option<Encoding>,
        /// The coding was made here, not read from a sibling: the tag is the file's, made weak (as for any
        /// compressed response), instead of a strong one of its own.
        weak: bool,
    },
}

impl StaticDir {
    /// Serves `dir`, which must be an existing directory.
    pub fn new(dir: impl AsRef<Path>, options: StaticOptions) -> std::io::Result<Self> {
        let mut root = Root::new(dir)?;
        root.dotfiles = options.dotfiles;
        root.follow_outside_links = options.follow_outside_links;
        Ok(Self { root, options, cache: Mutex::default(), coded: Mutex::default() })
    }

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
    /// request. Larger files are coded as they stream (see [`crate::compress`]).
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
        let accepted = if self.options.precompressed { accepted_encodings(headers) } else { Vec::new() };
        let looked =
            tokio::task::spawn_blocking(move || this.lookup(&tail, &accepted)).await.unwrap_or(Lookup::Missing);
        let looked = match compression {
            Some(c) if method == Method::GET && !headers.contains_key(http::header::RANGE) => {
                self.code(looked, headers, c)
            }
            _ => looked,
        };
        let coded = matches!(looked, Lookup::File { weak: true, .. });
        let mut res = respond(looked, method, headers, target, self.options.cache_control.as_ref());
        if coded || self.options.precompressed {
            if let Some(res) = res.as_mut() {
                crate::compress::add_vary(res.headers_mut());
            }
        }
        res
    }

    /// A small file's coded variant, when the client accepts a coding and the file is worth coding: from the cache
    /// when it holds one for the same size and modification time, else compressed now (on the I/O thread: at
    /// most 64 KiB, once per file and coding) and kept. A coding that does not shrink the file is not used.
    fn code(&self, mut looked: Lookup, headers: &HeaderMap, c: &Compression) -> Lookup {
        let Lookup::File { path, len, modified, small: Some(bytes), file: None, encoding: encoding @ None, weak } =
            &mut looked
        else {
            return looked;
        };
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let worth = bytes.len() >= c.threshold && c.compressible(mime::content_type(&name));
        let Some(coding) = Accepted::from_headers(headers).best(&c.encodings).filter(|_| worth) else { return looked };
        let key = (path.clone(), coding);
        let cached = {
            let held = self.coded.lock().unwrap_or_else(|e| e.into_inner());
            held.files.get(&key).filter(|(l, m, _)| l == len && m == modified).map(|(_, _, b)| b.clone())
        };
        let coded = cached.or_else(|| {
            let coded = crate::compress::encoder::compress(coding, c.level(coding), bytes).ok()?;
            let mut held = self.coded.lock().unwrap_or_else(|e| e.into_inner());
            if held.bytes + coded.len() > CACHE_BYTES {
                *held = CodedCache::default();
            }
            held.bytes += coded.len();
            held.files.insert(key, (*len, *modified, coded.clone()));
            Some(coded)
        });
        // `len` stays the file's: the tag is made from it.
        if let Some(coded) = coded.filter(|coded| coded.len() < bytes.len()) {
            *bytes = coded;
            *encoding = Some(coding);
            *weak = true;
        }
        looked
    }

    /// On the blocking pool: resolves the path (index and fallback included), and reads a small file or opens a
    /// large one.
    fn lookup(&self, tail: &str, accepted: &[Encoding]) -> Lookup {
        let found = match self.root.resolve(tail) {
            Some(Found::Directory(dir)) => {
                if !tail.is_empty() && !tail.ends_with('/') {
                    return Lookup::Redirect;
                }
                let Some(index) = &self.options.index else { return self.fallback() };
                match std::fs::metadata(dir.join(index)) {
                    Ok(meta) if meta.is_file() => Found::File(dir.join(index), meta),
                    _ => return self.fallback(),
                }
            }
            Some(found) => found,
            None => return self.fallback(),
        };
        let Found::File(path, meta) = found else { return Lookup::Missing };
        for &coding in accepted {
            let mut sibling = path.clone().into_os_string();
            sibling.push(coding.suffix());
            let sibling = PathBuf::from(sibling);
            let Ok(compressed) = std::fs::metadata(&sibling) else { continue };
            if !compressed.is_file() {
                continue;
            }
            if let Lookup::File { len, modified, small, file, .. } = open(sibling, &compressed, Some(&self.cache)) {
                return Lookup::File { path, len, modified, small, file, encoding: Some(coding), weak: false };
            }
        }
        open(path, &meta, Some(&self.cache))
    }

    fn fallback(&self) -> Lookup {
        // Resolved as a request path is: a fallback can no more leave the directory than a request can.
        let Some(name) = &self.options.fallback else { return Lookup::Missing };
        match self.root.resolve(name) {
            Some(Found::File(path, meta)) => open(path, &meta, Some(&self.cache)),
            _ => Lookup::Missing,
        }
    }
}

/// One file as a `GET`/`HEAD` answer (any other method gets 405): what a handler's `c.file(path)` sends. `None`
/// when there is no regular file there.
pub async fn serve_file(path: PathBuf, method: &Method, headers: &HeaderMap) -> Option<Response<Body>> {
    if method != Method::GET && method != Method::HEAD {
        let mut res = status(StatusCode::METHOD_NOT_ALLOWED);
        res.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(res);
    }
    let looked = tokio::task::spawn_blocking(move || match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => open(path, &meta, None),
        _ => Lookup::Missing,
    })
    .await
    .unwrap_or(Lookup::Missing);
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
    ) -> Result<Self, crate::InvalidResponse> {
        let fixed = crate::FixedResponse::new(200, headers, Bytes::new())?;
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

/// Reads a small file (through `cache` when given) or opens a large one.
fn open(path: PathBuf, meta: &std::fs::Metadata, cache: Option<&Mutex<Cache>>) -> Lookup {
    let len = meta.len();
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    if len <= SMALL_FILE {
        if let Some(cache) = cache {
            let held = cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((l, m, bytes)) = held.files.get(&path) {
                if *l == len && *m == modified {
                    return Lookup::File {
                        path,
                        len,
                        modified,
                        small: Some(bytes.clone()),
                        file: None,
                        encoding: None,
                        weak: false,
                    };
                }
            }
        }
        let Ok(read) = std::fs::read(&path) else { return Lookup::Missing };
        // Changed between the metadata and the read: serve what was read, with validators of its own size.
        let bytes = Bytes::from(read);
        let len = bytes.len() as u64;
        if let Some(cache) = cache {
            let mut held = cache.lock().unwrap_or_else(|e| e.into_inner());
            if held.bytes + bytes.len() > CACHE_BYTES {
                *held = Cache::default();
            }
            held.bytes += bytes.len();
            held.files.insert(path.clone(), (len, modified, bytes.clone()));
        }
        return Lookup::File { path, len, modified, small: Some(bytes), file: None, encoding: None, weak: false };
    }
    match std::fs::File::open(&path) {
        Ok(file) => Lookup::File { path, len, modified, small: None, file: Some(file), encoding: None, weak: false },
        Err(_) => Lookup::Missing,
    }
}

/// The precompressed encodings a request accepts, best first: q-values decide, and among equals brotli, then zstd,
/// then gzip (smallest first). `identity` is always acceptable here: the file itself is the fallback.
fn accepted_encodings(headers: &HeaderMap) -> Vec<Encoding> {
    Accepted::from_headers(headers).ranked(&Encoding::ALL)
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
    fn encodings_are_negotiated_by_q_value_then_size() {
        let order = |value: &str| -> Vec<&str> {
            accepted_encodings(&headers(&[("accept-encoding", value)])).into_iter().map(Encoding::token).collect()
        };
        assert_eq!(order("gzip, deflate, br, zstd"), ["br", "zstd", "gzip"]);
        assert_eq!(order("gzip;q=1, br;q=0.5"), ["gzip", "br"]);
        assert_eq!(order("br;q=0, gzip"), ["gzip"], "q=0 refuses");
        assert_eq!(order("*"), ["br", "zstd", "gzip"]);
        assert_eq!(order("*;q=0.1, gzip;q=0.9"), ["gzip", "br", "zstd"]);
        assert_eq!(order("identity"), Vec::<&str>::new());
        assert_eq!(order("br;q=2, gzip;q=abc, x-gzip"), ["gzip"], "malformed weights drop their coding");
        assert!(accepted_encodings(&HeaderMap::new()).is_empty());
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
