//! The known HTTP/2 attacks, each run against a server for a bounded time through raw frames: the server must
//! stay within a memory bound, end or refuse the attacker's connection as the RFC and the h2 crate's limits say,
//! and keep answering a well-behaved client (h2c and HTTP/1.1) during and after.
//!
//! Memory is the test process's resident set (the server runs in it): the attacks run one at a time (`SERIAL`),
//! each measured from its own start.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gust_core::{Config, Locked};
use support::*;

static SERIAL: Mutex<()> = Mutex::new(());

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut out = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// A GET's header block in HPACK: `:method GET`, `:scheme http` from the static table, `:path` and
/// `:authority` as literals, plus `extra` literal fields (name, value), none indexed.
fn get_block(path: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = vec![0x82, 0x86, 0x04, path.len() as u8];
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(&[0x01, 9]);
    out.extend_from_slice(b"localhost");
    for (name, value) in extra {
        out.push(0x00);
        literal(&mut out, name.as_bytes());
        literal(&mut out, value.as_bytes());
    }
    out
}

/// An HPACK string literal, not Huffman-coded, its length as a 7-bit prefixed integer.
fn literal(out: &mut Vec<u8>, s: &[u8]) {
    let mut n = s.len();
    if n < 127 {
        out.push(n as u8);
    } else {
        out.push(127);
        n -= 127;
        while n >= 128 {
            out.push((n % 128 + 128) as u8);
            n /= 128;
        }
        out.push(n as u8);
    }
    out.extend_from_slice(s);
}

/// A raw HTTP/2 client: what it writes is up to the test; a thread reads (or, with `read: false`, does not read)
/// what the server sends, noting GOAWAY and the end of the connection.
struct Raw {
    s: TcpStream,
    goaway: Arc<Mutex<Option<u32>>>,
    /// Every frame received: `(type, stream)`.
    frames: Arc<Mutex<Vec<(u8, u32)>>>,
    closed: Arc<AtomicBool>,
    received: Arc<AtomicU64>,
}

impl Raw {
    fn open(addr: SocketAddr, settings: &[(u16, u32)], read: bool) -> Raw {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        let mut payload = Vec::new();
        for (id, value) in settings {
            payload.extend_from_slice(&id.to_be_bytes());
            payload.extend_from_slice(&value.to_be_bytes());
        }
        hello.extend(frame(SETTINGS, 0, 0, &payload));
        s.write_all(&hello).unwrap();
        let raw =
            Raw { s, goaway: Arc::default(), frames: Arc::default(), closed: Arc::default(), received: Arc::default() };
        if read {
            let mut r = raw.s.try_clone().unwrap();
            let (goaway, closed, received) = (raw.goaway.clone(), raw.closed.clone(), raw.received.clone());
            let frames = raw.frames.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = vec![0; 1 << 16];
                loop {
                    match r.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            received.fetch_add(n as u64, Ordering::Relaxed);
                            buf.extend_from_slice(&chunk[..n]);
                        }
                    }
                    // Frames parsed as they complete: their type and stream, and GOAWAY's code.
                    while buf.len() >= 9 {
                        let len = (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
                        if buf.len() < 9 + len {
                            break;
                        }
                        let stream = u32::from_be_bytes(buf[5..9].try_into().unwrap()) & 0x7fff_ffff;
                        frames.lock().unwrap().push((buf[3], stream));
                        if buf[3] == GOAWAY && len >= 8 {
                            let code = u32::from_be_bytes(buf[13..17].try_into().unwrap());
                            *goaway.lock().unwrap() = Some(code);
                        }
                        buf.drain(..9 + len);
                    }
                }
                closed.store(true, Ordering::Relaxed);
            });
        }
        raw
    }

    /// Writes `bytes`; false once the server has closed the connection.
    fn send(&mut self, bytes: &[u8]) -> bool {
        self.s.write_all(bytes).is_ok()
    }

    fn ended(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Waits up to `within` for the server to end the connection.
    fn ends_within(&self, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if self.ended() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

/// The process's resident set in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A well-behaved client is answered: a fresh h2c connection (a turbo route and a handler's) and HTTP/1.1.
fn still_served(addr: SocketAddr) {
    let mut ok = Raw::open(addr, &[], true);
    assert!(ok.send(&frame(HEADERS, END_STREAM | END_HEADERS, 1, &get_block("/echo/ok", &[]))));
    let start = Instant::now();
    // A response head (≥ 9 bytes of frames past the server's SETTINGS) within a few seconds.
    while ok.received.load(Ordering::Relaxed) < 60 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ok.received.load(Ordering::Relaxed) >= 60, "an h2c client was answered");
    let res = roundtrip(addr, b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").expect("an HTTP/1.1 answer");
    assert!(res.text().starts_with("GET /echo/1 "), "{}", res.text());
}

/// Runs `attack` against a fresh server for at most `for_`, then checks the memory bound and a good client.
fn under_attack(config: Config, bound_mib: u64, attack: impl FnOnce(&TestServer, Instant)) -> TestServer {
    let _serial = SERIAL.locked();
    let t = start(config);
    still_served(t.addr());
    let before = rss();
    attack(&t, Instant::now());
    still_served(t.addr());
    let grew = rss().saturating_sub(before);
    eprintln!("memory grew {} KiB; {} requests handed over", grew >> 10, handed_over(&t));
    assert!(grew < bound_mib << 20, "memory grew {} KiB under attack (bound {bound_mib} MiB)", grew >> 10);
    t
}

fn handed_over(t: &TestServer) -> usize {
    t.batches.lock().unwrap().iter().sum()
}

#[test]
fn rapid_reset_is_cut_off_and_costs_the_handlers_little() {
    // CVE-2023-44487: streams opened and reset at once, so none counts against the concurrent-stream limit.
    let t = under_attack(Config::default(), 8, |t, start| {
        let mut raw = Raw::open(t.addr(), &[], true);
        let mut id = 1u32;
        let mut sent = 0;
        while start.elapsed() < Duration::from_secs(3) && !raw.ended() {
            let mut burst = Vec::new();
            for _ in 0..100 {
                burst.extend(frame(HEADERS, END_STREAM | END_HEADERS, id, &get_block("/echo/x", &[])));
                burst.extend(frame(RST_STREAM, 0, id, &8u32.to_be_bytes()));
                id += 2;
            }
            if !raw.send(&burst) {
                break;
            }
            sent += 100;
        }
        assert!(raw.ends_within(Duration::from_secs(2)), "the attacker's connection was ended after {sent} resets");
        let code = *raw.goaway.lock().unwrap();
        eprintln!("rapid reset: ended after {sent} resets sent");
        assert_eq!(code, Some(0xb), "GOAWAY ENHANCE_YOUR_CALM after {sent} resets");
    });
    assert!(handed_over(&t) < 5_000, "{} reset requests reached the handlers", handed_over(&t));
}

#[test]
fn a_continuation_flood_is_refused_before_it_costs_memory() {
    under_attack(Config::default(), 8, |t, start| {
        let mut raw = Raw::open(t.addr(), &[], true);
        assert!(raw.send(&frame(HEADERS, END_STREAM, 1, &get_block("/echo/x", &[]))));
        let junk = frame(CONTINUATION, 0, 1, &[0x40; 16 * 1024]);
        let mut sent = 0usize;
        while start.elapsed() < Duration::from_secs(3) && raw.send(&junk) && !raw.ended() {
            sent += junk.len();
        }
        assert!(raw.ends_within(Duration::from_secs(2)), "the connection was ended");
        // What was sent includes what the kernel's socket buffers took (megabytes on loopback): the bound that
        // matters is the server's memory.
        eprintln!("continuation: ended after {} KiB written", sent >> 10);
    });
    // Empty CONTINUATION frames grow no header block: their count is what must be bounded.
    under_attack(Config::default(), 8, |t, start| {
        let mut raw = Raw::open(t.addr(), &[], true);
        assert!(raw.send(&frame(HEADERS, END_STREAM, 1, &get_block("/echo/x", &[]))));
        let burst: Vec<u8> = (0..1000).flat_map(|_| frame(CONTINUATION, 0, 1, &[])).collect();
        while start.elapsed() < Duration::from_secs(3) && raw.send(&burst) && !raw.ended() {}
        assert!(raw.ends_within(Duration::from_secs(2)), "the connection was ended");
    });
}

#[test]
fn settings_and_ping_floods_from_a_client_that_never_reads_stay_bounded() {
    for kind in [SETTINGS, PING] {
        under_attack(Config::default(), 8, |t, start| {
            let mut raw = Raw::open(t.addr(), &[], false);
            let payload: &[u8] = if kind == PING { &[7; 8] } else { &[] };
            let burst: Vec<u8> = (0..1000).flat_map(|_| frame(kind, 0, 0, payload)).collect();
            raw.s.set_write_timeout(Some(Duration::from_millis(500))).unwrap();
            // The server answers each with an ACK the client never reads: it must stop reading or end the
            // connection, not queue answers without end.
            while start.elapsed() < Duration::from_secs(3) && raw.send(&burst) {}
        });
    }
}

#[test]
fn a_header_list_past_the_limit_is_refused_and_the_connection_goes_on() {
    under_attack(Config::default(), 8, |t, _| {
        let mut raw = Raw::open(t.addr(), &[], true);
        let value = "v".repeat(4000);
        let extra: Vec<(&str, &str)> = (0..5).map(|_| ("x-big", value.as_str())).collect();
        let block = get_block("/echo/big", &extra);
        // 20 KB of headers (the limit is 16 KiB), in frames of 16 KiB (the default maximum frame size).
        let mut chunks = block.chunks(16 * 1024).peekable();
        let first = chunks.next().unwrap();
        assert!(raw.send(&frame(HEADERS, END_STREAM, 1, first)));
        while let Some(chunk) = chunks.next() {
            let flags = if chunks.peek().is_none() { END_HEADERS } else { 0 };
            if !raw.send(&frame(CONTINUATION, flags, 1, chunk)) {
                break;
            }
        }
        // Stream 1 is refused (a 431 or a reset); the next stream on the same connection is answered.
        assert!(raw.send(&frame(HEADERS, END_STREAM | END_HEADERS, 3, &get_block("/echo/next", &[]))));
        let answered = |stream: u32| raw.frames.lock().unwrap().iter().any(|&(k, s)| s == stream && k == DATA);
        let start = Instant::now();
        while !answered(3) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let frames = raw.frames.lock().unwrap().clone();
        assert!(answered(3), "the connection goes on: {frames:?}");
        assert!(
            frames.iter().any(|&(k, s)| s == 1 && (k == HEADERS || k == RST_STREAM)),
            "stream 1 refused: {frames:?}"
        );
        assert!(!frames.iter().any(|&(k, s)| s == 1 && k == DATA), "stream 1 never reached its handler");
    });
    // Four times the limit in one header block is a flood, not a request: the connection is ended.
    under_attack(Config::default(), 8, |t, _| {
        let mut raw = Raw::open(t.addr(), &[], true);
        let value = "v".repeat(4000);
        let extra: Vec<(&str, &str)> = (0..16).map(|_| ("x-big", value.as_str())).collect();
        let block = get_block("/echo/big", &extra);
        let mut chunks = block.chunks(16 * 1024).peekable();
        assert!(raw.send(&frame(HEADERS, END_STREAM, 1, chunks.next().unwrap())));
        while let Some(chunk) = chunks.next() {
            let flags = if chunks.peek().is_none() { END_HEADERS } else { 0 };
            if !raw.send(&frame(CONTINUATION, flags, 1, chunk)) {
                break;
            }
        }
        assert!(raw.ends_within(Duration::from_secs(2)), "the connection was ended");
        assert!(raw.goaway.lock().unwrap().is_some(), "with a GOAWAY");
    });
}

#[test]
fn a_client_that_opens_streams_and_never_reads_is_bounded_then_closed() {
    // Windows as large as the protocol allows, so flow control holds nothing back: only the server's send
    // buffers and the send timeout stand between it and 100 streams of 32 MiB.
    let config = config(|c| c.send_timeout = Duration::from_millis(500));
    under_attack(config, 24, |t, _| {
        let mut raw = Raw::open(t.addr(), &[(0x4, 0x7fff_ffff)], false);
        assert!(raw.send(&frame(WINDOW_UPDATE, 0, 0, &(0x7fff_ffffu32 - 65_535).to_be_bytes())));
        for i in 0..100u32 {
            assert!(raw.send(&frame(HEADERS, END_STREAM | END_HEADERS, 1 + 2 * i, &get_block("/stream?big", &[]))));
        }
        // The server fills the socket, then waits on it; past the send timeout it closes the connection.
        std::thread::sleep(Duration::from_millis(2500));
        raw.s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = vec![0; 1 << 20];
        let mut got = 0u64;
        let ended = loop {
            match raw.s.read(&mut buf) {
                Ok(0) => break true,
                Ok(n) => got += n as u64,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
                Err(_) => break false,
            }
        };
        assert!(ended, "the server closed the connection after {} KiB", got >> 10);
        assert!(got < 32 << 20, "closed long before the streams were sent: {} KiB", got >> 10);
    });
}

#[test]
fn a_zero_window_client_costs_a_bounded_amount_then_is_closed_by_the_send_timeout() {
    // A client that grants no window: the server may send nothing of any body, and its socket never fills. With a
    // long idle timeout only the send timeout can end it, for streamed bodies (the connection stays busy) and
    // whole ones (idle once answered, but still owed) alike.
    let send_timeout = Duration::from_millis(400);
    let config = config(|c| {
        c.send_timeout = send_timeout;
        c.idle_timeout = Duration::from_secs(30);
    });
    for path in ["/stream?big", "/echo/x"] {
        under_attack(config.clone(), 8, |t, _| {
            let mut raw = Raw::open(t.addr(), &[(0x4, 0)], true);
            for i in 0..100u32 {
                assert!(raw.send(&frame(HEADERS, END_STREAM | END_HEADERS, 1 + 2 * i, &get_block(path, &[]))));
            }
            let sent = Instant::now();
            // A good client is answered while the attacker holds its streams.
            still_served(t.addr());
            assert!(raw.ends_within(Duration::from_secs(5)), "{path}: the connection was closed");
            let took = sent.elapsed();
            assert!(took >= send_timeout, "{path}: closed after {took:?}, before the send timeout");
            assert!(raw.received.load(Ordering::Relaxed) < 1 << 20, "{path}: no body bytes beyond the window");
            let frames = raw.frames.lock().unwrap().clone();
            assert!(!frames.iter().any(|&(k, _)| k == DATA), "{path}: no DATA frame: {frames:?}");
        });
    }
}
