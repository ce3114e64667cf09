//! A test handler that answers from its own thread (as JavaScript does), and raw HTTP/1.1 helpers.
#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use gust_core::wire::{
    self,
    answer::{Text, ABORT, BINARY_BODY, END, STREAM as STREAM_FLAG},
};
use gust_core::{AnswerBatch, Config, FixedResponse, Handler, RequestBatch, RouteTable, Server, Target};

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

/// A default config changed by `f` (`Config` is non-exhaustive: no struct literal outside the crate).
pub fn config(f: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config::default();
    f(&mut c);
    c
}

/// One decoded request of a batch.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub id: u32,
    pub handler: u32,
    pub method: String,
    pub url: String,
    pub path: String,
    pub params: Vec<String>,
    pub headers: String,
    pub peer: String,
    pub body: Vec<u8>,
    /// The body streams: `body` is only its start.
    pub streamed: bool,
    /// The request came over TLS.
    pub secure: bool,
    /// The request came as HTTP/2.
    pub http2: bool,
    /// The record's TLS section as text: `v3 alpn=h2 sni=localhost asked authorized err= cert=N` (see
    /// [`tls_text`]), empty without TLS.
    pub tls: String,
}

/// A record's TLS section (`wire::tls`) as text.
pub fn tls_text(s: &[u8]) -> String {
    let alpn_len = usize::from(s[2]);
    let alpn = String::from_utf8_lossy(&s[3..3 + alpn_len]);
    let at = 3 + alpn_len;
    let sni_len = usize::from(s[at]);
    let sni = String::from_utf8_lossy(&s[at + 1..at + 1 + sni_len]);
    let at = at + 1 + sni_len;
    let err_len = usize::from(u16::from_le_bytes([s[at], s[at + 1]]));
    let err = String::from_utf8_lossy(&s[at + 2..at + 2 + err_len]);
    let cert = s.len() - (at + 2 + err_len);
    let flag = |bit: u8, name: &str| if s[1] & bit != 0 { format!(" {name}") } else { String::new() };
    format!(
        "v{} alpn={alpn} sni={sni}{}{} err={err} cert={cert}",
        s[0],
        flag(gust_core::wire::tls::CLIENT_CERT_ASKED, "asked"),
        flag(gust_core::wire::tls::AUTHORIZED, "authorized")
    )
}

/// One body event: `(id, flags, bytes)`.
pub type BodyEvent = (u32, u16, Vec<u8>);

/// The body events of a batch, in order.
pub fn body_events(bytes: &[u8]) -> Vec<BodyEvent> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if word(at) & 0xff == wire::Kind::Body as usize {
            let len = word(at + 12);
            out.push((word(at + 8) as u32, (word(at) >> 16) as u16, bytes[at + 16..at + 16 + len].to_vec()));
        }
        at += word(at + 4);
    }
    out
}

/// A read record: the handler wants the next bytes of request `id`'s body (or, with `stop`, none).
pub fn read_batch(id: u32, stop: bool) -> AnswerBatch {
    let meta = [6 | u32::from(wire::VERSION) << 8 | u32::from(stop) << 16, id, 0];
    AnswerBatch::decode(&meta, Text::Ascii(Bytes::new()), vec![]).unwrap()
}

pub fn decode(bytes: &[u8]) -> Vec<Decoded> {
    decode_all(bytes).0
}

/// The requests of a batch, and its event records as `(kind, flags, id)`.
pub fn decode_all(bytes: &[u8]) -> (Vec<Decoded>, Vec<(u8, u16, u32)>) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut events = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if word(at) & 0xff != 1 {
            assert_eq!(word(at) >> 8 & 0xff, usize::from(wire::VERSION));
            events.push((word(at) as u8, (word(at) >> 16) as u16, word(at + 8) as u32));
            at += word(at + 4);
            continue;
        }
        let [tag, record_len, id, handler, code, method_len, url_len, path_len, nparams, headers_len, body_len, port, peer_len] =
            std::array::from_fn(|i| word(at + i * 4));
        assert_eq!(tag & 0xffff, 1 | usize::from(wire::VERSION) << 8, "a request record of this version");
        assert_eq!(record_len % 4, 0, "records are padded to whole words");
        let end = at + record_len;
        at += gust_core::wire::request::HEADER_LEN;
        let lengths: Vec<usize> = (0..nparams).map(|i| word(at + i * 4)).collect();
        at += 4 * nparams;
        let method = if code == 255 {
            String::from_utf8(bytes[at..at + method_len].to_vec()).unwrap()
        } else {
            gust_core::method::METHODS[code].to_owned()
        };
        at += method_len;
        let url = String::from_utf8(bytes[at..at + url_len].to_vec()).unwrap();
        at += url_len;
        let path = String::from_utf8(bytes[at..at + path_len].to_vec()).unwrap();
        at += path_len;
        let mut params = Vec::new();
        for len in lengths {
            params.push(String::from_utf8(bytes[at..at + len].to_vec()).unwrap());
            at += len;
        }
        let headers = String::from_utf8_lossy(&bytes[at..at + headers_len]).into_owned();
        at += headers_len;
        let peer = format!("{}:{port}", String::from_utf8_lossy(&bytes[at..at + peer_len]));
        at += peer_len;
        let body = bytes[at..at + body_len].to_vec();
        at += body_len;
        let secure = (tag >> 16) & usize::from(gust_core::wire::request::TLS) != 0;
        let mut tls = String::new();
        if secure {
            // The TLS section follows the body; the record's last word is its length.
            let len = word(end - 4);
            tls = tls_text(&bytes[at..at + len]);
            at += len + 4;
        }
        assert!(end - at < 4, "the record length covers the record and at most 3 bytes of padding");
        at = end;
        let streamed = (tag >> 16) & usize::from(gust_core::wire::request::BODY_STREAM) != 0;
        let http2 = (tag >> 16) & usize::from(gust_core::wire::request::HTTP_2) != 0;
        out.push(Decoded {
            id: id as u32,
            handler: handler as u32,
            method,
            url,
            path,
            params,
            headers,
            peer,
            body,
            streamed,
            secure,
            http2,
            tls,
        });
    }
    (out, events)
}

struct Forward(Mutex<mpsc::Sender<RequestBatch>>);

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
    let server = Arc::new(Server::start(config, routes, Arc::new(Forward(Mutex::new(tx)))).unwrap());
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

/// A streamed answer's head and first bytes, as the binding hands them over.
pub fn stream_head(id: u32, headers: &[(&str, &str)], first: Bytes) -> AnswerBatch {
    let mut meta = vec![
        2 | u32::from(wire::VERSION) << 8 | u32::from(BINARY_BODY | STREAM_FLAG) << 16,
        id,
        200,
        headers.len() as u32,
    ];
    meta.push(first.len() as u32);
    let mut text = Vec::new();
    for (name, value) in headers {
        meta.extend([name.len() as u32, value.len() as u32]);
        text.extend_from_slice(name.as_bytes());
        text.extend_from_slice(value.as_bytes());
    }
    AnswerBatch::decode(&meta, Text::Ascii(text.into()), vec![first]).unwrap()
}

/// One chunk record.
pub fn chunk_batch(id: u32, data: Bytes, end: bool, abort: bool) -> AnswerBatch {
    let flags = BINARY_BODY | (if end { END } else { 0 }) | (if abort { ABORT } else { 0 });
    let meta = [5 | u32::from(wire::VERSION) << 8 | u32::from(flags) << 16, id, data.len() as u32];
    AnswerBatch::decode(&meta, Text::Ascii(Bytes::new()), vec![data]).unwrap()
}

/// A test answer: `(id, status, headers, body)`.
type TestAnswer<'a> = (u32, u32, Vec<(&'a str, &'a str)>, Bytes);

/// Answers as the binding hands them over: every body as bytes, headers as ASCII text.
pub fn answer_batch(answers: &[TestAnswer<'_>]) -> AnswerBatch {
    let (mut meta, mut text, mut binary) = (Vec::new(), Vec::new(), Vec::new());
    for (id, status, headers, body) in answers {
        meta.extend([2 | u32::from(wire::VERSION) << 8 | u32::from(BINARY_BODY) << 16, *id, *status]);
        meta.extend([headers.len() as u32, body.len() as u32]);
        for (name, value) in headers {
            meta.extend([name.len() as u32, value.len() as u32]);
            text.extend_from_slice(name.as_bytes());
            text.extend_from_slice(value.as_bytes());
        }
        binary.push(body.clone());
    }
    AnswerBatch::decode(&meta, Text::Ascii(text.into()), binary).unwrap()
}

/// A parsed response.
#[derive(Debug)]
pub struct Res {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Res {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads a response head byte by byte, so nothing after it (a WebSocket's first frame) is consumed.
pub fn read_head(s: &mut TcpStream) -> Vec<u8> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap_or(0) == 0 {
            break;
        }
        head.push(byte[0]);
    }
    head
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Reads one response (content-length framed, or until close when `head` asks for no body).
pub fn read_response(s: &mut TcpStream, head: bool) -> Option<Res> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(0) | Err(_) => return None,
            Ok(_) => buf.push(byte[0]),
        }
    }
    let head_text = String::from_utf8(buf).unwrap();
    let mut lines = head_text.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let len: usize = headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; if head { 0 } else { len }];
    s.read_exact(&mut body).ok()?;
    Some(Res { status, headers, body })
}

/// Sends raw bytes on a new connection and reads one response.
pub fn roundtrip(addr: SocketAddr, raw: &[u8]) -> Option<Res> {
    let mut s = connect(addr);
    s.write_all(raw).unwrap();
    read_response(&mut s, raw.starts_with(b"HEAD"))
}

/// Whether the server closes the connection within `within`.
pub fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// Reads until `done` holds for what came, or the server closes; everything read.
pub fn read_until(s: &mut std::net::TcpStream, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while !done(&got) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The head, and the body with chunked framing removed; `None` when the chunked body is malformed or unfinished.
pub fn dechunk(raw: &[u8]) -> (String, Option<Vec<u8>>) {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let mut rest = &raw[split..];
    let mut body = Vec::new();
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else { return (head, None) };
        let Ok(size) = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap_or("x"), 16) else {
            return (head, None);
        };
        rest = &rest[eol + 2..];
        if size == 0 {
            return (head, (rest == b"\r\n").then_some(body));
        }
        if rest.len() < size + 2 {
            return (head, None);
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}
