//! HTTP/2 over real sockets: h2c by prior knowledge on a plain port and h2 by ALPN over TLS, beside HTTP/1.1 on
//! the same port; turbo and dynamic routes, many streams at once on one connection, request bodies, the host
//! from `:authority`, 404/405, `http2: false`, the idle timeout ending a connection with no stream open, the send
//! timeout sparing streams that are quiet or read, and the settings: advertised, refused by name, and the header
//! list limit.

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use gust_core::{Config, TlsOptions};
use http::{Method, Request, StatusCode};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use support::*;
use tokio::net::TcpStream;

type Sender = h2::client::SendRequest<Bytes>;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// An h2c connection (prior knowledge): the client sends the preface first.
async fn h2c(addr: std::net::SocketAddr) -> Sender {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

/// A request and its whole answer: `(status, headers, body)`. A body goes with its `content-length`, as browsers
/// send it: without one the engine hands over only what already arrived and streams the rest, and whether the DATA
/// frame is in by then is a race the echo handler (which reads only the first bytes) would lose now and then.
async fn send(client: &Sender, method: Method, uri: &str, body: &[u8]) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    let mut client = client.clone().ready().await.unwrap();
    let mut req = Request::builder().method(method).uri(uri);
    if !body.is_empty() {
        req = req.header("content-length", body.len());
    }
    let req = req.body(()).unwrap();
    let (response, mut stream) = client.send_request(req, body.is_empty()).unwrap();
    if !body.is_empty() {
        stream.send_data(Bytes::copy_from_slice(body), true).unwrap();
    }
    let (head, mut recv) = response.await.unwrap().into_parts();
    let mut out = Vec::new();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.unwrap();
        let _ = recv.flow_control().release_capacity(chunk.len());
        out.extend_from_slice(&chunk);
    }
    (head.status, head.headers, out)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn h2c_serves_turbo_and_dynamic_routes_on_the_port_that_serves_http1() {
    let t = start(Config::default());
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let (status, headers, body) = send(&client, Method::GET, "http://localhost/", b"").await;
        assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"Hi"[..]));
        assert_eq!(headers.get("content-type").unwrap(), "text/plain; charset=utf-8");
        let (status, headers, body) = send(&client, Method::POST, "http://localhost/echo/caf%C3%A9?q=1", b"abc").await;
        assert_eq!(status, 200);
        assert_eq!(headers.get_all("x-set").iter().count(), 2, "repeated headers survive");
        let text = String::from_utf8_lossy(&body);
        let line = text.lines().next().unwrap();
        assert!(line.starts_with("POST /echo/caf%C3%A9?q=1 [\"café\"]"), "{line}");
        assert!(line.contains("host:localhost"), "the host comes from :authority: {line}");
        assert!(line.ends_with(" h2") && !line.contains(" tls"), "the handler is told HTTP/2: {line}");
        assert!(text.ends_with("\nabc"), "the body crossed: {text}");
        let (status, _, body) = send(&client, Method::GET, "http://localhost/nope", b"").await;
        assert_eq!((status, body.as_slice()), (StatusCode::NOT_FOUND, &b"Not Found"[..]));
        let (status, headers, _) = send(&client, Method::DELETE, "http://localhost/echo/1", b"").await;
        assert_eq!(
            (status, headers.get("allow").unwrap().to_str().unwrap()),
            (StatusCode::METHOD_NOT_ALLOWED, "GET, HEAD, POST, OPTIONS")
        );
        let (status, _, body) = send(&client, Method::HEAD, "http://localhost/", b"").await;
        assert_eq!((status, body.len()), (StatusCode::OK, 0));
    });
    // The same port still speaks HTTP/1.1.
    let res = roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.body, b"Hi");
}

#[test]
fn a_body_without_its_length_is_streamed_to_the_handler_as_it_arrives() {
    let t = start(Config::default());
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let mut client = client.ready().await.unwrap();
        let req = Request::builder().method(Method::POST).uri("http://localhost/upload").body(()).unwrap();
        let (response, mut stream) = client.send_request(req, false).unwrap();
        stream.send_data(Bytes::from_static(b"first "), false).unwrap();
        // The handler already holds the request while the rest is on its way.
        tokio::time::sleep(Duration::from_millis(100)).await;
        stream.send_data(Bytes::from(vec![b'x'; 70_000]), true).unwrap();
        let (head, mut recv) = response.await.unwrap().into_parts();
        let mut out = Vec::new();
        while let Some(chunk) = recv.data().await {
            out.extend_from_slice(&chunk.unwrap());
        }
        assert_eq!((head.status, String::from_utf8_lossy(&out).as_ref()), (StatusCode::OK, "got 70006"));
    });
}

#[test]
fn many_streams_on_one_connection_are_answered_concurrently() {
    let t = start(Config::default());
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let requests = (0..100).map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let (status, _, body) = send(&client, Method::GET, &format!("http://localhost/echo/{i}"), b"").await;
                assert_eq!(status, 200);
                assert!(String::from_utf8_lossy(&body).starts_with(&format!("GET /echo/{i} ")));
            })
        });
        for r in requests.collect::<Vec<_>>() {
            r.await.unwrap();
        }
    });
    assert!(t.batches.lock().unwrap().iter().any(|&n| n > 1), "concurrent streams are handed over in shared batches");
}

#[test]
fn h2_is_chosen_by_alpn_over_tls() {
    let t = start(config(|c| c.tls = Some(TlsOptions::new(fixture("cert.pem"), fixture("key.pem")))));
    runtime().block_on(async {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&fixture("ca.pem")) {
            roots.add(cert.unwrap()).unwrap();
        }
        let mut config =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let tcp = TcpStream::connect(t.addr()).await.unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await.unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (client, conn) = h2::client::handshake(tls).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let (status, _, body) = send(&client, Method::GET, "https://localhost/echo/x", b"").await;
        assert_eq!(status, 200);
        let line = String::from_utf8_lossy(&body).lines().next().unwrap().to_owned();
        assert!(line.ends_with(" tls h2"), "{line}");
    });
}

#[test]
fn with_http2_off_the_preface_is_not_http2() {
    let t = start(config(|c| c.http2.enabled = false));
    runtime().block_on(async {
        let tcp = TcpStream::connect(t.addr()).await.unwrap();
        let failed = match h2::client::handshake(tcp).await {
            Err(_) => true,
            Ok((client, conn)) => {
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                let mut client = match client.ready().await {
                    Ok(c) => c,
                    Err(_) => return,
                };
                let req = Request::builder().uri("http://localhost/").body(()).unwrap();
                match client.send_request(req, true) {
                    Ok((response, _)) => response.await.is_err(),
                    Err(_) => true,
                }
            }
        };
        assert!(failed, "an HTTP/1.1-only server does not answer HTTP/2");
    });
}

#[test]
fn an_idle_http2_connection_is_closed_after_the_idle_timeout() {
    let t = start(config(|c| c.idle_timeout = Duration::from_millis(300)));
    runtime().block_on(async {
        let tcp = TcpStream::connect(t.addr()).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        let done = tokio::spawn(conn);
        let (status, _, _) = send(&client, Method::GET, "http://localhost/", b"").await;
        assert_eq!(status, 200);
        let ended = tokio::time::timeout(Duration::from_secs(5), done).await;
        assert!(ended.is_ok(), "the server ended the idle connection (GOAWAY)");
    });
}

#[test]
fn a_stream_quiet_for_longer_than_the_send_timeout_is_not_cut() {
    // `/stream` sends its second chunk 150 ms after its first: three send timeouts with nothing owed to the client.
    let t = start(config(|c| c.send_timeout = Duration::from_millis(50)));
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let (status, _, body) = send(&client, Method::GET, "http://localhost/stream", b"").await;
        assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"first\nsecond\n"[..]));
    });
}

#[test]
fn a_client_that_reads_a_long_stream_is_not_cut_by_a_short_send_timeout() {
    // 32 MiB through 64 KiB windows granted as the client reads: flow control waits on it all the time, briefly.
    let t = start(config(|c| c.send_timeout = Duration::from_millis(300)));
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let (status, _, body) = send(&client, Method::GET, "http://localhost/stream?big", b"").await;
        assert_eq!((status, body.len()), (StatusCode::OK, BIG_CHUNKS * 16 * 1024));
    });
}

#[test]
fn a_download_cancelled_while_it_waits_for_window_leaves_nothing_owed() {
    let t = start(config(|c| c.send_timeout = Duration::from_millis(300)));
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let mut ready = client.clone().ready().await.unwrap();
        let req = Request::builder().uri("http://localhost/stream?big").body(()).unwrap();
        let (response, mut request) = ready.send_request(req, true).unwrap();
        let (head, body) = response.await.unwrap().into_parts();
        assert_eq!(head.status, 200);
        // The client reads nothing: its 64 KiB window fills and the rest waits in the server, until the client
        // cancels the download, well within the send timeout.
        tokio::time::sleep(Duration::from_millis(100)).await;
        request.send_reset(h2::Reason::CANCEL);
        drop(body);
        // What waited went with the stream: three send timeouts later, the connection still serves.
        tokio::time::sleep(Duration::from_millis(900)).await;
        let (status, _, body) = send(&client, Method::GET, "http://localhost/", b"").await;
        assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"Hi"[..]));
    });
}

#[test]
fn a_preface_sent_in_pieces_is_still_http2() {
    use std::io::{Read, Write};
    let t = start(Config::default());
    let mut s = connect(t.addr());
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    s.write_all(&preface[..5]).unwrap();
    std::thread::sleep(Duration::from_millis(40));
    s.write_all(&preface[5..]).unwrap();
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    s.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    let mut head = [0; 9];
    s.read_exact(&mut head).unwrap();
    assert_eq!(head[3], 4, "the server answers with its SETTINGS frame, not HTTP/1.1: {head:?}");
}

#[test]
fn settings_are_advertised_and_bad_ones_refused_by_name() {
    let t = start(config(|c| {
        c.http2.max_concurrent_streams = 7;
        c.http2.stream_window = 100_000;
    }));
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let (status, _, _) = send(&client, Method::GET, "http://localhost/", b"").await;
        assert_eq!(status, 200);
        assert_eq!(client.current_max_send_streams(), 7, "SETTINGS_MAX_CONCURRENT_STREAMS");
    });
    for (set, name) in [
        (Box::new(|c: &mut Config| c.http2.stream_window = 10) as Box<dyn Fn(&mut Config)>, "http2.stream_window"),
        (Box::new(|c: &mut Config| c.http2.max_concurrent_streams = 0), "http2.max_concurrent_streams"),
        (Box::new(|c: &mut Config| c.http2.keep_alive_interval = Some(Duration::ZERO)), "http2.keep_alive_interval"),
        (Box::new(|c: &mut Config| c.http2.max_header_list_size = Some(100)), "http2.max_header_list_size"),
    ] {
        let mut c = Config::default();
        set(&mut c);
        let err = c.validate().unwrap_err();
        assert!(err.is_config() && err.to_string().contains(name), "{err}");
    }
}

#[test]
fn a_header_list_past_its_own_limit_gets_431_and_the_connection_goes_on() {
    // The limit is HTTP/2's own: below the server's 16 KiB head limit, or above it.
    for (limit, value, expected) in [(10_000, 12_000, 431), (10_000, 6_000, 200), (64 * 1024, 40_000, 200)] {
        let t = start(config(|c| c.http2.max_header_list_size = Some(limit)));
        runtime().block_on(async {
            let client = h2c(t.addr()).await;
            let mut ready = client.clone().ready().await.unwrap();
            let req = Request::builder().uri("http://localhost/echo/big").header("x-big", "v".repeat(value));
            let (response, _) = ready.send_request(req.body(()).unwrap(), true).unwrap();
            let status = response.await.unwrap().status();
            assert_eq!(status, expected, "a {value}-byte header under a {limit}-byte list limit");
            let (status, _, _) = send(&client, Method::GET, "http://localhost/", b"").await;
            assert_eq!(status, 200, "the next stream on the connection is answered");
        });
    }
}

#[test]
fn a_whole_body_paused_by_flow_control_longer_than_the_idle_timeout_is_not_cut() {
    // A 1 MiB turbo answer (no handler: nothing in flight) of which the client's 64 KiB window lets little out:
    // the client reads nothing for ten idle timeouts, then reads it all. Bytes owed to a client are not
    // idleness; only the send timeout may end this.
    let size = 1 << 20;
    let t = start_with(config(|c| c.idle_timeout = Duration::from_millis(100)), routes_with_big(size));
    runtime().block_on(async {
        let client = h2c(t.addr()).await;
        let mut ready = client.clone().ready().await.unwrap();
        let req = Request::builder().uri("http://localhost/big").body(()).unwrap();
        let (response, _) = ready.send_request(req, true).unwrap();
        let (head, mut body) = response.await.unwrap().into_parts();
        assert_eq!(head.status, 200);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let mut got = 0;
        while let Some(chunk) = body.data().await {
            let chunk = chunk.expect("the stream goes on");
            let _ = body.flow_control().release_capacity(chunk.len());
            got += chunk.len();
        }
        assert_eq!(got, size, "the whole body arrived");
    });
}
