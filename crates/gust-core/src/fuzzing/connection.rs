//! The door for whole connections, HTTP/1.1 or HTTP/2, through a real server on a loopback port.

use std::net::SocketAddr;
use std::sync::OnceLock;

use bytes::Bytes;

use crate::crossing::handler::{Closed, Handler, RequestBatch};
use crate::responses::fixed::FixedResponse;
use crate::responses::route_table::{RouteTable, Target};
use crate::service::config::Config;
use crate::transport::server::Server;
use crate::values::sync::Locked;
use crate::wire::answer::{AnswerBatch, Text, BINARY_BODY};

/// What HTTP/2's client sends first (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Which engine serves the fuzzed connections.
#[derive(Clone, Copy)]
enum Engine {
    Threads,
    OneThread,
}

/// The server [`connection`] (or [`connection_one_thread`]) talks to, started once per engine: a turbo route, and
/// dynamic routes answered by a thread standing in for JavaScript; short timeouts, so a connection that stalls is
/// closed within a second.
fn fuzz_server(engine: Engine) -> SocketAddr {
    static THREADS: OnceLock<(std::sync::Arc<Server>, SocketAddr)> = OnceLock::new();
    static ONE_THREAD: OnceLock<(std::sync::Arc<Server>, SocketAddr)> = OnceLock::new();
    let server = match engine {
        Engine::Threads => &THREADS,
        Engine::OneThread => &ONE_THREAD,
    };
    server
        .get_or_init(|| {
            use std::sync::{mpsc, Arc, Mutex};
            use std::time::Duration;

            struct Forward(Mutex<mpsc::Sender<RequestBatch>>);
            impl Handler for Forward {
                fn handle(&self, batch: RequestBatch) -> Result<(), Closed> {
                    self.0.locked().send(batch).map_err(|_| Closed)
                }
            }
            let mut routes = RouteTable::builder();
            let hi = FixedResponse::new(200, [("content-type", "text/plain")], Bytes::from_static(b"hi"))
                .expect("a valid fixed response");
            routes.add("GET", "/", Target::Fixed(std::sync::Arc::new(hi))).expect("a route");
            routes.add("ALL", "/dyn/*", Target::Dynamic(1)).expect("a route");
            let config = Config {
                addrs: vec!["127.0.0.1:0".parse().expect("an address")],
                io_threads: 1,
                header_timeout: Duration::from_millis(500),
                idle_timeout: Duration::from_millis(500),
                body_timeout: Duration::from_millis(500),
                handler_timeout: Some(Duration::from_millis(500)),
                ..Config::default()
            };
            let (tx, rx) = mpsc::channel();
            let handler = Arc::new(Forward(Mutex::new(tx)));
            let server = match engine {
                Engine::Threads => Arc::new(Server::start(config, routes.build(), handler).expect("a server")),
                Engine::OneThread => one_thread(config, routes.build(), handler),
            };
            let responder = server.responder();
            // Every request is answered `200 ok` at once (its body, if it streams, is left unread).
            std::thread::spawn(move || {
                for batch in rx {
                    let bytes = batch.into_bytes();
                    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
                    let mut meta = Vec::new();
                    let mut bodies = Vec::new();
                    let mut at = 0;
                    while at + 12 <= bytes.len() {
                        let (kind, len) = (word(at) & 0xff, word(at + 4) as usize);
                        if kind == 1 {
                            meta.extend([
                                2 | u32::from(crate::wire::VERSION) << 8 | u32::from(BINARY_BODY) << 16,
                                word(at + 8),
                                200,
                                0,
                                2,
                            ]);
                            bodies.push(Bytes::from_static(b"ok"));
                        }
                        if len == 0 {
                            break;
                        }
                        at += len;
                    }
                    if !meta.is_empty() {
                        let answers =
                            AnswerBatch::decode(&meta, Text::Ascii(Bytes::new()), bodies).expect("valid answers");
                        responder.respond(answers.records());
                    }
                }
            });
            let addr = server.local_addrs()[0];
            (server, addr)
        })
        .1
}

/// A one-thread server, driven on a thread of its own as a JavaScript thread's loop would drive it: wait until
/// the engine's descriptor is readable or its next timer is due, then a turn. The wait is `mio`'s, edge-triggered:
/// after a turn that took socket events (a turn's poll pass is bounded, so some may be left) the next turn comes
/// at once, and only a quiet turn waits for the next edge.
#[cfg(unix)]
fn one_thread(config: Config, routes: RouteTable, handler: std::sync::Arc<dyn Handler>) -> std::sync::Arc<Server> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (server, engine) = Server::start_local(config, routes, handler).expect("a one-thread server");
        let _ = tx.send(std::sync::Arc::new(server));
        let mut poll = mio::Poll::new().expect("a poller");
        let fd = engine.fd();
        poll.registry()
            .register(&mut mio::unix::SourceFd(&fd), mio::Token(0), mio::Interest::READABLE)
            .expect("the engine's descriptor is watched");
        let mut events = mio::Events::with_capacity(4);
        let mut wait = Some(std::time::Duration::ZERO);
        loop {
            let _ = poll.poll(&mut events, wait);
            let turn = engine.turn();
            if turn.finished {
                return;
            }
            wait = if turn.events > 0 {
                Some(std::time::Duration::ZERO)
            } else {
                turn.next_timer.map(|at| at.saturating_duration_since(std::time::Instant::now()))
            };
        }
    });
    rx.recv().expect("the one-thread server started")
}

#[cfg(not(unix))]
fn one_thread(config: Config, routes: RouteTable, handler: std::sync::Arc<dyn Handler>) -> std::sync::Arc<Server> {
    std::sync::Arc::new(Server::start(config, routes, handler).expect("a server"))
}

/// Sends `data` on a fresh connection, half-closes it, and reads until the server closes; panics when it has
/// done neither within five seconds.
fn exchange(addr: SocketAddr, data: &[u8]) -> Vec<u8> {
    use std::io::{ErrorKind, Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("the fuzz server takes connections");
    s.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("a timeout");
    // The server may refuse the bytes before they are all written (a 400 and a close): nothing more to send.
    let _ = s.write_all(data);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!("the connection was neither answered nor closed within 5 s ({} bytes came)", out.len())
            }
            // A reset after an error answer: the connection is over.
            Err(_) => return out,
        }
    }
}

/// Whole connections through the real server: bytes that open with HTTP/2's preface are HTTP/2 (h2c by prior
/// knowledge), anything else HTTP/1.1. Each connection must be answered or closed in time (the server's timeouts
/// are half a second), in the protocol it opened with: HTTP/1.1 status lines, or HTTP/2 frames starting with the
/// server's SETTINGS. Every 256 inputs, a plain request on a new connection must still be answered.
pub fn connection(data: &[u8]) {
    use std::sync::atomic::AtomicU32;
    static RUNS: AtomicU32 = AtomicU32::new(0);
    exchange_checked(fuzz_server(Engine::Threads), data, &RUNS);
}

/// [`connection`] against the one-thread engine: the same bytes, the same property.
pub fn connection_one_thread(data: &[u8]) {
    use std::sync::atomic::AtomicU32;
    static RUNS: AtomicU32 = AtomicU32::new(0);
    exchange_checked(fuzz_server(Engine::OneThread), data, &RUNS);
}

fn exchange_checked(addr: SocketAddr, data: &[u8], runs: &std::sync::atomic::AtomicU32) {
    use std::sync::atomic::Ordering;
    let out = exchange(addr, data);
    if !out.is_empty() {
        if data.starts_with(H2_PREFACE) {
            // A frame header: 24-bit length, then its type; the server's first frame is SETTINGS (type 4).
            assert!(
                out.len() >= 9 && out[3] == 4,
                "an HTTP/2 connection answered with {:?}",
                &out[..out.len().min(32)]
            );
        } else {
            assert!(
                out.starts_with(b"HTTP/1."),
                "an HTTP/1.1 connection answered with {:?}",
                &out[..out.len().min(32)]
            );
        }
    }
    if runs.fetch_add(1, Ordering::Relaxed).is_multiple_of(256) {
        let ok = exchange(addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n");
        assert!(
            ok.starts_with(b"HTTP/1.1 200 ") && ok.ends_with(b"hi"),
            "the server stopped serving: {:?}",
            String::from_utf8_lossy(&ok)
        );
    }
}
