//! Idle keep-alive connections parked: after half a second with nothing to do, an HTTP/1.1 connection waits for
//! its next request without hyper's state (`transport::connection`). What a client sends next, however it
//! sends it, is served as if the connection had never been parked, and every timeout still holds.

mod support;

use std::io::Write;
use std::time::{Duration, Instant};

use gust_core::Config;
use support::*;

/// Longer than the engine waits before it parks an idle connection (500 ms).
const PARKED: Duration = Duration::from_millis(800);

/// A connection that has been answered once and left idle until it is parked.
fn parked(t: &TestServer) -> std::net::TcpStream {
    let mut s = connect(t.addr());
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "Hi");
    std::thread::sleep(PARKED);
    s
}

#[test]
fn a_parked_connection_should_serve_what_comes_next_whole_pipelined_or_trickled() {
    let t = start(config(|c| c.idle_timeout = Duration::from_secs(30)));
    let mut s = parked(&t);
    s.write_all(b"POST /echo/1 HTTP/1.1\r\nhost: x\r\nx-a: 1\r\ncontent-length: 3\r\n\r\nabc").unwrap();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.status, 200);
    assert!(res.text().starts_with("POST /echo/1 [\"1\"] host:x|x-a:1|"), "{}", res.text());
    assert!(res.text().ends_with("\nabc"), "{}", res.text());
    std::thread::sleep(PARKED);
    s.write_all(
        b"GET /echo/2 HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\nGET /echo/3 HTTP/1.1\r\nhost: x\r\n\r\n",
    )
    .unwrap();
    assert!(read_response(&mut s, false).unwrap().text().starts_with("GET /echo/2 "));
    assert_eq!(read_response(&mut s, false).unwrap().text(), "Hi");
    assert!(read_response(&mut s, false).unwrap().text().starts_with("GET /echo/3 "));
    std::thread::sleep(PARKED);
    for byte in b"GET /echo/4 HTTP/1.1\r\nhost: x\r\n\r\n" {
        s.write_all(&[*byte]).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(read_response(&mut s, false).unwrap().text().starts_with("GET /echo/4 [\"4\"] host:x|"));
}

#[test]
fn a_parked_connection_should_still_close_at_the_idle_timeout() {
    let t = start(config(|c| {
        c.idle_timeout = Duration::from_millis(1500);
        c.header_timeout = Duration::from_secs(30);
    }));
    let mut s = connect(t.addr());
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    let started = Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(5)));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1350) && took < Duration::from_millis(3000), "closed after {took:?}");
}

#[test]
fn a_parked_connection_that_starts_a_head_and_stalls_should_be_cut_at_the_header_timeout() {
    let t = start(config(|c| {
        c.idle_timeout = Duration::from_secs(30);
        c.header_timeout = Duration::from_millis(300);
    }));
    let mut s = parked(&t);
    s.write_all(b"G").unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(5)));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(250) && took < Duration::from_millis(2000), "closed after {took:?}");
}

#[test]
fn a_graceful_stop_should_close_parked_connections_at_once() {
    let t = start(Config::default());
    let mut s = parked(&t);
    let started = Instant::now();
    t.server.stop(false);
    assert!(closed_within(&mut s, Duration::from_secs(2)));
    t.server.wait();
    assert!(started.elapsed() < Duration::from_secs(2), "the stop waited {:?}", started.elapsed());
}
