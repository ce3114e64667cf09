//! Hostile HTTP/1.1 clients, each against a fresh server: the server stays within a memory bound, ends the
//! attacker's connections where a timeout says so, and keeps answering a well-behaved client during and after.
//! (HTTP/2's attacks are in `http2_abuse.rs`, WebSocket's in `websocket.rs`, running out of descriptors in
//! `emfile.rs`.)
//!
//! Memory is the test process's resident set (the server runs in it): the attacks run one at a time (`SERIAL`),
//! each measured from its own start.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gust_core::{Config, Locked};
use support::*;

static SERIAL: Mutex<()> = Mutex::new(());

/// The process's resident set in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
}

/// A well-behaved client is answered promptly: a turbo route and a handler's.
fn still_served(addr: SocketAddr) {
    let started = Instant::now();
    for path in ["/", "/echo/ok"] {
        let raw = format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n");
        let res = roundtrip(addr, raw.as_bytes()).expect("an answer");
        assert_eq!(res.status, 200, "{path}: {}", res.text());
    }
    assert!(started.elapsed() < Duration::from_secs(2), "answered in {:?}", started.elapsed());
}

/// `n` connections, each having sent `raw` (a request) and reading nothing.
fn requests_never_read(addr: SocketAddr, n: usize, raw: &[u8]) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(raw).unwrap();
            s
        })
        .collect()
}

/// Whether the server closed `s` (EOF or reset), without waiting.
fn is_closed(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1024];
    let closed = loop {
        match s.read(&mut byte) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    s.set_nonblocking(false).unwrap();
    closed
}

#[test]
fn slowloris_connections_cost_little_and_are_cut_off_at_the_header_timeout() {
    let _serial = SERIAL.locked();
    let t = start(config(|c| {
        c.header_timeout = Duration::from_millis(1500);
        c.idle_timeout = Duration::from_secs(30);
    }));
    let addr = t.addr();
    still_served(addr);
    let before = rss();
    // 2,000 connections, each sending its head a header line at a time, one every 300 ms.
    let mut slow: Vec<TcpStream> = (0..2000).map(|_| TcpStream::connect(addr).unwrap()).collect();
    for s in &mut slow {
        s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n").unwrap();
    }
    let started = Instant::now();
    let mut served_during = false;
    while started.elapsed() < Duration::from_millis(1200) {
        for s in &mut slow {
            let _ = s.write_all(b"x-slow: 1\r\n");
        }
        if !served_during {
            still_served(addr);
            served_during = true;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let grew = rss().saturating_sub(before);
    eprintln!("2,000 slow heads: memory grew {} KiB", grew >> 10);
    // A connection task and its partial head each (19 KiB each before the head's buffer grew with the head
    // instead of by hyper's read size: vendor/PATCHES.md).
    assert!(grew < 12 << 20, "memory grew {} KiB for 2,000 slow heads", grew >> 10);
    // Past the header timeout every one of them is closed.
    std::thread::sleep(Duration::from_millis(1500));
    let open = slow.iter_mut().map(is_closed).filter(|closed| !closed).count();
    assert_eq!(open, 0, "{open} slow heads still open past the header timeout");
    still_served(addr);
    t.server.stop(true);
}

#[test]
fn slow_readers_of_streamed_responses_hold_a_bounded_amount_each() {
    let _serial = SERIAL.locked();
    let t = start(Config::default());
    let addr = t.addr();
    still_served(addr);
    let before = rss();
    // 200 clients ask for a 32 MiB stream and never read: each producer must be paused, not buffered.
    let readers = requests_never_read(addr, 200, b"GET /stream?big HTTP/1.1\r\nhost: x\r\n\r\n");
    let started = Instant::now();
    while t.big.lock().unwrap().0 < 200 && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    still_served(addr);
    let grew = rss().saturating_sub(before);
    let (full, _) = *t.big.lock().unwrap();
    eprintln!("200 slow readers: memory grew {} KiB; producers told to wait {full} times", grew >> 10);
    assert!(full >= 200, "every producer was paused ({full})");
    // Per response: the stream's queue (64 KiB past its high-water mark at most) and hyper's (64 KiB).
    assert!(grew < 200 * (160 << 10), "memory grew {} KiB for 200 slow readers", grew >> 10);
    drop(readers);
    still_served(addr);
    t.server.stop(true);
}

#[test]
fn slow_readers_of_a_large_turbo_response_share_its_bytes() {
    let _serial = SERIAL.locked();
    let t = start_with(Config::default(), routes_with_big(4 << 20));
    let addr = t.addr();
    let before = rss();
    // 300 clients ask for a 4 MiB turbo response and never read: the response is one buffer, shared.
    let readers = requests_never_read(addr, 300, b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n");
    std::thread::sleep(Duration::from_millis(800));
    let res = roundtrip(addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").expect("an answer");
    assert_eq!(res.status, 200);
    let grew = rss().saturating_sub(before);
    eprintln!("300 slow readers of 4 MiB: memory grew {} KiB", grew >> 10);
    assert!(grew < 16 << 20, "memory grew {} KiB: the response was copied per connection", grew >> 10);
    drop(readers);
    t.server.stop(true);
}
