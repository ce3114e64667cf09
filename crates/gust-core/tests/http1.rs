//! Raw HTTP/1.1 over real sockets: routing answers, framing, pipelining, keep-alive.

mod support;

use std::io::Write;
use std::time::Duration;

use gust_core::Config;
use support::*;

#[test]
fn turbo_route_should_answer_byte_exact_with_length_and_date() {
    let t = start(Config::default());
    let res = roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, b"Hi");
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(res.header("content-length"), Some("2"));
    assert!(res.header("date").is_some_and(|d| d.ends_with("GMT")));
    assert!(t.batches.lock().unwrap().is_empty(), "turbo routes never reach the handler side");
}

#[test]
fn head_should_answer_get_routes_without_a_body() {
    let t = start(Config::default());
    let mut s = connect(t.addr());
    s.write_all(b"HEAD / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let head = read_response(&mut s, true).unwrap();
    assert_eq!((head.status, head.header("content-length")), (200, Some("2")));
    let get = read_response(&mut s, false).unwrap();
    assert_eq!(get.body, b"Hi", "no stray body bytes followed the HEAD response");
    let dynamic = roundtrip(t.addr(), b"HEAD /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(dynamic.status, 200);
}

#[test]
fn unknown_paths_should_get_404_and_other_methods_405_with_allow() {
    let t = start(Config::default());
    let res = roundtrip(t.addr(), b"GET /nope HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!((res.status, res.text().as_str()), (404, "Not Found"));
    let res = roundtrip(t.addr(), b"DELETE /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 405);
    assert_eq!(res.header("allow"), Some("GET, HEAD, POST, OPTIONS"));
    let res = roundtrip(t.addr(), b"OPTIONS /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!((res.status, res.header("allow")), (204, Some("GET, HEAD, POST, OPTIONS")));
}

#[test]
fn dynamic_routes_should_see_method_url_decoded_params_headers_and_body() {
    let t = start(Config::default());
    let res = roundtrip(
        t.addr(),
        b"POST /echo/caf%C3%A9%2Fx?q=1&q=2 HTTP/1.1\r\nhost: x\r\nx-dup: 1\r\nx-dup: 2\r\ncontent-length: 4\r\n\r\n\x00\x01\xfe\xff",
    )
    .unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.all("x-set"), ["a", "b"], "repeated response headers are kept");
    let (line, body) = res.body.split_at(res.body.iter().position(|b| *b == b'\n').unwrap());
    let line = String::from_utf8_lossy(line);
    assert!(line.starts_with("POST /echo/caf%C3%A9%2Fx?q=1&q=2 [\"café/x\"] "), "{line}");
    assert!(line.contains("x-dup:1|x-dup:2|"), "{line}");
    assert_eq!(&body[1..], b"\x00\x01\xfe\xff", "binary bodies arrive byte-exact");
}

#[test]
fn malformed_percent_encoding_in_params_should_get_400() {
    let t = start(Config::default());
    let res = roundtrip(t.addr(), b"GET /echo/%FF HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 400);
    assert_eq!(res.text(), "Bad Request: malformed percent-encoding in path");
}

#[test]
fn all_routes_should_accept_any_method_and_wildcards_capture_the_rest() {
    let t = start(Config::default());
    let res = roundtrip(t.addr(), b"PROPFIND /any/a/b HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 200);
    assert!(res.text().starts_with("PROPFIND /any/a/b [\"a/b\"]"), "{}", res.text());
}

#[test]
fn chunked_request_bodies_should_be_reassembled() {
    let t = start(Config::default());
    let res = roundtrip(
        t.addr(),
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    )
    .unwrap();
    assert_eq!(res.status, 200);
    assert!(res.text().ends_with("\nabcde"), "{}", res.text());
}

#[test]
fn pipelined_requests_should_be_answered_in_order() {
    let t = start(Config::default());
    let mut s = connect(t.addr());
    s.write_all(
        b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\nGET /echo/3 HTTP/1.1\r\nhost: x\r\n\r\n",
    )
    .unwrap();
    let a = read_response(&mut s, false).unwrap();
    let b = read_response(&mut s, false).unwrap();
    let c = read_response(&mut s, false).unwrap();
    assert!(a.text().starts_with("GET /echo/1 "));
    assert_eq!(b.body, b"Hi");
    assert!(c.text().starts_with("GET /echo/3 "));
}

#[test]
fn keep_alive_connections_should_serve_many_requests() {
    let t = start(Config::default());
    let mut s = connect(t.addr());
    for i in 0..20 {
        write!(s, "GET /echo/{i} HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let res = read_response(&mut s, false).unwrap();
        assert!(res.text().starts_with(&format!("GET /echo/{i} ")));
    }
}

#[test]
fn concurrent_requests_should_be_handed_over_in_batches() {
    let t = start(Config::default());
    let mut conns: Vec<_> = (0..50).map(|_| connect(t.addr())).collect();
    for s in &mut conns {
        s.write_all(b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    }
    for s in &mut conns {
        assert_eq!(read_response(s, false).unwrap().status, 200);
    }
    let batches = t.batches.lock().unwrap();
    assert_eq!(batches.iter().sum::<usize>(), 50);
    assert!(batches.len() < 50, "50 simultaneous requests took {} hand-overs", batches.len());
}

#[test]
fn a_handler_header_with_crlf_should_become_500_and_not_be_sent() {
    let t = start(Config::default());
    let res = roundtrip(t.addr(), b"GET /bad-header HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 500);
    assert!(res.header("x-evil").is_none() && res.header("x-bad").is_none());
    assert_eq!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

#[test]
fn malformed_request_lines_should_get_400_and_the_server_keeps_serving() {
    let t = start(Config::default());
    for raw in [&b"GARBAGE\r\n\r\n"[..], b"GET / HTTP/9.9\r\n\r\n", b"GET / HTTP/1.1\r\nbad header\r\n\r\n"] {
        let mut s = connect(t.addr());
        s.write_all(raw).unwrap();
        if let Some(res) = read_response(&mut s, false) {
            assert_eq!(res.status, 400, "{}", String::from_utf8_lossy(raw));
        }
        assert!(closed_within(&mut s, Duration::from_secs(2)));
    }
    assert_eq!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

#[test]
fn a_method_fallback_should_receive_405s_and_options_with_the_allow_value() {
    let mut b = gust_core::RouteTable::builder();
    b.add("GET", "/a", gust_core::Target::Dynamic(NEVER)).unwrap();
    b.method_fallback(gust_core::Target::Dynamic(ECHO));
    let t = start_with(Config::default(), b.build());
    let res = roundtrip(t.addr(), b"DELETE /a HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 200, "the fallback handler answered");
    assert!(res.text().starts_with("DELETE /a [\"GET, HEAD, OPTIONS\"]"), "{}", res.text());
    let res = roundtrip(t.addr(), b"OPTIONS /a HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert!(res.text().starts_with("OPTIONS /a [\"GET, HEAD, OPTIONS\"]"), "{}", res.text());
}

#[test]
fn a_slow_response_write_should_not_count_as_idle() {
    let mut b = gust_core::RouteTable::builder();
    let big = gust_core::FixedResponse::new(200, [], bytes::Bytes::from(vec![b'x'; 8 * 1024 * 1024])).unwrap();
    b.add("GET", "/big", gust_core::Target::Fixed(std::sync::Arc::new(big))).unwrap();
    let t = start_with(
        config(|c| {
            c.idle_timeout = Duration::from_millis(200);
        }),
        b.build(),
    );
    let mut s = connect(t.addr());
    s.write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    // Read slowly: the whole transfer takes well over the idle timeout.
    let mut got = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    let started = std::time::Instant::now();
    while got < 8 * 1024 * 1024 {
        std::thread::sleep(Duration::from_millis(15));
        match std::io::Read::read(&mut s, &mut buf) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => panic!("read failed after {got} bytes: {e}"),
        }
    }
    assert!(got >= 8 * 1024 * 1024, "connection cut after {got} bytes");
    assert!(started.elapsed() > Duration::from_millis(400), "the transfer outlasted the idle timeout");
}

#[test]
fn replaced_routes_should_apply_to_the_next_request() {
    let t = start(Config::default());
    let mut b = gust_core::RouteTable::builder();
    b.add("GET", "/new", gust_core::Target::Dynamic(ECHO)).unwrap();
    t.server.replace_routes(b.build()).unwrap();
    assert_eq!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 404);
    assert_eq!(roundtrip(t.addr(), b"GET /new HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

static WAITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn count_wait() {
    WAITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

#[test]
fn the_io_wait_hook_runs_when_an_io_thread_goes_quiet() {
    if one_thread() {
        return; // An I/O thread's hook: the one-thread engine's host loop decides when its thread is quiet.
    }
    let t = start(config(|c| c.on_io_wait = Some(count_wait)));
    let before = WAITS.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
    std::thread::sleep(Duration::from_millis(50));
    assert!(WAITS.load(std::sync::atomic::Ordering::Relaxed) > before, "the hook ran as the thread waited again");
}
