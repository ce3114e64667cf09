//! The scenario in plain hyper on one current-thread tokio runtime: what one core can do with no framework and
//! no JavaScript. Reads `PORT`; with `PROTOCOL` (compare-fair's `--protocol`) it serves HTTP/1.1 and HTTP/2 on one
//! port (h2c by the client preface), and with `TLS_CERT` and `TLS_KEY` it does so over rustls (ring, ALPN `h2`
//! then `http/1.1`): the same stack as Gust's engine, without Gust.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

fn main() {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(3000);
    // Plain HTTP/1.1 as before unless a protocol is asked for: the HTTP/1.1 figures stay comparable.
    let both = std::env::var_os("PROTOCOL").is_some();
    let tls = tls_acceptor();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await.expect("bind");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let tls = tls.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(handle);
                match tls {
                    Some(acceptor) => {
                        let Ok(stream) = acceptor.accept(stream).await else { return };
                        let _ = auto::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                    None if both => {
                        let _ = auto::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                    None => {
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                }
            });
        }
    });
}

/// The rustls acceptor for `TLS_CERT` and `TLS_KEY` (PEM files), when both are set.
fn tls_acceptor() -> Option<tokio_rustls::TlsAcceptor> {
    let (cert, key) = (std::env::var("TLS_CERT").ok()?, std::env::var("TLS_KEY").ok()?);
    let certs = CertificateDer::pem_file_iter(&cert).expect("TLS_CERT").collect::<Result<Vec<_>, _>>().expect("certs");
    let key = PrivateKeyDer::from_pem_file(&key).expect("TLS_KEY");
    let mut config = rustls::ServerConfig::builder_with_provider(rustls::crypto::ring::default_provider().into())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("certificate and key");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Some(tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config)))
}

type Body = Either<Full<Bytes>, Frames>;

async fn handle(req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path();
    let streamed = [
        ("/stream/", Stream::Lines, TEXT),
        ("/download/", Stream::Download, HeaderValue::from_static("application/octet-stream")),
        ("/sse/", Stream::Events, HeaderValue::from_static("text/event-stream")),
    ];
    for (prefix, kind, content_type) in streamed {
        if req.method() == Method::GET && path.starts_with(prefix) {
            let n = decode(&path[prefix.len()..], false);
            let mut res = Response::new(Either::Right(Frames { n, next: 0, kind }));
            res.headers_mut().insert(CONTENT_TYPE, content_type);
            return Ok(res);
        }
    }
    Ok(match (req.method(), path) {
        (&Method::GET, "/") => reply(StatusCode::OK, TEXT, Bytes::from_static(b"Hi")),
        (&Method::GET, p) if p.starts_with("/id/") => {
            let id = decode(&p[4..], false);
            let name = req
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("name=")))
                .map(|v| decode(v, true))
                .unwrap_or_default();
            let mut res = reply(StatusCode::OK, TEXT, Bytes::from(format!("{id} {name}")));
            res.headers_mut().insert("x-powered-by", HeaderValue::from_static("benchmark"));
            res
        }
        (&Method::POST, "/json") => {
            let body = match req.into_body().collect().await {
                Ok(body) => body.to_bytes(),
                Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, TEXT, Bytes::new())),
            };
            match serde_json::from_slice::<serde_json::Value>(&body) {
                Ok(value) => reply(StatusCode::OK, JSON, Bytes::from(value.to_string())),
                Err(_) => reply(StatusCode::BAD_REQUEST, TEXT, Bytes::from_static(b"Malformed JSON")),
            }
        }
        _ => reply(StatusCode::NOT_FOUND, TEXT, Bytes::from_static(b"Not Found")),
    })
}

/// Which streamed route a body answers.
#[derive(Clone, Copy)]
enum Stream {
    /// `/stream/:n`: eight lines `n:i`.
    Lines,
    /// `/download/:n`: `n:`, 64 chunks of 16 KiB of `x`, `:n` and a newline (1 MiB and a few bytes).
    Download,
    /// `/sse/:n`: sixteen events `data: n:i`.
    Events,
}

/// 16 KiB of `x`, shared by every download.
static X16: [u8; 16 * 1024] = [b'x'; 16 * 1024];

/// A streamed body: each piece its own frame, sent chunked (no length is known up front).
struct Frames {
    n: String,
    next: u32,
    kind: Stream,
}

impl hyper::body::Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let i = self.next;
        self.next += 1;
        let n = &self.n;
        let piece = match (self.kind, i) {
            (Stream::Lines, 0..=7) => Bytes::from(format!("{n}:{}\n", i + 1)),
            (Stream::Download, 0) => Bytes::from(format!("{n}:")),
            (Stream::Download, 1..=64) => Bytes::from_static(&X16),
            (Stream::Download, 65) => Bytes::from(format!(":{n}\n")),
            (Stream::Events, 0..=15) => Bytes::from(format!("data: {n}:{}\n\n", i + 1)),
            _ => return Poll::Ready(None),
        };
        Poll::Ready(Some(Ok(Frame::data(piece))))
    }
}

fn reply(status: StatusCode, content_type: HeaderValue, body: Bytes) -> Response<Body> {
    let mut res = Response::new(Either::Left(Full::new(body)));
    *res.status_mut() = status;
    res.headers_mut().insert(CONTENT_TYPE, content_type);
    res
}

/// Percent-decoding (and `+` as space in query values), lossy on invalid UTF-8.
fn decode(raw: &str, plus_is_space: bool) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(b) = hex {
                    out.push(b);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
