//! HTTP/1.1 where RFC 9110/9112 are strict and servers are often lax: chunked framing, `Host`, request targets,
//! decoded routing, half-closed clients; and requests never lost, doubled or hung around slow bodies.

mod support;

use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gust_core::{Config, Handler, RequestBatch, RouteTable, Server, Target};
use support::*;

/// Sends `raw` and expects an answer with `status` well before any timeout could produce one.
fn expect_status(t: &TestServer, raw: &[u8], status: u16) -> Res {
    let started = Instant::now();
    let res = roundtrip(t.addr(), raw).unwrap_or_else(|| panic!("no answer to {:?}", String::from_utf8_lossy(raw)));
    assert_eq!(res.status, status, "{:?}: {}", String::from_utf8_lossy(raw), res.text());
    assert!(started.elapsed() < Duration::from_secs(3), "answered at once, not by a timeout");
    res
}

fn chunked(body: &str) -> Vec<u8> {
    format!("POST /echo/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n{body}").into_bytes()
}

#[test]
fn malformed_chunked_framing_should_get_400_at_once() {
    let t = start(config(|c| c.body_timeout = Duration::from_secs(20)));
    for bad in [
        "5\r\nhello\r\n0\r\n\n",               // bare LF ending the body (hung before)
        "5\r\nhello\r\n0\r\nx: 1\n\r\n",       // bare LF in a trailer
        "5 \r\nhello\r\n0\r\n\r\n",            // whitespace after the size, no extension
        "5;\r\nhello\r\n0\r\n\r\n",            // bare ';'
        "5;a b\r\nhello\r\n0\r\n\r\n",         // not a token
        "5;@\r\nhello\r\n0\r\n\r\n",           // not a token
        "5;a=\x01\r\nhello\r\n0\r\n\r\n",      // control byte in an extension
        "5;a=\"x\x01\"\r\nhello\r\n0\r\n\r\n", // control byte in a quoted value
        "0x5\r\nhello\r\n0\r\n\r\n",           // not hex digits only
        "+5\r\nhello\r\n0\r\n\r\n",
    ] {
        expect_status(&t, &chunked(bad), 400);
    }
}

#[test]
fn well_formed_chunk_extensions_should_be_accepted() {
    let t = start(Config::default());
    for good in ["5;a\r\nhello\r\n0\r\n\r\n", "5 ; a = b ;c=\"q \\\" x\"\r\nhello\r\n0;z\r\nx-t: 1\r\n\r\n"] {
        let res = expect_status(&t, &chunked(good), 200);
        assert!(res.text().ends_with("\nhello"), "{}", res.text());
    }
}

#[test]
fn host_should_be_exactly_one_valid_authority() {
    let t = start(Config::default());
    for bad in [
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: a\r\nhost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: a\r\nhost: b\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: \r\n\r\n",
        "GET / HTTP/1.1\r\nhost: user@a\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: a/b\r\n\r\n",
        "GET / HTTP/1.1\r\nhost: a, b\r\n\r\n",
    ] {
        let res = expect_status(&t, bad.as_bytes(), 400);
        assert_eq!(res.text(), "Bad Request: a request needs exactly one valid Host header");
    }
    expect_status(&t, b"GET / HTTP/1.0\r\n\r\n", 200);
    expect_status(&t, b"GET / HTTP/1.1\r\nhost: [::1]:3000\r\n\r\n", 200);
}

#[test]
fn request_targets_should_follow_their_forms() {
    let t = start(Config::default());
    let res = expect_status(&t, b"OPTIONS * HTTP/1.1\r\nhost: x\r\n\r\n", 204);
    assert_eq!(res.header("allow"), Some("GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"));
    expect_status(&t, b"GET * HTTP/1.1\r\nhost: x\r\n\r\n", 400);
    expect_status(&t, b"DELETE * HTTP/1.1\r\nhost: x\r\n\r\n", 400);
    expect_status(&t, b"CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n", 501);
    expect_status(&t, b"GET /caf\xc3\xa9 HTTP/1.1\r\nhost: x\r\n\r\n", 400);
    expect_status(&t, b"GET /a\x7fb HTTP/1.1\r\nhost: x\r\n\r\n", 400);
    expect_status(&t, b"GET /a\x01b HTTP/1.1\r\nhost: x\r\n\r\n", 400);
}

#[test]
fn routing_should_use_the_decoded_path_keeping_encoded_slashes_in_their_segment() {
    let mut b = RouteTable::builder();
    b.add("GET", "/café/:name", Target::Dynamic(ECHO)).unwrap();
    b.add("GET", "/x/:a/:b", Target::Dynamic(NEVER)).unwrap();
    b.add("GET", "/files/*", Target::Dynamic(ECHO)).unwrap();
    b.add("GET", "/100%", Target::Dynamic(ECHO)).unwrap();
    let t = start_with(Config::default(), b.build());
    let res = expect_status(&t, b"GET /caf%C3%A9/a%2Fb HTTP/1.1\r\nhost: x\r\n\r\n", 200);
    assert!(res.text().starts_with("GET /caf%C3%A9/a%2Fb [\"a/b\"]"), "{}", res.text());
    assert!(res.text().contains("path=/café/a%2Fb "), "the decoded path travels: {}", res.text());
    let res = expect_status(&t, b"GET /x/a%2Fb HTTP/1.1\r\nhost: x\r\n\r\n", 404);
    assert_eq!(res.text(), "Not Found", "an encoded slash never splits a segment");
    let res = expect_status(&t, b"GET /files/ HTTP/1.1\r\nhost: x\r\n\r\n", 200);
    assert!(res.text().starts_with("GET /files/ [\"\"]"), "{}", res.text());
    expect_status(&t, b"GET /100%25 HTTP/1.1\r\nhost: x\r\n\r\n", 200);
    let res = expect_status(&t, b"GET /%zz HTTP/1.1\r\nhost: x\r\n\r\n", 400);
    assert_eq!(res.text(), "Bad Request: malformed percent-encoding in path");
}

#[test]
fn a_client_that_half_closes_should_still_get_its_answer() {
    let t = start(Config::default());
    let mut s = connect(t.addr());
    s.write_all(b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    let res = read_response(&mut s, false).expect("an answer after the client's FIN");
    assert_eq!(res.status, 200);
    assert!(res.text().starts_with("GET /echo/1"));
}

/// Sends a POST whose 10-byte body arrives a byte at a time over `over`.
fn trickle(t: &TestServer, over: Duration) -> TcpStream {
    let mut s = connect(t.addr());
    s.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n").unwrap();
    for _ in 0..10 {
        std::thread::sleep(over / 10);
        s.write_all(b"x").unwrap();
    }
    s
}

#[test]
fn the_handler_timeout_should_start_when_the_body_has_arrived() {
    let t = start(config(|c| c.handler_timeout = Some(Duration::from_millis(300))));
    let mut s = trickle(&t, Duration::from_millis(900));
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.status, 200, "a slow upload is not a slow handler: {}", res.text());
    assert!(res.text().ends_with("\nxxxxxxxxxx"));
    assert_eq!(t.batches.lock().unwrap().iter().sum::<usize>(), 1, "handed over exactly once");
}

#[test]
fn a_body_being_uploaded_should_hold_no_pending_slot() {
    let t = start(config(|c| c.max_pending = 1));
    let addr = t.addr();
    let slow = std::thread::spawn(move || {
        let mut s = connect(addr);
        s.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\n\r\nab").unwrap();
        std::thread::sleep(Duration::from_millis(600));
        s.write_all(b"cd").unwrap();
        read_response(&mut s, false).unwrap().status
    });
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..3 {
        expect_status(&t, b"GET /echo/2 HTTP/1.1\r\nhost: x\r\n\r\n", 200);
    }
    assert_eq!(slow.join().unwrap(), 200);
}

#[test]
fn bodies_past_the_body_buffer_should_get_503_until_it_frees() {
    let t = start(config(|c| {
        c.max_body_size = 100;
        c.max_body_buffer = Some(100);
    }));
    let mut slow = connect(t.addr());
    slow.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 80\r\n\r\nfirst").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let res = expect_status(&t, b"POST /echo/2 HTTP/1.1\r\nhost: x\r\ncontent-length: 30\r\n\r\n", 503);
    assert_eq!(res.text(), "Service Unavailable: too many request bodies in flight");
    assert_eq!(res.header("retry-after"), Some("1"));
    expect_status(&t, b"POST /echo/2 HTTP/1.1\r\nhost: x\r\ncontent-length: 20\r\n\r\n01234567890123456789", 200);
    slow.write_all(&[b'.'; 75]).unwrap();
    assert_eq!(read_response(&mut slow, false).unwrap().status, 200);
    let body = [b'y'; 30];
    let mut raw = b"POST /echo/2 HTTP/1.1\r\nhost: x\r\ncontent-length: 30\r\n\r\n".to_vec();
    raw.extend_from_slice(&body);
    expect_status(&t, &raw, 200);
}

#[test]
fn clients_leaving_while_waiting_should_free_their_slot() {
    let t = start(config(|c| {
        c.max_pending = 2;
        // Well past /slow's 300 ms, so a loaded machine's /slow below is not cut off by it.
        c.handler_timeout = Some(Duration::from_millis(1000));
    }));
    for _ in 0..6 {
        let mut s = connect(t.addr());
        s.write_all(b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        drop(s);
        let mut s = connect(t.addr());
        s.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nhalf").unwrap();
        drop(s);
    }
    // A slot held by a leaver is freed by its handler timeout at the latest; leavers mid-body never took one.
    std::thread::sleep(Duration::from_millis(2500));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let addr = t.addr();
            std::thread::spawn(move || roundtrip(addr, b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status)
        })
        .collect();
    for th in threads {
        assert_eq!(th.join().unwrap(), 200, "both slots are free again");
    }
}

#[test]
fn every_resolved_address_should_be_served_on_one_port() {
    let mut c = Config::default();
    c.addrs = vec!["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()];
    // Only turbo routes are asked for; not `Panics`, whose lifecycle record another test reads.
    let server = Server::start(c, routes(), Arc::new(Idle)).unwrap();
    let addrs = server.local_addrs().to_vec();
    assert!(addrs.iter().all(|a| a.port() == addrs[0].port()));
    for addr in &addrs {
        assert_eq!(roundtrip(*addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200, "{addr}");
    }
    server.stop(true);
    server.wait();
    assert!(server.failure().is_none());
}

/// A handler side that takes nothing.
struct Idle;

impl Handler for Idle {
    fn handle(&self, _: RequestBatch) -> Result<(), gust_core::Closed> {
        Err(gust_core::Closed)
    }
}

/// A handler side that panics on its first batch, and records the lifecycle calls.
struct Panics(AtomicBool);

static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

impl Handler for Panics {
    fn handle(&self, _: RequestBatch) -> Result<(), gust_core::Closed> {
        self.0.store(true, Ordering::SeqCst);
        panic!("injected failure");
    }

    fn unbound(&self) {
        EVENTS.lock().unwrap().push("unbound".into());
    }

    fn stopped(&self, failure: Option<&gust_core::Error>) {
        EVENTS.lock().unwrap().push(format!("stopped {}", failure.map(ToString::to_string).unwrap_or_default()));
    }
}

#[test]
fn an_engine_task_that_dies_should_stop_the_server_loudly_and_free_the_port() {
    let mut c = Config::default();
    c.addrs = vec!["127.0.0.1:0".parse().unwrap()];
    EVENTS.lock().unwrap().clear();
    let server = Server::start(c, routes(), Arc::new(Panics(AtomicBool::new(false)))).unwrap();
    let addr = server.local_addr().unwrap();
    let mut s = connect(addr);
    s.write_all(b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert!(read_response(&mut s, false).is_none(), "the connection closes instead of hanging");
    server.wait();
    let failure = server.failure().expect("the failure is reported");
    assert!(failure.is_engine() && failure.to_string().contains("injected failure"), "{failure}");
    assert!(TcpStream::connect(addr).is_err(), "no dead port is left behind");
    // `stopped` is called just after waiters are woken: give it a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while EVENTS.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let events = EVENTS.lock().unwrap().clone();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], "unbound");
    assert!(events[1].starts_with("stopped ") && events[1].contains("injected failure"), "{events:?}");
}

#[test]
fn a_dynamic_head_answer_should_carry_no_body_bytes() {
    let t = start(Config::default());
    let mut s = connect(t.addr());
    s.write_all(b"HEAD /echo/1 HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let head = read_response(&mut s, true).unwrap();
    assert_eq!(head.status, 200);
    assert!(head.header("content-length").is_some_and(|l| l != "0"), "HEAD tells the GET body's length");
    let next = read_response(&mut s, false).unwrap();
    assert_eq!((next.status, next.text().as_str()), (200, "Hi"), "the next answer starts right after the head");
}

#[test]
fn an_upgrade_the_server_ignores_should_leave_the_connection_serving_http() {
    // RFC 9110 §7.8: a server may ignore Upgrade and go on with HTTP/1.1; a pipelined request behind it is
    // answered (turbo and dynamic routes alike).
    let t = start(Config::default());
    for path in ["/", "/echo/1"] {
        let mut s = connect(t.addr());
        let raw = format!(
            "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAAQAAP__\r\n\r\nGET {path} HTTP/1.1\r\nhost: x\r\n\r\n"
        );
        s.write_all(raw.as_bytes()).unwrap();
        assert_eq!(read_response(&mut s, false).map(|r| r.status), Some(200), "{path}: the first answer");
        assert_eq!(read_response(&mut s, false).map(|r| r.status), Some(200), "{path}: the pipelined one");
    }
}

#[test]
fn ambiguous_message_framing_should_get_400_and_close_the_connection() {
    // RFC 9112 §6.1–6.3 and §5: the requests a request smuggler sends to make two servers disagree on where a
    // request ends, each refused with 400 and the connection closed.
    let t = start(Config::default());
    for raw in [
        // Two different lengths, in one field or two.
        &b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 5, 6\r\n\r\nhello"[..],
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello",
        // Lengths that are not 1*DIGIT.
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: +5\r\n\r\nhello",
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 0x5\r\n\r\nhello",
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 5 5\r\n\r\nhello",
        // A transfer coding that does not end in chunked, or one an HTTP/1.0 request may not have.
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked, identity\r\n\r\n0\r\n\r\n",
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n0\r\n\r\n",
        b"POST /echo/1 HTTP/1.0\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
        // Whitespace between a field name and its colon (§5.1: MUST be rejected), and obs-fold (§5.2).
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length : 5\r\n\r\nhello",
        b"GET /echo/1 HTTP/1.1\r\nhost: x\r\nx-folded: a\r\n b\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(t.addr()).unwrap();
        s.write_all(raw).unwrap();
        // A request pipelined behind it: never answered, since the connection must end after the 400.
        s.write_all(b"GET /echo/2 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let res =
            read_response(&mut s, false).unwrap_or_else(|| panic!("no answer to {:?}", String::from_utf8_lossy(raw)));
        assert_eq!(res.status, 400, "{:?}: {}", String::from_utf8_lossy(raw), res.text());
        assert!(
            closed_within(&mut s, Duration::from_secs(3)),
            "{:?}: the connection went on",
            String::from_utf8_lossy(raw)
        );
    }
    // Both framings (RFC 9112 §6.1 lets a server refuse or frame by the chunked coding, then close): refused, in
    // either order, so the bytes a length-reading proxy would take for a second request are never served.
    for raw in [
        &b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 40\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nGET /echo/2 HTTP/1.1\r\nhost: x\r\n\r\n"[..],
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n0\r\n\r\nGET /echo/2 HTTP/1.1\r\nhost: x\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(t.addr()).unwrap();
        s.write_all(raw).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let res = read_response(&mut s, false).expect("an answer");
        assert_eq!(res.status, 400, "{}", res.text());
        assert!(closed_within(&mut s, Duration::from_secs(3)), "the connection went on after a request framed both ways");
    }
}
