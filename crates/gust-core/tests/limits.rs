//! Every limit and timeout of `Config`, enforced over real sockets.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use gust_core::wire::event::TIMED_OUT;
use gust_core::wire::Kind;
use gust_core::Config;
use support::*;

#[test]
fn a_declared_body_over_the_limit_should_get_413_unread() {
    let t = start(config(|c| {
        c.max_body_size = 10;
    }));
    let res = roundtrip(t.addr(), b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 11\r\n\r\n").unwrap();
    assert_eq!((res.status, res.text().as_str()), (413, "Payload Too Large"));
}

#[test]
fn a_chunked_body_growing_past_the_limit_should_get_413() {
    let t = start(config(|c| {
        c.max_body_size = 10;
    }));
    let res = roundtrip(
        t.addr(),
        b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n",
    )
    .unwrap();
    assert_eq!(res.status, 413);
    let ok = roundtrip(t.addr(), b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n0123456789").unwrap();
    assert_eq!(ok.status, 200, "a body exactly at the limit is accepted");
}

#[test]
fn oversized_headers_should_get_431() {
    let t = start(config(|c| {
        c.max_header_size = 8192;
    }));
    let big = "a".repeat(10_000);
    let res = roundtrip(t.addr(), format!("GET / HTTP/1.1\r\nhost: x\r\nx-big: {big}\r\n\r\n").as_bytes()).unwrap();
    assert_eq!(res.status, 431);
    assert_eq!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

#[test]
fn a_head_past_its_limit_should_get_the_status_of_the_part_that_outgrew_it() {
    // The method (no space yet): 400, no method is that long; the target (no line end yet): 414 URI Too Long;
    // the header fields: 431. Each closes the connection.
    let t = start(config(|c| {
        c.max_header_size = 8192;
    }));
    let big = "a".repeat(20_000);
    for (raw, status) in [
        (format!("{big} / HTTP/1.1\r\nhost: x\r\n\r\n"), 400),
        (format!("GET /{big} HTTP/1.1\r\nhost: x\r\n\r\n"), 414),
        (format!("GET / HTTP/1.1\r\nhost: x\r\nx-big: {big}\r\n\r\n"), 431),
    ] {
        let res = roundtrip(t.addr(), raw.as_bytes()).unwrap();
        assert_eq!(res.status, status, "{}", &raw[..40]);
    }
    assert_eq!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

#[test]
fn a_client_sending_its_head_slowly_should_be_cut_off_at_the_header_timeout() {
    let t = start(config(|c| {
        c.header_timeout = Duration::from_millis(300);
        c.idle_timeout = Duration::from_secs(30);
    }));
    let mut s = TcpStream::connect(t.addr()).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let started = Instant::now();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(150));
        if s.write_all(b"x-slow: 1\r\n").is_err() {
            break;
        }
    }
    assert!(closed_within(&mut s, Duration::from_secs(3)));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_client_sending_its_body_slowly_should_get_408_at_the_body_timeout() {
    let t = start(config(|c| {
        c.body_timeout = Duration::from_millis(300);
    }));
    let mut s = connect(t.addr());
    s.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nfirst bytes").unwrap();
    let started = Instant::now();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!((res.status, res.text().as_str()), (408, "Request Timeout: the body did not arrive in time"));
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert!(closed_within(&mut s, Duration::from_secs(2)));
    assert_eq!(roundtrip(t.addr(), b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

#[test]
fn an_idle_keep_alive_connection_should_be_closed_at_the_idle_timeout() {
    let t = start(config(|c| {
        c.idle_timeout = Duration::from_millis(300);
        c.header_timeout = Duration::from_secs(30);
    }));
    let mut s = connect(t.addr());
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    let started = Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(3)));
    assert!(started.elapsed() >= Duration::from_millis(250), "closed too early: {:?}", started.elapsed());
    let mut silent = TcpStream::connect(t.addr()).unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(3)), "a client that never speaks is idle too");
}

#[test]
fn a_handler_that_never_answers_should_give_503_at_the_handler_timeout() {
    let t = start(config(|c| {
        c.handler_timeout = Some(Duration::from_millis(200));
    }));
    let res = roundtrip(t.addr(), b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!((res.status, res.text().as_str()), (503, "Service Unavailable: handler timed out"));
    assert_eq!(res.header("retry-after"), Some("1"));
    // The handler hears of it, as a timeout (not as a client that left), so observers can report the 503.
    let cancels = || -> Vec<u16> {
        let events = t.events.lock().unwrap();
        events.iter().filter(|(kind, ..)| *kind == Kind::Cancel as u8).map(|(_, flags, _)| *flags).collect()
    };
    for _ in 0..50 {
        if !cancels().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(cancels(), [TIMED_OUT]);
    assert_eq!(roundtrip(t.addr(), b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

/// Records handed to the handler so far (every batch's).
fn handed(t: &TestServer) -> usize {
    t.batches.lock().unwrap().iter().sum()
}

/// Waits until `n` more records than `before` have been handed to the handler (10 s at most): a request is then
/// waiting for its answer, however slow the machine, where a fixed sleep would only hope so.
fn wait_handed(t: &TestServer, before: usize, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while handed(t) < before + n {
        assert!(Instant::now() < deadline, "waited 10 s for {n} requests to reach the handler");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn requests_past_the_pending_limit_should_get_503_with_retry_after() {
    let t = start(config(|c| {
        c.max_pending = 2;
        c.handler_timeout = Some(Duration::from_secs(2));
    }));
    let mut waiting: Vec<_> = (0..2).map(|_| connect(t.addr())).collect();
    let before = handed(&t);
    for s in &mut waiting {
        s.write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    }
    wait_handed(&t, before, 2);
    let res = roundtrip(t.addr(), b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!((res.status, res.header("retry-after")), (503, Some("1")));
    assert_eq!(res.text(), "Service Unavailable: too many requests in flight");
    for s in &mut waiting {
        assert_eq!(read_response(s, false).unwrap().body, b"slow");
    }
}

#[test]
fn a_client_leaving_mid_request_should_not_disturb_the_server() {
    let t = start(Config::default());
    for _ in 0..20 {
        let mut s = TcpStream::connect(t.addr()).unwrap();
        s.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nhalf").unwrap();
        drop(s);
        let mut s = TcpStream::connect(t.addr()).unwrap();
        s.write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        drop(s);
    }
    assert_eq!(roundtrip(t.addr(), b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status, 200);
}

#[test]
fn graceful_stop_should_finish_in_flight_requests_and_refuse_new_connections() {
    let t = start(Config::default());
    let mut idle = connect(t.addr());
    idle.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    read_response(&mut idle, false).unwrap();
    let mut busy = connect(t.addr());
    let before = handed(&t);
    busy.write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    wait_handed(&t, before, 1);
    t.server.stop(false);
    assert!(closed_within(&mut idle, Duration::from_secs(2)), "idle keep-alive connections close at once");
    let res = read_response(&mut busy, false).unwrap();
    assert_eq!(res.body, b"slow", "the in-flight request finished");
    t.server.wait();
    assert!(TcpStream::connect(t.addr()).is_err(), "no longer accepting");
}

#[test]
fn forced_stop_should_close_everything_at_once() {
    let t = start(Config::default());
    let mut busy = connect(t.addr());
    busy.write_all(b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    t.server.stop(true);
    t.server.wait();
    assert!(closed_within(&mut busy, Duration::from_secs(2)));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_forced_stop_should_cut_a_graceful_one_short() {
    let t = start(config(|c| {
        c.handler_timeout = None;
    }));
    let mut busy = connect(t.addr());
    let before = handed(&t);
    busy.write_all(b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    wait_handed(&t, before, 1);
    t.server.stop(false);
    std::thread::sleep(Duration::from_millis(100));
    assert!(!t.server.is_finished(), "graceful stop waits for the never-answering request");
    t.server.stop(true);
    t.server.wait();
}

#[test]
fn thousands_of_concurrent_connections_should_all_be_answered() {
    let t = start(Config::default());
    let addr = t.addr();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let mut conns: Vec<_> = (0..250).map(|_| TcpStream::connect(addr).unwrap()).collect();
                for (i, s) in conns.iter_mut().enumerate() {
                    let path = if i % 2 == 0 { "/" } else { "/echo/1" };
                    write!(s, "GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
                }
                let mut ok = 0;
                for s in &mut conns {
                    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    ok += usize::from(read_response(s, false).is_some_and(|r| r.status == 200));
                }
                ok
            })
        })
        .collect();
    let ok: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(ok, 2000);
}

#[test]
fn invalid_configs_should_be_refused_before_binding() {
    let err = gust_core::Server::start(
        config(|c| {
            c.max_header_size = 10;
        }),
        routes(),
        std::sync::Arc::new(NoHandler),
    )
    .unwrap_err();
    assert!(err.is_config());
    let t = start(Config::default());
    let err = gust_core::Server::start(
        config(|c| {
            c.addrs = vec![t.addr()];
        }),
        routes(),
        std::sync::Arc::new(NoHandler),
    )
    .unwrap_err();
    assert!(err.is_io() && err.to_string().contains(&t.addr().to_string()), "{err}");
}

struct NoHandler;

impl gust_core::Handler for NoHandler {
    fn handle(&self, _: gust_core::RequestBatch) -> Result<(), gust_core::Closed> {
        Err(gust_core::Closed)
    }
}
