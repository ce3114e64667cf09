//! The test server: a standard set of routes, and a handler thread that answers them by handler index, from its
//! own thread as JavaScript does (echoes, slow answers, streams, streamed uploads).

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use gust_core::wire;
use gust_core::{Config, FixedResponse, Handler, RequestBatch, RouteTable, Server, Target};

use super::answers::{answer_batch, chunk_batch, read_batch, stream_head};
use super::records::{body_events, decode_all};

/// Handler indexes the test routes use.
pub const ECHO: u32 = 0;
pub const NEVER: u32 = 1;
pub const BAD_HEADER: u32 = 2;
pub const SLOW: u32 = 3;
/// Streams `first\n` at once, `second\n` 150 ms later, then ends (or, with `?abort`, fails instead); with
/// `?length`, declares `content-length: 13` first; with `?big`, writes [`BIG_CHUNKS`] chunks of 16 KiB (more
/// than the kernel's socket buffers hold) as fast as the engine takes them, pausing while it reports the stream
/// full.
pub const STREAM: u32 = 4;
/// Chunks of the `?big` stream: 32 MiB.
pub const BIG_CHUNKS: usize = 2048;
/// Reads the body as a stream, one read at a time, and answers `got N` with its byte count (N counts the inline
/// start too); a body that ends early is answered with its reason (`too large`, `timeout`, `broken`). With
/// `?refuse` it answers 413 without reading; with `?echo` it streams the body back as it reads it.
pub const UPLOAD: u32 = 5;

/// The handler the engine is given: each batch goes to the handler thread.
pub(super) struct Forward(pub(super) Mutex<mpsc::Sender<RequestBatch>>);

impl Handler for Forward {
    fn handle(&self, batch: RequestBatch) -> Result<(), gust_core::Closed> {
        let tx = self.0.lock().unwrap();
        tx.send(batch).map_err(|_| gust_core::Closed)
    }
}

/// A server with a standard set of routes and a handler thread answering by handler index.
pub struct TestServer {
    pub server: Arc<Server>,
    pub batches: Arc<Mutex<Vec<usize>>>,
    /// Event records seen in batches: `(kind, flags, id)`.
    pub events: Arc<Mutex<Vec<(u8, u16, u32)>>>,
    /// What the `?big` stream saw: `(writes the engine reported full, drain events it waited for)`.
    pub big: Arc<Mutex<(usize, usize)>>,
}

impl TestServer {
    pub fn addr(&self) -> SocketAddr {
        self.server.local_addr().expect("a TCP server")
    }
}

pub fn routes() -> RouteTable {
    let mut b = RouteTable::builder();
    let hi =
        FixedResponse::new(200, [("content-type", "text/plain; charset=utf-8")], Bytes::from_static(b"Hi")).unwrap();
    b.add("GET", "/", Target::Fixed(Arc::new(hi))).unwrap();
    b.add("GET", "/echo/:id", Target::Dynamic(ECHO)).unwrap();
    b.add("POST", "/echo/:id", Target::Dynamic(ECHO)).unwrap();
    b.add("ALL", "/any/*", Target::Dynamic(ECHO)).unwrap();
    b.add("GET", "/never", Target::Dynamic(NEVER)).unwrap();
    b.add("GET", "/bad-header", Target::Dynamic(BAD_HEADER)).unwrap();
    b.add("GET", "/slow", Target::Dynamic(SLOW)).unwrap();
    b.add("GET", "/stream", Target::Dynamic(STREAM)).unwrap();
    b.add("POST", "/upload", Target::Dynamic(UPLOAD)).unwrap();
    b.add("POST", "/upload-big", Target::Dynamic(UPLOAD + 100)).unwrap();
    b.body_limit(UPLOAD + 100, 1 << 40);
    b.build()
}

pub fn start(config: Config) -> TestServer {
    start_with(config, routes())
}

/// The usual routes and `GET /big`, a turbo route answering `size` bytes of `z` whole.
pub fn routes_with_big(size: usize) -> RouteTable {
    let mut b = RouteTable::builder();
    let big =
        FixedResponse::new(200, [("content-type", "application/octet-stream")], Bytes::from(vec![b'z'; size])).unwrap();
    b.add("GET", "/big", Target::Fixed(Arc::new(big))).unwrap();
    b.add("GET", "/", Target::Dynamic(ECHO)).unwrap();
    b.build()
}

pub fn start_with(mut config: Config, routes: RouteTable) -> TestServer {
    config.addrs = vec!["127.0.0.1:0".parse().unwrap()];
    start_bound(config, routes)
}

/// A server with no socket: only in-memory connections reach it.
pub fn start_in_memory(mut config: Config) -> TestServer {
    config.addrs = Vec::new();
    start_bound(config, routes())
}

fn start_bound(config: Config, routes: RouteTable) -> TestServer {
    let (tx, rx) = mpsc::channel::<RequestBatch>();
    let server = Arc::new(super::engine::start_server(config, routes, Arc::new(Forward(Mutex::new(tx)))).unwrap());
    let responder = server.responder();
    let batches = Arc::new(Mutex::new(Vec::new()));
    let seen = batches.clone();
    let events = Arc::new(Mutex::new(Vec::new()));
    let heard = events.clone();
    let big = Arc::new(Mutex::new((0, 0)));
    let big_seen = big.clone();
    // Streamed uploads being read: id -> (bytes so far, echoing).
    let mut uploads: std::collections::HashMap<u32, (usize, bool)> = std::collections::HashMap::new();
    // Drain events for the `?big` stream, by id.
    let drains: Arc<Mutex<std::collections::HashMap<u32, mpsc::Sender<()>>>> = Arc::default();
    std::thread::spawn(move || {
        for batch in rx {
            seen.lock().unwrap().push(batch.len());
            let mut answers = Vec::new();
            let mut later = Vec::new();
            let bytes = batch.into_bytes();
            let (decoded, batch_events) = decode_all(&bytes);
            for (id, flags, data) in body_events(&bytes) {
                let Some((got, echo)) = uploads.get_mut(&id) else { continue };
                *got += data.len();
                let echo = *echo;
                if echo && !data.is_empty() {
                    responder.respond(chunk_batch(id, Bytes::from(data), false, false).records());
                }
                let reason = match flags {
                    0 => {
                        responder.respond(read_batch(id, false).records());
                        continue;
                    }
                    wire::event::BODY_END => format!("got {got}"),
                    wire::event::BODY_TOO_LARGE => "too large".to_owned(),
                    wire::event::BODY_TIMEOUT => "timeout".to_owned(),
                    wire::event::BODY_CLOSED => "closed".to_owned(),
                    _ => "broken".to_owned(),
                };
                if echo {
                    responder.respond(
                        chunk_batch(id, Bytes::new(), flags == wire::event::BODY_END, flags != wire::event::BODY_END)
                            .records(),
                    );
                } else {
                    answers.push((id, 200, vec![], Bytes::from(reason)));
                }
                uploads.remove(&id);
            }
            for (kind, _, id) in &batch_events {
                if *kind == wire::Kind::Drain as u8 {
                    if let Some(tx) = drains.lock().unwrap().get(id) {
                        let _ = tx.send(());
                    }
                }
            }
            heard.lock().unwrap().extend(batch_events);
            let texts: Vec<String> = decoded
                .iter()
                .map(|r| {
                    let headers = r.headers.replace('\n', "|");
                    format!(
                        "{} {} {:?} {} path={} peer={}{}{}",
                        r.method,
                        r.url,
                        r.params,
                        headers,
                        r.path,
                        r.peer,
                        if r.secure { " tls" } else { "" },
                        if r.http2 { " h2" } else { "" }
                    )
                })
                .collect();
            for (r, text) in decoded.iter().zip(&texts) {
                match r.handler {
                    ECHO => {
                        let mut body = text.clone().into_bytes();
                        body.extend_from_slice(b"\n");
                        body.extend_from_slice(&r.body);
                        let mut headers = vec![("x-set", "a"), ("x-set", "b")];
                        if r.secure {
                            headers.push(("x-tls", r.tls.as_str()));
                        }
                        answers.push((r.id, 200, headers, Bytes::from(body)));
                    }
                    BAD_HEADER => answers.push((r.id, 200, vec![("x-bad", "a\r\nx-evil: 1")], Bytes::new())),
                    SLOW => later.push(r.id),
                    UPLOAD | 105 if r.url.ends_with("?refuse") => {
                        answers.push((r.id, 413, vec![], Bytes::from_static(b"refused")));
                    }
                    UPLOAD | 105 if !r.streamed => {
                        answers.push((r.id, 200, vec![], Bytes::from(format!("got {}", r.body.len()))));
                    }
                    UPLOAD | 105 => {
                        let echo = r.url.ends_with("?echo");
                        if echo {
                            responder.respond(stream_head(r.id, &[], Bytes::from(r.body.clone())).records());
                        }
                        uploads.insert(r.id, (r.body.len(), echo));
                        responder.respond(read_batch(r.id, false).records());
                    }
                    STREAM => {
                        let (id, query) = (r.id, r.url.split_once('?').map_or("", |(_, q)| q).to_owned());
                        let length: Vec<(&str, &str)> =
                            if query == "length" { vec![("content-length", "13")] } else { vec![] };
                        let first = if query == "big" { Bytes::new() } else { Bytes::from_static(b"first\n") };
                        responder.respond(stream_head(id, &length, first).records());
                        let responder = responder.clone();
                        let (tx, drained) = mpsc::channel();
                        drains.lock().unwrap().insert(id, tx);
                        let big = big_seen.clone();
                        std::thread::spawn(move || stream_rest(&responder, id, &query, &drained, &big));
                    }
                    _ => {}
                }
            }
            responder.respond(answer_batch(&answers).records());
            if !later.is_empty() {
                let responder = responder.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    let answers: Vec<_> =
                        later.into_iter().map(|id| (id, 200, vec![], Bytes::from_static(b"slow"))).collect();
                    responder.respond(answer_batch(&answers).records());
                });
            }
        }
    });
    TestServer { server, batches, events, big }
}

/// The rest of a `/stream` response, written from its own thread as JavaScript would over several turns.
fn stream_rest(
    responder: &gust_core::Responder,
    id: u32,
    query: &str,
    drained: &mpsc::Receiver<()>,
    big: &Mutex<(usize, usize)>,
) {
    if query == "big" {
        let chunk = Bytes::from(vec![b'x'; 16 * 1024]);
        for i in 0..BIG_CHUNKS {
            let outcome = responder.respond(chunk_batch(id, chunk.clone(), i + 1 == BIG_CHUNKS, false).records());
            if outcome.full.contains(&id) {
                big.lock().unwrap().0 += 1;
                if drained.recv_timeout(Duration::from_secs(10)).is_err() {
                    return;
                }
                big.lock().unwrap().1 += 1;
            }
        }
        return;
    }
    std::thread::sleep(Duration::from_millis(150));
    responder.respond(chunk_batch(id, Bytes::from_static(b"second\n"), false, false).records());
    responder.respond(chunk_batch(id, Bytes::new(), query != "abort", query == "abort").records());
}
